"""The job-backend interface: how the web process hands run ids to workers.

A backend carries ids only; runs live in the database. ``submit`` is a hint that a run is
queued (workers also find queued runs by themselves), so a lost hint delays a run but never
loses it. A distributed backend (e.g. Procrastinate on PostgreSQL) implements the same four
methods and has its task claim the run and call ``app.jobs.tasks.run_job``.
"""

from __future__ import annotations

from typing import Any, Protocol

from sqlalchemy import Engine

from ..config import Settings
from .inprocess import InProcessBackend


class JobBackend(Protocol):
    def start(self) -> None:
        """Start workers/supervision; called once by the app's lifespan."""

    def submit(self, run_id: int) -> None:
        """A queued run exists (the row is committed)."""

    def stop(self) -> None:
        """Stop workers; runs in progress go back to the queue."""

    def describe(self) -> dict[str, Any]:
        """State for /healthz."""


def make_backend(settings: Settings, engine: Engine) -> JobBackend:
    # Settings.job_backend only admits the names listed here.
    backends = {"inprocess": InProcessBackend}
    return backends[settings.job_backend](settings, engine)
