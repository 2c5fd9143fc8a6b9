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
(``missing="error"``, the default), in every part the same way. With ``missing="impute"`` (the
upload's semantics, ``app.ingest.prepare``) a row missing its target is dropped, a numeric cell
takes its column's mean and a text cell its column's most frequent level, or a level of its
own, ``column=(missing)`` (``categorical_missing="level"``). The means and levels are found by
the scan (:func:`scan_table`) and kept in the schema, so every part imputes the same values.

A CSV's dialect is the upload's too: ``delimiter`` (detected from the first 64 KiB when not
given, by the upload's sniffer), ``decimal`` ('.' or ','), ``encoding`` (any text codec that
writes ASCII as ASCII: the ranges are cut at newline bytes, so not UTF-16 or UTF-32).
"""

from __future__ import annotations

import csv
import functools
import io
import itertools
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, ParamSpec, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from app.errors import InvalidInput
from app.ingest import table_fs
from app.ingest.prepare import MISSING_LEVEL
from app.ingest.stream import SNIFF_CHARS, sniff, text_codec
from app.ingest.table import na_spellings, na_tokens
from app.ingest.words import Words
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

MISSING_POLICIES = ("error", "drop", "impute")
CATEGORICAL_MISSING = ("most_frequent", "level")
DECIMALS = (".", ",")
_ASCII = '\r\n\t ,;|:."0123456789+-eE'  # what a range cut and the parser rely on
_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


class StreamError(ValueError):
    """The table cannot be read as asked; the message names the file and what to fix, and
    ``field`` the option at fault when one is (an API answers 422 at that field)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _storage_errors(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """A file that object storage will not give (no such key or bucket, refused credentials)
    is refused as the table's other faults are: a StreamError saying what to check."""

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return func(*args, **kwargs)
        except table_fs.StorageError as exc:
            raise StreamError(str(exc)) from None

    return wrapper


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
    delimiter: str = ","  # CSV only, as the dialect options below
    decimal: str = "."
    encoding: str = "utf-8"  # a codec's canonical name
    categorical_missing: str = "most_frequent"
    fill: dict[str, float] = field(default_factory=dict)  # impute: numeric column -> its mean
    fill_levels: dict[str, str] = field(default_factory=dict)  # impute: text column -> level
    imputed: dict[str, int] = field(default_factory=dict)  # impute: column -> cells filled

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
            "delimiter": self.delimiter,
            "decimal": self.decimal,
            "encoding": self.encoding,
            "categorical_missing": self.categorical_missing,
            "fill": dict(self.fill),
            "fill_levels": dict(self.fill_levels),
            "imputed": dict(self.imputed),
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
            # Absent in schemas stored before these options: the reader's old fixed dialect.
            delimiter=str(d.get("delimiter", ",")),
            decimal=str(d.get("decimal", ".")),
            encoding=str(d.get("encoding", "utf-8")),
            categorical_missing=str(d.get("categorical_missing", "most_frequent")),
            fill={str(k): float(v) for k, v in d.get("fill", {}).items()},
            fill_levels={str(k): str(v) for k, v in d.get("fill_levels", {}).items()},
            imputed={str(k): int(v) for k, v in d.get("imputed", {}).items()},
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
def _location(path: str | os.PathLike[str]) -> str:
    """A table's location as stored: an s3:// URI as given, a local path normalised."""
    text = os.fspath(path)
    return text if table_fs.is_uri(text) else str(Path(text))


def _suffix(file: str) -> str:
    return PurePosixPath(file).suffix


def _files(path: str | os.PathLike[str]) -> tuple[list[str], str]:
    p = _location(path)
    kind = table_fs.info(p).type
    if kind == pafs.FileType.Directory:
        found = sorted(f for f in table_fs.list_files(p) if _suffix(f) in _SUFFIXES)
        if not found:
            raise StreamError(f"{p} holds no .csv or .parquet file")
    elif kind == pafs.FileType.File:
        found = [p]
    else:
        raise StreamError(table_fs.absent(p))
    kinds = {_SUFFIXES.get(_suffix(f), "csv") for f in found}
    if len(kinds) > 1:
        raise StreamError(f"{p} mixes CSV and Parquet files; keep one format per table")
    return found, kinds.pop()


def _csv_header(file: str, encoding: str = "utf-8", delimiter: str = ",") -> tuple[list[str], int]:
    """The column names and the byte offset where the data starts."""
    with table_fs.open_input(file) as handle:
        line = _first_line(handle)
        if not line.strip():
            raise StreamError(f"{file} is empty: expected a header row of column names")
        codec = "utf-8-sig" if encoding == "utf-8" else encoding
        try:
            text = line.decode(codec)
        except UnicodeDecodeError as exc:
            raise StreamError(
                f"{file}: the header row is not {encoding} text (byte 0x{line[exc.start]:02x} "
                f"at offset {exc.start}); give the file's encoding",
                "encoding",
            ) from None
        cells = next(csv.reader([text], delimiter=delimiter))
        return [c.strip() for c in cells], len(line)


def _first_line(handle: pa.NativeFile) -> bytes:
    """The bytes up to and with the first newline (all of them if there is none), read in
    blocks: a filesystem's file has no readline."""
    head = b""
    while True:
        block = handle.read(1 << 16)
        at = block.find(b"\n")
        if at >= 0:
            return head + block[: at + 1]
        head += block
        if not block:
            return head


def _read_options(
    block_bytes: int = 1 << 24, names: Sequence[str] | None = None, encoding: str = "utf-8"
) -> Any:
    if names is None:
        return pacsv.ReadOptions(block_size=block_bytes, encoding=encoding)
    return pacsv.ReadOptions(block_size=block_bytes, column_names=list(names), encoding=encoding)


def _parse_options(schema: TableSchema) -> Any:
    return pacsv.ParseOptions(delimiter=schema.delimiter)


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
        decimal_point=schema.decimal,
    )


class _Slice(io.RawIOBase):
    """Bytes [start, stop) of a file, as a readable stream."""

    def __init__(self, file: str, start: int, stop: int) -> None:
        self._handle = table_fs.open_input(file)
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
    with table_fs.open_input(file) as handle:
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
@_storage_errors
def scan_table(
    path: str | os.PathLike[str],
    target: str,
    *,
    features: Sequence[str] | None = None,
    categorical: Sequence[str] | None = None,
    categories: dict[str, Sequence[str]] | None = None,
    missing: str = "error",
    na_values: Sequence[str] | None = None,
    delimiter: str | None = ",",
    decimal: str = ".",
    encoding: str = "utf-8",
    categorical_missing: str = "most_frequent",
    block_bytes: int = 1 << 24,
    words: Words | None = None,
) -> TableSchema:
    """Fix the encoding of a table (a file, or a directory of files of one format), on the
    local disk or in object storage (``s3://bucket/key``, a prefix as a directory; see
    ``app.ingest.table_fs``).

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
    missing : {"error", "drop", "impute"}
        As the upload's option. ``impute`` costs a pass over the table here: a numeric
        column's mean is over the non-missing, finite cells of the whole table (of the rows
        whose target is present, the rows kept), a text column's most frequent level is
        counted over the same rows (a tie goes to the first in sort order).
    na_values : sequence of str, optional
        Cell values that mean missing (compared without case; an empty cell always is);
        default ``app.ingest.table.NA_TOKENS``, as the upload's ``na_values``.
    delimiter, decimal, encoding : str
        A CSV's dialect, as the upload's options of those names (``delimiter=None`` detects
        it from the first file's first 64 KiB). Ignored for Parquet.
    categorical_missing : {"most_frequent", "level"}
        With ``missing="impute"``: what a text column's missing cells become.
    words : app.ingest.words.Words, optional
        How a refused option is named in messages (the API's field, the CLI's option).

    Raises
    ------
    StreamError
        Naming the file or the option (``field``) at fault.
    """
    words = words or Words()
    nulls = na_spellings(na_tokens(na_values))
    if missing not in MISSING_POLICIES:
        raise StreamError(
            f"missing must be one of {', '.join(MISSING_POLICIES)}, got {missing!r}", "missing"
        )
    if categorical_missing not in CATEGORICAL_MISSING:
        raise StreamError(
            f"categorical_missing must be one of {', '.join(CATEGORICAL_MISSING)}, got "
            f"{categorical_missing!r}",
            "categorical_missing",
        )
    files, kind = _files(path)
    first = files[0]
    dialect = {"delimiter": ",", "decimal": ".", "encoding": "utf-8"}
    if kind == "parquet":
        with table_fs.open_input(first) as handle:
            arrow_schema = pq.read_schema(handle)
        columns = list(arrow_schema.names)
        types = {name: arrow_schema.field(name).type for name in columns}
    else:
        dialect = _dialect(first, delimiter, decimal, encoding, words)
        columns, data_start = _csv_header(first, dialect["encoding"], dialect["delimiter"])
        with _Slice(first, data_start, table_fs.size(first)) as raw:
            try:
                reader = pacsv.open_csv(
                    raw,
                    read_options=_read_options(block_bytes, columns, dialect["encoding"]),
                    parse_options=pacsv.ParseOptions(delimiter=dialect["delimiter"]),
                    convert_options=pacsv.ConvertOptions(
                        null_values=nulls,
                        strings_can_be_null=True,
                        decimal_point=dialect["decimal"],
                    ),
                )
            except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
                raise _unreadable(first, exc) from None
            types = {f.name: f.type for f in reader.schema}
    if target not in columns:
        raise StreamError(
            f"no column {target!r} in {first}; the columns: {', '.join(columns)}", "target"
        )
    wanted = list(features) if features is not None else [c for c in columns if c != target]
    unknown = [c for c in wanted if c not in columns]
    if unknown:
        raise StreamError(f"no column {unknown[0]!r} in {first}", "features")
    if target in wanted:
        raise StreamError(f"the target {target!r} cannot also be a feature", "features")
    if not _numeric_type(types[target]) and types[target] != pa.null():
        raise StreamError(
            f"the target column {target!r} is not numeric ({types[target]})", "target"
        )
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
        delimiter=dialect["delimiter"],
        decimal=dialect["decimal"],
        encoding=dialect["encoding"],
        categorical_missing=categorical_missing,
    )
    todo = [c for c in schema.categories if c not in known]
    if todo:
        found = _scan_categories(schema, todo, block_bytes)
        schema = replace(
            schema,
            categories={c: known[c] if c in known else found[c] for c in schema.categories},
        )
    if missing == "impute":
        schema = _scan_fill(schema, block_bytes)
    return schema


