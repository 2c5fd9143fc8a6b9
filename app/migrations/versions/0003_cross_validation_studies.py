"""Cross-validation studies (issue 16): the cv_studies table; runs that are folds of one.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24 08:50:46.403335
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

NO_ID_REUSE = {"sqlite_autoincrement": True}


def upgrade() -> None:
    op.create_table(
        "cv_studies",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("algorithm", sa.String(), nullable=False),
        sa.Column("objective", sa.String(), nullable=False),
        sa.Column("k_max", sa.Integer(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("n_folds", sa.Integer(), nullable=False),
        sa.Column("rule", sa.String(), nullable=False),
        sa.Column("metric", sa.String(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("plan", sa.JSON(), nullable=False),
        sa.Column("final_run_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("cv_studies", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_cv_studies_dataset_id"), ["dataset_id"], unique=False)

    # A SQLite batch rebuild copies the reflected table, which forgets AUTOINCREMENT: say it.
    with op.batch_alter_table("runs", table_kwargs=NO_ID_REUSE) as batch_op:
        batch_op.add_column(sa.Column("cv_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("cv_fold", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_runs_cv_id"), ["cv_id"], unique=False)
        batch_op.create_foreign_key(
            "fk_runs_cv_id", "cv_studies", ["cv_id"], ["id"], ondelete="CASCADE"
        )


def downgrade() -> None:
    with op.batch_alter_table("runs", table_kwargs=NO_ID_REUSE) as batch_op:
        batch_op.drop_constraint("fk_runs_cv_id", type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_runs_cv_id"))
        batch_op.drop_column("cv_fold")
        batch_op.drop_column("cv_id")

    with op.batch_alter_table("cv_studies", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_cv_studies_dataset_id"))

    op.drop_table("cv_studies")
