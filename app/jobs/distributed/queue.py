"""The distributed backend's queue: Procrastinate on the app's own PostgreSQL database.

Shared by the web process (which defers a job in the transaction that inserts its run) and by
``python -m app worker`` (which runs the jobs). A job carries the run id only and runs the same
``app.jobs.tasks.run_job`` as the in-process workers.

Liveness has one source of truth here: Procrastinate's worker heartbeats. A worker that stops
beating has its running jobs retried (``app.jobs.distributed.worker.RETRY_STALLED``, run by every
worker every MONITOR_SECONDS once the heartbeat is STALE_AFTER_SECONDS old), and the next
holder takes the run over (``lease.take_over``: the run's attempt counter, at most
``max_attempts``, and its trace starts again). The runs table's heartbeat is still written with
each trace batch (progress and the cancel flag travel with it), but nothing here reads its age;
the lease token only fences off a worker that was wrongly declared dead.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import procrastinate
import psycopg
import sqlalchemy.exc
from procrastinate.retry import BaseRetryStrategy, RetryDecision
from procrastinate.schema import SchemaManager
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url
from sqlmodel import Session

from app.config import Settings
from app.db.transient import is_transient
from app.jobs import lease
from app.jobs.tasks import JobContext, run_job
from app.models import RunStatus
from app.storage import ArrayStore, make_store

log = logging.getLogger(__name__)

TASK_NAME = "foba.run"
QUEUE_NAME = "runs"
STATE_KEY = "foba"  # the worker's state in Procrastinate's additional_context
SCHEMA_LOCK = 0x466F_4261  # advisory lock: web and workers starting together apply it once
MAX_RETRY_WAIT_SECONDS = 60

# Which Procrastinate worker runs where: its own table knows only ids and heartbeats. Rows go
# with their worker (pruned by Procrastinate once its heartbeat is long stale).
HOSTS_DDL = """
CREATE TABLE IF NOT EXISTS foba_queue_workers (
    worker_id bigint PRIMARY KEY REFERENCES procrastinate_workers(id) ON DELETE CASCADE,
    host text NOT NULL,
    pid integer NOT NULL
)"""


class NeedsPostgres(RuntimeError):
    """The settings ask for the distributed backend on a database that cannot hold it."""


class HandedBack(Exception):
    """The worker is stopping: the run went back to the queue and its job is retried now."""


def conninfo(database_url: str) -> str:
    """The libpq URL of a SQLAlchemy PostgreSQL URL; NeedsPostgres for any other database."""
    url = make_url(database_url)
    if url.get_backend_name() != "postgresql":
        raise NeedsPostgres(
            "JOB_BACKEND=procrastinate needs PostgreSQL (DATABASE_URL=postgresql://...), the "
            f"database its queue lives in; this DATABASE_URL is {url.get_backend_name()}. "
            "Use JOB_BACKEND=inprocess with SQLite."
        )
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def ensure_schema(info: str) -> None:
    """Apply Procrastinate's schema (and our worker-host table) unless it is there already."""
    with psycopg.connect(info) as conn:  # one transaction: all of the schema or none
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        found = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
        if found is None or found[0] is None:
            log.info("applying Procrastinate's schema")
            conn.execute(SchemaManager.get_schema())
        conn.execute(HOSTS_DDL)


def transient(exc: BaseException) -> bool:
    """An error of the connection, not of the run: its job is retried and the run taken over.
    Procrastinate's own connector raises psycopg's errors unwrapped."""
    unwrapped = (psycopg.OperationalError, psycopg.InterfaceError, sqlalchemy.exc.InterfaceError)
    return is_transient(exc) or isinstance(exc, unwrapped)


class RunRetry(BaseRetryStrategy):
    """A handed-back run's job is retried at once; a job that lost its database connection
    after a growing wait, for as long as it takes (the run row counts the attempts that
    actually ran). Anything else is a bug: the job fails, and ``run_task`` has failed the run."""

    def get_retry_decision(self, *, exception: BaseException, job: Any) -> RetryDecision | None:
        if isinstance(exception, HandedBack):
            return RetryDecision(retry_in={"seconds": 0})
        if transient(exception):
            wait = min(2 ** min(job.attempts, 6), MAX_RETRY_WAIT_SECONDS)
            return RetryDecision(retry_in={"seconds": wait})
        return None


def make_queue(info: str, **pool: Any) -> procrastinate.App:
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=info, **pool))
    app.task(name=TASK_NAME, queue=QUEUE_NAME, pass_context=True, retry=RunRetry())(run_task)
    purge = app.task(name=PURGE_TASK, queue=QUEUE_NAME, pass_context=True)(purge_old_jobs)
    app.periodic(cron=PURGE_CRON, periodic_id="purge")(purge)
    return app


# Procrastinate keeps every finished job and its events until told otherwise; the runs table
# holds what users see, so a finished job is only worth keeping a while for debugging.
PURGE_TASK = "foba.purge"
PURGE_CRON = "23 * * * *"  # hourly, off the hour
KEEP_FINISHED_JOBS_HOURS = 24


async def purge_old_jobs(context: procrastinate.JobContext, timestamp: int) -> None:
    """Delete the queue's jobs (and their events) finished more than a day ago, whatever
    their outcome; deferred by the workers' periodic scheduler."""
    await context.app.job_manager.delete_old_jobs(
        nb_hours=KEEP_FINISHED_JOBS_HOURS,
        queue=None,
        include_failed=True,
        include_cancelled=True,
        include_aborted=True,
    )


