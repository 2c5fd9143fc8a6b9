"""A class session: a lecturer's run of questions that students answer on their phones.

A session (``ClassSession``) has a short join code (unambiguous characters, unique, expiring),
asks its questions (``ClassQuestion``, one per chosen step of a run's trace, with the correct
answer computed from the trace) one at a time, and collects ``ClassVote`` rows: one per
anonymous student token, question and round (round 2 is "vote again after discussion"). A
repeated vote in the same round replaces the earlier one (a student may change their mind
until the reveal); the unique constraint keeps it one row on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.models.common import NO_ID_REUSE, utcnow
from app.models.fields import ID_TYPE

# No 0/O, 1/I/L, 2/Z, 5/S, 8/B: a code read off a projector is typed right the first time.
CODE_ALPHABET = "ACDEFGHJKMNPQRTUVWXY34679"
CODE_LENGTH = 5


class ClassSession(SQLModel, table=True):
    __tablename__ = "class_sessions"
    __table_args__ = NO_ID_REUSE

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    code: str = Field(max_length=12, unique=True, index=True)
    run_id: int = Field(foreign_key="runs.id", ondelete="CASCADE", sa_type=ID_TYPE, index=True)
    title: str = Field(default="", max_length=200)
    story: str = Field(default="", max_length=2000)  # the lecturer's line of story
    lesson_key: str | None = Field(default=None, max_length=64)
    position: int = -1  # the question asked now (-1: not started; = count: finished)
    phase: str = Field(default="ask", max_length=8)  # ask | reveal
    round: int = 1  # 1, or 2 after "vote again"
    created_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime = Field(index=True)


class ClassQuestion(SQLModel, table=True):
    __tablename__ = "class_questions"
    __table_args__ = (UniqueConstraint("session_id", "position"),)

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    session_id: int = Field(
        foreign_key="class_sessions.id", ondelete="CASCADE", sa_type=ID_TYPE, index=True
    )
    position: int
    step: int  # the trace event the question stops before
    kind: str = Field(max_length=16)  # enter | delete
    prompt: str = Field(max_length=300)
    choices: list[str] = Field(sa_type=JSON)  # option keys (feature names, or "none")
    answer: str = Field(max_length=200)
    numbers: dict[str, Any] = Field(sa_type=JSON)  # choice -> its score or deletion cost; bar


class ClassVote(SQLModel, table=True):
    __tablename__ = "class_votes"
    __table_args__ = (UniqueConstraint("question_id", "round", "token"),)

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    question_id: int = Field(
        foreign_key="class_questions.id", ondelete="CASCADE", sa_type=ID_TYPE, index=True
    )
    round: int
    token: str = Field(max_length=64)
    choice: str = Field(max_length=200)
    voted_at: datetime = Field(default_factory=utcnow)
