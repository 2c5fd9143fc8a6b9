"""Rows read in chunks, for objectives that never hold a whole table (issue 28).

A :class:`RowSource` yields the rows of a table in chunks: a float64 block of the requested
columns and the labels of the same rows. An objective built on it reads the table once per
*pass* and keeps only per-column sums between chunks, so its memory is bounded by one chunk
whatever the number of rows. :class:`ArrayRows` is the in-memory source (an array cut in
chunks: for tests, and for anyone who wants chunked numerics on an array); the app and the CLI
read files through ``app.ingest.chunked``. :class:`CountedRows` counts the passes, which is
what a streamed run costs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np


class RowSource(Protocol):
    """The rows of a table, readable as often as needed, in the same order every time."""

    n_features: int

    def chunks(self, columns: Sequence[int] | None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(X block, labels) per chunk: X of shape (rows, len(columns)) in float64 with the
        columns in the order asked (all of them for None), labels of shape (rows,)."""
        ...


class ArrayRows:
    """An in-memory (X, y) cut into chunks of ``chunk_rows`` rows (the last may be shorter)."""

    def __init__(self, X: np.ndarray, y: np.ndarray, *, chunk_rows: int = 10_000) -> None:
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y).ravel()
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows")
        if chunk_rows < 1:
            raise ValueError(f"chunk_rows must be >= 1, got {chunk_rows}")
        self.X, self.y = X, y
        self.n_features = X.shape[1]
        self.chunk_rows = chunk_rows

    def chunks(self, columns: Sequence[int] | None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        n = self.X.shape[0]
        idx = None if columns is None else np.asarray(columns, dtype=np.intp)
        for start in range(0, n, self.chunk_rows):
            block = self.X[start : start + self.chunk_rows]
            # A copy either way: a consumer may scale the block in place.
            yield (
                (block.copy() if idx is None else block[:, idx]),
                self.y[start : start + self.chunk_rows],
            )


@dataclass
class PassCount:
    """How many times a run read its table: every pass, the full-width ones, the rows read."""

    passes: int = 0
    full: int = 0
    rows: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"passes": self.passes, "full_passes": self.full, "rows_read": self.rows}


class CountedRows:
    """A source whose passes are counted and which offers a cancellation point per chunk.

    ``checkpoint`` (a recorder's ``checkpoint``) is called before every chunk; once it has
    raised (the run was asked to stop) it is not called again, so the refit of the support
    reached so far, which ``engine.api.run_selection`` makes after a stop, can finish.
    """

    def __init__(self, source: RowSource, checkpoint: Callable[[], None] | None = None) -> None:
        self.source = source
        self.n_features = int(source.n_features)
        self.count = PassCount()
        self._checkpoint = checkpoint

    def read(self, columns: Sequence[int] | None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """One pass over the rows: ``columns`` (all for None), counted."""
        self.count.passes += 1
        if columns is None or len(columns) >= self.n_features:
            self.count.full += 1
        for X, y in self.source.chunks(None if columns is None else list(columns)):
            if self._checkpoint is not None:
                try:
                    self._checkpoint()
                except BaseException:
                    self._checkpoint = None
                    raise
            self.count.rows += X.shape[0]
            yield X, y
