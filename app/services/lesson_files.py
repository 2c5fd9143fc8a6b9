"""A saved lesson as a file: exported with everything another install needs to ask the same
questions (the lesson, the run's configuration, the data set as prepared arrays), imported
back as a data set, a run and a lesson.

The format (``FORMAT``, version ``VERSION``) is JSON::

    {"format": "foba-lab-lesson", "version": 1,
     "lesson":   {"title", "story", "steps", "hidden"},
     "run":      {"algorithm", "objective", "k", "params", "standardize", "certify", "exact",
                  "test_fraction", "seed"},
     "dataset":  {"name", "description", "task", "target", "feature_names", "classes",
                  "groups", "true_support", "X": [[row], ...], "y": [...]},
     "trace":    {"length": number of events, "questions": [{"step", "kind", "answer"}]}}

``X`` and ``y`` are the prepared arrays (after one-hot encoding and imputation; y coded 0/1
with ``classes`` naming the codes). Numbers are written with Python's ``repr`` of a float,
which reads back to the same float, so the imported run takes the same decisions; ``trace``
says which decisions the exported run took at the lesson's steps (shown on the lesson's page
once the imported run has finished).

Import checks everything before storing anything, then stores the data set, the run (with its
job) and the lesson in one transaction: a refused file leaves nothing behind. A file imported
twice gives the same lesson (its SHA-256 is the lesson's ``import_key``, the data set's
``sample_key`` and the run's Idempotency-Key).
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, BinaryIO, Literal

import numpy as np
from pydantic import AllowInfNan, Strict, ValidationError
from pydantic import Field as PydanticField
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, SQLModel, select

from app import storage
from app.errors import Conflict, InvalidInput, TooLarge
from app.ingest import columns
from app.jobs.backend import JobBackend
from app.jobs.evaluation import check_split, split_rows
from app.models import (
    Dataset,
    IdempotencyKey,
    Run,
    RunConfig,
    RunStatus,
    SavedLesson,
    SplitOptions,
    Task,
    stored_id,
)
from app.models.fields import STRICT, Request
from app.models.saved_lesson import MAX_STEPS, MAX_STORY, MAX_TITLE, Hidable, Step
from app.services import datasets as dataset_service
from app.services import runs as run_service
from app.services import saved_lessons
from app.storage import ArrayStore

FORMAT = "foba-lab-lesson"
VERSION = 1
# A lesson file is read whole into memory and validated cell by cell: its data set is bounded
# (rows x (features + 1)), and so are its bytes (a float written by repr takes at most 24).
MAX_CELLS = 500_000
MAX_FILE_MB = 16
MAX_FILE_BYTES = MAX_FILE_MB * 1024 * 1024
MAX_FEATURES = 10_000
MAX_ERRORS = 8  # problems reported at once from one file

Number = Annotated[float, Strict(), AllowInfNan(False)]
Text = Annotated[str, PydanticField(max_length=200)]


class LessonPart(Request):
    model_config = STRICT
    title: str = PydanticField(min_length=1, max_length=MAX_TITLE)
    story: str = PydanticField("", max_length=MAX_STORY)
    steps: list[Step] = PydanticField(min_length=1, max_length=MAX_STEPS)
    hidden: list[Hidable] = PydanticField(default_factory=list)


class RunPart(RunConfig, SplitOptions):
    """The run's configuration (``record_candidates`` is always on for a lesson)."""


class DatasetPart(Request):
    model_config = STRICT
    name: str = PydanticField(min_length=1, max_length=200)
    description: str = PydanticField("", max_length=2000)
    task: Literal["regression", "classification"]
    target: Text = "y"
    feature_names: list[Text] = PydanticField(min_length=1, max_length=MAX_FEATURES)
    classes: list[Text] | None = None
    groups: list[Text] | None = None
    true_support: list[Annotated[int, PydanticField(ge=0)]] | None = None
    X: list[list[Number]] = PydanticField(min_length=2)
    y: list[Number] = PydanticField(min_length=2)


