"""Builds the job backend the settings name."""

from __future__ import annotations

from sqlalchemy import Engine

from ..config import Settings
from .backend import JobBackend


def make_backend(settings: Settings, db: Engine) -> JobBackend:
    # Settings.job_backend only admits the names listed here. Imported on demand: the
    # in-process backend never loads Procrastinate.
    if settings.job_backend == "procrastinate":
        from .distributed import ProcrastinateBackend

        return ProcrastinateBackend(settings, db)
    from .inprocess import InProcessBackend

    return InProcessBackend(settings, db)
