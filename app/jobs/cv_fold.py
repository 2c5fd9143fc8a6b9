"""A fold of a cross-validation over k, run by ``run_job`` like any run.

The fold run's row says which study and which fold; the study says the folds (recomputed from
its seed: ``app.jobs.evaluation.fold_split``), the metric and k_max. The fold's engine runs report
to the same recorder as a run's (progress, heartbeat, cancel), but their events are not
stored: the fold's product is its held-out error per k (``engine.cv.FoldResult``), stored as
the run's result.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import Engine
from sqlmodel import Session

import engine
from app import storage
from app.db.transient import retry
from app.errors import Conflict, NotFound
from app.jobs.evaluation import fold_split
from app.models import CVStudy, Dataset, Run
from app.storage import ArrayStore
from engine.cv import CVPlan, fold_errors, plan_cv
from engine.trace import Event, StopRequested


class Meter(Protocol):
    def observe(self, event: Event) -> None: ...

    @property
    def progress(self) -> float: ...


@dataclass(frozen=True)
class FoldSpec:
    run: Run
    dataset: Dataset
    study: CVStudy
    plan: CVPlan

    @classmethod
    def load(cls, db: Engine, run: Run, dataset: Dataset) -> FoldSpec:
        with Session(db) as session:
            study = session.get(CVStudy, run.cv_id)
            session.expunge_all()
        if study is None:  # deleted meanwhile, with its folds
            raise NotFound(f"cross-validation {run.cv_id} does not exist")
        plan = plan_cv(
            run.algorithm,
            run.objective,
            k_max=study.k_max,
            params=run.params,
            metric=study.metric,
            n_features=dataset.n_features,
            has_groups=dataset.groups is not None,
        )
        return cls(run, dataset, study, plan)


@dataclass
class FoldMeter:
    """Progress over the fold's engine runs (one on a path, one per k otherwise): each ends
    with a stop event, after which the next run's meter counts."""

    meters: Sequence[Meter]
    done: int = 0

    @classmethod
    def of(cls, spec: FoldSpec, meter: Callable[[engine.Config], Meter]) -> FoldMeter:
        return cls([meter(config) for config in spec.plan.runs])

    def observe(self, event: Event) -> None:
        if event.kind == "stop":
            self.done = min(self.done + 1, len(self.meters))
        elif self.done < len(self.meters):
            self.meters[self.done].observe(event)

    @property
    def progress(self) -> float:
        current = self.meters[self.done].progress if self.done < len(self.meters) else 0.0
        return min((self.done + current) / len(self.meters), 0.99)


def run_fold(
    spec: FoldSpec, store: ArrayStore, recorder: Callable[[Event], Any]
) -> tuple[dict[str, Any] | None, bool]:
    """The fold's result (``FoldResult.to_dict()``), or None and True when the recorder
    stopped it."""
    run, dataset, study = spec.run, spec.dataset, spec.study
    arrays = retry(lambda: store.load(dataset.file))  # a database store may be busy
    X, y = storage.unpack_matrix(arrays), arrays["y"]
    if run.cv_fold is None:
        raise Conflict(f"run {run.id} is no fold of a cross-validation")
    train, test = fold_split(y, run.objective, study.n_folds, study.seed)[run.cv_fold]
    try:
        result = fold_errors(
            X,
            y,
            train,
            test,
            algorithm=run.algorithm,
            objective=run.objective,
            k_max=study.k_max,
            params=run.params,
            metric=study.metric,
            standardize=run.standardize,
            groups=dataset.groups,
            random_state=run.seed,
            callback=recorder,
        )
    except StopRequested:
        return None, True
    bad = [k for k, e in enumerate(result.errors, start=1) if not math.isfinite(e)]
    if bad:  # JSON has no NaN, and the curve's mean would be meaningless
        raise ValueError(
            f"the held-out {study.metric} is not finite at k = {bad[0]} (the fit diverged on "
            "this fold); try standardize, or a regularised objective"
        )
    return result.to_dict(), False
