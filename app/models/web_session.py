"""Signed-in browser sessions, kept on the server so that signing out ends one for good."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from app.models.common import utcnow


class WebSession(SQLModel, table=True):
    """A session the sign-in page gave out; its cookie is valid only while this row exists
    (signing out deletes it; expired rows are purged at the next sign-in)."""

    __tablename__ = "web_sessions"

    sid: str = Field(primary_key=True, max_length=64)
    issued_at: datetime = Field(default_factory=utcnow, index=True)
