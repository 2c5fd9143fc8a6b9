"""A run's and a study's ``standardize`` option becomes a column of its own (issue 21): it was
packed into the ``params`` JSON beside the engine's parameters, where the schema did not show it
and every reader had to unpack it.

Existing rows move their ``standardize`` key out of ``params`` into the column; a row without
the key keeps the default (true), as the app read it before.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-27 12:30:00
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

TABLES = ("runs", "cv_studies")
KEY = "standardize"


def _params(value: Any) -> dict[str, Any]:
    """A JSON column reads back as a dict on PostgreSQL and may be text on SQLite."""
    if isinstance(value, str):
        return json.loads(value)
    return dict(value or {})


def _move_key_to_column(table: str) -> None:
    rows = sa.table(table, sa.column("id"), sa.column("params", sa.JSON()), sa.column(KEY))
    bind = op.get_bind()
    for row_id, params in bind.execute(sa.select(rows.c.id, rows.c.params)).all():
        values = _params(params)
        if KEY not in values:
            continue
        flag = bool(values.pop(KEY))
        bind.execute(
            rows.update().where(rows.c.id == row_id).values(params=values, standardize=flag)
        )


def _move_column_to_key(table: str) -> None:
    rows = sa.table(table, sa.column("id"), sa.column("params", sa.JSON()), sa.column(KEY))
    bind = op.get_bind()
    for row_id, params, flag in bind.execute(
        sa.select(rows.c.id, rows.c.params, rows.c.standardize)
    ).all():
        values = {**_params(params), KEY: bool(flag)}
        bind.execute(rows.update().where(rows.c.id == row_id).values(params=values))


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column(KEY, sa.Boolean(), server_default="1", nullable=False))
        _move_key_to_column(table)


def downgrade() -> None:
    for table in TABLES:
        _move_column_to_key(table)
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column(KEY)