def _dialect(
    file: str, delimiter: str | None, decimal: str, encoding: str, words: Words
) -> dict[str, str]:
    """The CSV options checked as the upload checks them (its messages and fields), the
    delimiter detected when not given; an encoding must write ASCII as ASCII, for the ranges
    are cut at newline bytes."""
    if decimal not in DECIMALS:
        raise StreamError(f"decimal must be '.' or ',', got {decimal!r}", "decimal")
    try:
        codec = text_codec(encoding, words)
        codec = "utf-8" if codec == "utf-8-sig" else codec  # the header's BOM is skipped anyway
        if _ASCII.encode(codec, errors="replace") != _ASCII.encode("ascii"):
            raise StreamError(
                f"{words.lead('encoding')}{encoding!r} does not write ASCII as ASCII (UTF-16 and "
                "UTF-32 do not): a table read in ranges is cut at newline bytes; save it as "
                "UTF-8, or give it to the upload",
                "encoding",
            )
        with table_fs.open_input(file) as handle:
            head = handle.read(SNIFF_CHARS)
        sample = head.decode("utf-8-sig" if codec == "utf-8" else codec, errors="ignore")
        found = sniff(delimiter, decimal, sample, words)
    except InvalidInput as exc:
        raise StreamError(exc.message, str(exc.loc[-1]) if len(exc.loc) > 1 else None) from None
    return {"delimiter": found, "decimal": decimal, "encoding": codec}


