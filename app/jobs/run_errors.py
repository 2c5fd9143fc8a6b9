"""What a failed run tells its user: what happened and what to do, never the server's inner
workings (SQL, parameters, claim tokens, file paths) that an exception's text may carry."""

from __future__ import annotations

import re

from sqlalchemy.exc import SQLAlchemyError

from app.errors import AppError

MAX_CHARS = 2000
_SQLALCHEMY_TAIL = re.compile(r"\s*(\[SQL: |\[parameters: |\(Background on this error).*", re.S)
_DRIVER_PREFIX = re.compile(r"^\((?:[\w.]+)\)\s*")  # "(sqlite3.OperationalError) "
_TOKEN = re.compile(r"\b[0-9a-f]{32}\b", re.I)  # claim tokens, uuid4 hex
_PATH = re.compile(r"(?<![\w.:/])(?:[A-Za-z]:\\|/)[^\s'\"(),;:]*[/\\][^\s'\"(),;:]*")


def describe(exc: BaseException) -> str:
    """The run's error for an exception that ended it."""
    if isinstance(exc, AppError):
        return exc.message
    if isinstance(exc, ValueError):
        return str(exc)
    if isinstance(exc, SQLAlchemyError):
        return "the database refused to store the run's work; submit the run again"
    if isinstance(exc, MemoryError):
        return "the worker ran out of memory; try a smaller problem"
    if isinstance(exc, OSError):  # its str() names the file
        return f"{type(exc).__name__}: {exc.strerror or 'input/output error'}"
    return f"{type(exc).__name__}: {exc}"


def scrub(message: str) -> str:
    """``message`` without SQL, tokens or paths (the last line of defence: applied where run
    errors are stored)."""
    message = _SQLALCHEMY_TAIL.sub("", message)
    message = _DRIVER_PREFIX.sub("", message)
    message = _TOKEN.sub("<token>", message)
    message = _PATH.sub("<path>", message)
    return message.strip()[:MAX_CHARS] or "the run failed"
