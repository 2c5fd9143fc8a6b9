"""Streaming a CSV or Parquet table larger than memory into sufficient statistics.

Three steps, each cheap to call from a job:

1. :func:`scan_table` fixes how every chunk is read and encoded: the feature columns, their
   types, the categories of every text column (found by a first pass over those columns only,
   unless given), the missing-value policy. The resulting :class:`TableSchema` is plain data
   (``to_dict``/``from_dict``), so every worker encodes its rows identically: the same one-hot
   columns in the same order whatever categories its own rows happen to hold.
2. :func:`plan_parts` splits the table into :class:`TablePart` ranges: Parquet row groups (the
   natural unit), CSV byte ranges aligned to line starts. A line belongs to the part in which
   its first byte lies. Caveat: a quoted field holding a newline breaks the alignment (the
   range would start inside a record), so a CSV with multi-line quoted fields must be read as
   one part (``plan_parts(..., n_parts=1)``); Parquet has no such limit.
3. :func:`part_statistics` streams one part in bounded record batches (``iter_batches``) and
   returns its :class:`~engine.statistics.SufficientStatistics`; partials merge by addition in
   any order (``engine.statistics.merge_all``), so the result does not depend on how many
   workers ran the parts (to rounding).

Memory per reader: one record batch (``batch_rows`` rows; for CSV ``block_bytes`` of text) and
its float64 copy, plus the d x d statistics.

Encoding, as the app's CSV preparation does it: a text column becomes one indicator column
``column=value`` per category (sorted, every level kept), all in one feature group; a cell that
is empty or spells a missing value (``na_values``, default ``app.ingest.table.NA_TOKENS``, as the
upload's option of that name), NaN or infinite is missing. A
row with a missing feature or target cell is dropped (``missing="drop"``) or refused
(``missing="error"``, the default), in every part the same way.
"""

from __future__ import annotations

import csv
import io
import itertools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from app.ingest.table import na_spellings, na_tokens
from engine.statistics import StatisticsAccumulator, SufficientStatistics

__all__ = [
    "StreamError",
    "TablePart",
    "TableSchema",
    "iter_batches",
    "part_statistics",
    "plan_parts",
    "scan_table",
    "table_statistics",
]

MISSING_POLICIES = ("error", "drop")
_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


class StreamError(ValueError):
    """The table cannot be read as asked; the message names the file and what to fix."""


@dataclass(frozen=True)
class TableSchema:
    """How to read and encode every chunk of a table (files, columns, categories, policy)."""

    files: tuple[str, ...]
    format: str  # "csv" or "parquet"
    columns: tuple[str, ...]  # every column of the files, in file order
    target: str
    numeric: tuple[str, ...]  # numeric feature columns, in file order
    categories: dict[str, tuple[str, ...]] = field(default_factory=dict)  # text column -> levels
    features: tuple[str, ...] = ()  # the feature columns (numeric and text), in file order
    missing: str = "error"
    na_values: tuple[str, ...] | None = None  # tokens meaning missing; None: the default set

    @property
    def nulls(self) -> list[str]:
        """Spellings of a missing cell, as the upload's reader has them (app.ingest.table)."""
        return na_spellings(na_tokens(self.na_values))

    @property
    def feature_names(self) -> list[str]:
        """Names of the encoded columns: a numeric column's name, ``column=value`` for each
        category of a text column."""
        names: list[str] = []
        for name in self.features:
            if name in self.categories:
                names.extend(f"{name}={v}" for v in self.categories[name])
            else:
                names.append(name)
        return names

    @property
    def groups(self) -> list[str]:
        """The source column of every encoded column (one group per text column)."""
        out: list[str] = []
        for name in self.features:
            out.extend([name] * len(self.categories.get(name, (None,))))
        return out

    @property
    def n_features(self) -> int:
        return len(self.feature_names)

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": list(self.files),
            "format": self.format,
            "columns": list(self.columns),
            "target": self.target,
            "numeric": list(self.numeric),
            "categories": {k: list(v) for k, v in self.categories.items()},
            "features": list(self.features),
            "missing": self.missing,
            "na_values": None if self.na_values is None else list(self.na_values),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TableSchema:
        return cls(
            files=tuple(d["files"]),
            format=str(d["format"]),
            columns=tuple(d["columns"]),
            target=str(d["target"]),
            numeric=tuple(d["numeric"]),
            categories={str(k): tuple(v) for k, v in d["categories"].items()},
            features=tuple(d["features"]),
            missing=str(d["missing"]),
            na_values=None if d.get("na_values") is None else tuple(d["na_values"]),
        )


