"""The used columns of an uploaded CSV, filled block by block into one preallocated array.

Each column is numeric until a cell says otherwise: pandas' C parser converts a block's numeric
columns at once; when one of them holds a cell that is not a number, the block is read again as
text and that column becomes a text column, its values coded (one code per distinct value, the
earlier numbers turned into labels) in the same array. So every text column is found in one
pass, each with the first such cell, and memory stays one float64 per used cell plus a block.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from app.errors import InvalidInput, TooLarge
from app.ingest.records import Block
from app.ingest.stream import FILE, QUOTE

# The tokens that mean a missing cell unless the upload says otherwise (``na_values``),
# compared lower-cased; an empty cell is missing whatever is said.
NA_TOKENS = frozenset({"", "na", "n/a", "nan", "null", "none"})


def na_tokens(given: Iterable[str] | None) -> frozenset[str]:
    """The lower-cased tokens that mean missing: the default set, or the given ones (and the
    empty cell)."""
    if given is None:
        return NA_TOKENS
    return frozenset({"", *(t.strip().lower() for t in given)})


def na_spellings(tokens: frozenset[str]) -> list[str]:
    """Exact spellings of the tokens, for readers that match cells exactly (pandas, Arrow)."""
    return sorted({v for t in tokens for v in (t, t.upper(), t.title(), t.capitalize())})


NA_SPELLINGS = na_spellings(NA_TOKENS)
BOOLEANS = {"true": 1.0, "false": 0.0}  # as pandas' C parser reads them in a float column
LABELS_PER_COLUMN = 10_000  # distinct text values remembered per column
LABELS_IN_ALL = 200_000  # ... and in all columns together
DECIMAL_COMMA = r"[+-]?\d*,\d+"
ROWS_PER_BLOCK = 8192  # rows a column check or transform handles at a time


@dataclass
class Column:
    name: str
    position: int  # field index in the file
    text: bool = False
    n_numbers: int = 0  # cells read as numbers (infinite ones included)
    n_text: int = 0  # cells that are neither numbers nor missing
    n_missing: int = 0
    n_infinite: int = 0
    first_bad: int | None = None  # data row of the first missing or infinite cell
    example: tuple[int, str] | None = None  # data row and value of the first text cell
    comma_numbers: int = 0  # text cells that read as numbers with a decimal comma
    labels: dict[str, int] = field(default_factory=dict)  # text value -> code
    repeated: bool = False  # a text value occurs twice
    overflow: bool = False  # more distinct values than remembered

    @property
    def n_bad(self) -> int:
        return self.n_missing + self.n_infinite


class Table:
    """``values[j, :n_rows]`` holds column j: numbers, or codes of text values; NaN where a
    cell is missing (for text columns, also where it was infinite). Columns are contiguous
    (one row of ``values`` each), so that X can be compacted in place column by column."""

    def __init__(
        self,
        columns: list[Column],
        width: int,
        capacity: int,
        max_cells: int,
        delimiter: str,
        decimal: str,
        na: frozenset[str] = NA_TOKENS,
    ) -> None:
        self.columns = columns
        self.width = width
        self.values = np.empty((len(columns), capacity))  # pages are touched as rows arrive
        self.n_rows = 0
        self.max_cells = max_cells
        self.delimiter = delimiter
        self.decimal = decimal
        self.na = na  # lower-cased tokens that mean missing
        self._na_spellings = na_spellings(na)
        self.n_labels = 0

    # ----------------------------------------------------------------------- reading blocks

    def add(self, block: Block) -> None:
        try:
            frame = self._read(block, numeric=True)
        except ValueError:  # a cell that is not a number: look at every cell as text
            frame = self._read(block, numeric=False)
        if len(frame) != len(block.lines):
            self._quoting(block)
        start, stop = self.n_rows, self.n_rows + len(frame)
        if stop > self.values.shape[1]:
            raise TooLarge(
                f"the file has more than {self.values.shape[1]:,} data rows of {len(self.columns)} "
                f"used columns: over {self.max_cells:,} cells (MAX_CELLS)"
            )
        for j, column in enumerate(self.columns):
            cells = frame[column.position].to_numpy()
            if cells.dtype == np.float64:
                self._numbers(j, column, cells, block.first_row)
            else:
                self._cells(j, column, cells, block.first_row, start)
        self.n_rows = stop

    def _read(self, block: Block, numeric: bool) -> pd.DataFrame:
        dtype: dict[int, Any] = {
            c.position: (np.float64 if numeric and not c.text else object) for c in self.columns
        }
        try:
            return pd.read_csv(
                io.BytesIO(block.data),
                encoding="utf-8",
                header=None,
                names=list(range(self.width)),
                usecols=sorted(dtype),
                dtype=dtype,
                sep=self.delimiter,
                decimal=self.decimal,
                quotechar=QUOTE,
                na_values=self._na_spellings,
                keep_default_na=False,
                skip_blank_lines=False,
                index_col=False,
                engine="c",
            )
        except pd.errors.ParserError:
            self._quoting(block)
            raise  # not reached

    def _quoting(self, block: Block) -> None:
        first, last = int(block.lines[0]), int(block.lines[-1])
        where = f"line {first}" if first == last else f"lines {first} to {last}"
        raise InvalidInput(
            f'{where} could not be read consistently: check the quote characters (") there; '
            "a quote that opens a field must close it",
            loc=FILE,
            line=first,
        )

    def _numbers(self, j: int, column: Column, numbers: np.ndarray, first_row: int) -> None:
        start = self.n_rows
        self.values[j, start : start + len(numbers)] = numbers
        missing = np.isnan(numbers)
        self._count(column, missing, np.isinf(numbers), first_row)
        column.n_numbers += len(numbers) - column_sum(missing)

    def _count(
        self, column: Column, missing: np.ndarray, infinite: np.ndarray, first_row: int
    ) -> None:
        n_missing, n_infinite = column_sum(missing), column_sum(infinite)
        if (n_missing or n_infinite) and column.first_bad is None:
            column.first_bad = first_row + int(np.flatnonzero(missing | infinite)[0])
        column.n_missing += n_missing
        column.n_infinite += n_infinite

    def _cells(self, j: int, column: Column, cells: np.ndarray, first_row: int, start: int) -> None:
        """A block of cells read as text: numbers, missing markers, booleans and text."""
        series = pd.Series(cells, dtype=object)
        stripped = series.where(series.notna(), "").astype(str).str.strip()
        lower = stripped.str.lower()
        missing = lower.isin(self.na).to_numpy()
        readable = stripped
        if self.decimal == ",":  # 1,5 is a number; 1.5 is not (it is not what the file uses)
            readable = stripped.where(~stripped.str.contains(".", regex=False), "x")
            readable = readable.str.replace(",", ".", regex=False)
        numbers = pd.to_numeric(readable.mask(missing), errors="coerce").to_numpy(dtype=float)
        booleans = lower.map(BOOLEANS).to_numpy(dtype=float)
        numbers = np.where(np.isnan(numbers), booleans, numbers)
        text = np.isnan(numbers) & ~missing
        if text.any():
            first = int(np.flatnonzero(text)[0])
            if column.example is None:
                column.example = (first_row + first, stripped.iloc[first])
            column.n_text += int(text.sum())
            if self.decimal == ".":
                column.comma_numbers += int(stripped[text].str.fullmatch(DECIMAL_COMMA).sum())
            if not column.text:
                self._become_text(j, column, start)
        if not column.text:
            self._numbers(j, column, numbers, first_row)
            return
        column.n_numbers += len(numbers) - column_sum(text | missing)
        infinite = np.isinf(numbers)
        self._count(column, missing, infinite, first_row)
        labels = stripped.to_numpy(dtype=object)
        shown = ~np.isnan(numbers) & ~infinite
        labels[shown] = [_label(v) for v in numbers[shown]]
        present = ~(missing | infinite)
        codes = np.full(len(labels), np.nan)
        codes[present] = self._codes(column, labels[present])
        self.values[j, start : start + len(codes)] = codes

    def _become_text(self, j: int, column: Column, rows: int) -> None:
        """Turn the numbers read so far into labels: the column holds text."""
        column.text = True
        earlier = self.values[j, :rows]
        present = np.isfinite(earlier)
        uniques, inverse = np.unique(earlier[present], return_inverse=True)
        codes = self._codes(column, np.array([_label(v) for v in uniques], dtype=object))
        column.repeated = column.repeated or len(uniques) < int(present.sum())
        earlier[present] = codes[inverse]
        earlier[~present] = np.nan
        column.n_missing += column.n_infinite  # infinite numbers are no text values
        column.n_infinite = 0

    def _codes(self, column: Column, labels: np.ndarray) -> np.ndarray:
        """Codes of the labels (-1 for values past the number remembered)."""
        inverse, uniques = pd.factorize(labels)
        if len(uniques) < len(labels):
            column.repeated = True
        mapping = np.empty(len(uniques))
        known = column.labels
        for i, label in enumerate(uniques):
            code = known.get(label)
            if code is not None:
                column.repeated = True
            elif len(known) < LABELS_PER_COLUMN and self.n_labels < LABELS_IN_ALL:
                code = known[label] = len(known)
                self.n_labels += 1
            else:
                column.overflow, code = True, -1
            mapping[i] = code
        return mapping[inverse]

    # ----------------------------------------------------------------------- reading columns

    def column(self, j: int) -> np.ndarray:
        return self.values[j, : self.n_rows]


def column_sum(mask: np.ndarray) -> int:
    return int(np.count_nonzero(mask))


def _label(value: float) -> str:
    """A number met in a text column, as a category label (1.0 reads '1')."""
    return f"{value:.15g}"


def blocks(values: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """Row blocks of a column: checks and transforms without temporaries of its length."""
    for start in range(0, len(values), ROWS_PER_BLOCK):
        yield start, values[start : start + ROWS_PER_BLOCK]


def distinct_values(values: np.ndarray, most: int) -> np.ndarray:
    """The sorted distinct finite values, or the first ``most + 1`` found when there are more."""
    found = np.array([])
    for _, block in blocks(values):
        block = block[np.isfinite(block)]
        found = np.union1d(found, block)
        if len(found) > most:
            return found[: most + 1]
    return found
