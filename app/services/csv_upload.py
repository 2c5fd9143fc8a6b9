"""Parse an uploaded CSV into X, y and metadata, or say precisely what is wrong with it.

Columns are read with explicit dtypes: features as float64, the target as text (it may hold
class labels). When a cell will not convert, the file is read again as text and converted
column by column here, so the error names the column, the data row (1 = the first row after
the header) and the value.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InvalidInput, TooLarge
from ..models import Task, UploadOptions

NA_TOKENS = frozenset({"", "na", "n/a", "nan", "null", "none"})  # compared lower-cased
NA_SPELLINGS = sorted({v for t in NA_TOKENS for v in (t, t.upper(), t.title(), t.capitalize())})
SNIFF_CHARS = 64 * 1024
DELIMITERS = ",;\t|"
FILE = ("body", "file")


@dataclass
class ParsedCsv:
    X: np.ndarray  # (n_samples, n_features), finite
    y: np.ndarray  # finite; 0/1 for classification
    feature_names: list[str]
    target: str
    task: Task
    classes: list[str] | None  # labels of y == 0 and y == 1
    groups: list[str] | None
    true_support: list[int] | None
    missing: dict[str, int]  # missing or infinite cells per used column, before any drop
    delimiter: str
    dropped_rows: int


def parse_csv(raw: bytes, opts: UploadOptions, max_columns: int) -> ParsedCsv:
    text, encoding = decode(raw, opts.encoding)
    delimiter = choose_delimiter(opts.delimiter, text)
    header = read_header(text, delimiter, max_columns)
    target, features = select_columns(header, opts)
    groups = parse_groups(opts.groups, features)  # cheap checks before the costly parse
    true_support = parse_true_support(opts.true_support, features)
    X, target_cells = read_table(Source(raw, encoding, delimiter, header), features, target)
    y, classes = target_column(target_cells, target, opts.task)
    X, y, missing, dropped = handle_missing(X, y, [*features, target], opts.missing)
    task, y, classes = infer_task(y, classes, target, opts.task)
    return ParsedCsv(
        X=X,
        y=y,
        feature_names=features,
        target=target,
        task=task,
        classes=classes,
        groups=groups,
        true_support=true_support,
        missing=missing,
        delimiter=delimiter,
        dropped_rows=dropped,
    )


# --------------------------------------------------------------------------- text and header


def decode(raw: bytes, encoding: str) -> tuple[str, str]:
    """The text, and the codec's canonical name; or where the bytes stop being text."""
    try:
        codec = codecs.lookup(encoding)
    except LookupError:
        raise InvalidInput(
            f"unknown encoding {encoding!r}; use a Python codec name such as utf-8, latin-1 "
            "or cp1252",
            loc=("body", "encoding"),
        ) from None
    try:
        text = raw.decode(codec.name)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InvalidInput(
            f"the file is not {encoding} text: byte 0x{raw[exc.start]:02x} at offset "
            f"{exc.start} (line {line}) cannot be decoded; save it as {encoding} or send the "
            "encoding it uses in the field 'encoding'",
            loc=FILE,
            line=line,
            offset=exc.start,
        ) from None
    nul = text.find("\x00")
    if nul >= 0:
        raise InvalidInput(
            f"the file holds a NUL character at offset {nul}: it is binary, not CSV text",
            loc=FILE,
            offset=nul,
        )
    text = text.removeprefix("\ufeff")  # a BOM is not part of a column name
    if not text or text.isspace():
        raise InvalidInput("the file is empty", loc=FILE)
    return text, codec.name


def choose_delimiter(given: str | None, text: str) -> str:
    if given is not None:
        delimiter = "\t" if given in ("tab", "\\t") else given
        if len(delimiter) != 1 or delimiter in '"\r\n':
            raise InvalidInput(
                f"delimiter must be one character other than a quote or a newline (or 'tab'), "
                f"got {given!r}",
                loc=("body", "delimiter"),
            )
        return delimiter
    sample = text[:SNIFF_CHARS]
    if len(text) > SNIFF_CHARS and "\n" in sample:
        sample = sample[: sample.rindex("\n")]  # whole lines only
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        return ","  # one column, or nothing to tell them apart: the common case


def read_header(text: str, delimiter: str, max_columns: int) -> list[str]:
    rows = csv.reader(_lines(text), delimiter=delimiter)
    header = next(row for row in rows if row)  # decode() made sure there is a non-blank line
    if len(header) > max_columns:
        raise TooLarge(
            f"the file has {len(header)} columns; at most {max_columns} are allowed (MAX_COLUMNS)"
        )
    names = [name.strip() for name in header]
    for position, name in enumerate(names, start=1):
        if not name:
            raise InvalidInput(
                f"column {position} has a blank header; every column needs a name",
                loc=FILE,
                column_position=position,
            )
    duplicated = [name for name, n in Counter(names).items() if n > 1]
    if duplicated:
        name = duplicated[0]
        where = [i for i, n in enumerate(names, start=1) if n == name]
        raise InvalidInput(
            f"column name {name!r} appears {len(where)} times (columns "
            f"{', '.join(map(str, where))}); column names must be unique",
            loc=FILE,
            column=name,
        )
    return names


