"""Reading a CSV file for ``foba-lab select``: strict and small.

A header row of column names, then one row per sample. Every feature column must hold numbers
in every row; the target column too, unless the objective is a classification one (then any two
labels will do). Anything else is an error that names the column and the line to fix. Text
columns (categories) and missing cells are not handled for now: the app's CSV preparation
is where they will be, and this reader should use it once it can be imported on its own.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "?"})
_SHOWN = 5  # bad columns listed in one message


class TableError(ValueError):
    """The file cannot be used as it is; the message says what to fix."""


@dataclass(frozen=True)
class Table:
    """Features X (float), the target y, and their names."""

    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    target: str


def read_table(path: str | Path, target: str | None, *, numeric_target: bool = True) -> Table:
    """Read ``path`` and split it into the features and the ``target`` column.

    Raises
    ------
    TableError
        The file is missing, empty or ragged; the target is not a column (the message lists
        them); a cell is missing or not a number (the message names the column and the line).
    """
    path = Path(path)
    header, rows, lines = _read_rows(path)
    if target is None or target not in header:
        given = "no --target given" if target is None else f"no column {target!r} in {path}"
        raise TableError(f"{given}; the target must be one of the columns: {_list(header)}")
    features = [name for name in header if name != target]
    if not features:
        raise TableError(f"{path} has no column besides the target {target!r}")
    t = header.index(target)
    columns = list(zip(*rows, strict=True))
    X = _numeric(path, lines, [columns[j] for j in range(len(header)) if j != t], features)
    y = _labels(path, lines, columns[t], target)
    if numeric_target and y.dtype.kind not in "fiu":
        i = next(i for i, v in enumerate(y) if not _is_number(v))
        raise TableError(
            f"{path}: the target column {target!r} is not numeric "
            f"(line {lines[i]}: {str(y[i])!r}); a regression objective needs numbers; for "
            "class labels use a classification objective (--objective logistic)"
        )
    if numeric_target and not np.all(np.isfinite(y)):
        i = int(np.flatnonzero(~np.isfinite(y))[0])
        raise TableError(f"{path}: the target column {target!r} is not finite at line {lines[i]}")
    return Table(X=X, y=y, feature_names=features, target=target)


def _read_rows(path: Path) -> tuple[list[str], list[list[str]], list[int]]:
    """The header, the non-blank rows, and the line number of each row."""
    rows, lines = [], []
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header is None:
                raise TableError(f"{path} is empty: expected a header row of column names")
            header = [h.strip() for h in header]
            _check_header(path, header)
            for row in reader:
                if all(not c.strip() for c in row):
                    continue  # blank line
                if len(row) != len(header):
                    raise TableError(
                        f"{path}, line {reader.line_num}: {len(row)} fields, but the header has "
                        f"{len(header)} columns"
                    )
                rows.append(row)
                lines.append(reader.line_num)
    except FileNotFoundError:
        raise TableError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise TableError(f"{path} is a directory, not a CSV file") from None
    except UnicodeDecodeError as exc:
        raise TableError(
            f"{path} is not UTF-8 text (byte {exc.start}); save it as a UTF-8 CSV file"
        ) from None
    except csv.Error as exc:
        raise TableError(f"{path} is not a valid CSV file: {exc}") from None
    if len(rows) < 2:
        raise TableError(f"{path} has {len(rows)} data row(s); at least 2 are needed")
    return header, rows, lines


def _check_header(path: Path, header: list[str]) -> None:
    if len(header) == 1 and ";" in header[0]:
        raise TableError(
            f"{path} has a single column {header[0]!r}: columns must be separated by commas, "
            "not semicolons"
        )
    if "" in header:
        raise TableError(f"{path}: column {header.index('') + 1} of the header has no name")
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise TableError(f"{path}: two columns are named {name!r}; names must be unique")
        seen.add(name)


def _numeric(path: Path, lines: list[int], columns, names: list[str]) -> np.ndarray:
    """The columns as floats; every bad column is named with the first line at fault."""
    out = np.empty((len(lines), len(columns)))
    missing, text = [], []
    for j, (name, cells) in enumerate(zip(names, columns, strict=True)):
        for i, cell in enumerate(cells):
            value = cell.strip()
            if value.lower() in MISSING:
                missing.append(f"{name!r} (line {lines[i]})")
                break
            try:
                number = float(value)
            except ValueError:
                text.append(f"{name!r} (line {lines[i]}: {value!r})")
                break
            if not math.isfinite(number):
                text.append(f"{name!r} (line {lines[i]}: {value!r} is not finite)")
                break
            out[i, j] = number
    problems = []
    if text:
        problems.append(
            f"{_columns(text, 'not numeric')}: {_list(text)}; only numeric columns are supported "
            "for now (encode categories as numbers, or drop those columns)"
        )
    if missing:
        problems.append(
            f"{_columns(missing, 'missing values')}: {_list(missing)}; fill them or drop those rows"
        )
    if problems:
        raise TableError(f"{path}: " + "; and ".join(problems))
    return out


def _labels(path: Path, lines: list[int], cells, name: str) -> np.ndarray:
    """Class labels: any values, none missing; numbers when they all are."""
    values = np.array([c.strip() for c in cells])
    for i, value in enumerate(values):
        if value.lower() in MISSING:
            raise TableError(
                f"{path}: the target column {name!r} has a missing value (line {lines[i]}); "
                "fill it or drop that row"
            )
    try:
        return values.astype(np.float64)
    except ValueError:
        return values


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _columns(items: list[str], what: str) -> str:
    if what == "missing values":
        return f"1 column has {what}" if len(items) == 1 else f"{len(items)} columns have {what}"
    return f"1 column is {what}" if len(items) == 1 else f"{len(items)} columns are {what}"


def _list(items: list[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")
