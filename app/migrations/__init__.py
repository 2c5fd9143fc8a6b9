"""The database schema, managed by Alembic: ``prepare_schema`` runs on every start-up.

* An empty database is brought to the newest revision (head).
* A database made by ``create_all`` before migrations existed (our tables, no
  ``alembic_version``) is stamped as revision 0001, then upgraded.
* A database at a revision this code does not know (made by newer code) stops the start-up
  with a message naming both revisions: older code must not write to a newer schema.
* An older one is upgraded when ``MIGRATE_ON_START`` is true (the default); otherwise the
  start-up stops and names the command: ``python -m app.migrations upgrade``.

Procrastinate's tables are Procrastinate's own: they are neither compared nor migrated here.

Adding a revision (a new column, table or index):

1. Change the model in its module of ``app/models/``.
2. ``python -m app.migrations new "add notes to runs"`` writes
   ``app/migrations/versions/NNNN_add_notes_to_runs.py``, the next number after the current
   head, with the operations Alembic finds between the head schema and the models. Read it:
   give a new NOT NULL column a ``server_default`` (existing rows need a value), and keep
   SQLite-only table rebuilds inside ``op.batch_alter_table`` (Alembic writes them so).
3. ``tests/app/test_migrations.py`` checks that the head schema equals the models on SQLite
   and PostgreSQL, and that upgrading a database holding data keeps it.

Two branches that each add a revision after the same parent get numbers that clash: when
merging, renumber the later one and point its ``down_revision`` at the other.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.pool import NullPool

HERE = Path(__file__).resolve().parent
FIRST = "0001"  # the schema create_all made before migrations existed
LEGACY_MARKER = "datasets"  # a table every create_all database has
_PG_LOCK = 0x464F_4241  # pg_advisory_xact_lock key: one web node migrates at a time


class SchemaError(RuntimeError):
    """The database's schema cannot be used by this code as it is; the message says why."""


def config(connection: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(HERE))
    cfg.attributes["connection"] = connection
    return cfg


def head() -> str:
    current = ScriptDirectory.from_config(config()).get_current_head()
    if current is None:
        raise SchemaError(f"no migration found in {HERE}")
    return current


def prepare_schema(db: Engine, migrate: bool = True) -> str:
    """Bring the schema to head (see the module docstring); return the revision it is at."""
    known = {script.revision for script in ScriptDirectory.from_config(config()).walk_revisions()}
    target = head()
    with _migration_connection(db) as conn, conn.begin():
        if conn.dialect.name == "postgresql":
            # A migration may rewrite big tables and wait for another server's migration:
            # the engine's statement and lock timeouts do not apply to it.
            conn.execute(text("SET LOCAL statement_timeout = 0"))
            conn.execute(text("SET LOCAL lock_timeout = 0"))
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK})
        current = MigrationContext.configure(conn).get_current_revision()
        if current is None and inspect(conn).has_table(LEGACY_MARKER):
            command.stamp(config(conn), FIRST)
            current = FIRST
        if current is not None and current not in known:
            raise SchemaError(
                f"the database schema is at revision {current}, which this code does not know "
                f"(its newest is {target}): it was made by a newer version of FoBa Lab; run "
                "that version, or point DATABASE_URL at another database"
            )
        if current == target:
            return target
        if current is not None and not migrate:
            raise SchemaError(
                f"the database schema is at revision {current}, older than this code's "
                f"{target}; run 'python -m app.migrations upgrade' (back the database up "
                "first), or start with MIGRATE_ON_START=true"
            )
        command.upgrade(config(conn), target)
        _check_foreign_keys(conn)
    return target


@contextmanager
def _migration_connection(db: Engine) -> Iterator[Connection]:
    """A connection whose transaction covers the DDL too and holds the write lock from its
    start (two servers starting at once migrate one after the other)."""
    if db.dialect.name != "sqlite":
        with db.connect() as conn:
            yield conn
        return
    # pysqlite opens transactions only before DML, so a failed table rebuild would be left
    # half done; this engine issues BEGIN IMMEDIATE itself. Foreign keys stay off while
    # tables are copied (dropping the old table would cascade); checked before the commit.
    engine = create_engine(db.url, poolclass=NullPool)
    timeout_ms = _busy_timeout_ms(db)

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        dbapi_connection.isolation_level = None
        dbapi_connection.execute(f"PRAGMA busy_timeout={timeout_ms}")
        dbapi_connection.execute("PRAGMA foreign_keys=OFF")

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    try:
        with engine.connect() as conn:
            yield conn
    finally:
        engine.dispose()


def _busy_timeout_ms(db: Engine) -> int:
    with db.connect() as conn:
        return int(conn.exec_driver_sql("PRAGMA busy_timeout").scalar() or 0)


def _check_foreign_keys(conn: Connection) -> None:
    if conn.dialect.name == "sqlite" and conn.exec_driver_sql("PRAGMA foreign_key_check").first():
        raise SchemaError("the migration left rows whose foreign keys point nowhere; rolled back")