def _lines(text: str) -> Iterator[str]:
    """Lines on demand: the header needs the first, not a copy of the whole file."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        yield text[start:end]
        start = end


def select_columns(header: list[str], opts: UploadOptions) -> tuple[str, list[str]]:
    target = opts.target.strip()
    if target not in header:
        raise InvalidInput(
            f"target column {target!r} is not in the file; its columns are {_listing(header)}",
            loc=("body", "target"),
            column=target,
        )
    if opts.features is None or not opts.features.strip():
        features = [name for name in header if name != target]
    else:
        features = parse_names(opts.features, "features")
        _check_known(features, header, "features")
        if target in features:
            raise InvalidInput(
                f"features include the target column {target!r}; a column cannot predict itself",
                loc=("body", "features"),
                column=target,
            )
    if not features:
        raise InvalidInput(
            "there are no feature columns: the file has only the target column",
            loc=("body", "features"),
        )
    return target, features


@dataclass(frozen=True)
class Source:
    raw: bytes
    encoding: str
    delimiter: str
    header: list[str]


def read_table(source: Source, features: list[str], target: str) -> tuple[np.ndarray, pd.Series]:
    """The feature columns as floats (NaN where missing) and the target column as text.

    pandas' C parser converts the numbers; only when a cell will not convert is the file read
    again as text, to name that cell (or to accept what the C parser is stricter about, such
    as a padded missing-value marker). All columns are read: with ``usecols`` pandas would let
    rows with extra fields pass unnoticed.
    """
    dtypes = {name: np.float64 for name in features} | {target: str}
    try:
        frame = _read(source, dtypes, na_values=NA_SPELLINGS)
        return frame[features].to_numpy(dtype=float), frame[target]
    except ValueError:  # a cell that is not a number (ParserErrors were handled in _read)
        frame = _read(source, str, na_values=None)
        X = np.column_stack([numeric_column(frame[name], name) for name in features])
        return X, frame[target]


def _read(source: Source, dtype: Any, na_values: list[str] | None) -> pd.DataFrame:
    try:
        frame = pd.read_csv(
            io.BytesIO(source.raw),  # not the decoded text: StringIO would copy it at 4 B/char
            encoding=source.encoding,
            sep=source.delimiter,
            header=0,
            names=source.header,  # stripped, and without the BOM
            dtype=dtype,
            keep_default_na=False,
            na_values=na_values,
            na_filter=na_values is not None,
            engine="c",
        )
    except pd.errors.ParserError as exc:
        raise InvalidInput(_parser_message(str(exc)), loc=FILE) from None
    if frame.empty:
        raise InvalidInput("the file has a header but no data rows", loc=FILE)
    return frame


def _parser_message(message: str) -> str:
    found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", message)
    if found:
        expected, line, saw = found.groups()
        return (
            f"line {line} has {saw} fields but the header has {expected}; check the delimiter "
            "and the quoting of that line"
        )
    return f"the file is not valid CSV: {message}"


# --------------------------------------------------------------------------- cells to numbers


def _cells(column: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """Stripped cells and the mask of missing ones."""
    stripped = column.fillna("").astype(str).str.strip()
    return stripped, stripped.str.lower().isin(NA_TOKENS).to_numpy()


def numeric_column(column: pd.Series, name: str) -> np.ndarray:
    """Floats; NaN where a cell is missing, +-inf where it says so."""
    stripped, missing = _cells(column)
    numbers = pd.to_numeric(stripped.mask(missing), errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(numbers) & ~missing
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        value = stripped.iloc[row]
        raise InvalidInput(
            f"column {name!r}, row {row + 1}: {value!r} is not a number ({int(bad.sum())} "
            "such cells in this column); fix them, or leave the column out of 'features'",
            loc=FILE,
            column=name,
            row=row + 1,
            value=value,
        )
    return numbers


def target_column(
    column: pd.Series, name: str, task: Task | None
) -> tuple[np.ndarray, list[str] | None]:
    """Numbers, or for a two-label text target 0/1 codes and the labels (NaN where missing)."""
    stripped, missing = _cells(column)
    numbers = pd.to_numeric(stripped.mask(missing), errors="coerce").to_numpy(dtype=float)
    if not (np.isnan(numbers) & ~missing).any():
        return numbers, None
    if task == Task.regression:
        numeric_column(column, name)  # raises, naming the first non-number
    labels = sorted(set(stripped[~missing]))
    if len(labels) > 2:  # a single label is reported as a constant target by infer_task
        raise InvalidInput(
            f"target column {name!r} holds text with {len(labels)} distinct labels "
            f"({_listing(labels)}); a text target needs exactly two classes (binary "
            "classification), a regression target must be numeric",
            loc=("body", "target"),
            column=name,
        )
    codes = pd.Categorical(stripped, categories=labels).codes.astype(float)  # label positions
    return np.where(missing, np.nan, codes), labels


def handle_missing(
    X: np.ndarray, y: np.ndarray, names: list[str], policy: str
) -> tuple[np.ndarray, np.ndarray, dict[str, int], int]:
    """Reject rows with missing or infinite cells (with counts), or drop them when asked."""
    values = np.column_stack([X, y])
    bad = ~np.isfinite(values)
    counts = {name: int(n) for name, n in zip(names, bad.sum(axis=0), strict=True)}
    bad_rows = bad.any(axis=1)
    if not bad_rows.any():
        return X, y, counts, 0
    if policy == "reject":
        raise InvalidInput(
            "missing or infinite values: "
            + _describe_bad(values, names)
            + "; fix them, or send missing=drop to drop those rows",
            loc=FILE,
            counts={name: n for name, n in counts.items() if n},
        )
    keep = ~bad_rows
    if keep.sum() < 2:
        raise InvalidInput(
            f"only {int(keep.sum())} rows have no missing or infinite value; at least 2 are needed",
            loc=FILE,
        )
    return X[keep], y[keep], counts, int(bad_rows.sum())


def _describe_bad(values: np.ndarray, names: list[str], most: int = 5) -> str:
    parts = []
    for j in np.flatnonzero((~np.isfinite(values)).any(axis=0))[:most]:
        col = values[:, j]
        n_missing, n_inf = int(np.isnan(col).sum()), int(np.isinf(col).sum())
        first = int(np.flatnonzero(~np.isfinite(col))[0]) + 1
        kinds = [f"{n_missing} missing"] * bool(n_missing) + [f"{n_inf} infinite"] * bool(n_inf)
        parts.append(f"column {names[j]!r} has {' and '.join(kinds)} (first at row {first})")
    return "; ".join(parts)


def infer_task(
    y: np.ndarray, classes: list[str] | None, target: str, task: Task | None
) -> tuple[Task, np.ndarray, list[str] | None]:
    """Two distinct values make a binary classification target unless told otherwise."""
    values = np.unique(y)
    if len(values) < 2:
        only = classes[int(values[0])] if classes else f"{values[0]:g}"
        raise InvalidInput(
            f"target column {target!r} holds the single value {only} in every row; a target "
            "must vary (binary classification needs two classes)",
            loc=("body", "target"),
            column=target,
        )
    if classes is not None:
        return Task.classification, y, classes
    if task is None:
        task = Task.classification if len(values) == 2 else Task.regression
    if task == Task.regression:
        return task, y, None
    if len(values) != 2:
        raise InvalidInput(
            f"classification needs exactly two target values; column {target!r} has {len(values)}",
            loc=("body", "task"),
            column=target,
        )
    return task, (y == values[1]).astype(float), [f"{v:g}" for v in values]


# --------------------------------------------------------------------------- name lists


def parse_names(text: str, field: str) -> list[str]:
    """A JSON list of strings, or comma-separated names."""
    if text.lstrip().startswith("["):
        try:
            names = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{field} is not valid JSON: {exc}", loc=("body", field)) from None
        if not all(isinstance(n, str) for n in names):
            raise InvalidInput(f"{field} must be a list of column names", loc=("body", field))
    else:
        names = text.split(",")
    names = [n.strip() for n in names if n.strip()]
    repeated = [n for n, count in Counter(names).items() if count > 1]
    if repeated:
        raise InvalidInput(f"{field} names {repeated[0]!r} twice", loc=("body", field))
    return names


def parse_groups(text: str | None, features: list[str]) -> list[str] | None:
    if text is None or not text.strip():
        return None
    if text.lstrip().startswith("{"):
        try:
            mapping = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"groups is not valid JSON: {exc}", loc=("body", "groups")) from None
        _check_known(list(mapping), features, "groups")
        return [str(mapping.get(name, name)) for name in features]
    labels = parse_labels(text)
    if len(labels) != len(features):
        raise InvalidInput(
            f"groups lists {len(labels)} labels but there are {len(features)} features; give "
            "one label per feature, in feature order, or a JSON object {column: group}",
            loc=("body", "groups"),
        )
    return labels


def parse_labels(text: str) -> list[str]:
    """Group labels may repeat, unlike column names."""
    if text.lstrip().startswith("["):
        try:
            return [str(label) for label in json.loads(text)]
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"groups is not valid JSON: {exc}", loc=("body", "groups")) from None
    return [label.strip() for label in text.split(",")]


def parse_true_support(text: str | None, features: list[str]) -> list[int] | None:
    if text is None or not text.strip():
        return None
    names = parse_names(text, "true_support")
    _check_known(names, features, "true_support")
    return sorted(features.index(name) for name in names)


def _check_known(names: list[str], allowed: list[str], field: str) -> None:
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise InvalidInput(
            f"{field} names {unknown[0]!r}, which is not among the allowed columns "
            f"{_listing(allowed)}",
            loc=("body", field),
            column=unknown[0],
        )


def _listing(names: list[str], most: int = 20) -> str:
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")
