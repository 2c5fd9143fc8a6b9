"""Saved lessons: a lecturer's lesson made from any run (issue 27), as opposed to the built-in
lesson recipes of ``app.services.lessons``.

A saved lesson names a run, the steps of its trace asked as questions (each one a step
``app.services.classroom.question_at`` can ask), a title, a line of story and the controls
its predict page hides. Its permanent link is the predict page's URL with all of that in the
query (``link``). A lesson imported from a file remembers the file's digest (``import_key``),
so importing the same file again returns the same lesson.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from urllib.parse import urlencode

from pydantic import field_validator
from sqlalchemy import JSON
from sqlmodel import Field, SQLModel

from app.models.common import NO_ID_REUSE, utcnow
from app.models.fields import ID_TYPE, MAX_ID, STRICT, Request

# What a lesson's predict page can hide (templates/classroom_predict.html reads the same words).
HIDABLE = ("nav", "story", "score", "links")
Hidable = Literal["nav", "story", "score", "links"]
MAX_TITLE = 200
# The predict page keeps at most 300 characters of story from its URL: a longer one would be
# cut in the lesson's link.
MAX_STORY = 300
MAX_STEPS = 20  # app.services.classroom.MAX_QUESTIONS
Step = Annotated[int, Field(ge=0, le=2**31 - 1)]


class SavedLesson(SQLModel, table=True):
    __tablename__ = "saved_lessons"
    __table_args__ = NO_ID_REUSE

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    title: str = Field(max_length=MAX_TITLE)
    story: str = Field(default="", max_length=MAX_STORY)
    run_id: int = Field(foreign_key="runs.id", ondelete="CASCADE", sa_type=ID_TYPE, index=True)
    steps: list[int] = Field(sa_type=JSON)  # trace steps asked, ascending
    hidden: list[str] = Field(default_factory=list, sa_type=JSON)  # a subset of HIDABLE
    import_key: str | None = Field(default=None, max_length=80, unique=True)
    created_at: datetime = Field(default_factory=utcnow)


def link(lesson: SavedLesson) -> str:
    """The lesson's permanent link: the predict page with the whole lesson in its query."""
    query = {"steps": ",".join(str(s) for s in lesson.steps)}
    if lesson.story:
        query["story"] = lesson.story
    if lesson.hidden:
        query["hide"] = ",".join(lesson.hidden)
    return f"/predict/{lesson.run_id}?{urlencode(query)}"


class SavedLessonCreate(Request):
    """A lesson from a finished run whose trace recorded candidate scores."""

    model_config = STRICT

    run_id: int = Field(ge=1, le=MAX_ID)
    title: str = Field(min_length=1, max_length=MAX_TITLE, description="Not blank.")
    story: str = Field(
        "",
        max_length=MAX_STORY,
        description="A line or a short paragraph shown above the questions.",
    )
    steps: list[Step] | None = Field(
        None,
        max_length=MAX_STEPS,
        description="Trace steps to ask (each one a step the run's trace can ask about: see "
        "GET /api/lessons/questions?run_id=...); none: the classroom's default choice.",
    )
    hidden: list[Hidable] = Field(
        default_factory=list, description="Controls the lesson's page hides."
    )

    @field_validator("title")
    @classmethod
    def _title(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the title is blank; give the lesson a title")
        return value.strip()

    @field_validator("story")
    @classmethod
    def _story(cls, value: str) -> str:
        return value.strip()


class LessonQuestion(SQLModel):
    """A step of a run's trace that a lesson can ask (``classroom.QuestionSpec``)."""

    step: int
    kind: str = Field(description="enter (which feature enters) or delete (which one goes).")
    prompt: str
    choices: list[str]
    answer: str
    default: bool = Field(description="Among the classroom's default choice of steps.")


class SavedLessonPublic(SQLModel):
    id: int
    title: str
    story: str
    run_id: int
    steps: list[int]
    hidden: list[str]
    imported: bool = Field(description="Made by importing a lesson file.")
    created_at: datetime
    url: str
    page_url: str
    link: str = Field(description="The predict page with the whole lesson in its query.")
    export_url: str

    @classmethod
    def of(cls, lesson: SavedLesson) -> SavedLessonPublic:
        return cls(
            id=lesson.id or 0,
            title=lesson.title,
            story=lesson.story,
            run_id=lesson.run_id,
            steps=lesson.steps,
            hidden=lesson.hidden,
            imported=lesson.import_key is not None,
            created_at=lesson.created_at,
            url=f"/api/lessons/{lesson.id}",
            page_url=f"/lessons/{lesson.id}",
            link=link(lesson),
            export_url=f"/api/lessons/{lesson.id}/export",
        )
