"""The web process's side of ``JOB_BACKEND=procrastinate``: defer jobs, report the queue.

Workers run elsewhere (``python -m app worker``, on any host with ``DATABASE_URL``); this
process only makes sure the queue's schema exists and adds a job to the transaction of each
run it inserts.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

from app.config import Settings
from app.jobs.distributed import queue

log = logging.getLogger(__name__)


class ProcrastinateBackend:
    def __init__(self, settings: Settings, db: Engine) -> None:
        self.info = queue.conninfo(settings.database_url)  # refuses anything but PostgreSQL
        self.db = db
        self.queue = queue.make_queue(self.info)

    def start(self) -> None:
        queue.ensure_schema(self.info)
        queue.defer_jobless(self.queue, self.db)

    def enqueue(self, session: Session, run_ids: Sequence[int]) -> None:
        queue.defer_runs(self.queue, session, run_ids)

    def submit(self, run_id: int) -> None:
        # Normally a no-op: the job came with the run (and woke the workers at commit). A run
        # inserted by code that did not enqueue it gets its job now, outside its transaction.
        try:
            queue.defer_jobless(self.queue, self.db, [run_id])
        except Exception:  # the run is stored: the next start of a web process adopts it
            log.exception("could not check run %s has a job", run_id)

    def stop(self) -> None:
        pass  # jobs were deferred on the request's own connections: nothing of ours is open

    def describe(self) -> dict[str, Any]:
        try:
            return queue.describe(self.db)
        except Exception:  # health answers, and names no SQL: the log has the details
            log.exception("the job queue cannot be read")
            return {"backend": "procrastinate", "queue": "unavailable"}
