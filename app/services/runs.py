"""Runs and comparisons: validate against the engine's registry, queue, read, cancel.

Everything a client sends is checked here, before a row exists, by ``engine.check_config``
with the data set's shape (the same check ``engine.select`` makes), so a queued run can fail
only for reasons no check could foresee.
"""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import or_, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

import engine
from app.errors import Conflict, InvalidInput, NotFound
from app.jobs import table_pass
from app.jobs.backend import JobBackend
from app.jobs.evaluation import check_split, split_rows
from app.models import (
    ACTIVE,
    Comparison,
    ComparisonCreate,
    ComparisonPublic,
    ComparisonRun,
    Dataset,
    IdempotencyKey,
    Run,
    RunConfig,
    RunCreate,
    RunPublic,
    RunStatus,
    SplitOptions,
    TraceEvent,
    TracePage,
    part_of,
    standalone,
    stored_id,
    utcnow,
)
from app.services import catalog, idempotency, reference_tables
from app.services.updates import refresh_or_gone
from app.storage import ArrayStore
from engine.from_rows import check_rows_config
from engine.from_statistics import check_statistics_config
from engine.trace import Event

Loc = tuple[str | int, ...]
_Config = TypeVar("_Config", bound=RunConfig)


# --------------------------------------------------------------------------- validation


def with_defaults(config: _Config, dataset: Dataset) -> _Config:
    """``config`` with what it leaves out resolved as every door resolves it: the objective
    from the data set's task, k by ``catalog.run_k``. The stored run records these values."""
    objective = config.objective or catalog.default_objective(dataset)
    k = config.k
    if k is None:
        k = catalog.run_k(dataset, config.algorithm, objective, config.params)
    return config.model_copy(update={"objective": objective, "k": k})


def validate_config(
    config: RunConfig,
    dataset: Dataset,
    loc: Loc = ("body",),
    n_train: int | None = None,
) -> dict[str, Any]:
    """The run's parameters with defaults filled in, or InvalidInput naming what is wrong.

    ``n_train`` is the number of rows the run trains on (all of them without a test split)."""
    objective = config.objective or catalog.default_objective(dataset)
    if reason := catalog.engine_only("objective", objective):
        raise InvalidInput(reason, loc=(*loc, "objective"))
    if table_pass.is_reference(dataset):
        return _statistics_config(config, dataset, loc)
    try:
        checked = engine.check_config(
            config.algorithm,
            objective,
            k=config.k,
            params=config.params,
            n_samples=dataset.n_samples if n_train is None else n_train,
            n_features=dataset.n_features,
            has_groups=dataset.groups is not None,
            task=dataset.task,
        )
    except engine.ConfigError as exc:
        # The data set has no feature groups: what to change is the algorithm (or the data).
        field = "algorithm" if exc.field == "groups" else exc.field
        raise InvalidInput(str(exc), loc=(*loc, field)) from None
    return checked.params


def _statistics_config(config: RunConfig, dataset: Dataset, loc: Loc) -> dict[str, Any]:
    """``validate_config`` for a table registered by reference: least squares from its
    sufficient statistics (``engine.select_from_statistics``), or a smooth GLM loss by
    passes over its rows (``engine.select_from_rows``, the algorithms it offers)."""
    if table_pass.reads_rows(config.objective):
        return _rows_config(config, dataset, loc)
    if config.objective != "least_squares":
        raise InvalidInput(
            f"objective {config.objective!r} needs the rows, and {table_pass.NEEDS_ROWS}; use "
            f"least_squares or one of {', '.join(table_pass.ROWS_OBJECTIVES)} "
            f"({table_pass.LATER})",
            loc=(*loc, "objective"),
        )
    try:
        checked = check_statistics_config(
            config.algorithm,
            k=config.k,
            params=config.params,
            n_samples=dataset.n_samples,
            n_features=dataset.n_features,
            has_groups=dataset.groups is not None,
        )
    except engine.ConfigError as exc:
        field = "algorithm" if exc.field == "groups" else exc.field
        raise InvalidInput(str(exc), loc=(*loc, field)) from None
    return checked.params


def _rows_config(config: RunConfig, dataset: Dataset, loc: Loc) -> dict[str, Any]:
    """A smooth GLM loss on a table registered by reference: the streamed algorithms only."""
    try:
        checked = check_rows_config(
            config.algorithm,
            objective=str(config.objective),
            k=config.k,
            params=config.params,
            n_samples=dataset.n_samples or None,  # known once the statistics pass is done
            n_features=dataset.n_features,
        )
    except engine.ConfigError as exc:
        raise InvalidInput(str(exc), loc=(*loc, exc.field)) from None
    return checked.params


