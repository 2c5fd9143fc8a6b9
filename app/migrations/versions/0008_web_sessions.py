"""Signed-in sessions kept on the server (issue 26): signing out deleted only the browser's
cookie, so a copied cookie kept working for the session's whole lifetime.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27 12:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "web_sessions",
        sa.Column("sid", sa.String(length=64), nullable=False),
        sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("sid"),
    )
    with op.batch_alter_table("web_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_web_sessions_issued_at"), ["issued_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("web_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_web_sessions_issued_at"))
    op.drop_table("web_sessions")
