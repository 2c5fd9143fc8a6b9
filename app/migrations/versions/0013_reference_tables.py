"""Tables larger than memory registered by reference (issue 28): the statistics pass over such
a table is split into row ranges, each a run (``runs.table_part``: the range's index) executed
by ``run_job`` like a fold of a cross-validation. The table itself, its schema and its parts
live in ``datasets.meta`` (JSON): no other column is needed.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27 15:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("table_part", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("table_part")