def _unreadable(file: str, exc: Exception) -> StreamError:
    """A CSV the reader cannot split into records or decode, as the options say: the
    message names the options that decide it."""
    what = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    field = "encoding" if isinstance(exc, UnicodeDecodeError) or "UTF8" in what else "delimiter"
    return StreamError(
        f"{file} cannot be read with the delimiter, decimal mark and encoding given ({what}); "
        "check the delimiter and the encoding, and that quotes close",
        field,
    )


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


def _scan_fill(schema: TableSchema, block_bytes: int) -> TableSchema:
    """The values ``missing="impute"`` fills in, from one pass over the feature and target
    columns (as ``app.ingest.prepare`` finds them on an upload): every numeric column's mean
    over its finite cells in the rows whose target is present, and every text column's
    fill level (most frequent over the same rows, or ``(missing)``, then a category of its
    own), for the columns with a missing cell in those rows."""
    numeric = {c: [0.0, 0, 0] for c in schema.numeric}  # sum, count, missing
    counts = {c: np.zeros(len(v), dtype=np.int64) for c, v in schema.categories.items()}
    absent = dict.fromkeys(schema.categories, 0)
    columns = [*schema.features, schema.target]
    for file in schema.files:
        for batch in _raw_batches(schema, file, None, columns, 1 << 16, block_bytes):
            y = batch.column(schema.target).cast(pa.float64()).to_numpy(zero_copy_only=False)
            kept = np.isfinite(np.asarray(y, dtype=np.float64))
            for c, acc in numeric.items():
                values = np.asarray(
                    batch.column(c).cast(pa.float64()).to_numpy(zero_copy_only=False), np.float64
                )[kept]
                finite = np.isfinite(values)
                acc[0] += float(values[finite].sum())
                acc[1] += int(finite.sum())
                acc[2] += len(values) - int(finite.sum())
            for c, known in schema.categories.items():
                codes = _codes(batch.column(c), known)[kept]
                present = ~np.isnan(codes)
                counts[c] += np.bincount(codes[present].astype(np.intp), minlength=len(known))
                absent[c] += int((~present).sum())
    fill = {c: acc[0] / acc[1] if acc[1] else 0.0 for c, acc in numeric.items() if acc[2]}
    levels = dict(schema.categories)
    fill_levels: dict[str, str] = {}
    for c, n_missing in absent.items():
        if not n_missing:
            continue
        if schema.categorical_missing == "level":
            levels[c] = (*levels[c], MISSING_LEVEL)
            fill_levels[c] = MISSING_LEVEL
        elif levels[c]:
            fill_levels[c] = levels[c][int(np.argmax(counts[c]))]  # ties: the first in order
    imputed = {c: int(acc[2]) for c, acc in numeric.items() if acc[2]}
    imputed.update({c: absent[c] for c in fill_levels})
    return replace(schema, categories=levels, fill=fill, fill_levels=fill_levels, imputed=imputed)


