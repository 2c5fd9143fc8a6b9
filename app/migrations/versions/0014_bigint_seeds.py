"""64-bit seeds on PostgreSQL: the API takes seeds up to 2^32 - 1 (what every RNG takes), and
the ``seed`` columns of runs, CV studies and stability studies were 32-bit ``integer``, so a
seed above 2^31 - 1 was a 500 on PostgreSQL (found by schemathesis on POST /api/stability;
POST /api/runs and /api/cv failed alike). SQLite stores every INTEGER in up to 8 bytes
already; its tables are left as they are.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27 16:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

TABLES = ("runs", "cv_studies", "stability_studies")


def _retype(new: sa.types.TypeEngine, old: sa.types.TypeEngine) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in TABLES:
        op.alter_column(table, "seed", type_=new, existing_type=old, existing_nullable=False)


def upgrade() -> None:
    _retype(sa.BigInteger(), sa.Integer())


def downgrade() -> None:
    # Seeds above 2^31 - 1 do not fit back: the downgrade fails on them rather than lose them.
    _retype(sa.Integer(), sa.BigInteger())
