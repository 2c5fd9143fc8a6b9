"""Idempotency-Key headers seen before, and what their requests created."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from app.models.common import utcnow
from app.models.fields import ID_TYPE


class IdempotencyKey(SQLModel, table=True):
    """An Idempotency-Key header seen before, and what its request created."""

    __tablename__ = "idempotency_keys"

    key: str = Field(primary_key=True, max_length=255)
    request_hash: str
    run_id: int | None = Field(
        default=None, foreign_key="runs.id", ondelete="CASCADE", sa_type=ID_TYPE
    )
    comparison_id: int | None = Field(
        default=None, foreign_key="comparisons.id", ondelete="CASCADE", sa_type=ID_TYPE
    )
    cv_id: int | None = Field(
        default=None, foreign_key="cv_studies.id", ondelete="CASCADE", sa_type=ID_TYPE
    )
    stability_id: int | None = Field(
        default=None, foreign_key="stability_studies.id", ondelete="CASCADE", sa_type=ID_TYPE
    )
    created_at: datetime = Field(default_factory=utcnow)
