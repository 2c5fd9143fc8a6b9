"""PATCH semantics shared by every edit: set the fields the body names, and only those."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from sqlmodel import Session, SQLModel

from app.errors import InvalidInput

Row = TypeVar("Row", bound=SQLModel)


def apply_update(session: Session, row: Row, body: SQLModel, if_null: Callable[[str], str]) -> Row:
    """Copy the fields ``body`` was sent with onto ``row`` and store it; a field sent as null
    is refused with ``if_null(field)`` (how to keep or clear it instead)."""
    for field in sorted(body.model_fields_set):
        value = getattr(body, field)
        if value is None:
            raise InvalidInput(if_null(field), loc=("body", field))
        setattr(row, field, value)
    session.add(row)
    session.commit()
    session.refresh(row)
    return row
