"""``python -m app worker``: run the distributed backend's jobs, on any host with DATABASE_URL.

A worker process runs one run at a time, BLAS on one thread as the in-process workers have it;
``WORKER_CONCURRENCY=N`` makes the command supervise N of them with the supervisor the
in-process backend uses too (``app.jobs.supervisor``: SIGTERM and SIGINT passed on as SIGTERM,
a child that died unasked replaced, children stop when the command is gone); runs are
CPU-bound Python and numpy, so threads in one process would share one core's worth of
interpreter. Each child is a complete worker (its own Procrastinate worker, heartbeat and
database pool), so the queue sees N workers on this host. SIGTERM or SIGINT stops a worker
gracefully: its running run stops at its next event and goes back to the queue, and its job is
retried at once (by another worker). Every worker also retries the jobs of workers whose
heartbeat stopped (see ``app.jobs.distributed.queue``) and records its host and pid for
/healthz.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading

from procrastinate.worker import Worker

from app.config import Settings
from app.db import make_db
from app.jobs.distributed import queue
from app.jobs.plugins import load_test_plugins
from app.jobs.supervisor import STOP_GRACE_SECONDS, Supervisor, one_blas_thread
from app.storage import owner_only_files

log = logging.getLogger(__name__)

POOL = {"min_size": 1, "max_size": 3}  # the jobs' own writes go through SQLAlchemy's pool

# The jobs of stalled workers, retried atomically: rows locked and skipped by a concurrent
# reaper, so a job another worker has taken meanwhile is never handed out twice.
RETRY_STALLED = """
WITH stalled AS (
    SELECT job.id FROM procrastinate_jobs job
    WHERE job.status = 'doing' AND job.queue_name = %(queue)s
      AND (job.worker_id IS NULL OR job.worker_id IN (
          SELECT id FROM procrastinate_workers
          WHERE last_heartbeat < NOW() - make_interval(secs => %(seconds)s)))
    FOR UPDATE OF job SKIP LOCKED
)
SELECT id, procrastinate_retry_job_v2(id, NOW(), NULL, NULL, NULL) FROM stalled
"""
RECORD_HOST = """
INSERT INTO foba_queue_workers (worker_id, host, pid) VALUES (%(worker_id)s, %(host)s, %(pid)s)
ON CONFLICT (worker_id) DO NOTHING
"""


def main(settings: Settings | None = None) -> int:
    """Run a worker until SIGTERM/SIGINT; exit code 2 when the settings cannot work."""
    settings = settings or Settings()
    try:
        if settings.job_backend != "procrastinate":
            raise queue.NeedsPostgres(
                "a worker serves JOB_BACKEND=procrastinate: set it, and DATABASE_URL="
                "postgresql://..., for the web process and the workers alike"
            )
        info = queue.conninfo(settings.database_url)
    except queue.NeedsPostgres as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2
    one_blas_thread()
    queue.ensure_schema(info)
    if settings.worker_concurrency > 1:
        return supervise(settings, info)
    return run_one(settings, info)


def supervise(settings: Settings, info: str) -> int:
    """``WORKER_CONCURRENCY`` worker processes until SIGTERM/SIGINT, passed on to them; each
    hands its run back, and the command waits for them all."""
    workers = Supervisor(_child, (settings, info), settings.worker_concurrency)
    stopping = threading.Event()

    def stop(_signum: int, _frame: object) -> None:
        stopping.set()
        workers.signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    workers.start()
    if stopping.is_set():  # asked while the children were starting
        workers.signal(signal.SIGTERM)
    workers.monitor(stopping, settings.monitor_seconds)
    workers.join(grace=None)  # each child stops within its own graceful timeout
    return 0


def _child(settings: Settings, info: str, *, parent: int) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    run_one(settings, info, parent=parent)


def run_one(settings: Settings, info: str, parent: int | None = None) -> int:
    """One worker process; ``parent``: the supervisor's pid (an orphan stops)."""
    one_blas_thread()
    load_test_plugins()  # the test suite's own algorithms (unset: nothing)
    owner_only_files()
    db = make_db(settings.database_url, settings.sqlite_busy_timeout_seconds)
    state = queue.WorkerState(settings, db, parent=parent)
    try:
        asyncio.run(_serve(info, state))
    finally:
        db.dispose()
    return 0


async def _serve(info: str, state: queue.WorkerState) -> None:
    app = queue.make_queue(info, **POOL)
    current: list[Worker] = []

    def stop() -> None:
        state.stopping.set()  # read by the running jobs at their next event
        for worker in current:
            worker.stop()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop)
    async with app.open_async():
        # A worker stops by itself when one of its side tasks fails (the database went away);
        # this host then starts another one until it is told to stop.
        while not state.stopping.is_set():
            worker = _worker(app, state)
            current[:] = [worker]
            watch = asyncio.create_task(_watch(app, worker, state))
            try:
                await worker.run()
            except Exception:
                log.exception("worker %s stopped on an error", state.name)
            finally:
                watch.cancel()
            if not state.stopping.is_set():
                await asyncio.sleep(state.settings.poll_seconds)


def _worker(app: queue.procrastinate.App, state: queue.WorkerState) -> Worker:
    settings = state.settings
    return Worker(
        app=app,
        queues=[queue.QUEUE_NAME],
        name=state.name,
        concurrency=1,  # more runs at once: more processes (WORKER_CONCURRENCY)
        install_signal_handlers=False,  # ours also tell the running jobs (state.stopping)
        additional_context={queue.STATE_KEY: state},
        fetch_job_polling_interval=settings.poll_seconds,
        update_heartbeat_interval=settings.heartbeat_seconds,
        stalled_worker_timeout=settings.stale_after_seconds,
        shutdown_graceful_timeout=STOP_GRACE_SECONDS,
    )


async def _watch(app: queue.procrastinate.App, worker: Worker, state: queue.WorkerState) -> None:
    """Record this worker's host once it is registered, then retry stalled workers' jobs."""
    settings = state.settings
    while worker.worker_id is None:
        await asyncio.sleep(0.05)
    host, pid = state.name.rsplit(":", 1)
    recorded = False
    while True:
        orphan = state.parent is not None and os.getppid() != state.parent
        if orphan and not state.stopping.is_set():
            log.warning("worker %s: its supervisor is gone; stopping", state.name)
            state.stopping.set()
            worker.stop()
        try:
            if not recorded:
                await app.connector.execute_query_async(
                    RECORD_HOST, worker_id=worker.worker_id, host=host, pid=int(pid)
                )
                recorded = True
            retried = await app.connector.execute_query_all_async(
                RETRY_STALLED, queue=queue.QUEUE_NAME, seconds=settings.stale_after_seconds
            )
            for row in retried:
                log.warning("job %s lost its worker; retrying it", row["id"])
            await app.job_manager.prune_stalled_workers(10 * settings.stale_after_seconds)
        except Exception as exc:  # the database is away: the next round tries again
            log.warning("retrying stalled jobs failed (%s: %s)", type(exc).__name__, exc)
        await asyncio.sleep(settings.monitor_seconds)
