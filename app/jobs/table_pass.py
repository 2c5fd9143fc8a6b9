"""The statistics pass over a table registered by reference, and runs from its statistics.

A table larger than memory (issue 28) is never loaded: its data set's ``meta["reference"]``
holds the :class:`~app.ingest.chunked.TableSchema` and the row ranges
(:class:`~app.ingest.chunked.TablePart`) planned when it was registered, and each range is a
run (``Run.table_part``) executed by ``run_job`` like a fold of a cross-validation: the same
claim, heartbeat, cancel and retry (a killed worker's range runs again). :class:`TablePassPart`
streams its range in bounded batches (``chunked.iter_batches``), stores the range's partial
:class:`~engine.statistics.SufficientStatistics` in the array store and returns their key as
its result. Once every range is done, :func:`merge_parts` merges the partials in range order
(``merge_all``): the ranges are fixed at registration, so the merged statistics do not depend
on how many workers ran them, nor in what order.

:func:`select_from_table` is ``run_job``'s selection for such a data set: a least-squares
algorithm on the merged statistics (``engine.select_from_statistics``), with the fit measured
from them too, and the swap certificate on the same objective (``certify_from_statistics``).
The smooth GLM losses (logistic, smoothed hinge, smoothed absolute) read the file again in
passes instead (:func:`rows_from_table`). Anything needing the rows in memory (a test split,
the exact search, why-not, the other objectives) is refused before a run is queued
(``app.services.runs``), or skipped saying why. A fold of a cross-validation on such a table
is a set of whole ranges (:func:`fold_ranges`), scored from the ranges' stored partials
(:func:`fold_statistics_of`): no second pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import ColumnElement, Engine
from sqlmodel import Session, col, select

from app.db.transient import retry
from app.ingest.chunked import TablePart, TableSchema, iter_batches
from app.ingest.table_rows import TableRows
from app.jobs import judging
from app.jobs.run_errors import describe
from app.models import Dataset, FitMetrics, Run, RunResult, SelectedFeature
from app.storage import ArrayStore
from engine import SelectionResult
from engine.from_rows import STREAMED_OBJECTIVES, StreamedResult, select_from_rows
from engine.from_statistics import certify_from_statistics, heldout_mse, select_from_statistics
from engine.judge import settings_of
from engine.statistics import (
    StatisticsAccumulator,
    SufficientStatistics,
    block_pairs,
    fold_blocks,
    fold_statistics,
    merge_all,
)
from engine.trace import Event

SOURCE = "reference"  # Dataset.source of a table registered by reference
PASS_ALGORITHM = "statistics-pass"  # Run.algorithm of a range of the pass (not an engine name)
BATCH_ROWS = 65536  # rows per batch a range is read in: its memory is one batch and d x d
NEEDS_ROWS = (
    "a table registered by reference keeps only the sufficient statistics of least squares, "
    "not its rows"
)
ROWS_OBJECTIVES = tuple(STREAMED_OBJECTIVES)  # read in passes over the rows
LATER = (
    f"{', '.join(ROWS_OBJECTIVES)} read the rows again in passes (foba-obj, foba-gdt or omp); "
    "the other objectives need the rows in memory"
)

Recorder = Callable[[Event], Any]


def is_reference(dataset: Dataset) -> bool:
    return dataset.source == SOURCE


def reads_rows(objective: str | None) -> bool:
    """Whether a run of ``objective`` on such a table reads its rows in passes (else it runs
    on the sufficient statistics)."""
    return objective in ROWS_OBJECTIVES


def needs_rows(what: str) -> str:
    """Why ``what`` is not offered on a table registered by reference."""
    return f"{what} needs the rows in memory, and {NEEDS_ROWS}"


@dataclass(frozen=True)
class Reference:
    """What ``Dataset.meta["reference"]`` says about the table (written at registration)."""

    schema: TableSchema
    parts: list[TablePart]
    part_rows: list[float]  # each range's rows, exact (Parquet) or estimated from bytes (CSV)

    @classmethod
    def of(cls, dataset: Dataset) -> Reference:
        ref = dataset.meta["reference"]
        return cls(
            TableSchema.from_dict(ref["schema"]),
            [TablePart(**p) for p in ref["parts"]],
            [float(r) for r in ref["part_rows"]],
        )


# --------------------------------------------------------------------------- statistics
def stats_arrays(stats: SufficientStatistics) -> dict[str, np.ndarray]:
    """The statistics as arrays of the array store (1-d scalars: every store writes rows)."""
    return {
        "n": np.array([stats.n], dtype=np.int64),
        "mean": stats.mean,
        "y_mean": np.array([stats.y_mean]),
        "xx": stats.xx,
        "xy": stats.xy,
        "yy": np.array([stats.yy]),
    }


def stats_of(arrays: dict[str, np.ndarray], names: Sequence[str] | None) -> SufficientStatistics:
    return SufficientStatistics(
        n=int(arrays["n"][0]),
        mean=np.asarray(arrays["mean"], dtype=np.float64),
        y_mean=float(arrays["y_mean"][0]),
        xx=np.asarray(arrays["xx"], dtype=np.float64),
        xy=np.asarray(arrays["xy"], dtype=np.float64),
        yy=float(arrays["yy"][0]),
        feature_names=tuple(names) if names is not None else None,
    )


def load_statistics(store: ArrayStore, dataset: Dataset) -> SufficientStatistics:
    """The merged statistics of a data set whose pass is done."""
    arrays = retry(lambda: store.load(dataset.file))  # a database store may be busy
    return stats_of(arrays, dataset.feature_names)


def merge_parts(
    store: ArrayStore, keys: Sequence[str], names: Sequence[str]
) -> SufficientStatistics:
    """The partials under ``keys`` (in range order) merged: the table's statistics."""

    def load(key: str) -> SufficientStatistics:
        return stats_of(retry(lambda: store.load(key)), names)

    return merge_all([load(key) for key in keys])


