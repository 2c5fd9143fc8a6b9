"""Built-in lessons for the teaching mode: small recipes that create, once, a data set and a
few runs with candidate scores recorded, through the ordinary services.

The data set is marked with a ``sample_key`` (unique), each run with an Idempotency-Key, so
starting a lesson twice, or from two browsers at once, creates one data set and one set of runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from app.jobs.backend import JobBackend
from app.models import Dataset, IdempotencyKey, Run, RunCreate, stored_id
from app.services import runs as run_service
from app.services.datasets import create_from_problem
from app.storage import ArrayStore
from engine import datasets as generators
from engine.datasets import Problem


@dataclass(frozen=True)
class LessonRun:
    label: str
    config: dict[str, Any]  # RunCreate fields but dataset_id


@dataclass(frozen=True)
class Lesson:
    key: str
    title: str
    summary: str
    story: tuple[str, ...]  # paragraphs
    watch: tuple[str, ...]  # what to look for, step by step
    make: Callable[[], Problem]
    runs: tuple[LessonRun, ...]

    @property
    def sample_key(self) -> str:
        return f"lesson:{self.key}"

    def run_key(self, dataset_id: int, i: int) -> str:
        return f"lesson:{self.key}:{dataset_id}:{i}"


def figure2_problem(seed: int = 0, n: int = 50, n_noise: int = 5) -> Problem:
    """Zhang (2008) Figure 2: y = f1 + f2, and f3, a unit vector between them, closer to y
    than either. Forward greedy takes f3 first and cannot let it go; FoBa removes it once f1
    and f2 are both in. Columns are centred with unit norm; f1 and f2 are orthogonal."""
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((n, 3 + n_noise))
    G -= G.mean(axis=0)
    Q, _ = np.linalg.qr(G)
    f1, f2, g = Q[:, 0], Q[:, 1], Q[:, 2]
    cos = 0.9
    f3 = cos * (f1 + f2) / np.sqrt(2) + np.sqrt(1 - cos**2) * g
    noise = 0.6 * Q[:, 3:] + 0.4 * rng.standard_normal((n, n_noise)) / np.sqrt(n)
    noise -= noise.mean(axis=0)
    noise /= np.linalg.norm(noise, axis=0)
    X = np.column_stack([f1, f2, f3, noise])
    coef = np.zeros(X.shape[1])
    coef[:2] = [1.0, 1.05]
    y = X @ coef + 1e-3 * rng.standard_normal(n)
    return Problem(
        X=X,
        y=y,
        true_coef=coef,
        support=np.array([0, 1]),
        name="zhang2008_figure2",
        description=(
            "Zhang (2008) Figure 2: y = f1 + 1.05 f2 (plus tiny noise); f3 lies between f1 and "
            f"f2, closer to y than either (cosine 0.9 with their sum); {n_noise} unrelated "
            f"noise columns; n = {n}."
        ),
        task="regression",
        feature_names=("f1", "f2", "f3", *[f"noise{i + 1}" for i in range(n_noise)]),
        meta={"seed": seed, "n": n, "n_noise": n_noise},
    )


def _generated(name: str, seed: int, **params: Any) -> Callable[[], Problem]:
    return lambda: generators.generate(name, random_state=seed, **params)


LESSONS: dict[str, Lesson] = {
    lesson.key: lesson
    for lesson in (
        Lesson(
            key="figure2",
            title="Zhang's Figure 2: forward greedy keeps the wrong feature",
            summary="y = f1 + f2, but f3 (between them) looks best alone. Forward greedy takes "
            "f3 and keeps it; FoBa takes it, then deletes it once f1 and f2 are in.",
            story=(
                "The target is the sum of two orthogonal features, f1 and f2. A third feature, "
                "f3, points between them and is closer to y than either, so the first forward "
                "step of any greedy method picks f3.",
                "Forward greedy never looks back: asked for two features it answers {f3, f1} "
                "or {f3, f2}, far worse than {f1, f2}. FoBa adds f1 and f2 as well, and its "
                "backward check then finds that deleting f3 costs almost nothing: less than "
                "half (nu = 0.5) of what the last forward step gained.",
            ),
            watch=(
                "Step 0 of both runs: f3 has the largest score of all candidates.",
                "FoBa's backward checks: the cost of deleting f3 falls as f1 and f2 enter.",
                "The step where FoBa deletes f3, and the sentence saying why.",
            ),
            make=figure2_problem,
            runs=(
                LessonRun("Forward greedy", {"algorithm": "forward-obj", "k": 2}),
                LessonRun("FoBa", {"algorithm": "foba-obj", "k": 2}),
            ),
        ),
        Lesson(
            key="obj-vs-gdt",
            title="FoBa-obj against FoBa-gdt on a logistic problem",
            summary="Two forward scores on the same classification data: the objective drop "
            "of the best one-coordinate move, and the size of the gradient. They disagree at "
            "the second step.",
            story=(
                "Liu, Fujimaki and Ye (2014) generalise FoBa to any smooth convex loss. "
                "FoBa-obj scores a candidate by how much the logistic loss falls when that "
                "coefficient alone moves to its best value; FoBa-gdt by the size of the "
                "gradient, which is cheaper but ignores the curvature.",
                "Both use the same backward rule. Step through them side by side and see "
                "where the rankings of the candidates differ, and what that changes.",
            ),
            watch=(
                "The forward steps: compare the two bar charts of candidate scores.",
                "The first step where the two runs pick different features.",
                "The final supports and the support-recovery metrics of each run.",
            ),
            # Elenberg et al.'s noisy AR(1) design, small: the loss stays near 0.3, so every
            # score and cost reads in the hundredths (well-separated classes drive it to 1e-6).
            make=_generated("elenberg2016", 1, n=150, p=30, s=6),
            runs=(
                LessonRun("FoBa-obj", {"algorithm": "foba-obj", "objective": "logistic", "k": 6}),
                LessonRun("FoBa-gdt", {"algorithm": "foba-gdt", "objective": "logistic", "k": 6}),
            ),
        ),
        Lesson(
            key="correlated",
            title="Forward greedy against FoBa on correlated columns",
            summary="Zhang's simulation, small: decoy columns correlated with mixes of the true "
            "ones mislead a forward step; FoBa's backward steps correct it.",
            story=(
                "Zhang's (2008) experiment hides five true features among columns that include "
                "decoys: each decoy is strongly correlated with a mix of true features, so early "
                "on it explains more of y than any single true feature.",
                "Forward greedy keeps every decoy it picks. FoBa picks them too, but once the "
                "true features they imitate are in, deleting a decoy costs little and FoBa "
                "deletes it.",
            ),
            watch=(
                "The steps where a decoy (not marked ★ on the run page) enters.",
                "FoBa's deletions: which features go, and the cost against nu x delta.",
                "Support recovery at the end: F-measure and ROC of each run.",
            ),
            make=_generated("zhang2008", 13, n=60, d=40, k_true=5),
            runs=(
                LessonRun("Forward greedy", {"algorithm": "forward-obj", "k": 5}),
                LessonRun("FoBa", {"algorithm": "foba-obj", "k": 5}),
            ),
        ),
    )
}


@dataclass
class LessonState:
    lesson: Lesson
    dataset: Dataset | None
    runs: list[tuple[LessonRun, Run | None]]

    @property
    def started(self) -> bool:
        return self.dataset is not None and all(run is not None for _, run in self.runs)


def state(session: Session, lesson: Lesson) -> LessonState:
    """What exists of the lesson (nothing is created)."""
    dataset = session.exec(select(Dataset).where(Dataset.sample_key == lesson.sample_key)).first()
    found: list[tuple[LessonRun, Run | None]] = []
    for i, spec in enumerate(lesson.runs):
        run = None
        if dataset is not None:
            key = session.get(IdempotencyKey, lesson.run_key(stored_id(dataset), i))
            run = session.get(Run, key.run_id) if key and key.run_id else None
        found.append((spec, run))
    return LessonState(lesson, dataset, found)


def start(session: Session, backend: JobBackend, store: ArrayStore, lesson: Lesson) -> LessonState:
    """Create the lesson's data set and runs unless they exist; return them."""
    dataset = session.exec(select(Dataset).where(Dataset.sample_key == lesson.sample_key)).first()
    if dataset is None:
        try:
            dataset = create_from_problem(
                session,
                store,
                lesson.make(),
                name=f"Lesson: {lesson.title}",
                source="lesson",
                sample_key=lesson.sample_key,
            )
        except IntegrityError:  # started at the same moment elsewhere
            session.rollback()
            dataset = session.exec(
                select(Dataset).where(Dataset.sample_key == lesson.sample_key)
            ).one()
    for i, spec in enumerate(lesson.runs):
        # As in the papers the lessons retell: the columns as given (they are on one scale).
        body = RunCreate(
            dataset_id=stored_id(dataset), record_candidates=True, standardize=False, **spec.config
        )
        run_service.submit_run(session, backend, store, body, lesson.run_key(body.dataset_id, i))
    return state(session, lesson)
