"""A streamed table (``app.ingest.chunked``) as the engine's row source (``engine.rows``).

Every pass reads the table again in bounded batches, encoded by the same
:class:`~app.ingest.chunked.TableSchema`, so the rows come in the same order each time. A pass
that needs a few columns reads only their source columns (Parquet reads only those; CSV
converts only those), when the schema refuses missing cells: with ``missing="drop"`` a row's
fate depends on every feature column, so every pass reads them all to drop the same rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

import numpy as np

from app.ingest.chunked import TableSchema, iter_batches


class TableRows:
    """The rows of ``schema``'s table, ``batch_rows`` at a time (the target as labels)."""

    def __init__(self, schema: TableSchema, *, batch_rows: int = 65536) -> None:
        self.schema = schema
        self.n_features = schema.n_features
        self.batch_rows = batch_rows

    def chunks(self, columns: Sequence[int] | None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        if columns is None or self.schema.missing != "error":
            for X, y in iter_batches(self.schema, batch_rows=self.batch_rows):
                yield (X if columns is None else X[:, list(columns)]), y
            return
        narrow, positions = _projection(self.schema, columns)
        for X, y in iter_batches(narrow, batch_rows=self.batch_rows):
            yield X[:, positions], y


def _projection(schema: TableSchema, columns: Sequence[int]) -> tuple[TableSchema, list[int]]:
    """The schema reading only the source columns of the encoded ``columns``, and where each
    of them lands in its encoding."""
    groups = schema.groups
    needed = {groups[j] for j in columns}
    narrow = dataclasses.replace(
        schema,
        features=tuple(c for c in schema.features if c in needed),
        numeric=tuple(c for c in schema.numeric if c in needed),
        categories={c: v for c, v in schema.categories.items() if c in needed},
    )
    where = {name: i for i, name in enumerate(narrow.feature_names)}
    names = schema.feature_names
    return narrow, [where[names[j]] for j in columns]
