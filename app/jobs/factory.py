"""Builds the job backend the settings name."""

from __future__ import annotations

from sqlalchemy import Engine

from ..config import Settings
from .backend import JobBackend
from .inprocess import InProcessBackend


def make_backend(settings: Settings, db: Engine) -> JobBackend:
    # Settings.job_backend only admits the names listed here.
    backends = {"inprocess": InProcessBackend}
    return backends[settings.job_backend](settings, db)
