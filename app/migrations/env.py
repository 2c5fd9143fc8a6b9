"""Alembic's entry point: migrate the connection ``app.migrations`` hands over.

Only our tables are compared and migrated; Procrastinate's own tables (and any other
application's) in the same database are left alone.
"""

from __future__ import annotations

from typing import Any, Literal

from alembic import context
from sqlmodel import SQLModel
from sqlmodel.sql.sqltypes import AutoString, UTCDateTime

from app import db  # noqa: F401  (imports the models: their tables on SQLModel.metadata)


def _ours(name: str | None, type_: str, _parents: object) -> bool:
    return type_ != "table" or name in SQLModel.metadata.tables


def _plain_types(type_: str, obj: Any, _context: Any) -> str | Literal[False]:
    """Revisions name SQLAlchemy's own types (SQLModel's decorators store as these)."""
    if type_ == "type" and isinstance(obj, AutoString):
        return f"sa.String(length={obj.length})" if obj.length else "sa.String()"
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=SQLModel.metadata,
    include_name=_ours,
    compare_type=True,
    render_item=_plain_types,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters by copying tables
)
with context.begin_transaction():
    context.run_migrations()
