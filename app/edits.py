"""Request bodies that edit what people give things: a run's name, notes and tags, a data
set's name and description (the data and the results never change)."""

from __future__ import annotations

from pydantic import ConfigDict, field_validator
from sqlmodel import Field, SQLModel

MAX_TAGS = 20
MAX_TAG_CHARS = 40


class RunPatch(SQLModel):
    """What a person may change on a run: its label, notes and tags (omitted fields stay)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, max_length=200, description="A label; empty for none.")
    notes: str | None = Field(None, max_length=5000)
    tags: list[str] | None = Field(
        None,
        max_length=MAX_TAGS,
        description=f"Up to {MAX_TAGS} short labels (1 to {MAX_TAG_CHARS} characters, no "
        "comma or quote); duplicates are dropped.",
    )

    @field_validator("name", "notes")
    @classmethod
    def _strip(cls, value: str | None) -> str | None:
        return value.strip() if value is not None else None

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        tags: list[str] = []
        for raw in value:
            tag = raw.strip()
            if not tag or len(tag) > MAX_TAG_CHARS:
                raise ValueError(f"each tag needs 1 to {MAX_TAG_CHARS} characters, got {raw!r}")
            if any(c in tag for c in ',"\\'):
                raise ValueError(f"a tag holds no comma, quote or backslash: {raw!r}")
            if tag not in tags:
                tags.append(tag)
        return tags


class DatasetPatch(SQLModel):
    """A data set's name and description (omitted fields stay)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, min_length=1, max_length=200)
    description: str | None = Field(None, max_length=2000)

    @field_validator("name")
    @classmethod
    def _named(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("a data set needs a name: give at least one visible character")
        return value.strip() if value is not None else None
