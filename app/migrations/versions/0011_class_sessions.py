"""Class sessions (issue 27): join codes, questions from a run's trace, votes per round.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27 13:00:02.409263
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "class_sessions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("code", sa.String(length=12), nullable=False),
        sa.Column("run_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("story", sa.String(length=2000), nullable=False),
        sa.Column("lesson_key", sa.String(length=64), nullable=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(length=8), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("class_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_class_sessions_code"), ["code"], unique=True)
        batch_op.create_index(
            batch_op.f("ix_class_sessions_expires_at"), ["expires_at"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_class_sessions_run_id"), ["run_id"], unique=False)

    op.create_table(
        "class_questions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "session_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("prompt", sa.String(length=300), nullable=False),
        sa.Column("choices", sa.JSON(), nullable=False),
        sa.Column("answer", sa.String(length=200), nullable=False),
        sa.Column("numbers", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["session_id"], ["class_sessions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("session_id", "position"),
    )
    with op.batch_alter_table("class_questions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_class_questions_session_id"), ["session_id"], unique=False
        )

    op.create_table(
        "class_votes",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "question_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("choice", sa.String(length=200), nullable=False),
        sa.Column("voted_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["question_id"], ["class_questions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("question_id", "round", "token"),
    )
    with op.batch_alter_table("class_votes", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_class_votes_question_id"), ["question_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("class_votes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_class_votes_question_id"))

    op.drop_table("class_votes")
    with op.batch_alter_table("class_questions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_class_questions_session_id"))

    op.drop_table("class_questions")
    with op.batch_alter_table("class_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_class_sessions_run_id"))
        batch_op.drop_index(batch_op.f("ix_class_sessions_expires_at"))
        batch_op.drop_index(batch_op.f("ix_class_sessions_code"))

    op.drop_table("class_sessions")
