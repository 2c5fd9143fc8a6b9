"""What every entity shares: timestamps, statuses, tasks and the bodies of error answers."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Protocol

from sqlmodel import SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


class _Row(Protocol):
    id: int | None


def stored_id(row: _Row) -> int:
    """The id of a row that is in the database (read, or added and flushed): the tables declare
    ids Optional because a new row has none until it is flushed."""
    if row.id is None:
        # A bug of ours, not of the request: answered 500 like any unexpected error.
        raise RuntimeError(f"{type(row).__name__} has no id yet: it was never flushed")
    return row.id


# A deleted data set's, run's or comparison's id is never given to a new one: links stay true.
NO_ID_REUSE = {"sqlite_autoincrement": True}


class RunStatus(StrEnum):
    queued = "queued"
    running = "running"
    done = "done"
    failed = "failed"
    cancelled = "cancelled"


ACTIVE = (RunStatus.queued, RunStatus.running)


class Task(StrEnum):
    regression = "regression"
    classification = "classification"


class Message(SQLModel):
    """Body of every 4xx that is not a validation error (those use FastAPI's shape)."""

    detail: str


class ServerError(Message):
    """507 (disk full) and 500 (unexpected): the id the server's log names the failure by."""

    request_id: str
