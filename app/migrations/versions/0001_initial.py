"""The schema as ``SQLModel.metadata.create_all`` made it before migrations existed.

A database made that way (tables, no ``alembic_version``) is stamped with this revision on
start-up, then upgraded like any other.

Revision ID: 0001
Revises:
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "datasets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("description", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("task", sa.String(), nullable=False),
        sa.Column("target", sa.String(), nullable=False),
        sa.Column("n_samples", sa.Integer(), nullable=False),
        sa.Column("n_features", sa.Integer(), nullable=False),
        sa.Column("feature_names", sa.JSON(), nullable=False),
        sa.Column("groups", sa.JSON(), nullable=True),
        sa.Column("classes", sa.JSON(), nullable=True),
        sa.Column("true_support", sa.JSON(), nullable=True),
        sa.Column("meta", sa.JSON(), nullable=False),
        sa.Column("file", sa.String(), nullable=False),
        sa.Column("sample_key", sa.String(), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("sample_key"),
    )
    op.create_table(
        "comparisons",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_comparisons_dataset_id", "comparisons", ["dataset_id"])
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("comparison_id", sa.Integer(), nullable=True),
        sa.Column("algorithm", sa.String(), nullable=False),
        sa.Column("objective", sa.String(), nullable=False),
        sa.Column("k", sa.Integer(), nullable=True),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("record_candidates", sa.Boolean(), nullable=False),
        sa.Column("test_fraction", sa.Float(), nullable=True),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("progress", sa.Float(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("claim_token", sa.String(), nullable=True),
        sa.Column("worker", sa.String(), nullable=True),
        sa.Column("heartbeat_at", WHEN, nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("started_at", WHEN, nullable=True),
        sa.Column("finished_at", WHEN, nullable=True),
        sa.Column("error", sa.String(), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(["comparison_id"], ["comparisons.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_runs_comparison_id", "runs", ["comparison_id"])
    op.create_index("ix_runs_dataset_id", "runs", ["dataset_id"])
    op.create_index("ix_runs_status", "runs", ["status"])
    op.create_table(
        "idempotency_keys",
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("request_hash", sa.String(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("comparison_id", sa.Integer(), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(["comparison_id"], ["comparisons.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_table(
        "trace_events",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "step"),
    )


def downgrade() -> None:
    for table in ("trace_events", "idempotency_keys", "runs", "comparisons", "datasets"):
        op.drop_table(table)