class Question(SQLModel):
    model_config = STRICT
    step: Step
    kind: Literal["enter", "delete"]
    answer: str = PydanticField(max_length=200)


class TracePart(SQLModel):
    model_config = STRICT
    length: Annotated[int, PydanticField(ge=1, le=10_000_000)]
    questions: list[Question] = PydanticField(max_length=MAX_STEPS)


class LessonFile(SQLModel):
    model_config = STRICT
    format: Literal["foba-lab-lesson"]
    version: int
    lesson: LessonPart
    run: RunPart
    dataset: DatasetPart
    trace: TracePart


# --------------------------------------------------------------------------- export


def export(session: Session, store: ArrayStore, lesson_id: int) -> dict[str, Any]:
    """The lesson's file contents; Conflict before its run has finished, TooLarge above
    MAX_CELLS (said before anything is read)."""
    lesson = saved_lessons.get(session, lesson_id)
    run = run_service.get_run(session, lesson.run_id)
    if run.status != RunStatus.done:  # its trace is what the file's questions come from
        raise Conflict(
            f"the lesson's run {run.id} is {run.status}: export the lesson once it has finished"
        )
    ds = dataset_service.get_dataset(session, run.dataset_id)
    cells = ds.n_samples * (ds.n_features + 1)
    if cells > MAX_CELLS:
        raise TooLarge(
            f"the lesson's data set has {ds.n_samples:,} rows x {ds.n_features + 1:,} columns "
            f"= {cells:,} cells; a lesson file holds at most {MAX_CELLS:,} (about "
            f"{MAX_FILE_MB} MB): make the lesson on a smaller data set"
        )
    arrays = store.load(ds.file, None)
    X = storage.unpack_matrix(arrays)
    dense = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=float)
    events = run_service.trace_events(session, lesson.run_id)
    asked = set(lesson.steps)
    questions = [
        {"step": q.step, "kind": q.kind, "answer": q.answer}
        for q in saved_lessons.askable(session, run)
        if q.step in asked
    ]
    return {
        "format": FORMAT,
        "version": VERSION,
        "lesson": {
            "title": lesson.title,
            "story": lesson.story,
            "steps": lesson.steps,
            "hidden": lesson.hidden,
        },
        "run": RunPart.model_validate(
            {
                "algorithm": run.algorithm,
                "objective": run.objective,
                "k": run.k,
                "params": run.params,
                "record_candidates": True,
                "standardize": run.standardize,
                "certify": run.certify,
                "exact": run.exact,
                "test_fraction": run.test_fraction,
                "seed": run.seed,
            }
        ).model_dump(mode="json"),
        "dataset": {
            "name": ds.name,
            "description": ds.description,
            "task": ds.task,
            "target": ds.target,
            "feature_names": ds.feature_names,
            "classes": ds.classes,
            "groups": ds.groups,
            "true_support": ds.true_support,
            "X": dense.tolist(),
            "y": np.asarray(arrays["y"], dtype=float).tolist(),
        },
        "trace": {"length": len(events), "questions": questions},
    }


def file_name(lesson: SavedLesson) -> str:
    stem = "".join(c if c.isalnum() else "-" for c in lesson.title.lower()).strip("-")[:40]
    return f"lesson-{lesson.id}-{stem or 'untitled'}.json"


# --------------------------------------------------------------------------- import


def read_upload(upload: BinaryIO) -> bytes:
    """The file's bytes, refused (TooLarge) past MAX_FILE_BYTES without reading the rest."""
    data = upload.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise TooLarge(
            f"the lesson file is larger than {MAX_FILE_MB} MB, the most a lesson file may be"
        )
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"the file holds {name}, which is no number; write a finite number")


