"""Saved lessons (issue 27): a lecturer's lesson from any run, stored, exported and imported.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27 15:20:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "saved_lessons",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("story", sa.String(length=300), nullable=False),
        sa.Column("run_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("steps", sa.JSON(), nullable=False),
        sa.Column("hidden", sa.JSON(), nullable=False),
        sa.Column("import_key", sa.String(length=80), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("import_key"),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("saved_lessons", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_saved_lessons_run_id"), ["run_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("saved_lessons", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_saved_lessons_run_id"))

    op.drop_table("saved_lessons")