@dataclass(frozen=True)
class TablePart:
    """A range of one file: Parquet row groups [start, stop), or CSV bytes [start, stop)
    (the lines whose first byte lies in it)."""

    file: int  # index into TableSchema.files
    start: int
    stop: int

    def to_dict(self) -> dict[str, int]:
        return {"file": self.file, "start": self.start, "stop": self.stop}


# --------------------------------------------------------------------------- files
def _files(path: str | os.PathLike[str]) -> tuple[list[str], str]:
    p = Path(path)
    if p.is_dir():
        found = sorted(str(f) for f in p.iterdir() if f.is_file() and f.suffix in _SUFFIXES)
        if not found:
            raise StreamError(f"{p} holds no .csv or .parquet file")
    elif p.is_file():
        found = [str(p)]
    else:
        raise StreamError(f"{p} does not exist")
    kinds = {_SUFFIXES.get(Path(f).suffix, "csv") for f in found}
    if len(kinds) > 1:
        raise StreamError(f"{p} mixes CSV and Parquet files; keep one format per table")
    return found, kinds.pop()


def _csv_header(file: str) -> tuple[list[str], int]:
    """The column names and the byte offset where the data starts."""
    with open(file, "rb") as handle:
        line = handle.readline()
        if not line.strip():
            raise StreamError(f"{file} is empty: expected a header row of column names")
        cells = next(csv.reader([line.decode("utf-8-sig")]))
        return [c.strip() for c in cells], handle.tell()


def _read_options(block_bytes: int = 1 << 24, names: Sequence[str] | None = None) -> Any:
    if names is None:
        return pacsv.ReadOptions(block_size=block_bytes)
    return pacsv.ReadOptions(block_size=block_bytes, column_names=list(names))


def _convert_options(schema: TableSchema) -> Any:
    types: dict[str, pa.DataType] = {name: pa.float64() for name in schema.numeric}
    types[schema.target] = pa.float64()
    types.update({name: pa.string() for name in schema.categories})
    return pacsv.ConvertOptions(
        column_types=types,
        include_columns=[*schema.features, schema.target],
        null_values=schema.nulls,
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
    )


class _Slice(io.RawIOBase):
    """Bytes [start, stop) of a file, as a readable stream."""

    def __init__(self, file: str, start: int, stop: int) -> None:
        self._handle = open(file, "rb")
        self._handle.seek(start)
        self._left = stop - start

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._left <= 0:
            return 0
        view = memoryview(buffer)[: self._left]
        got = self._handle.readinto(view)
        self._left -= got or 0
        return got or 0

    def close(self) -> None:
        self._handle.close()
        super().close()


def _line_start_at_or_after(file: str, offset: int, data_start: int, size: int) -> int:
    """The first line start >= offset (data_start at most; size past the last line)."""
    if offset <= data_start:
        return data_start
    if offset >= size:
        return size
    with open(file, "rb") as handle:
        handle.seek(offset - 1)
        while True:
            block = handle.read(1 << 16)
            if not block:
                return size
            at = block.find(b"\n")
            if at >= 0:
                return handle.tell() - len(block) + at + 1
    return size  # pragma: no cover


# --------------------------------------------------------------------------- scan
def scan_table(
    path: str | os.PathLike[str],
    target: str,
    *,
    features: Sequence[str] | None = None,
    categorical: Sequence[str] | None = None,
    categories: dict[str, Sequence[str]] | None = None,
    missing: str = "error",
    na_values: Sequence[str] | None = None,
    block_bytes: int = 1 << 24,
) -> TableSchema:
    """Fix the encoding of a table (a file, or a directory of files of one format).

    Parameters
    ----------
    target : str
        The (numeric) target column.
    features : sequence of str, optional
        Feature columns (default: every column but the target).
    categorical : sequence of str, optional
        Columns to one-hot encode, in addition to those whose type is text (CSV: in the first
        block of the first file; Parquet: in the schema).
    categories : dict, optional
        Known levels per text column; the first pass is skipped for those columns.
    missing : {"error", "drop"}
    na_values : sequence of str, optional
        Cell values that mean missing (compared without case; an empty cell always is);
        default ``app.ingest.table.NA_TOKENS``, as the upload's ``na_values``.
    """
    nulls = na_spellings(na_tokens(na_values))
    if missing not in MISSING_POLICIES:
        raise StreamError(f"missing must be one of {', '.join(MISSING_POLICIES)}, got {missing!r}")
    files, kind = _files(path)
    first = files[0]
    if kind == "parquet":
        arrow_schema = pq.read_schema(first)
        columns = list(arrow_schema.names)
        types = {name: arrow_schema.field(name).type for name in columns}
    else:
        columns, data_start = _csv_header(first)
        with _Slice(first, data_start, os.path.getsize(first)) as raw:
            reader = pacsv.open_csv(
                raw,
                read_options=_read_options(block_bytes, columns),
                convert_options=pacsv.ConvertOptions(null_values=nulls, strings_can_be_null=True),
            )
            types = {f.name: f.type for f in reader.schema}
    if target not in columns:
        raise StreamError(f"no column {target!r} in {first}; the columns: {', '.join(columns)}")
    wanted = list(features) if features is not None else [c for c in columns if c != target]
    unknown = [c for c in wanted if c not in columns]
    if unknown:
        raise StreamError(f"no column {unknown[0]!r} in {first}")
    if target in wanted:
        raise StreamError(f"the target {target!r} cannot also be a feature")
    if not _numeric_type(types[target]) and types[target] != pa.null():
        raise StreamError(f"the target column {target!r} is not numeric ({types[target]})")
    text = {c for c in wanted if not _numeric_type(types[c]) and types[c] != pa.null()}
    text |= set(categorical or ())
    text |= set(categories or ())
    ordered = [c for c in columns if c in wanted]
    known = {k: tuple(str(v) for v in vals) for k, vals in (categories or {}).items()}
    schema = TableSchema(
        files=tuple(files),
        format=kind,
        columns=tuple(columns),
        target=target,
        numeric=tuple(c for c in ordered if c not in text),
        categories={c: known.get(c, ()) for c in ordered if c in text},
        features=tuple(ordered),
        missing=missing,
        na_values=None if na_values is None else tuple(na_values),
    )
    todo = [c for c in schema.categories if c not in known]
    if todo:
        found = _scan_categories(schema, todo, block_bytes)
        schema = TableSchema(
            **{
                **schema.__dict__,
                "categories": {c: known[c] if c in known else found[c] for c in schema.categories},
            }
        )
    return schema


