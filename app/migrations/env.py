"""Alembic's entry point: migrate the connection ``app.migrations`` hands over.

Only our tables are compared and migrated; Procrastinate's own tables (and any other
application's) in the same database are left alone.
"""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

from app import db  # noqa: F401  (imports the models: their tables on SQLModel.metadata)


def _ours(name: str | None, type_: str, _parents: dict) -> bool:
    return type_ != "table" or name in SQLModel.metadata.tables


connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=SQLModel.metadata,
    include_name=_ours,
    compare_type=True,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters by copying tables
)
with context.begin_transaction():
    context.run_migrations()
