"""Data set arrays kept in the database (``STORAGE=database``)."""

from __future__ import annotations

from sqlalchemy import LargeBinary
from sqlmodel import Field, SQLModel


class ArrayChunk(SQLModel, table=True):
    """One piece of a data set's ``.npz`` archive, for ``STORAGE=database``."""

    __tablename__ = "array_chunks"

    key: str = Field(primary_key=True, max_length=64)
    seq: int = Field(primary_key=True)
    data: bytes = Field(sa_type=LargeBinary)
