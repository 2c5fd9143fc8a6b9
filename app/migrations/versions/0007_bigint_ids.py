"""64-bit ids on PostgreSQL (issue 26): every id, reference to an id and trace step was a
32-bit ``integer``, so an id above 2^31 - 1 (the API accepts up to 2^63 - 1) failed with a 500
in 16 operations, and a deployment could hold at most 2^31 runs, data sets or trace steps.

SQLite stores every INTEGER in up to 8 bytes already; its tables are left as they are (an
INTEGER PRIMARY KEY must stay INTEGER to remain the AUTOINCREMENT rowid).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27 13:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

COLUMNS = {
    "datasets": ("id",),
    "comparisons": ("id", "dataset_id"),
    "runs": ("id", "dataset_id", "comparison_id", "cv_id"),
    "comparison_runs": ("comparison_id", "run_id"),
    "cv_studies": ("id", "dataset_id", "final_run_id"),
    "trace_events": ("run_id", "step"),
    "idempotency_keys": ("run_id", "comparison_id", "cv_id"),
}


def _retype(new: sa.types.TypeEngine, old: sa.types.TypeEngine, sql_name: str) -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    for table, columns in COLUMNS.items():
        for column in columns:
            op.alter_column(table, column, type_=new, existing_type=old)
        if "id" not in columns:
            continue
        # A serial column's sequence has a type of its own, capping the ids it hands out.
        sequence = bind.execute(
            sa.text("SELECT pg_get_serial_sequence(:table, 'id')"), {"table": table}
        ).scalar()
        if sequence:
            op.execute(f"ALTER SEQUENCE {sequence} AS {sql_name}")


def upgrade() -> None:
    _retype(sa.BigInteger(), sa.Integer(), "bigint")


def downgrade() -> None:
    _retype(sa.Integer(), sa.BigInteger(), "integer")