def _numeric_type(t: pa.DataType) -> bool:
    return bool(pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t))


def _scan_categories(schema: TableSchema, columns: list[str], block_bytes: int) -> dict[str, Any]:
    """The first pass: the sorted distinct values of the text columns (their columns only)."""
    seen: dict[str, set[str]] = {c: set() for c in columns}
    for file in schema.files:
        for batch in _raw_batches(schema, file, None, columns, 1 << 16, block_bytes, text=True):
            for c in columns:
                values = pc.unique(batch.column(c).cast(pa.string())).drop_null()
                seen[c].update(values.to_pylist())
    return {c: tuple(sorted(v)) for c, v in seen.items()}


def _raw_batches(
    schema: TableSchema,
    file: str,
    part: TablePart | None,
    columns: list[str],
    batch_rows: int,
    block_bytes: int,
    *,
    text: bool = False,
) -> Iterator[pa.RecordBatch]:
    if schema.format == "parquet":
        # One row group at a time, without pre-buffering: iter_batches over several row groups
        # buffers all of them, so a reader's memory would grow with the size of its part.
        pf = pq.ParquetFile(file, pre_buffer=False)
        if list(pf.schema_arrow.names) != list(schema.columns):
            raise StreamError(f"{file} has other columns than {schema.files[0]}")
        stop = part.stop if part else pf.metadata.num_row_groups
        for group in range(part.start if part else 0, stop):
            yield from pf.iter_batches(batch_size=batch_rows, row_groups=[group], columns=columns)
        return
    header, data_start = _csv_header(file)
    if list(header) != list(schema.columns):
        raise StreamError(f"{file} has other columns than {schema.files[0]}")
    size = os.path.getsize(file)
    lo, hi = (part.start, part.stop) if part else (data_start, size)
    start = _line_start_at_or_after(file, lo, data_start, size)
    stop = _line_start_at_or_after(file, hi, data_start, size)
    if stop <= start:
        return
    if text:
        convert = pacsv.ConvertOptions(
            column_types={c: pa.string() for c in columns},
            include_columns=columns,
            null_values=schema.nulls,
            strings_can_be_null=True,
            quoted_strings_can_be_null=True,
        )
    else:
        convert = _convert_options(schema)
    with _Slice(file, start, stop) as raw:
        try:
            reader = pacsv.open_csv(
                raw, read_options=_read_options(block_bytes, header), convert_options=convert
            )
            yield from reader
        except pa.ArrowInvalid as exc:
            raise StreamError(
                f"{file}: {exc}. A numeric column holding text further down the file must be "
                "named in categorical=, or fixed"
            ) from None


