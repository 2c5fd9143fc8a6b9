"""Idempotency keys of cross-validation studies (issue 16): idempotency_keys.cv_id.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24 10:20:38.058621
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("cv_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            "fk_idempotency_keys_cv_id", "cv_studies", ["cv_id"], ["id"], ondelete="CASCADE"
        )


def downgrade() -> None:
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.drop_constraint("fk_idempotency_keys_cv_id", type_="foreignkey")
        batch_op.drop_column("cv_id")
