"""Transient database errors: worth another try, never a run's or a request's failure.

A SQLite write lock held longer than the busy timeout, a PostgreSQL connection dropped by a
restart, a serialization failure or a deadlock: the same statement succeeds a moment later.
Workers retry their writes with backoff (``retried``); the API answers 503 with Retry-After
(``app.web.errors``). A full disk is waited out too (its writes are refused, nothing is
stored by halves), and the web process answers it 507. A statement cancelled by PostgreSQL's
statement_timeout and a wait for a pooled connection that ran out are transient too: the
database was slow, not the request wrong.
"""

from __future__ import annotations

import errno
import functools
import logging
import time
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

log = logging.getLogger(__name__)

# Long enough to outlast a backup or vacuum holding the lock, or a database restart; a worker
# that cannot write for longer stops, and its run is requeued (never failed).
RETRY_SECONDS = 120.0
FIRST_DELAY, MAX_DELAY = 0.05, 0.5  # a retry waits the busy timeout too
RETRY_AFTER_SECONDS = 2  # what clients are told to wait

# serialization failure, deadlock, lock not available, statement timeout (query canceled),
# admin/crash shutdown, cannot connect now
DISK_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_PG_TRANSIENT = {"40001", "40P01", "55P03", "57014", "57P01", "57P02", "57P03"}
_SQLITE_TRANSIENT = ("database is locked", "database table is locked", "database is busy")

P = ParamSpec("P")
T = TypeVar("T")


def causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, then what it wraps (a DBAPI error's ``orig``) or was raised from, in turn."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = getattr(current, "orig", None) or current.__cause__ or current.__context__


def _says_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
        return True
    text = str(exc).lower()
    return (
        "database or disk is full" in text
        or "no space left on device" in text
        or type(exc).__name__ == "DiskFull"  # psycopg's SQLSTATE 53100
    )


def is_disk_full(exc: BaseException) -> bool:
    """The disk (or the database's) is full, wherever in the chain of causes it was said."""
    return any(_says_disk_full(cause) for cause in causes(exc))


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, PoolTimeout):
        return True
    if is_disk_full(exc):  # space comes back (a log rotated, a volume grown): wait it out
        return True
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    sqlstate = getattr(exc.orig, "sqlstate", None)
    if sqlstate is not None:
        return sqlstate in _PG_TRANSIENT or sqlstate.startswith("08")  # 08: connection
    if not isinstance(exc, OperationalError):
        return False
    message = str(exc.orig).lower()
    # psycopg's connection failures carry no SQLSTATE; SQLite's locks say so in words.
    return type(exc.orig).__module__.startswith("psycopg") or any(
        text in message for text in _SQLITE_TRANSIENT
    )


def retry(fn: Callable[[], T], seconds: float = RETRY_SECONDS) -> T:
    """``fn()``, tried again with growing pauses while it fails transiently, for at most
    ``seconds``; the last error is raised then (and any other error at once)."""
    give_up = time.monotonic() + seconds
    delay = FIRST_DELAY
    while True:
        try:
            return fn()
        except Exception as exc:
            if not is_transient(exc) or time.monotonic() + delay > give_up:
                raise
            cause = exc.orig if isinstance(exc, DBAPIError) else exc  # a pool timeout has none
            log.warning("transient database error, retrying in %.2f s: %s", delay, cause)
            time.sleep(delay)
            delay = min(delay * 2, MAX_DELAY)


def retried(fn: Callable[P, T]) -> Callable[P, T]:
    """``fn`` retried as ``retry`` does: for functions that are one transaction each."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        return retry(lambda: fn(*args, **kwargs))

    return wrapper