# --------------------------------------------------------------------------- parts
def plan_parts(
    schema: TableSchema, *, n_parts: int | None = None, part_bytes: int = 1 << 28
) -> list[TablePart]:
    """Split the table into ranges, in file order: ``n_parts`` of about equal size if given,
    else about ``part_bytes`` each. Parquet parts are runs of whole row groups (a file with
    one row group is one part); CSV parts are byte ranges of a file."""
    sizes = [os.path.getsize(f) for f in schema.files]
    total = max(sum(sizes), 1)
    want = n_parts if n_parts is not None else max(1, -(-total // max(part_bytes, 1)))
    if want < 1:
        raise StreamError(f"n_parts must be at least 1, got {n_parts}")
    parts: list[TablePart] = []
    for i, file in enumerate(schema.files):
        share = max(1, round(want * sizes[i] / total))
        if schema.format == "parquet":
            n_groups = pq.ParquetFile(file).metadata.num_row_groups
            cuts = np.linspace(0, n_groups, min(share, max(n_groups, 1)) + 1).round().astype(int)
        else:
            cuts = np.linspace(0, sizes[i], share + 1).round().astype(int)
        parts.extend(TablePart(i, int(a), int(b)) for a, b in itertools.pairwise(cuts) if b > a)
    return parts


# --------------------------------------------------------------------------- batches
def iter_batches(
    schema: TableSchema,
    part: TablePart | None = None,
    *,
    batch_rows: int = 65536,
    block_bytes: int = 1 << 24,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(X_chunk, y_chunk) float64 arrays of the table (or of one part), encoded by ``schema``,
    rows with a missing cell dropped or refused as ``schema.missing`` says."""
    files = [schema.files[part.file]] if part is not None else list(schema.files)
    columns = [*schema.features, schema.target]
    for file in files:
        seen = 0
        for batch in _raw_batches(schema, file, part, columns, batch_rows, block_bytes):
            X, y = _encode(schema, batch, file, seen)
            seen += batch.num_rows
            if len(y):
                yield X, y


def _encode(
    schema: TableSchema, batch: pa.RecordBatch, file: str, seen: int
) -> tuple[np.ndarray, np.ndarray]:
    m = batch.num_rows
    X = np.zeros((m, schema.n_features), order="F")  # filled column by column
    bad = np.zeros(m, dtype=bool)
    j = 0
    for name in schema.features:
        col = batch.column(name)
        if name in schema.categories:
            levels = schema.categories[name]
            idx = pc.index_in(col.cast(pa.string()), value_set=pa.array(levels, pa.string()))
            codes = idx.to_numpy(zero_copy_only=False)
            missing = np.isnan(codes) if codes.dtype.kind == "f" else np.zeros(m, dtype=bool)
            unknown = missing & ~np.asarray(col.is_null().to_numpy(zero_copy_only=False))
            if unknown.any():
                i = int(np.flatnonzero(unknown)[0])
                raise StreamError(
                    f"{file}: column {name!r} holds {col[i].as_py()!r} (row {seen + i + 1} of the "
                    "part), which is not among its categories"
                )
            rows = np.flatnonzero(~missing)
            X[rows, j + codes[rows].astype(np.intp)] = 1.0
            bad |= missing
            j += len(levels)
        else:
            values = col.cast(pa.float64()).to_numpy(zero_copy_only=False)
            X[:, j] = values
            bad |= ~np.isfinite(values)
            j += 1
    y = batch.column(schema.target).cast(pa.float64()).to_numpy(zero_copy_only=False)
    y = np.array(y, dtype=np.float64)
    bad |= ~np.isfinite(y)
    if bad.any():
        if schema.missing == "error":
            i = int(np.flatnonzero(bad)[0])
            raise StreamError(
                f"{file}: a missing or infinite cell in row {seen + i + 1} of the part "
                f"({int(bad.sum())} such rows in this batch); use missing='drop' to drop them"
            )
        X, y = X[~bad], y[~bad]
    return X, y


# --------------------------------------------------------------------------- statistics
def part_statistics(
    schema: TableSchema,
    part: TablePart | None = None,
    *,
    batch_rows: int = 65536,
    block_bytes: int = 1 << 24,
) -> SufficientStatistics:
    """The sufficient statistics of one part (of the whole table without ``part``): what a
    job computes and stores (``SufficientStatistics.to_bytes``) for its range."""
    acc = StatisticsAccumulator()
    for X, y in iter_batches(schema, part, batch_rows=batch_rows, block_bytes=block_bytes):
        acc.add(SufficientStatistics.from_arrays(X, y))
    result = acc.result(schema.n_features)
    return SufficientStatistics(
        result.n,
        result.mean,
        result.y_mean,
        result.xx,
        result.xy,
        result.yy,
        tuple(schema.feature_names),
    )


def table_statistics(
    schema: TableSchema, parts: Sequence[TablePart] | None = None, **kwargs: Any
) -> SufficientStatistics:
    """The statistics of the whole table, part after part in this process."""
    from engine.statistics import merge_all

    chosen = list(parts) if parts is not None else plan_parts(schema, n_parts=1)
    return merge_all([part_statistics(schema, p, **kwargs) for p in chosen])