def range_results(session: Session, dataset_id: int) -> list[dict[str, Any]]:
    """The results of the pass's ranges (``key``, ``rows``, ...), in range order: the
    per-range partial statistics folds are built from (no second pass over the table)."""
    query = (
        select(Run.result)
        .where(col(Run.dataset_id) == dataset_id, col(Run.table_part).is_not(None))
        .order_by(col(Run.table_part))
    )
    return [dict(r or {}) for r in session.exec(query)]


def fold_ranges(n_ranges: int, n_folds: int, seed: int) -> list[list[int]]:
    """The ranges each fold of a cross-validation holds out: whole ranges (blocks of rows),
    dealt to the folds from the study's seed (``engine.statistics.fold_blocks``)."""
    return fold_blocks(n_ranges, n_folds, shuffle=True, random_state=seed)


def fold_statistics_of(
    store: ArrayStore,
    results: Sequence[dict[str, Any]],
    names: Sequence[str],
    folds: int,
    seed: int,
) -> list[tuple[SufficientStatistics, SufficientStatistics]]:
    """(training, held-out) statistics of every fold, from the stored partials."""

    def load(key: str) -> SufficientStatistics:
        return stats_of(retry(lambda: store.load(key)), names)

    parts = [load(str(r["key"])) for r in results]
    return fold_statistics(parts, folds, shuffle=True, random_state=seed)


def half_ranges(n_ranges: int, n_pairs: int, seed: int) -> list[list[int]]:
    """The ranges each half sample of a stability study holds: complementary pairs of half
    the ranges (blocks of rows), dealt from the study's seed (``engine.statistics.block_pairs``);
    subsample i is entry i, pair j entries 2j and 2j + 1."""
    return block_pairs(n_ranges, n_pairs, random_state=seed)


def half_statistics_of(
    store: ArrayStore,
    results: Sequence[dict[str, Any]],
    names: Sequence[str],
    held: Sequence[int],
) -> SufficientStatistics:
    """The statistics of the half sample made of the ranges ``held``, from their partials."""

    def load(key: str) -> SufficientStatistics:
        return stats_of(retry(lambda: store.load(key)), names)

    return merge_all([load(str(results[i]["key"])) for i in held])


# --------------------------------------------------------------------------- the pass
@dataclass
class RowMeter:
    """A range's progress: rows read over the rows it holds (estimated for CSV)."""

    expected: float
    rows: float = 0.0

    def observe(self, event: Event) -> None:
        self.rows = event.info.get("rows", self.rows)

    @property
    def progress(self) -> float:
        return min(self.rows / self.expected, 0.99) if self.expected > 0 else 0.0