def _codes(col: Any, levels: Sequence[str]) -> np.ndarray:
    """The index of every cell's level (float, NaN where the cell is missing or unknown)."""
    idx = pc.index_in(col.cast(pa.string()), value_set=pa.array(list(levels), pa.string()))
    codes = idx.to_numpy(zero_copy_only=False)
    return np.asarray(codes, dtype=np.float64)


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
        # One row group at a time: iter_batches over several row groups pre-buffers all of
        # them, so a reader's memory would grow with the size of its part. Object storage
        # pre-buffers that one group (its column chunks fetched in a few coalesced requests,
        # not one request per column chunk: 10 GETs instead of 200 for 20 columns).
        with table_fs.open_input(file) as handle:
            pf = pq.ParquetFile(handle, pre_buffer=table_fs.is_uri(file))
            if list(pf.schema_arrow.names) != list(schema.columns):
                raise StreamError(f"{file} has other columns than {schema.files[0]}")
            stop = part.stop if part else pf.metadata.num_row_groups
            for group in range(part.start if part else 0, stop):
                yield from pf.iter_batches(
                    batch_size=batch_rows, row_groups=[group], columns=columns
                )
        return
    header, data_start = _csv_header(file, schema.encoding, schema.delimiter)
    if list(header) != list(schema.columns):
        raise StreamError(f"{file} has other columns than {schema.files[0]}")
    size = table_fs.size(file)
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
            decimal_point=schema.decimal,
        )
    else:
        convert = _convert_options(schema)
    with _Slice(file, start, stop) as raw:
        try:
            reader = pacsv.open_csv(
                raw,
                read_options=_read_options(block_bytes, header, schema.encoding),
                parse_options=_parse_options(schema),
                convert_options=convert,
            )
            yield from reader
        except pa.ArrowInvalid as exc:
            if "conversion error" not in str(exc) or "UTF8" in str(exc):  # not a cell's type
                raise _unreadable(file, exc) from None
            raise StreamError(
                f"{file}: {exc}. A numeric column holding text further down the file must be "
                "named in categorical=, or fixed"
            ) from None
        except UnicodeDecodeError as exc:
            raise _unreadable(file, exc) from None


