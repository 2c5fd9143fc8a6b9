"""Arrays as ``.npz`` files under the data directory (the default: one machine).

Names are generated here (never taken from a client), files appear atomically (written to a
hidden temporary name, then renamed), keys cannot point outside the data directory, and
loading refuses pickles.
"""

from __future__ import annotations

import os
import re
import time
import uuid
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
from sqlmodel import Session

from app.storage.base import Arrays, ArraysMissing, read_npz, read_rows, write_npz

DATASETS_DIR = "datasets"
_OURS = re.compile(r"\.?[0-9a-f]{32}\.(npz|partial)")  # what save writes, nothing else


class DirectoryStore:
    kind = "directory"

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir

    def save(self, arrays: Arrays, session: Session | None = None) -> str:
        folder = self.data_dir / DATASETS_DIR
        folder.mkdir(parents=True, exist_ok=True)
        stem = uuid.uuid4().hex
        final = folder / f"{stem}.npz"
        partial = folder / f".{stem}.partial"
        try:
            with partial.open("wb") as fh:
                write_npz(arrays, fh)
            os.replace(partial, final)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        return f"{DATASETS_DIR}/{final.name}"

    def discard(self, key: str) -> None:
        self.delete(key)

    def load(self, key: str, keys: Iterable[str] | None = None) -> Arrays:
        try:
            with self.path(key).open("rb") as fh:
                return read_npz(fh, keys)
        except (FileNotFoundError, zipfile.BadZipFile, EOFError):
            # EOFError/BadZipFile: a file truncated by a lost volume is as gone as no file.
            raise ArraysMissing() from None

    def rows(self, key: str, name: str, start: int, stop: int) -> np.ndarray:
        try:
            with self.path(key).open("rb") as fh:
                return read_rows(fh, name, start, stop)
        except (FileNotFoundError, zipfile.BadZipFile, EOFError):
            raise ArraysMissing() from None

    def delete(self, key: str) -> None:
        self.path(key).unlink(missing_ok=True)

    def missing(self, keys: Iterable[str]) -> set[str]:
        return {key for key in keys if not self.path(key).is_file()}

    def sweep(self, in_use: Callable[[], set[str]], grace_seconds: float) -> int:
        folder = self.data_dir / DATASETS_DIR
        if not folder.is_dir():
            return 0
        cutoff = time.time() - grace_seconds
        old = [
            path
            for path in folder.iterdir()
            if _OURS.fullmatch(path.name) and path.stat().st_mtime < cutoff
        ]
        keep = in_use()
        orphans = [path for path in old if f"{DATASETS_DIR}/{path.name}" not in keep]
        for path in orphans:
            path.unlink(missing_ok=True)
        return len(orphans)

    def path(self, key: str) -> Path:
        """The file of ``key``; ValueError when the key points outside the data directory."""
        path = (self.data_dir / key).resolve()
        if not path.is_relative_to(self.data_dir.resolve()):
            raise ValueError(f"file name {key!r} points outside the data directory")
        return path
