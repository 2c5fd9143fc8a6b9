"""The default backend: worker processes supervised by the web process (``supervisor``).

Workers claim queued runs from the database themselves (see ``lease``); the queue between the
web process and the workers only wakes idle workers early. A monitoring thread replaces
workers that died and requeues runs whose heartbeat went stale. SIGTERM (sent by the
supervisor when the server stops) stops a worker: its running run stops at its next event.

While the database is unavailable (a lock held elsewhere, a restart) no worker can beat, so
every heartbeat looks stale: the supervisor does not wait for such a lock (a short busy
timeout of its own) and, once it could not reach the database, waits a whole stale period
before judging heartbeats again, so that the workers' retried beats get through first.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import queue
import signal
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

from app.config import Settings, StorageKind
from app.db import make_db
from app.db.transient import is_transient
from app.jobs import lease
from app.jobs.plugins import load_test_plugins
from app.jobs.supervisor import Supervisor
from app.jobs.tasks import JobContext, run_job
from app.storage import ArrayStore, make_store, owner_only_files

log = logging.getLogger(__name__)

REAPER_WAIT_SECONDS = 0.2  # the supervisor's busy timeout: it tries again next round
WORKER_NICENESS = 10


@dataclass(frozen=True)
class WorkerConfig:
    """What a worker process needs (picklable: it crosses the spawn boundary)."""

    database_url: str
    busy_timeout_seconds: float
    storage: StorageKind
    data_dir: Path
    poll_seconds: float
    heartbeat_seconds: float
    batch_events: int
    batch_seconds: float
    max_run_seconds: float
    max_run_memory_mb: float

    @classmethod
    def of(cls, settings: Settings) -> WorkerConfig:
        return cls(
            database_url=settings.database_url,
            busy_timeout_seconds=settings.sqlite_busy_timeout_seconds,
            storage=settings.storage,
            data_dir=settings.data_dir,
            poll_seconds=settings.poll_seconds,
            heartbeat_seconds=settings.heartbeat_seconds,
            batch_events=settings.trace_batch_events,
            batch_seconds=settings.trace_batch_seconds,
            max_run_seconds=settings.max_run_seconds,
            max_run_memory_mb=settings.max_run_memory_mb,
        )


def worker_main(config: WorkerConfig, wake: Queue, *, parent: int) -> None:
    """A worker process: claim queued runs and run them until SIGTERM, or until ``parent``
    (the supervising web process) is gone."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
    os.nice(WORKER_NICENESS)  # CPU-bound runs yield to the web process's requests
    load_test_plugins()  # the test suite's own algorithms (unset: nothing)
    owner_only_files()
    db = make_db(config.database_url, config.busy_timeout_seconds)
    store = make_store(config.storage, config.data_dir, db)
    name = f"{socket.gethostname()}:{os.getpid()}"
    try:
        while not stop.is_set() and os.getppid() == parent:  # an orphan stops
            try:
                held = lease.claim_next(db, name)
                if held is None:
                    _wait(wake, config.poll_seconds)
                    continue
                run_job(held.run_id, _context(config, db, store, held, stop, parent))
            except Exception as exc:  # the run's heartbeat stops with it: it will be requeued
                if is_transient(exc):  # a busy or briefly gone database: the next poll retries
                    log.warning("worker %s: the database is busy (%s); retrying", name, exc)
                else:
                    log.exception("worker %s: job failed outside the run", name)
                _wait(wake, config.poll_seconds)
    finally:
        db.dispose()


def _context(
    config: WorkerConfig,
    db: Engine,
    store: ArrayStore,
    held: lease.Claim,
    stop: threading.Event,
    parent: int,
) -> JobContext:
    def stopping() -> bool:
        # A server killed without stopping its workers must not leave one computing on,
        # orphaned: its run stops at the next event or cancellation point.
        return stop.is_set() or os.getppid() != parent

    return JobContext(
        db=db,
        store=store,
        claim=held,
        batch_events=config.batch_events,
        batch_seconds=config.batch_seconds,
        heartbeat_seconds=config.heartbeat_seconds,
        shutdown=stopping,
        max_run_seconds=config.max_run_seconds,
        max_run_memory_mb=config.max_run_memory_mb,
    )


def _wait(wake: Queue, seconds: float) -> None:
    try:
        wake.get(timeout=seconds)
    except queue.Empty:
        pass


class InProcessBackend:
    def __init__(self, settings: Settings, db: Engine) -> None:
        self.settings = settings
        self.db = db
        wait = min(REAPER_WAIT_SECONDS, settings.sqlite_busy_timeout_seconds)
        self._reaper_db = make_db(settings.database_url, busy_timeout_seconds=wait)
        self._judge_after = 0.0  # monotonic time before which heartbeats are not judged
        self._wake: Queue = mp.get_context("spawn").Queue()
        self._halt = threading.Event()
        self._workers = Supervisor(
            worker_main, (WorkerConfig.of(settings), self._wake), settings.workers, daemon=True
        )
        self._monitor: threading.Thread | None = None

    def start(self) -> None:
        self._reap()  # runs of a previous server whose workers are gone
        self._workers.start()
        self._monitor = threading.Thread(target=self._supervise, name="job-supervisor")
        self._monitor.start()

    def enqueue(self, session: Session, run_ids: Sequence[int]) -> None:
        pass  # the queued rows are the queue: workers claim them from the runs table

    def submit(self, run_id: int) -> None:
        # Nobody would read the hint on an API-only node, or once the server stops.
        if self._workers.count and not self._halt.is_set():
            self._wake.put(run_id)

    def stop(self) -> None:
        self._halt.set()
        if self._monitor is not None:
            self._monitor.join()
        self._workers.signal(signal.SIGTERM)
        for _ in range(self._workers.count):
            self._wake.put(None)  # idle workers leave their wait at once
        self._workers.join()
        # The queue's semaphores are named system resources: released now, not whenever the
        # interpreter gets to its exit handlers (a second Ctrl-C during them, or an exit
        # without them, left the resource tracker warning of leaked semaphores).
        self._wake.close()
        self._wake.join_thread()
        del self._wake
        self._reaper_db.dispose()

    def describe(self) -> dict[str, Any]:
        return {"backend": "inprocess", **self._workers.describe()}

    def _supervise(self) -> None:
        while not self._halt.wait(self.settings.monitor_seconds):
            self._workers.replace_dead()
            self._reap()

    def _reap(self) -> None:
        if time.monotonic() < self._judge_after:
            return
        try:
            requeued = lease.requeue_stale(
                self._reaper_db, self.settings.stale_after_seconds, self.settings.max_attempts
            )
        except Exception as exc:  # a busy database: let the workers beat again first
            # A lock held by a worker's write is expected under load: a line, no traceback.
            log.warning(
                "requeueing stale runs failed; the database is busy (%s)",
                exc,
                exc_info=not is_transient(exc),
            )
            self._judge_after = time.monotonic() + self.settings.stale_after_seconds
            return
        for _ in range(requeued if self._workers.count else 0):
            self._wake.put(None)
