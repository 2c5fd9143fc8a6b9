"""What clients send to change what exists: a run's name, notes and tags, a data set's name
and description, and a comparison made from runs already done."""

from __future__ import annotations

from typing import Annotated

from pydantic import field_validator
from sqlmodel import Field, SQLModel

from .bounds import MAX_ID, STRICT

MAX_TAGS = 20
MAX_TAG_CHARS = 40


class RunUpdate(SQLModel):
    """Fields left out stay as they are."""

    model_config = STRICT

    name: str | None = Field(None, max_length=200, description="Blank: no name.")
    notes: str | None = Field(None, max_length=5000)
    tags: list[str] | None = Field(
        None,
        max_length=MAX_TAGS,
        description=f"Short labels, at most {MAX_TAGS} of at most {MAX_TAG_CHARS} characters, "
        "without commas or double quotes; repeats are kept once.",
    )

    @field_validator("name", "notes")
    @classmethod
    def _strip(cls, value: str | None) -> str | None:
        return None if value is None else value.strip()

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: list[str] | None) -> list[str] | None:
        if tags is None:
            return None
        out: list[str] = []
        for raw in tags:
            tag = raw.strip()
            if not tag:
                raise ValueError("a tag is empty; leave it out")
            if len(tag) > MAX_TAG_CHARS:
                raise ValueError(f"tag {tag[:20]!r}… is longer than {MAX_TAG_CHARS} characters")
            if "," in tag or '"' in tag:
                raise ValueError(f"tag {tag!r} holds a comma or a double quote; split or drop it")
            if tag not in out:
                out.append(tag)
        return out


class DatasetUpdate(SQLModel):
    """Fields left out stay as they are."""

    model_config = STRICT

    name: str | None = Field(None, min_length=1, max_length=200)
    description: str | None = Field(None, max_length=2000)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("the name is blank; give the data set a name")
        return None if value is None else value.strip()


class ComparisonFromRuns(SQLModel):
    """A comparison of runs that exist already, all on one data set."""

    model_config = STRICT

    run_ids: list[Annotated[int, Field(ge=1, le=MAX_ID)]] = Field(
        min_length=2, max_length=20, description="At least two runs of one data set."
    )
    name: str = Field("", max_length=200)
