"""``run_job``: the one job function every backend runs, for a run its worker has claimed.

Load the arrays, split, call ``engine.select`` with a recorder that writes the trace in batches
(with progress and heartbeat) and answers False once the run should stop, then store the
outcome: done, failed (with the error) or cancelled. A worker being shut down gives its run
back to the queue instead, and so does a worker that cannot reach the database for longer
than its retries last: a transient database error never fails a run.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

import engine
from app import storage
from app.db.transient import is_transient, retried, retry
from app.errors import NotFound
from app.jobs import judging, lease, limits, run_errors, study_part, table_pass
from app.jobs.evaluation import select_run, split_rows, summarise
from app.models import Dataset, Run, RunResult, RunStatus
from app.storage import ArrayStore
from engine.trace import SUPPORT_CHANGING, Event

log = logging.getLogger(__name__)


def _never() -> bool:
    return False


@dataclass
class JobContext:
    """What a job needs besides its run id, and what it learns while running.

    ``cancel_requested`` and ``lost`` are refreshed by every write to the run row (trace
    batches and heartbeats); ``shutdown`` says the worker itself is stopping.
    """

    db: Engine
    store: ArrayStore
    claim: lease.Claim
    batch_events: int = 50
    batch_seconds: float = 0.5
    heartbeat_seconds: float = 2.0
    shutdown: Callable[[], bool] = _never
    # Bounds on the run (app.jobs.limits); None: unbounded (tests running jobs in-process).
    max_run_seconds: float | None = None
    max_run_memory_mb: float | None = None
    cancel_requested: bool = False
    lost: bool = False
    started: float = field(default_factory=time.monotonic)
    over_time: str | None = None  # why the run was stopped for its time, once it was

    def cancelled(self) -> bool:
        return self.cancel_requested or self.lost or self.shutdown()

    def stop_reason(self) -> str | None:
        """Why the run should stop now (it becomes the trace's stop reason), or None."""
        if self.cancel_requested:
            return "cancelled at the user's request"
        if self.lost or self.shutdown():
            return "the worker stopped; the run goes back to the queue"
        self.over_time = self.over_time or limits.time_exceeded(self.started, self.max_run_seconds)
        return self.over_time

    def seconds_left(self) -> float | None:
        return limits.seconds_left(self.started, self.max_run_seconds)


@dataclass(frozen=True)
class JobSpec:
    """The run and its data set as rows detached from any database session (a job holds no
    connection while the engine works)."""

    run: Run
    dataset: Dataset

    @classmethod
    @retried
    def load(cls, db: Engine, run_id: int) -> JobSpec:
        with Session(db) as session:
            run = session.get(Run, run_id)
            if run is None:  # deleted meanwhile
                raise NotFound(f"run {run_id} does not exist")
            dataset = session.get(Dataset, run.dataset_id)
            if dataset is None:
                raise NotFound(f"data set {run.dataset_id} does not exist")
            session.expunge_all()
        return cls(run, dataset)


@dataclass
class ProgressMeter:
    """Fraction done, from the events so far, as the engine's ``Config.progress`` reads them."""

    config: engine.Config
    steps: int = 0  # support-changing events so far
    iterations: int = 0  # iterations that kept the support
    size: int | None = None  # support size after the latest event; None before the first

    @classmethod
    def for_job(cls, job: JobSpec) -> ProgressMeter:
        run = job.run
        config = engine.check_config(
            run.algorithm,
            run.objective,
            k=run.k,
            params=run.params,
            n_features=job.dataset.n_features,
        )
        return cls(config)

    def observe(self, event: Event) -> None:
        self.steps += event.kind in SUPPORT_CHANGING
        self.iterations += event.kind == "iterate"
        self.size = event.support_size

    @property
    def progress(self) -> float:
        return self.config.progress(self.steps, self.size, self.iterations)


@dataclass
class TraceWriter:
    """The recorder callback: buffer events, write them every ``batch_events`` events or
    ``batch_seconds`` seconds, and tell the engine whether to go on."""

    ctx: JobContext
    meter: study_part.Meter
    buffer: list[dict[str, Any]] = field(default_factory=list)
    last_write: float = -math.inf  # the first event goes out at once: the run visibly starts
    keep_events: bool = True  # a part of a study stores its small result, not its events

    def __call__(self, event: Event) -> bool | str:
        self.meter.observe(event)
        if self.keep_events:
            self.buffer.append(
                {
                    "run_id": self.ctx.claim.run_id,
                    "step": event.step,
                    "kind": event.kind,
                    "data": event.to_dict(),
                }
            )
        due = time.monotonic() - self.last_write >= self.ctx.batch_seconds
        if due or len(self.buffer) >= self.ctx.batch_events:
            self.write()
        return self.ctx.stop_reason() or True

    def poll(self) -> bool | str:
        """Asked by the engine between events (``Recorder.checkpoint``): go on, or why not."""
        return self.ctx.stop_reason() or True

    def write(self) -> None:
        rows, self.buffer = self.buffer, []
        self.last_write = time.monotonic()
        if self.ctx.lost:
            return
        try:
            self.ctx.cancel_requested = lease.beat(
                self.ctx.db, self.ctx.claim, self.meter.progress, rows
            )
        except lease.LeaseLost:
            self.ctx.lost = True
        except Exception as exc:
            if not is_transient(exc):
                raise
            # The retries ran out (a dropped connection, a long lock): the rows go with the
            # next batch; the run goes on, and a worker that really lost the database is
            # found dead by its backend's liveness check.
            log.warning("trace batch of run %s not written; retried", self.ctx.claim.run_id)
            self.buffer[:0] = rows

    def drain(self) -> list[dict[str, Any]]:
        rows, self.buffer = self.buffer, []
        return rows


@contextmanager
def heartbeat(ctx: JobContext, meter: study_part.Meter) -> Iterator[None]:
    """Beat from a thread too: one engine step may outlast the stale-heartbeat limit."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(ctx.heartbeat_seconds) and not ctx.lost:
            try:
                ctx.cancel_requested = lease.beat(ctx.db, ctx.claim, meter.progress)
            except lease.LeaseLost:
                ctx.lost = True
            except Exception:  # a busy database: the next beat may get through
                log.exception("heartbeat of run %s failed", ctx.claim.run_id)

    thread = threading.Thread(target=beat, name=f"heartbeat-{ctx.claim.run_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def run_job(run_id: int, ctx: JobContext) -> RunStatus | None:
    """Run a claimed run to its end; return the status stored (None: the claim was lost)."""
    ctx.started, ctx.over_time = time.monotonic(), None
    limits.limit_memory(ctx.max_run_memory_mb)
    job = JobSpec.load(ctx.db, run_id)
    part = study_part.load(ctx.db, job.run, job.dataset)  # a CV fold, a stability subsample
    meter = study_part.meter_of(part, ProgressMeter) if part else ProgressMeter.for_job(job)
    writer = TraceWriter(ctx, meter, keep_events=part is None)
    result: RunResult | dict[str, Any] | None = None
    error: str | None = None
    with heartbeat(ctx, meter):
        try:
            if part is not None:
                result, stopped = part.execute(ctx.store, writer)
            else:
                result, stopped = _select(job, writer)
        except Exception as exc:  # any failure is the run's outcome, reported to its user
            if is_transient(exc):  # not the run's fault: it runs again (see the docstring)
                log.warning("run %s: the database stayed unavailable; run given up", run_id)
                ctx.lost = True
            else:
                log.info("run %s failed", run_id, exc_info=True)
            error = run_errors.describe(exc)
            if isinstance(exc, MemoryError):
                error = limits.memory_exceeded(ctx.max_run_memory_mb)
            stopped = False
    if ctx.lost:
        return None
    if stopped and ctx.over_time:  # stopped by its time limit: a failure, saying why
        stopped, error, result = False, ctx.over_time, None
    if stopped and not ctx.cancel_requested:  # stopped for the worker's shutdown
        lease.release(ctx.db, ctx.claim)
        return RunStatus.queued
    status = RunStatus.failed if error else RunStatus.cancelled if stopped else RunStatus.done
    try:
        lease.finish(
            ctx.db,
            ctx.claim,
            status,
            result=result.model_dump() if isinstance(result, RunResult) else result,
            error=error,
            events=writer.drain(),
        )
    except lease.LeaseLost:
        return None
    if part is not None and status == RunStatus.failed:
        lease.cancel_parts(ctx.db, part.siblings)  # the study has failed: spare the others
    return status


def _select(job: JobSpec, writer: TraceWriter) -> tuple[RunResult, bool]:
    """Run the engine; return the summary and whether the recorder stopped it early."""
    run, dataset = job.run, job.dataset
    if table_pass.is_reference(dataset):  # a table larger than memory: from its statistics
        return table_pass.select_from_table(run, dataset, writer.ctx.store, writer)
    arrays = retry(lambda: writer.ctx.store.load(dataset.file))  # a database store may be busy
    X, y = storage.unpack_matrix(arrays), arrays["y"]
    train, test = split_rows(y, dataset.task, run.test_fraction, run.seed)
    result = select_run(run, dataset, X[train], y[train], recorder=writer)
    summary = summarise(
        result,
        names=dataset.feature_names,
        task=engine.OBJECTIVES[run.objective].task,
        train=(X[train], y[train]),
        test=(X[test], y[test]) if test is not None else None,
        true_support=dataset.true_support,
    )
    if not result.cancelled and not writer.ctx.cancelled():
        judged = judging.judge_run(
            run, result, X[train], y[train], seconds_left=writer.ctx.seconds_left()
        )
        summary.judged_as = judged.judged_as
        summary.certificate, summary.exact = judged.certificate, judged.exact
        for event in judged.events:  # the certificate, told in the trace's checks
            writer(event)
    return summary, result.cancelled
