"""A run's judging options (issue 23) become columns: ``certify`` (the swap certificate after
the selection, default true) and ``exact`` (the exact best support of the answer's size and the
gap to it, default false). Existing runs read as certify=true, exact=false: their results have
no certificate, which the pages read as "not judged".

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27 12:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("certify", sa.Boolean(), server_default="1", nullable=False))
        batch_op.add_column(sa.Column("exact", sa.Boolean(), server_default="0", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("exact")
        batch_op.drop_column("certify")