# --------------------------------------------------------------------------- parts
@_storage_errors
def plan_parts(
    schema: TableSchema, *, n_parts: int | None = None, part_bytes: int = 1 << 28
) -> list[TablePart]:
    """Split the table into ranges, in file order: ``n_parts`` of about equal size if given,
    else about ``part_bytes`` each. Parquet parts are runs of whole row groups (a file with
    one row group is one part); CSV parts are byte ranges of a file."""
    sizes = [table_fs.size(f) for f in schema.files]
    total = max(sum(sizes), 1)
    want = n_parts if n_parts is not None else max(1, -(-total // max(part_bytes, 1)))
    if want < 1:
        raise StreamError(f"n_parts must be at least 1, got {n_parts}")
    parts: list[TablePart] = []
    for i, file in enumerate(schema.files):
        share = max(1, round(want * sizes[i] / total))
        if schema.format == "parquet":
            n_groups = row_groups(file)
            cuts = np.linspace(0, n_groups, min(share, max(n_groups, 1)) + 1).round().astype(int)
        else:
            cuts = np.linspace(0, sizes[i], share + 1).round().astype(int)
        parts.extend(TablePart(i, int(a), int(b)) for a, b in itertools.pairwise(cuts) if b > a)
    return parts


def row_groups(file: str) -> int:
    """How many row groups a Parquet file has (from its footer)."""
    with table_fs.open_input(file) as handle:
        return int(pq.ParquetFile(handle).metadata.num_row_groups)


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
    try:
        for file in files:
            seen = 0
            for batch in _raw_batches(schema, file, part, columns, batch_rows, block_bytes):
                X, y = _encode(schema, batch, file, seen)
                seen += batch.num_rows
                if len(y):
                    yield X, y
    except table_fs.StorageError as exc:  # as _storage_errors, for a generator
        raise StreamError(str(exc)) from None


def _encode(
    schema: TableSchema, batch: pa.RecordBatch, file: str, seen: int
) -> tuple[np.ndarray, np.ndarray]:
    m = batch.num_rows
    impute = schema.missing == "impute"
    X = np.zeros((m, schema.n_features), order="F")  # filled column by column
    bad = np.zeros(m, dtype=bool)
    j = 0
    for name in schema.features:
        col = batch.column(name)
        if name in schema.categories:
            levels = schema.categories[name]
            codes = _codes(col, levels)
            missing = np.isnan(codes)
            unknown = missing & ~np.asarray(col.is_null().to_numpy(zero_copy_only=False))
            if unknown.any():
                i = int(np.flatnonzero(unknown)[0])
                raise StreamError(
                    f"{file}: column {name!r} holds {col[i].as_py()!r} (row {seen + i + 1} of the "
                    "part), which is not among its categories"
                )
            if impute and name in schema.fill_levels:
                codes[missing] = levels.index(schema.fill_levels[name])
                missing = np.zeros(m, dtype=bool)
            rows = np.flatnonzero(~missing)
            X[rows, j + codes[rows].astype(np.intp)] = 1.0
            bad |= missing
            j += len(levels)
        else:
            values = col.cast(pa.float64()).to_numpy(zero_copy_only=False)
            X[:, j] = values
            if impute and name in schema.fill:
                X[~np.isfinite(X[:, j]), j] = schema.fill[name]
            bad |= ~np.isfinite(X[:, j])
            j += 1
    y = batch.column(schema.target).cast(pa.float64()).to_numpy(zero_copy_only=False)
    y = np.array(y, dtype=np.float64)
    no_target = ~np.isfinite(y)
    if impute and (bad & ~no_target).any():  # the scan saw no such cell: the file changed
        i = int(np.flatnonzero(bad & ~no_target)[0])
        raise StreamError(
            f"{file}: row {seen + i + 1} of the part has a missing cell the scan did not see; "
            "the table changed after it was registered: register it again"
        )
    bad |= no_target
    if bad.any():
        if schema.missing == "error":
            i = int(np.flatnonzero(bad)[0])
            raise StreamError(
                f"{file}: a missing or infinite cell in row {seen + i + 1} of the part "
                f"({int(bad.sum())} such rows in this batch); use missing='drop' to drop them, "
                "or missing='impute'"
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
