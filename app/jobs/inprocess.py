"""The default backend: worker processes (spawn context) supervised by the web process.

Workers claim queued runs from the database themselves (see ``lease``); the queue between the
web process and the workers only wakes idle workers early. The supervisor thread replaces
workers that died and requeues runs whose heartbeat went stale.

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
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

from app.config import Settings, StorageKind
from app.db import make_db
from app.jobs import lease
from app.jobs.plugins import load_test_plugins
from app.jobs.tasks import JobContext, run_job
from app.storage import ArrayStore, make_store, owner_only_files

log = logging.getLogger(__name__)

STOP_GRACE_SECONDS = 10.0  # a stopping worker ends its engine call at the next event
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
        )


_BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def worker_main(config: WorkerConfig, wake: Queue, stop: Event) -> None:
    """A worker process: claim queued runs and run them until told to stop."""
    # Ctrl+C reaches the whole process group; the supervisor decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(WORKER_NICENESS)  # CPU-bound runs yield to the web process's requests
    load_test_plugins()  # the test suite's own algorithms (unset: nothing)
    owner_only_files()
    db = make_db(config.database_url, config.busy_timeout_seconds)
    store = make_store(config.storage, config.data_dir, db)
    name = f"{socket.gethostname()}:{os.getpid()}"
    parent = os.getppid()
    try:
        while not stop.is_set() and os.getppid() == parent:  # an orphan stops
            try:
                held = lease.claim_next(db, name)
                if held is None:
                    _wait(wake, config.poll_seconds)
                    continue
                run_job(held.run_id, _context(config, db, store, held, stop))
            except Exception:  # the run's heartbeat stops with it, so it will be requeued
                log.exception("worker %s: job failed outside the run", name)
                _wait(wake, config.poll_seconds)
    finally:
        db.dispose()


def _context(
    config: WorkerConfig, db: Engine, store: ArrayStore, held: lease.Claim, stop: Event
) -> JobContext:
    return JobContext(
        db=db,
        store=store,
        claim=held,
        batch_events=config.batch_events,
        batch_seconds=config.batch_seconds,
        heartbeat_seconds=config.heartbeat_seconds,
        shutdown=stop.is_set,
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
        self._mp = mp.get_context("spawn")  # fork would copy the web process's threads and locks
        self._wake: Queue = self._mp.Queue()
        self._stop = self._mp.Event()
        self._halt = threading.Event()
        self._workers: list[BaseProcess] = []
        self._supervisor: threading.Thread | None = None

    def start(self) -> None:
        self._reap()  # runs of a previous server whose workers are gone
        self._workers = [self._spawn() for _ in range(self.settings.workers)]
        self._supervisor = threading.Thread(target=self._supervise, name="job-supervisor")
        self._supervisor.start()

    def enqueue(self, session: Session, run_ids: Sequence[int]) -> None:
        pass  # the queued rows are the queue: workers claim them from the runs table

    def submit(self, run_id: int) -> None:
        if self._workers:  # nobody would read the hint on an API-only node
            self._wake.put(run_id)

    def stop(self) -> None:
        self._halt.set()
        if self._supervisor is not None:
            self._supervisor.join()
        self._stop.set()
        for _ in self._workers:
            self._wake.put(None)  # idle workers leave their wait at once
        for process in self._workers:
            process.join(STOP_GRACE_SECONDS)
            if process.is_alive():
                log.warning("worker %s did not stop in time; killing it", process.pid)
                process.kill()
                process.join()
        self._wake.cancel_join_thread()
        self._wake.close()
        self._reaper_db.dispose()

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "inprocess",
            "workers": len(self._workers),
            "alive": sum(p.is_alive() for p in self._workers),
            "pids": [p.pid for p in self._workers],
        }

    def _spawn(self) -> BaseProcess:
        config = WorkerConfig.of(self.settings)
        # One BLAS thread per worker: the workers already use the cores, and an oversubscribed
        # BLAS makes the engine's many small products wait on each other (measured: sparse OMP
        # 7.4 s with two threads per process against 1.4 s with one, on 2 busy cores).
        # A spawned child inherits the environment as it is when it starts.
        for var in _BLAS_THREAD_VARS:
            os.environ.setdefault(var, "1")
        process = self._mp.Process(
            target=worker_main,
            args=(config, self._wake, self._stop),
            name="foba-worker",
            daemon=True,
        )
        process.start()
        return process

    def _supervise(self) -> None:
        while not self._halt.wait(self.settings.monitor_seconds):
            self._replace_dead()
            self._reap()

    def _replace_dead(self) -> None:
        for i, process in enumerate(self._workers):
            if not process.is_alive():
                log.warning(
                    "worker %s exited (code %s); starting another", process.pid, process.exitcode
                )
                self._workers[i] = self._spawn()

    def _reap(self) -> None:
        if time.monotonic() < self._judge_after:
            return
        try:
            requeued = lease.requeue_stale(
                self._reaper_db, self.settings.stale_after_seconds, self.settings.max_attempts
            )
        except Exception:  # a busy database: let the workers beat again first
            log.warning("requeueing stale runs failed; the database is busy", exc_info=True)
            self._judge_after = time.monotonic() + self.settings.stale_after_seconds
            return
        for _ in range(requeued if self._workers else 0):
            self._wake.put(None)