def _check_reference(
    session: Session, store: ArrayStore, dataset: Dataset, split: SplitOptions
) -> None:
    """A run on a table registered by reference needs its statistics pass done, and trains
    on all its rows (a test split would need them)."""
    if not table_pass.is_reference(dataset):
        return
    if split.test_fraction is not None:
        raise InvalidInput(
            f"a test split needs the rows, and {table_pass.NEEDS_ROWS}; leave test_fraction "
            "out (the run's fit is measured on every row, from the statistics)",
            loc=("body", "test_fraction"),
        )
    reference_tables.require_ready(session, store, dataset)


def _training_rows(store: ArrayStore, dataset: Dataset, split: SplitOptions) -> int:
    """How many rows the runs will train on; InvalidInput if the split leaves too few."""
    if split.test_fraction is None:
        return dataset.n_samples
    y = store.load(dataset.file, ("y",))["y"]
    problem = check_split(y, dataset.task, split.test_fraction, split.seed or 0)
    if problem:
        raise InvalidInput(problem, loc=("body", "test_fraction"))
    return len(split_rows(y, dataset.task, split.test_fraction, split.seed or 0)[0])


def _dataset(session: Session, dataset_id: int) -> Dataset:
    dataset = session.get(Dataset, dataset_id)
    if dataset is None:
        raise InvalidInput(f"data set {dataset_id} does not exist", loc=("body", "dataset_id"))
    return dataset


def _new_run(
    dataset: Dataset, config: RunConfig, params: dict[str, Any], split: SplitOptions
) -> Run:
    return Run(
        dataset_id=stored_id(dataset),
        algorithm=config.algorithm,
        objective=config.objective or catalog.default_objective(dataset),
        k=config.k,
        params=params,
        standardize=config.standardize,
        record_candidates=config.record_candidates,
        certify=config.certify,
        exact=config.exact,
        test_fraction=split.test_fraction,
        seed=split.seed or 0,
    )


# --------------------------------------------------------------------------- submitting


def submit_run(
    session: Session, backend: JobBackend, store: ArrayStore, body: RunCreate, key: str | None
) -> Run:
    request_hash = idempotency.digest("run", body)
    if seen := idempotency.lookup(session, key, request_hash):
        return get_run(session, idempotency.created(seen.run_id, key))
    dataset = _dataset(session, body.dataset_id)
    _check_reference(session, store, dataset, body)
    n_train = _training_rows(store, dataset, body)
    config = with_defaults(body, dataset)
    run = _new_run(dataset, config, validate_config(config, dataset, n_train=n_train), body)
    session.add(run)
    try:
        session.flush()
        if key is not None:
            session.add(IdempotencyKey(key=key, request_hash=request_hash, run_id=run.id))
            session.flush()  # a repeated key fails here, before any job is queued
        backend.enqueue(session, [stored_id(run)])
        session.commit()
    except IntegrityError:
        session.rollback()
        seen = idempotency.winner(session, key, request_hash, body.dataset_id)
        return get_run(session, idempotency.created(seen.run_id, key))
    backend.submit(stored_id(run))
    return run


def submit_comparison(
    session: Session,
    backend: JobBackend,
    store: ArrayStore,
    body: ComparisonCreate,
    key: str | None,
) -> ComparisonPublic:
    request_hash = idempotency.digest("comparison", body)
    if seen := idempotency.lookup(session, key, request_hash):
        return get_comparison(session, idempotency.created(seen.comparison_id, key))
    dataset = _dataset(session, body.dataset_id)
    _check_reference(session, store, dataset, body)
    n_train = _training_rows(store, dataset, body)
    configs = [with_defaults(config, dataset) for config in body.runs]
    runs = [
        _new_run(
            dataset, config, validate_config(config, dataset, ("body", "runs", i), n_train), body
        )
        for i, config in enumerate(configs)
    ]
    comparison = Comparison(dataset_id=stored_id(dataset), name=body.name)
    session.add(comparison)
    try:
        session.flush()
        for run in runs:
            run.comparison_id = comparison.id
        session.add_all(runs)
        if key is not None:
            session.add(
                IdempotencyKey(key=key, request_hash=request_hash, comparison_id=comparison.id)
            )
        session.flush()
        backend.enqueue(session, [stored_id(run) for run in runs])  # all the runs' jobs, or none
        session.commit()
    except IntegrityError:
        session.rollback()
        winner = idempotency.winner(session, key, request_hash, body.dataset_id)
        return get_comparison(session, idempotency.created(winner.comparison_id, key))
    for run in runs:
        backend.submit(stored_id(run))
    return get_comparison(session, stored_id(comparison))


