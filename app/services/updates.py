"""PATCH semantics shared by every edit: set the fields the body names, and only those."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from sqlalchemy import inspect
from sqlalchemy.exc import InvalidRequestError
from sqlalchemy.orm.exc import ObjectDeletedError, StaleDataError
from sqlmodel import Session, SQLModel

from app.errors import InvalidInput, NotFound

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
    try:
        session.commit()
    except StaleDataError:  # the UPDATE matched no row: deleted by a request racing this one
        session.rollback()
        raise _gone(row) from None
    return refresh_or_gone(session, row)


def refresh_or_gone(session: Session, row: Row) -> Row:
    """``row`` as the database now has it; NotFound when a concurrent request deleted it
    (a refresh would fail with an ORM error, a 500, instead of saying so)."""
    try:
        session.refresh(row)
    except (ObjectDeletedError, StaleDataError, InvalidRequestError):
        raise _gone(row) from None
    return row


def _gone(row: SQLModel) -> NotFound:
    identity = inspect(row).identity
    what = f"{type(row).__name__.lower()} {identity[0] if identity else ''}".strip()
    return NotFound(f"{what} does not exist (it was deleted meanwhile)")
