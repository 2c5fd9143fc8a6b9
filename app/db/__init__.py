"""Database engine: SQLite (WAL, busy timeout, foreign keys) or PostgreSQL, chosen by URL.

The schema is Alembic's business (``app.migrations.prepare_schema``), not ``create_all``.
"""

from __future__ import annotations

import sqlite3
import time
from functools import partial
from typing import Any

from sqlalchemy import Engine, event, text
from sqlalchemy.engine import make_url
from sqlmodel import Session, create_engine

from app import models  # noqa: F401  (registers the tables on SQLModel.metadata)

# Long enough for a trace batch or a claim to finish elsewhere; writes are kept short.
# A longer lock is a transient error: retried by workers, a 503 to clients (app.db.transient).
SQLITE_BUSY_TIMEOUT_SECONDS = 10.0
# PostgreSQL: no statement runs longer than this (migrations lift it for their transaction).
STATEMENT_TIMEOUT_SECONDS = 60.0


def normalise_url(url: str) -> str:
    """Let users write ``postgresql://`` and get psycopg 3 (SQLAlchemy would pick psycopg2)."""
    parsed = make_url(url)
    if parsed.drivername in ("postgres", "postgresql"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def make_db(
    url: str,
    busy_timeout_seconds: float = SQLITE_BUSY_TIMEOUT_SECONDS,
    statement_timeout_seconds: float = STATEMENT_TIMEOUT_SECONDS,
) -> Engine:
    """An engine whose every wait is bounded: a lock held by another writer is waited for at
    most ``busy_timeout_seconds`` (SQLite's busy timeout, PostgreSQL's lock_timeout), a
    PostgreSQL statement runs at most ``statement_timeout_seconds``, and a request waits for a
    pooled connection at most ``busy_timeout_seconds``. Each ends in a transient error
    (``app.db.transient``): a 503 with Retry-After to clients, a retry for workers."""
    url = normalise_url(url)
    if make_url(url).get_backend_name() == "sqlite":
        db = create_engine(url, connect_args={"check_same_thread": False})
        event.listen(db, "connect", partial(_sqlite_pragmas, round(busy_timeout_seconds * 1000)))
        return db
    # connect_args replace the URL's own ``options`` (a search_path, say): keep them in front.
    given = make_url(url).query.get("options", "")
    options = " ".join(
        [
            *([given] if isinstance(given, str) and given else list(given or ())),
            f"-c lock_timeout={round(busy_timeout_seconds * 1000)}",
            f"-c statement_timeout={round(statement_timeout_seconds * 1000)}",
        ]
    )
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_timeout=busy_timeout_seconds,
        connect_args={"options": options, "connect_timeout": max(1, round(busy_timeout_seconds))},
    )


def _sqlite_pragmas(busy_timeout_ms: int, dbapi_connection: Any, _record: Any) -> None:
    # WAL lets the API read while a worker writes; foreign keys are off by default in SQLite.
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
    # WAL is a property of the file, set once. Switching needs the file to itself, and SQLite
    # answers "database is locked" at once (no busy wait) while another connection writes,
    # e.g. a second server opening the database during the first one's migration.
    _use_wal(cursor, busy_timeout_ms / 1000)
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _use_wal(cursor: Any, wait_seconds: float) -> None:
    deadline = time.monotonic() + wait_seconds
    while cursor.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)  # a writer holds the file; it is WAL once that writer is done


def ping(session: Session) -> None:
    """Raise unless the database answers a trivial query."""
    session.execute(text("SELECT 1"))  # exec() takes only selects