# --------------------------------------------------------------------------- reading


def get_run(session: Session, run_id: int) -> Run:
    run = session.get(Run, run_id)
    if run is None:
        raise NotFound(f"run {run_id} does not exist")
    return run


def get_selection_run(session: Session, run_id: int) -> Run:
    """A run whose result is a selection (``RunResult``): not a part of a study (a fold of a
    cross-validation, a stability subsample), whose result is read through its study."""
    run = get_run(session, run_id)
    if part := part_of(run):
        raise Conflict(
            f"run {run_id} is {part.label}; its result is {part.product}: see "
            f"{part.page_url} (JSON: {part.api_url})"
        )
    return run


def list_runs(
    session: Session,
    dataset_id: int | None,
    status: RunStatus | None,
    offset: int,
    limit: int,
) -> list[Run]:
    # The parts of a study are read through their study, not listed as runs.
    query = select(Run).where(standalone()).order_by(col(Run.id).desc())
    query = query.offset(offset).limit(limit)
    if dataset_id is not None:
        query = query.where(col(Run.dataset_id) == dataset_id)
    if status is not None:
        query = query.where(col(Run.status) == status)
    return list(session.exec(query))


def get_comparison(session: Session, comparison_id: int) -> ComparisonPublic:
    comparison = session.get(Comparison, comparison_id)
    if comparison is None:
        raise NotFound(f"comparison {comparison_id} does not exist")
    # Its own runs (those it queued) and those it was made from later (linked).
    linked = select(col(ComparisonRun.run_id)).where(
        col(ComparisonRun.comparison_id) == comparison_id
    )
    runs = session.exec(
        select(Run)
        .where(or_(col(Run.comparison_id) == comparison_id, col(Run.id).in_(linked)))
        .order_by(col(Run.id))
    )
    return ComparisonPublic(
        **comparison.model_dump(),
        url=f"/api/comparisons/{comparison_id}",
        runs=[RunPublic.of(run) for run in runs],
    )


def read_trace(session: Session, run_id: int, after: int, limit: int) -> TracePage:
    # Status first: a run's last events and its final status commit together, so events read
    # after seeing a final status are complete.
    run = get_run(session, run_id)
    rows = session.exec(
        select(TraceEvent)
        .where(col(TraceEvent.run_id) == run_id, col(TraceEvent.step) > after)
        .order_by(col(TraceEvent.step))
        .limit(limit)
    ).all()
    return TracePage(
        run_id=run_id,
        status=RunStatus(run.status),
        attempt=run.attempt,
        progress=run.progress,
        cancel_requested=run.cancel_requested,
        events=[row.data for row in rows],
        next_after=rows[-1].step if rows else after,
        complete=run.status not in ACTIVE and len(rows) < limit,
    )


def trace_events(session: Session, run_id: int) -> list[Event]:
    """Every stored event of a run in step order (the pages chart whole traces)."""
    rows = session.exec(
        select(TraceEvent.data)
        .where(col(TraceEvent.run_id) == run_id)
        .order_by(col(TraceEvent.step))
    )
    return [Event.from_dict(data) for data in rows]


def trace_events_after(session: Session, run_id: int, step: int) -> list[tuple[int, Event]]:
    """The stored events of a run after ``step`` (-1: all), in step order, with their steps:
    what a poll of a running run adds to what it read before."""
    rows = session.exec(
        select(TraceEvent.step, TraceEvent.data)
        .where(col(TraceEvent.run_id) == run_id, col(TraceEvent.step) > step)
        .order_by(col(TraceEvent.step))
    )
    return [(s, Event.from_dict(data)) for s, data in rows]


# --------------------------------------------------------------------------- cancelling


def cancel_run(session: Session, run_id: int) -> Run:
    """A queued run is cancelled at once; a running one is asked to stop (its worker sees the
    request within a trace batch or a heartbeat). Repeating a cancel is harmless; cancelling a
    run that ended otherwise is a conflict."""
    run = get_run(session, run_id)
    now = utcnow()
    session.exec(
        update(Run)
        .where(col(Run.id) == run_id, col(Run.status) == RunStatus.queued)
        .values(status=RunStatus.cancelled, cancel_requested=True, finished_at=now)
    )
    session.exec(
        update(Run)
        .where(col(Run.id) == run_id, col(Run.status) == RunStatus.running)
        .values(cancel_requested=True)
    )
    session.commit()
    run = refresh_or_gone(session, run)
    if run.status in (RunStatus.done, RunStatus.failed):
        raise Conflict(f"run {run_id} already finished ({run.status}); there is nothing to cancel")
    return run
