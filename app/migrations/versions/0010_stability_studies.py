"""Stability studies (issue 24): the stability_studies table; runs that are subsamples of
one (runs.stability_id, runs.stability_index); idempotency_keys.stability_id.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 12:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
# Written after 0009 (judge options on runs), which is not on this branch yet: point this at
# "0009" when merging (app/migrations/__init__.py, "Two branches ...").
down_revision = "0009"
branch_labels = None
depends_on = None

NO_ID_REUSE = {"sqlite_autoincrement": True}
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "stability_studies",
        sa.Column("id", ID, nullable=False),
        sa.Column("dataset_id", ID, nullable=False),
        sa.Column("run_id", ID, nullable=True),
        sa.Column("algorithm", sa.String(), nullable=False),
        sa.Column("objective", sa.String(), nullable=False),
        sa.Column("k_max", sa.Integer(), nullable=False),
        sa.Column("methods", sa.JSON(), nullable=False),
        sa.Column("standardize", sa.Boolean(), server_default="1", nullable=False),
        sa.Column("n_pairs", sa.Integer(), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=False),
        sa.Column("max_false", sa.Float(), nullable=True),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("plan", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("stability_studies", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_stability_studies_dataset_id"), ["dataset_id"], unique=False
        )

    # A SQLite batch rebuild copies the reflected table, which forgets AUTOINCREMENT: say it.
    with op.batch_alter_table("runs", table_kwargs=NO_ID_REUSE) as batch_op:
        batch_op.add_column(sa.Column("stability_id", ID, nullable=True))
        batch_op.add_column(sa.Column("stability_index", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_runs_stability_id"), ["stability_id"], unique=False)
        batch_op.create_foreign_key(
            "fk_runs_stability_id",
            "stability_studies",
            ["stability_id"],
            ["id"],
            ondelete="CASCADE",
        )
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("stability_id", ID, nullable=True))
        batch_op.create_foreign_key(
            "fk_idempotency_keys_stability_id",
            "stability_studies",
            ["stability_id"],
            ["id"],
            ondelete="CASCADE",
        )


def downgrade() -> None:
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.drop_constraint("fk_idempotency_keys_stability_id", type_="foreignkey")
        batch_op.drop_column("stability_id")
    with op.batch_alter_table("runs", table_kwargs=NO_ID_REUSE) as batch_op:
        batch_op.drop_constraint("fk_runs_stability_id", type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_runs_stability_id"))
        batch_op.drop_column("stability_index")
        batch_op.drop_column("stability_id")
    with op.batch_alter_table("stability_studies", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_stability_studies_dataset_id"))
    op.drop_table("stability_studies")