@dataclass(frozen=True)
class TablePassPart:
    """One row range of the statistics pass: its partial statistics, stored."""

    run: Run
    dataset: Dataset
    db: Engine
    reference: Reference

    @classmethod
    def load(cls, db: Engine, run: Run, dataset: Dataset) -> TablePassPart:
        return cls(run, dataset, db, Reference.of(dataset))

    @property
    def index(self) -> int:
        assert self.run.table_part is not None  # load() is asked for such runs only
        return self.run.table_part

    @property
    def siblings(self) -> ColumnElement[bool]:
        return (col(Run.dataset_id) == self.dataset.id) & col(Run.table_part).is_not(None)

    def meter(self) -> RowMeter:
        return RowMeter(self.reference.part_rows[self.index])

    def execute(self, store: ArrayStore, recorder: Recorder) -> tuple[dict[str, Any] | None, bool]:
        schema, part = self.reference.schema, self.reference.parts[self.index]
        start = time.perf_counter()
        acc = StatisticsAccumulator()
        rows = batches = 0
        for X, y in iter_batches(schema, part, batch_rows=BATCH_ROWS):
            acc.add(SufficientStatistics.from_arrays(X, y))
            rows, batches = rows + len(y), batches + 1
            # Not stored (a part keeps no trace): progress, heartbeat and cancel, per batch.
            event = Event(step=batches, kind="iterate", objective=0.0, support_size=0)
            event.info["rows"] = float(rows)
            if recorder(event) is not True:
                return None, True
        stats = acc.result(schema.n_features)

        def save() -> str:
            with Session(self.db) as session:
                key = store.save(stats_arrays(stats), session)
                session.commit()
                return key

        return {
            "key": retry(save),
            "rows": stats.n,
            "batches": batches,
            "seconds": time.perf_counter() - start,
        }, False


# --------------------------------------------------------------------------- runs
def select_from_table(
    run: Run, dataset: Dataset, store: ArrayStore, recorder: Recorder
) -> tuple[RunResult, bool]:
    """A run on a table registered by reference: the selection from its merged statistics,
    and the fit on all its rows measured from them. Returns the summary and whether the
    recorder stopped it early."""
    if reads_rows(run.objective):
        return rows_from_table(run, dataset, recorder)
    stats = load_statistics(store, dataset)
    result = select_from_statistics(
        stats,
        algorithm=run.algorithm,
        k=run.k,
        groups=dataset.groups,
        recorder=recorder,
        random_state=run.seed,
        record_candidates=run.record_candidates,
        standardize=run.standardize,
        **run.params,
    )
    coef, intercept = result.coef, float(result.intercept)
    mse = heldout_mse(stats, coef, intercept)
    r2 = 1.0 - mse * stats.n / stats.yy if stats.yy > 0 else None
    skipped = {"skipped": f"it needs the rows, and {NEEDS_ROWS}"}
    certificate = None
    if run.certify and not result.cancelled:
        certificate, events = _certificate(stats, result)
        for event in events:  # the certificate, told in the trace's checks (as run_job does)
            recorder(event)
    summary = _run_result(
        dataset,
        result,
        train=FitMetrics(n_samples=stats.n, mse=_finite(mse), r2=_finite(r2)),
        certificate=certificate,
        exact=skipped if run.exact else None,
    )
    return summary, result.cancelled


def rows_from_table(run: Run, dataset: Dataset, recorder: Recorder) -> tuple[RunResult, bool]:
    """A run of a smooth GLM loss (``ROWS_OBJECTIVES``) on a table registered by reference:
    the algorithm reads the file in bounded batches once per pass (``engine.select_from_rows``
    on ``TableRows``), in this one worker (the passes follow each other: each needs the model
    the one before fitted), then one more pass measures the fit. The recorder (``run_job``'s
    writer) is asked between batches, so a cancel stops it within a batch. The result says
    how many passes it took."""
    rows = TableRows(Reference.of(dataset).schema, batch_rows=BATCH_ROWS)
    result = select_from_rows(
        rows,
        algorithm=run.algorithm,
        objective=run.objective,
        k=run.k,
        recorder=recorder,
        random_state=run.seed,
        record_candidates=run.record_candidates,
        standardize=run.standardize,
        **run.params,
    )
    train = None if result.cancelled else _rows_fit(rows, result)
    skipped = {"skipped": f"it needs the rows in memory: {ROWS_JUDGING}"}
    summary = _run_result(
        dataset,
        result,
        train=train or FitMetrics(n_samples=result.n_samples),
        certificate=skipped if run.certify else None,
        exact=skipped if run.exact else None,
        passes={**result.passes_dict(), "fit_passes": 0 if train is None else 1},
    )
    return summary, result.cancelled


