"""The job-backend interface: how the web process hands run ids to workers.

A backend carries ids only; runs live in the database. ``enqueue`` is called with the session
that inserted the runs, before its commit, so a backend whose queue lives in the same database
makes the jobs part of that transaction (a run and its job exist together or not at all).
``submit`` is a hint after the commit that a run is queued (the in-process workers also find
queued runs by themselves), so a lost hint delays a run but never loses it. Every backend has
its workers claim the run and call ``app.jobs.tasks.run_job``.

This module is the interface alone: the services that submit runs import it, and it imports
nothing of theirs (``app.jobs.factory`` builds the configured backend).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from sqlmodel import Session


class JobBackend(Protocol):
    def start(self) -> None:
        """Start workers/supervision; called once by the app's lifespan."""

    def enqueue(self, session: Session, run_ids: Sequence[int]) -> None:
        """Runs were inserted (flushed, not committed) in ``session``'s transaction."""

    def submit(self, run_id: int) -> None:
        """A queued run exists (the row is committed)."""

    def stop(self) -> None:
        """Stop workers; runs in progress go back to the queue."""

    def describe(self) -> dict[str, Any]:
        """State for /healthz."""