def parse(data: bytes) -> LessonFile:
    """The file, checked: JSON, format and version, types, shapes, finiteness, steps; every
    refusal an InvalidInput (422) saying what to fix."""
    try:
        raw = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise InvalidInput("the file is not UTF-8 text; a lesson file is JSON") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"the file is not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "export the lesson again",
            loc=("file",),
        ) from None
    except RecursionError:
        raise InvalidInput(
            "the file nests lists too deeply for a lesson file", loc=("file",)
        ) from None
    except ValueError as exc:  # NaN or Infinity (_no_constant), or an integer of 4,300+ digits
        message = (
            str(exc) if "no number" in str(exc) else "the file holds a number too long to read"
        )
        raise InvalidInput(message, loc=("file",)) from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise InvalidInput(
            f'this is no lesson file: a lesson file is a JSON object with "format": "{FORMAT}"',
            loc=("file", "format"),
        )
    if raw.get("version") != VERSION:
        raise InvalidInput(
            f"lesson file version {str(raw.get('version'))[:20]} is not one this server reads "
            f"(it reads version {VERSION}); export the lesson again from a matching version",
            loc=("file", "version"),
        )
    _check_size(raw.get("dataset"))
    try:
        found = LessonFile.model_validate(raw)
    except ValidationError as exc:
        raise InvalidInput.all_of(
            [
                InvalidInput(e["msg"], loc=("file", *e["loc"]))
                for e in exc.errors(include_url=False)[:MAX_ERRORS]
            ]
        ) from None
    _check_shapes(found)
    return found


def _check_size(dataset: Any) -> None:
    """TooLarge before validating millions of cells."""
    if not isinstance(dataset, dict):
        return
    X = dataset.get("X")
    if isinstance(X, list) and X and isinstance(X[0], list):
        cells = len(X) * (len(X[0]) + 1)
        if cells > MAX_CELLS:
            raise TooLarge(
                f"the file's data set has {cells:,} cells; a lesson file holds at most "
                f"{MAX_CELLS:,}"
            )


def _check_shapes(f: LessonFile) -> None:
    ds, problems = f.dataset, []
    n, d = len(ds.X), len(ds.feature_names)

    def wrong(message: str, *loc: str | int) -> None:
        problems.append(InvalidInput(message, loc=("file", "dataset", *loc)))

    short = next((i for i, row in enumerate(ds.X) if len(row) != d), None)
    if short is not None:
        wrong(f"row {short} of X has {len(ds.X[short])} values; feature_names names {d}", "X")
    if len(ds.y) != n:
        wrong(f"y has {len(ds.y)} values; X has {n} rows", "y")
    if len(set(ds.feature_names)) != d:
        wrong("feature_names repeat a name; each feature needs its own", "feature_names")
    if ds.groups is not None and len(ds.groups) != d:
        wrong(f"groups has {len(ds.groups)} labels; there are {d} features", "groups")
    if ds.true_support is not None and any(j >= d for j in ds.true_support):
        wrong(f"true_support names a feature past the last one ({d - 1})", "true_support")
    if ds.task == Task.classification:
        if ds.classes is None or len(ds.classes) != 2:
            wrong("a classification data set names its two classes (y = 0, y = 1)", "classes")
        if any(v not in (0.0, 1.0) for v in ds.y):
            wrong("a classification target holds the codes 0 and 1 only", "y")
    trace = f.trace
    asked = {q.step for q in trace.questions}
    out = [s for s in f.lesson.steps if s >= trace.length]
    if out:
        problems.append(
            InvalidInput(
                f"steps {out[:10]} are past the end of the run's trace ({trace.length} steps)",
                loc=("file", "lesson", "steps"),
            )
        )
    elif set(f.lesson.steps) != asked:
        problems.append(
            InvalidInput(
                "the lesson's steps and the questions of the file's trace differ: export the "
                "lesson again",
                loc=("file", "lesson", "steps"),
            )
        )
    if problems:
        raise InvalidInput.all_of(problems[:MAX_ERRORS])


