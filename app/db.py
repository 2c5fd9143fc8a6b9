"""Database engine: SQLite (WAL, busy timeout, foreign keys) or PostgreSQL, chosen by URL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, event, text
from sqlalchemy.engine import make_url
from sqlmodel import Session, SQLModel, create_engine

from . import models  # noqa: F401  (registers the tables on SQLModel.metadata)

# Long enough for a trace batch or a claim to finish elsewhere; writes are kept short.
SQLITE_BUSY_TIMEOUT_MS = 10_000


def normalise_url(url: str) -> str:
    """Let users write ``postgresql://`` and get psycopg 3 (SQLAlchemy would pick psycopg2)."""
    parsed = make_url(url)
    if parsed.drivername in ("postgres", "postgresql"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def make_db(url: str) -> Engine:
    url = normalise_url(url)
    if make_url(url).get_backend_name() == "sqlite":
        db = create_engine(url, connect_args={"check_same_thread": False})
        event.listen(db, "connect", _sqlite_pragmas)
        return db
    return create_engine(url, pool_pre_ping=True)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets the API read while a worker writes; foreign keys are off by default in SQLite.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def create_tables(db: Engine) -> None:
    SQLModel.metadata.create_all(db)


def ping(session: Session) -> None:
    """Raise unless the database answers a trivial query."""
    session.exec(text("SELECT 1"))
