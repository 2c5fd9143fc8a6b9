"""Arrays in the database (``STORAGE=database``), and ids that are never reused on SQLite.

SQLite gives a deleted row's id to the next insert unless the table is AUTOINCREMENT, which
only a rebuilt table can become (batch mode copies it; the ids in it are kept and the
counter starts above the largest). PostgreSQL's sequences never go back: nothing to do.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

LINKED_TABLES = ("datasets", "comparisons", "runs")  # ids that appear in links


def upgrade() -> None:
    op.create_table(
        "array_chunks",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("key", "seq"),
    )
    if op.get_bind().dialect.name == "sqlite":
        for table in LINKED_TABLES:
            _rebuild(table, autoincrement=True)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for table in LINKED_TABLES:
            _rebuild(table, autoincrement=False)
    op.drop_table("array_chunks")


def _rebuild(table: str, autoincrement: bool) -> None:
    with op.batch_alter_table(
        table, recreate="always", table_kwargs={"sqlite_autoincrement": autoincrement}
    ):
        pass
