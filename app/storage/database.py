"""Arrays as rows of the database (``STORAGE=database``): a worker on any host needs nothing
but ``DATABASE_URL``.

The ``.npz`` archive is cut into ``CHUNK_BYTES`` pieces, one row each of ``array_chunks(key,
seq, data)``, so no single value approaches a driver's or server's limit and memory stays
bounded on the way in. Reading is lazy: the archive is a seekable file over the rows that
fetches a chunk when a read reaches it, so loading a few members (the column statistics)
reads a few chunks, not the whole data set. Works on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import bisect
import io
import tempfile
import uuid
import zipfile
from collections.abc import Callable, Iterable
from itertools import accumulate
from typing import IO, TypeVar

import numpy as np
from sqlalchemy import Connection, Engine, delete, func, insert, select
from sqlmodel import Session

from app.models import ArrayChunk
from app.storage.base import Arrays, ArraysMissing, read_npz, read_rows, write_npz

CHUNK_BYTES = 1 << 20
_TABLE = ArrayChunk.metadata.tables["array_chunks"]  # its __table__, which SQLModel leaves untyped
_IN_LIST = 500  # keys per IN (...) of a health check
T = TypeVar("T")


class DatabaseStore:
    kind = "database"

    def __init__(self, db: Engine, chunk_bytes: int = CHUNK_BYTES) -> None:
        self.db = db
        self.chunk_bytes = chunk_bytes

    def save(self, arrays: Arrays, session: Session | None = None) -> str:
        key = f"db:{uuid.uuid4().hex}"
        with tempfile.SpooledTemporaryFile(max_size=self.chunk_bytes) as spool:
            write_npz(arrays, spool)
            spool.seek(0)
            if session is not None:  # commits or rolls back with the caller's row
                self._insert(session.connection(), key, spool)
            else:
                with self.db.begin() as conn:
                    self._insert(conn, key, spool)
        return key

    def _insert(self, conn: Connection, key: str, spool: io.IOBase) -> None:
        seq = 0
        while piece := spool.read(self.chunk_bytes):
            conn.execute(insert(_TABLE).values(key=key, seq=seq, data=piece))
            seq += 1

    def discard(self, key: str) -> None:
        """Nothing to do: the rows went with the rolled-back transaction."""

    def load(self, key: str, keys: Iterable[str] | None = None) -> Arrays:
        return self._read(key, lambda reader: read_npz(reader, keys))

    def rows(self, key: str, name: str, start: int, stop: int) -> np.ndarray:
        """Only the chunks holding the archive's directory, the member's headers and the
        rows are fetched."""
        return self._read(key, lambda reader: read_rows(reader, name, start, stop))

    def _read(self, key: str, read: Callable[[IO[bytes]], T]) -> T:
        with self.db.connect() as conn:
            sizes = conn.execute(
                select(_TABLE.c.seq, func.length(_TABLE.c.data))
                .where(_TABLE.c.key == key)
                .order_by(_TABLE.c.seq)
            ).all()
            if not sizes or [seq for seq, _ in sizes] != list(range(len(sizes))):
                raise ArraysMissing()
            reader = io.BufferedReader(ChunkReader(conn, key, [n for _, n in sizes]))
            try:
                return read(reader)
            except (zipfile.BadZipFile, EOFError):
                raise ArraysMissing() from None

    def delete(self, key: str) -> None:
        with self.db.begin() as conn:
            conn.execute(delete(_TABLE).where(_TABLE.c.key == key))

    def missing(self, keys: Iterable[str]) -> set[str]:
        wanted = set(keys)
        found: set[str] = set()
        with self.db.connect() as conn:
            ordered = sorted(wanted)
            for i in range(0, len(ordered), _IN_LIST):
                batch = ordered[i : i + _IN_LIST]
                query = select(_TABLE.c.key).where(_TABLE.c.key.in_(batch), _TABLE.c.seq == 0)
                found.update(conn.scalars(query))
        return wanted - found

    def sweep(self, in_use: Callable[[], set[str]], grace_seconds: float) -> int:
        """Chunks commit with their row, so every visible key had a row: no grace needed."""
        with self.db.connect() as conn:
            stored = set(conn.scalars(select(_TABLE.c.key).distinct()))
        orphans = stored - in_use()
        for key in orphans:
            self.delete(key)
        return len(orphans)


class ChunkReader(io.RawIOBase):
    """A read-only, seekable file over the chunks of one key (fetched when first read)."""

    def __init__(self, conn: Connection, key: str, lengths: list[int]) -> None:
        self.conn = conn
        self.key = key
        self.ends = list(accumulate(lengths))  # end offset of each chunk
        self.size = self.ends[-1]
        self.pos = 0
        self._cached: tuple[int, bytes] = (-1, b"")

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = max(base + offset, 0)
        return self.pos

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self.pos >= self.size:
            return 0
        seq = bisect.bisect_right(self.ends, self.pos)
        start = self.ends[seq - 1] if seq else 0
        data = self._chunk(seq)
        piece = data[self.pos - start : self.pos - start + len(buffer)]
        buffer[: len(piece)] = piece
        self.pos += len(piece)
        return len(piece)

    def _chunk(self, seq: int) -> bytes:
        if self._cached[0] != seq:
            query = select(_TABLE.c.data).where(_TABLE.c.key == self.key, _TABLE.c.seq == seq)
            data = self.conn.execute(query).scalar()
            if data is None:  # deleted while being read
                raise ArraysMissing()
            self._cached = (seq, bytes(data))
        return self._cached[1]
