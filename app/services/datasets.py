"""Data sets: create (upload, generator, bundled), list, show, preview, delete.

A data set is a row of metadata plus arrays in the array store (``app.storage``): X, y, the
true coefficients when known, and per-column statistics. Row and arrays are stored together
or not at all: a database store writes them in one transaction, a file is removed again when
the row cannot be stored, so a failed request leaves nothing behind.
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import numpy as np
from sqlalchemy import delete, exists, func
from sqlmodel import Session, col, select

from app import storage
from app.config import Settings
from app.errors import Busy, Conflict, InvalidInput, NotFound, TooLarge
from app.ingest import columns
from app.ingest.upload import UploadLimits, parse_csv
from app.ingest.words import Words
from app.models import (
    ACTIVE,
    Comparison,
    CVStudy,
    Dataset,
    DatasetGenerate,
    DatasetPreview,
    DatasetPublic,
    DatasetUpdate,
    Run,
    StabilityStudy,
    Task,
    UploadOptions,
    standalone,
    stored_id,
)
from app.services import catalog, reference_tables
from app.services.updates import apply_update
from app.storage import ArrayStore
from engine import datasets as generators
from engine.datasets import Problem


class UploadGate:
    """At most ``slots`` uploads are parsed at once; another waits up to ``wait`` seconds for
    a slot, then is answered 503 with Retry-After (parsing is memory- and CPU-bound: more at
    once would only slow every request down)."""

    def __init__(self, slots: int, wait: float) -> None:
        self.slots = slots
        self.wait = wait
        self._free = threading.BoundedSemaphore(slots)

    @contextmanager
    def slot(self) -> Iterator[None]:
        if not self._free.acquire(timeout=self.wait):
            raise Busy(
                f"{self.slots} uploads are being read already, the most at once "
                "(MAX_PARALLEL_UPLOADS); send the file again in a few seconds",
                retry_after=max(1, math.ceil(self.wait)),
            )
        try:
            yield
        finally:
            self._free.release()


def upload_limits(settings: Settings) -> UploadLimits:
    return UploadLimits(
        max_columns=settings.max_columns,
        max_line_chars=settings.max_line_kb * 1024,
        max_cells=settings.max_cells,
        max_categories=settings.max_categories,
    )


def create_from_upload(
    session: Session,
    store: ArrayStore,
    settings: Settings,
    upload: BinaryIO,
    filename: str | None,
    opts: UploadOptions,
    gate: UploadGate,
    words: Words | None = None,
) -> DatasetPublic:
    """The stored data set, described with the column statistics just computed (not read
    back from the store)."""
    upload.seek(0, os.SEEK_END)
    size = upload.tell()
    upload.seek(0)
    if size > settings.max_upload_bytes:
        raise TooLarge(
            f"the file is larger than {settings.max_upload_mb:g} MB, the upload limit "
            "(MAX_UPLOAD_MB)"
        )
    with gate.slot():
        parsed = parse_csv(upload, opts, upload_limits(settings), words)
        stem = Path(filename or "upload.csv").stem
        dataset = Dataset(
            name=opts.name or stem,
            description=opts.description,
            source="upload",
            task=parsed.task,
            target=parsed.target,
            n_samples=parsed.X.shape[0],
            n_features=parsed.X.shape[1],
            feature_names=parsed.feature_names,
            groups=parsed.groups,
            classes=parsed.classes,
            true_support=parsed.true_support,
            meta={
                "filename": filename,
                "delimiter": parsed.delimiter,
                "encoding": opts.encoding,
                "dropped_rows": parsed.dropped_rows,
                **parsed.meta,
            },
            file="",  # the array store's key: _store sets it once the arrays are saved
        )
        stats = columns.column_stats(parsed.X, parsed.y, parsed.task, parsed.missing)
        arrays = {"X": parsed.X, "y": parsed.y, **stats}
        del parsed
        dataset = _store(session, store, dataset, arrays)
        return DatasetPublic.with_columns(dataset, columns.summaries(dataset, stats))


def create_generated(
    session: Session,
    store: ArrayStore,
    body: DatasetGenerate,
    max_cells: int = Settings.model_fields["max_cells"].default,
) -> Dataset:
    if reason := catalog.engine_only("generator", body.generator):
        raise InvalidInput(reason, loc=("body", "generator"))
    spec = catalog.GENERATORS.get(body.generator)
    if spec is None:
        raise InvalidInput(
            f"unknown generator {body.generator!r}; available: "
            f"{', '.join(sorted(catalog.GENERATORS))}",
            loc=("body", "generator"),
        )
    try:
        params = spec.validate(body.params)
        _check_size(params, max_cells)
        problem = generators.generate(body.generator, random_state=body.random_state, **params)
    except ValueError as exc:
        raise InvalidInput(str(exc), loc=("body", "params")) from None
    return create_from_problem(session, store, problem, name=body.name, source="generator")


def _check_size(params: dict[str, Any], max_cells: int) -> None:
    n = params.get("n", 1)
    d = params.get("d", params.get("p", 1))
    density = params.get("density", 1.0)
    cells = n * d * density
    if cells > max_cells:
        stored = f" x density {density:g}" if density != 1.0 else ""
        raise InvalidInput(
            f"n x d{stored} = {n:,} x {d:,}{stored} gives {cells:,.0f} cells; at most "
            f"{max_cells:,} are allowed (MAX_CELLS)",
            loc=("body", "params"),
            cells=cells,
            max_cells=max_cells,
        )


def create_from_problem(
    session: Session,
    store: ArrayStore,
    problem: Problem,
    *,
    name: str | None,
    source: str,
    sample_key: str | None = None,
    target: str = "y",
) -> Dataset:
    d = problem.n_features
    classes, y = _coded_target(problem)
    dataset = Dataset(
        name=name or problem.name,
        description=problem.description,
        source=source,
        task=problem.task,
        target=target,
        n_samples=problem.n_samples,
        n_features=d,
        feature_names=list(problem.feature_names) or [f"x{j}" for j in range(d)],
        groups=None if problem.groups is None else [str(g) for g in problem.groups],
        classes=classes,
        true_support=None if problem.support is None else [int(j) for j in problem.support],
        meta={"generator": problem.name, **json_safe(problem.meta)},
        sample_key=sample_key,
        file="",  # the array store's key: _store sets it once the arrays are saved
    )
    arrays = {
        **storage.pack_matrix(problem.X),
        "y": y,
        **columns.column_stats(problem.X, y, problem.task, missing=[0] * (d + 1)),
    }
    if problem.true_coef is not None:
        arrays["true_coef"] = np.asarray(problem.true_coef, dtype=float)
    return _store(session, store, dataset, arrays)


def _coded_target(problem: Problem) -> tuple[list[str] | None, np.ndarray]:
    """Class labels and y as 0/1 codes for classification (labels may be text or numbers)."""
    if problem.task != Task.classification:
        return None, np.asarray(problem.y, dtype=float)
    labels, codes = np.unique(problem.y, return_inverse=True)
    names = [str(v) if isinstance(v, str) else f"{v:g}" for v in labels.tolist()]
    return names, codes.astype(float)


def _store(
    session: Session, store: ArrayStore, dataset: Dataset, arrays: dict[str, np.ndarray]
) -> Dataset:
    key: str | None = None
    try:
        key = dataset.file = store.save(arrays, session)
        session.add(dataset)
        session.commit()
    except BaseException:
        session.rollback()
        if key is not None:
            store.discard(key)
        raise
    session.refresh(dataset)
    return dataset


def json_safe(value: Any, most: int = 1000) -> Any:
    """Generator metadata made storable as JSON: numpy to Python, big arrays summarised."""
    if isinstance(value, dict):
        return {str(k): json_safe(v, most) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v, most) for v in value]
    if isinstance(value, np.ndarray):
        if value.size > most:
            return f"array of shape {value.shape} (not stored)"
        return json_safe(value.tolist(), most)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


# --------------------------------------------------------------------------- reading


def list_datasets(session: Session, offset: int, limit: int) -> list[Dataset]:
    return list(session.exec(select(Dataset).order_by(col(Dataset.id)).offset(offset).limit(limit)))


def get_dataset(session: Session, dataset_id: int) -> Dataset:
    dataset = session.get(Dataset, dataset_id)
    if dataset is None:
        raise NotFound(f"data set {dataset_id} does not exist")
    return dataset


# What the data set page derives from a data set's arrays, kept for the last MAX_KEPT uses:
# the arrays never change once stored, and their key (a random file name) is never reused, so
# the column summaries and the preview's rows were being recomputed from the whole arrays at
# every request for nothing (about 0.2 s of a loaded core per page).
MAX_KEPT = 32
_kept: OrderedDict[tuple[str, str, int, int], Any] = OrderedDict()
_kept_lock = threading.Lock()
_T = TypeVar("_T")


def _derived(key: tuple[str, str, int, int], compute: Callable[[], _T]) -> _T:
    if not key[1]:  # not stored yet: nothing to key it by
        return compute()
    with _kept_lock:
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    value = compute()
    with _kept_lock:
        _kept[key] = value
        while len(_kept) > MAX_KEPT:
            _kept.popitem(last=False)
    return value


def describe(store: ArrayStore, dataset: Dataset) -> DatasetPublic:
    if dataset.source == "reference":  # no rows stored: the columns from its statistics
        return DatasetPublic.with_columns(dataset, reference_tables.columns(store, dataset))
    if dataset.file and store.missing([dataset.file]):
        store.load(dataset.file, columns.KEYS)  # lost since it was kept: Gone (410), saying so
    summaries = _derived(
        ("columns", dataset.file, 0, 0),
        lambda: columns.summaries(dataset, store.load(dataset.file, columns.KEYS)),
    )
    return DatasetPublic.with_columns(dataset, summaries)


# A preview's rows x columns: 50,000 columns (a text corpus) would otherwise make 500 rows an
# 80 MB answer that takes seconds to write.
PREVIEW_CELLS = 200_000


def preview(store: ArrayStore, dataset: Dataset, offset: int, limit: int) -> DatasetPreview:
    """Rows from ``offset``: ``limit`` of them, fewer on a wide data set (PREVIEW_CELLS)."""
    limit = max(1, min(limit, PREVIEW_CELLS // (dataset.n_features + 1)))
    # A table registered by reference has no rows stored: its preview is empty.
    rows = [] if dataset.source == "reference" else _rows(store, dataset, offset, limit)
    return DatasetPreview(
        dataset_id=stored_id(dataset),
        offset=offset,
        total=dataset.n_samples,
        columns=[*dataset.feature_names, dataset.target],
        rows=rows,
        id_like=[name for name in dataset.meta.get("id_like", {}) if name in dataset.feature_names],
        excluded=dataset.meta.get("excluded", {}),
    )


def _rows(store: ArrayStore, dataset: Dataset, offset: int, limit: int) -> list[list[Any]]:
    start = min(offset, dataset.n_samples)
    stop = min(start + limit, dataset.n_samples)
    # Those rows only: X may be large, and with STORAGE=database every chunk is a query.
    rows = storage.matrix_rows(store, dataset.file, start, stop)
    labels = store.rows(dataset.file, "y", start, stop)
    targets = [dataset.classes[int(v)] for v in labels] if dataset.classes else labels.tolist()
    return [[*row, target] for row, target in zip(rows.tolist(), targets, strict=True)]


def update_dataset(session: Session, dataset_id: int, body: DatasetUpdate) -> Dataset:
    """Set the name or description the body names (and only those)."""
    return apply_update(
        session,
        get_dataset(session, dataset_id),
        body,
        lambda field: f"{field} cannot be null; leave it out to keep it",
    )


def what_goes_with(session: Session, dataset_id: int) -> dict[str, int]:
    """What deleting the data set deletes too (its runs, comparisons, cross-validations), and
    how many of its runs are queued or running (they block the deletion)."""

    def count(model: Any, *where: Any) -> int:
        return session.exec(select(func.count()).select_from(model).where(*where)).one()

    runs = (Run.dataset_id == dataset_id, standalone())
    return {
        "runs": count(Run, *runs),
        "active": count(Run, Run.dataset_id == dataset_id, col(Run.status).in_(ACTIVE)),
        "comparisons": count(Comparison, Comparison.dataset_id == dataset_id),
        "cv": count(CVStudy, CVStudy.dataset_id == dataset_id),
        "stability": count(StabilityStudy, StabilityStudy.dataset_id == dataset_id),
    }


# --------------------------------------------------------------------------- deleting


def sweep_orphans(session: Session, store: ArrayStore, grace_seconds: float = 3600.0) -> int:
    """Remove stored arrays no data set names (see ``ArrayStore.sweep``)."""

    def in_use() -> set[str]:  # the partial statistics of reference tables' ranges too
        return set(session.exec(select(Dataset.file))) | reference_tables.part_keys(session)

    return store.sweep(in_use, grace_seconds)


def delete_dataset(session: Session, store: ArrayStore, dataset_id: int) -> None:
    """Delete unless a queued or running run uses it (one statement: no race with submits)."""
    dataset = get_dataset(session, dataset_id)
    partials = reference_tables.part_keys(session, dataset_id)
    busy = exists().where(col(Run.dataset_id) == dataset_id, col(Run.status).in_(ACTIVE))
    deleted = session.exec(delete(Dataset).where(col(Dataset.id) == dataset_id, ~busy)).rowcount
    session.commit()
    if deleted == 0:
        if session.exec(select(Dataset.id).where(Dataset.id == dataset_id)).first() is None:
            raise NotFound(f"data set {dataset_id} does not exist")  # deleted meanwhile
        raise Conflict(
            f"data set {dataset_id} is used by a queued or running run; cancel it or wait for "
            "it to finish"
        )
    for key in [dataset.file, *partials]:
        if key:
            store.delete(key)


def prepared_arrays(store: ArrayStore, dataset: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """X (dense) and y as every run on the data set reads them, for the prepared export."""
    X = storage.matrix_rows(store, dataset.file, 0, dataset.n_samples)
    y = store.load(dataset.file, ("y",))["y"]
    return X, y
