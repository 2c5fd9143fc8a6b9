"""Runs get a name, notes and tags (issue 13); comparisons made from existing runs list them in
comparison_runs (a run may be in several).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 08:59:08.411134
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "comparison_runs",
        sa.Column("comparison_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["comparison_id"],
            ["comparisons.id"],
            name="fk_comparison_runs_comparison_id",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_comparison_runs_run_id", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("comparison_id", "run_id"),
    )
    with op.batch_alter_table("comparison_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_comparison_runs_run_id"), ["run_id"], unique=False)

    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("name", sa.String(), server_default="", nullable=False))
        batch_op.add_column(sa.Column("notes", sa.String(), server_default="", nullable=False))
        batch_op.add_column(sa.Column("tags", sa.JSON(), server_default="[]", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("tags")
        batch_op.drop_column("notes")
        batch_op.drop_column("name")

    with op.batch_alter_table("comparison_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_comparison_runs_run_id"))
    op.drop_table("comparison_runs")
