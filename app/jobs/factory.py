"""Builds the job backend the settings name."""

from __future__ import annotations

from sqlalchemy import Engine

from app.config import Settings
from app.jobs.backend import JobBackend


def make_backend(settings: Settings, db: Engine) -> JobBackend:
    # Settings.job_backend only admits the names listed here. Imported on demand: the
    # in-process backend never loads Procrastinate.
    if settings.job_backend == "procrastinate":
        from app.jobs.distributed.backend import ProcrastinateBackend

        return ProcrastinateBackend(settings, db)
    from app.jobs.inprocess import InProcessBackend

    return InProcessBackend(settings, db)
