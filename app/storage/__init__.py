"""Where data sets keep their arrays: one interface (``ArrayStore``), two stores.

* ``directory`` (default, one machine): ``.npz`` files under the data directory.
* ``database``: chunked rows of ``array_chunks`` in the app's database, so workers on other
  hosts need nothing but ``DATABASE_URL``.

Both read a range of rows (``rows``) without loading the array: a data set's preview.

The app builds one store at start-up (``app.state.store``) and the workers build theirs from
the same settings; nothing else touches array files or blob rows.
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import Engine

from app.config import StorageKind
from app.storage.base import (
    Arrays,
    ArraysMissing,
    ArrayStore,
    matrix_rows,
    pack_matrix,
    unpack_matrix,
)
from app.storage.database import DatabaseStore
from app.storage.directory import DirectoryStore

__all__ = [
    "ArrayStore",
    "Arrays",
    "ArraysMissing",
    "DatabaseStore",
    "DirectoryStore",
    "StorageKind",
    "make_store",
    "matrix_rows",
    "owner_only_files",
    "pack_matrix",
    "unpack_matrix",
]


def make_store(kind: StorageKind, data_dir: Path, db: Engine) -> ArrayStore:
    if kind == "database":
        return DatabaseStore(db)
    return DirectoryStore(data_dir)


# New files and folders readable by their owner only: data sets, the SQLite database and its
# WAL, the session secret.
OWNER_ONLY_UMASK = 0o077


def owner_only_files() -> None:
    """Set once at the start of the web process and of workers (spawned ones inherit it)."""
    os.umask(OWNER_ONLY_UMASK)