def _run_result(
    dataset: Dataset,
    result: SelectionResult,
    *,
    train: FitMetrics,
    certificate: dict[str, Any] | None,
    exact: dict[str, Any] | None,
    passes: dict[str, int] | None = None,
) -> RunResult:
    """The stored summary of a run on a table registered by reference (no test split, no
    recovery: the rows are not held)."""
    settings = settings_of(result)
    return RunResult(
        support=[
            SelectedFeature(index=int(j), name=dataset.feature_names[j], coef=float(result.coef[j]))
            for j in result.support
        ],
        intercept=float(result.intercept),
        objective=_finite(result.objective),
        n_steps=result.n_steps,
        stop_reason=result.stop_reason,
        engine_seconds=result.elapsed,
        train=train,
        test=None,
        recovery=None,
        certificate=certificate,
        exact=exact,
        judged_as={n: v.item() if isinstance(v, np.generic) else v for n, v in settings.items()},
        passes=passes,
    )


ROWS_JUDGING = "a table registered by reference is read in passes, not held"


def _rows_fit(rows: TableRows, result: StreamedResult) -> FitMetrics:
    """What ``evaluation.fit_metrics`` gives for the objective's task, on every row, from one
    pass over the selected columns: accuracy and mean log-loss of the linear predictor as the
    log-odds (the larger label positive), or the MSE and R^2."""
    support = [int(j) for j in result.support]
    coef = result.coef[support]
    classes = result.classes
    n, loss, right = 0, 0.0, 0
    y_mean, y_m2 = 0.0, 0.0  # the target's mean and sum of squared deviations (merged)
    for X, y in rows.chunks(support):
        eta = X @ coef + result.intercept
        if classes:
            t = (y == classes[1]).astype(np.float64)
            loss += float((np.logaddexp(0.0, eta) - t * eta).sum())
            right += int(((eta > 0) == (t > 0)).sum())
        else:
            loss += float(((y - eta) ** 2).sum())
            # Chan et al.'s merge of a chunk's mean and deviations: no cancellation in var(y).
            m = len(y)
            mean = float(y.mean()) if m else 0.0
            delta = mean - y_mean
            y_m2 += float(((y - mean) ** 2).sum()) + delta * delta * n * m / max(n + m, 1)
            y_mean += delta * m / max(n + m, 1)
        n += len(y)
    if classes:
        return FitMetrics(n_samples=n, accuracy=right / n, log_loss=_finite(loss / n))
    mse = loss / n
    r2 = 1.0 - mse / (y_m2 / n) if y_m2 > 0 else None
    return FitMetrics(n_samples=n, mse=_finite(mse), r2=_finite(r2))


def _certificate(
    stats: SufficientStatistics, result: SelectionResult
) -> tuple[dict[str, Any], list[Event]]:
    """The swap certificate from the statistics (``engine.certify_from_statistics``): k x (d - k)
    refits on the Gram objective, each d x k, whatever the rows; bounded like the worker's
    certificate on rows (``judging.WORKER_BUDGET``), with d in place of the rows."""
    settings = settings_of(result)
    d, k = stats.n_features, len(result.support)
    cost = float(d) * d * max(k, 1)
    if cost > judging.WORKER_BUDGET:
        reason = (
            f"the swap certificate is not computed for this problem: features x features x k "
            f"= {d} x {d} x {k} = {cost:.3g} is above the bound of {judging.WORKER_BUDGET:.3g}"
        )
        return {"skipped": reason}, []
    try:
        cert = certify_from_statistics(
            stats,
            [int(j) for j in result.support],
            standardize=bool(settings["standardize"]),
            fit_intercept=bool(settings.get("fit_intercept", True)),
        )
    except Exception as exc:  # judging never fails the run it judges
        return {"skipped": f"the certificate failed: {describe(exc)}"}, []
    return {**cert.to_dict(), "events": None}, cert.events(len(result.trace))


def _finite(x: float | None) -> float | None:
    return float(x) if x is not None and np.isfinite(x) else None