def _dataset_of(f: LessonFile, digest: str) -> tuple[Dataset, dict[str, np.ndarray]]:
    ds = f.dataset
    X, y = np.asarray(ds.X, dtype=float), np.asarray(ds.y, dtype=float)
    d = X.shape[1]
    dataset = Dataset(
        name=ds.name,
        description=ds.description,
        source="lesson file",
        task=ds.task,
        target=ds.target,
        n_samples=X.shape[0],
        n_features=d,
        feature_names=ds.feature_names,
        groups=ds.groups,
        classes=ds.classes,
        true_support=ds.true_support,
        meta={"lesson_file": digest},
        sample_key=_key(digest),
        file="",
    )
    stats = columns.column_stats(X, y, ds.task, missing=[0] * (d + 1))
    return dataset, {**storage.pack_matrix(X), "y": y, **stats}


def _key(digest: str) -> str:
    return f"lesson-file:{digest}"


def _config_of(f: LessonFile, dataset: Dataset, y: np.ndarray) -> dict[str, Any]:
    """The run's parameters checked against the data set, as a submitted run's would be."""
    config = f.run.model_copy(update={"record_candidates": True})
    seed = config.seed or 0
    if problem := check_split(y, dataset.task, config.test_fraction, seed):
        raise InvalidInput(problem, loc=("file", "run", "test_fraction"))
    n_train = len(split_rows(y, dataset.task, config.test_fraction, seed)[0])
    return run_service.validate_config(config, dataset, loc=("file", "run"), n_train=n_train)


def import_file(
    session: Session, backend: JobBackend, store: ArrayStore, data: bytes
) -> tuple[SavedLesson, bool]:
    """The lesson the file holds, and whether it was created now (False: the same file was
    imported before, and that lesson is returned)."""
    f = parse(data)
    digest = hashlib.sha256(data).hexdigest()
    if seen := _imported(session, digest):
        return seen, False
    dataset, arrays = _dataset_of(f, digest)
    params = _config_of(f, dataset, arrays["y"])
    # What a deleted lesson of this file left behind: its data set and run are used again.
    kept = session.exec(select(Dataset).where(Dataset.sample_key == _key(digest))).first()
    key = session.get(IdempotencyKey, _key(digest))
    kept_run = session.get(Run, key.run_id) if key and key.run_id else None
    saved: str | None = None
    try:
        if kept is None:
            saved = dataset.file = store.save(arrays, session)
            session.add(dataset)
            session.flush()
        else:
            dataset = kept
        run = kept_run
        if run is None:
            run = run_service._new_run(dataset, f.run, params, f.run)
            run.record_candidates = True
            session.add(run)
            session.flush()
            if key is not None:
                session.delete(key)  # its run was deleted: the key names a new one
                session.flush()
            session.add(IdempotencyKey(key=_key(digest), request_hash=digest, run_id=run.id))
            session.flush()
            backend.enqueue(session, [stored_id(run)])
        lesson = SavedLesson(
            title=f.lesson.title,
            story=f.lesson.story,
            run_id=stored_id(run),
            steps=sorted(set(f.lesson.steps)),
            hidden=list(dict.fromkeys(f.lesson.hidden)),
            import_key=digest,
        )
        session.add(lesson)
        session.commit()
    except IntegrityError:  # the same file imported at the same moment elsewhere
        session.rollback()
        if saved is not None:
            store.discard(saved)
        if seen := _imported(session, digest):
            return seen, False
        raise Conflict("this lesson file is being imported at this moment; send it again") from None
    except BaseException:
        session.rollback()
        if saved is not None:
            store.discard(saved)
        raise
    if kept_run is None:
        backend.submit(stored_id(run))
    return lesson, True


def _imported(session: Session, digest: str) -> SavedLesson | None:
    return session.exec(select(SavedLesson).where(SavedLesson.import_key == digest)).first()
