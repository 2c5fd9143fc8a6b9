"""Where data sets keep their arrays: one interface (``ArrayStore``), two stores.

* ``directory`` (default, one machine): ``.npz`` files under the data directory.
* ``database``: chunked rows of ``array_chunks`` in the app's database, so workers on other
  hosts need nothing but ``DATABASE_URL``.

The app builds one store at start-up (``app.state.store``) and the workers build theirs from
the same settings; nothing else touches array files or blob rows.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from ..config import StorageKind
from .base import Arrays, ArraysMissing, ArrayStore, pack_matrix, unpack_matrix
from .database import DatabaseStore
from .directory import DirectoryStore

__all__ = [
    "ArrayStore",
    "Arrays",
    "ArraysMissing",
    "DatabaseStore",
    "DirectoryStore",
    "StorageKind",
    "make_store",
    "pack_matrix",
    "unpack_matrix",
]


def make_store(kind: StorageKind, data_dir: Path, db: Engine) -> ArrayStore:
    if kind == "database":
        return DatabaseStore(db)
    return DirectoryStore(data_dir)