def defer_runs(app: procrastinate.App, session: Session, run_ids: Sequence[int]) -> None:
    """Defer one job per run on the session's own connection, inside its open transaction.

    Each job's lock is its run: the database refuses a second waiting job for a run
    (``AlreadyEnqueued``), and two jobs of one run never execute at the same time."""
    connection = session.connection().connection.driver_connection
    task = app.tasks[TASK_NAME]
    jobs = [
        task.configure(lock=_lock(i), queueing_lock=_lock(i)).make_new_job(run_id=i)
        for i in run_ids
    ]
    app.job_manager.batch_defer_jobs(jobs=jobs, connection=connection)


def _lock(run_id: int) -> str:
    return f"foba-run-{run_id}"


# --------------------------------------------------------------------------- the job


@dataclass
class WorkerState:
    """What the jobs of one worker process share."""

    settings: Settings
    db: Engine
    name: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    stopping: threading.Event = field(default_factory=threading.Event)
    parent: int | None = None  # the supervisor's pid, when there is one
    store: ArrayStore = field(init=False)

    def __post_init__(self) -> None:
        self.store = make_store(self.settings.storage, self.settings.data_dir, self.db)


def run_task(context: procrastinate.JobContext, run_id: int) -> str | None:
    """The job: take the run over, run it, and hand it back if the worker is stopping."""
    state: WorkerState = context.additional_context[STATE_KEY]
    settings = state.settings
    held = lease.take_over(state.db, run_id, state.name, settings.max_attempts)
    if held is None:  # cancelled while queued, finished, or out of attempts
        return None
    ctx = JobContext(
        db=state.db,
        store=state.store,
        claim=held,
        batch_events=settings.trace_batch_events,
        batch_seconds=settings.trace_batch_seconds,
        heartbeat_seconds=settings.heartbeat_seconds,
        shutdown=lambda: state.stopping.is_set() or context.should_abort(),
        max_run_seconds=settings.max_run_seconds,
        max_run_memory_mb=settings.max_run_memory_mb,
    )
    try:
        status = run_job(run_id, ctx)
    except Exception as exc:
        if not transient(exc):  # a transient one is retried: the next holder takes over
            _fail(state.db, held, exc)
        raise
    if status == RunStatus.queued:
        raise HandedBack(f"run {run_id} went back to the queue: its worker is stopping")
    return status.value if status else None


def _fail(db: Engine, held: lease.Claim, exc: Exception) -> None:
    """A failure outside the engine (the engine's own are the run's outcome, in run_job)."""
    log.error("run %s failed outside the engine", held.run_id, exc_info=exc)
    try:
        lease.finish(
            db,
            held,
            RunStatus.failed,
            error=f"internal error ({type(exc).__name__}); the server log has the details",
        )
    except Exception:  # the web process adopts the run at its next start
        log.exception("could not store the failure of run %s", held.run_id)


def defer_jobless(app: procrastinate.App, db: Engine, run_ids: Sequence[int] | None = None) -> int:
    """Defer a job for each unfinished run (of ``run_ids``, or any) that has none waiting or
    running; return how many. At the web process's start this adopts runs queued under the
    in-process backend before a switch, or whose job failed; after a commit it catches runs
    that code inserted without ``JobBackend.enqueue``."""
    query = (
        "SELECT r.id FROM runs r WHERE r.status IN ('queued', 'running')"
        + (" AND r.id = ANY(:ids)" if run_ids is not None else "")
        + " AND NOT EXISTS (SELECT 1 FROM procrastinate_jobs j WHERE j.task_name = :task"
        " AND j.status IN ('todo', 'doing') AND (j.args->>'run_id')::bigint = r.id)"
        " ORDER BY r.id"
    )
    params = {"task": TASK_NAME, "ids": list(run_ids or ())}
    with Session(db) as session:
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK})
        jobless = session.execute(text(query), params).scalars().all()
        if jobless:
            defer_runs(app, session, jobless)
            session.commit()
    if jobless:
        log.warning("deferred jobs for %d unfinished runs that had none", len(jobless))
    return len(jobless)


# --------------------------------------------------------------------------- what /healthz shows


def describe(db: Engine) -> dict[str, Any]:
    """The workers seen (host, pid, last heartbeat) and the jobs waiting and running."""
    with db.connect() as conn:
        workers = conn.execute(
            text(
                "SELECT h.host, h.pid, w.last_heartbeat FROM procrastinate_workers w"
                " LEFT JOIN foba_queue_workers h ON h.worker_id = w.id ORDER BY w.id"
            )
        ).all()
        counts: dict[str, int] = dict(
            conn.execute(
                text(
                    "SELECT status::text, count(*) FROM procrastinate_jobs"
                    " WHERE status IN ('todo', 'doing') GROUP BY status"
                )
            ).all()
        )
    return {
        "backend": "procrastinate",
        "workers": [
            {"host": host, "pid": pid, "last_heartbeat": _iso(beat)} for host, pid, beat in workers
        ],
        "queue": {"waiting": counts.get("todo", 0), "running": counts.get("doing", 0)},
    }


def alive_here(db: Engine, host: str, within_seconds: float) -> bool:
    """A worker of ``host`` has beaten within the last ``within_seconds`` (a container's health
    check: ``python -m app worker --check``)."""
    with db.connect() as conn:
        return bool(
            conn.execute(
                text(
                    "SELECT count(*) FROM procrastinate_workers w"
                    " JOIN foba_queue_workers h ON h.worker_id = w.id WHERE h.host = :host"
                    " AND w.last_heartbeat > NOW() - make_interval(secs => :seconds)"
                ),
                {"host": host, "seconds": within_seconds},
            ).scalar()
        )


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None
