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


class NotAllNumbers(Exception):
    """A block read as numbers holds a cell that is not one."""


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
        self._positions = pd.Index([c.position for c in columns])

    # ----------------------------------------------------------------------- reading blocks

    def add_all(self, blocks: Iterable[Block]) -> None:
        """Every block, a batch at a time: pandas' cost per call grows with the number of
        columns, not rows, so a wide table's few-row blocks are read together (issue 25).
        Only all-number batches are joined; anything else is read block by block, as it
        always was, so that text codes and messages do not depend on the batching."""
        for batch in batches(blocks):
            if len(batch) > 1 and not any(c.text for c in self.columns):
                try:
                    self.add(joined(batch), numbers_only=True)
                    continue
                except (NotAllNumbers, InvalidInput):  # raised before anything was stored
                    pass
            for block in batch:
                self.add(block)

    def add(self, block: Block, numbers_only: bool = False) -> None:
        try:
            frame = self._read(block, numeric=True)
        except ValueError:  # a cell that is not a number: look at every cell as text
            if numbers_only:
                raise NotAllNumbers from None
            frame = self._read(block, numeric=False)
        if len(frame) != len(block.lines):
            self._quoting(block)
        start, stop = self.n_rows, self.n_rows + len(frame)
        if stop > self.values.shape[1]:
            raise TooLarge(
                f"the file has more than {self.values.shape[1]:,} data rows of {len(self.columns)} "
                f"used columns: over {self.max_cells:,} cells (MAX_CELLS)"
            )
        where = frame.columns.get_indexer(self._positions)  # column j is frame column where[j]
        floats = (frame.dtypes.to_numpy() == np.dtype(np.float64))[where]
        if floats.all():  # one array for all columns, not a Series each (issue 25)
            numbers = frame.to_numpy(np.float64)[:, where].T
            self._numbers(np.arange(len(self.columns)), numbers, block.first_row)
        elif floats.any():
            numeric = np.flatnonzero(floats)
            numbers = frame.iloc[:, where[numeric]].to_numpy(np.float64).T
            self._numbers(numeric, numbers, block.first_row)
        for j in np.flatnonzero(~floats):
            column = self.columns[j]
            cells = frame.iloc[:, where[j]].to_numpy()
            self._cells(int(j), column, cells, block.first_row, start)
        self.n_rows = stop

    def _read(self, block: Block, numeric: bool) -> pd.DataFrame:
        dtype: dict[int, Any] = {
            c.position: (np.float64 if numeric and not c.text else object) for c in self.columns
        }
        # One dtype for all when they agree: pandas resolves a dict's entries one by one.
        types = set(dtype.values())
        same: Any = types.pop() if len(types) == 1 else dtype
        try:
            return pd.read_csv(
                io.BytesIO(block.data),
                encoding="utf-8",
                header=None,
                names=list(range(self.width)),
                usecols=sorted(dtype),
                dtype=same,
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

    def _numbers(self, rows: np.ndarray, numbers: np.ndarray, first_row: int) -> None:
        """Rows ``rows`` of ``values`` (their columns) get a block of numbers each, one row of
        ``numbers`` per column, counted with array operations over all of them at once."""
        start = self.n_rows
        stop = start + numbers.shape[1]
        if len(rows) == len(self.columns):
            self.values[:, start:stop] = numbers
        else:
            self.values[rows, start:stop] = numbers
        missing, infinite = np.isnan(numbers), np.isinf(numbers)
        n_missing = np.count_nonzero(missing, axis=1)
        n_infinite = np.count_nonzero(infinite, axis=1)
        n_numbers = numbers.shape[1] - n_missing
        for j, n in zip(rows.tolist(), n_numbers.tolist(), strict=True):
            self.columns[j].n_numbers += n
        for i in np.flatnonzero(n_missing + n_infinite):
            self._count(self.columns[rows[i]], missing[i], infinite[i], first_row)

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
            self._numbers(np.array([j]), numbers[np.newaxis], first_row)
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


BATCH_ROWS = 256  # records read by one pandas call when a block has fewer ...
BATCH_BYTES = 16 << 20  # ... unless their text is this long already


def batches(blocks: Iterable[Block]) -> Iterator[list[Block]]:
    """Consecutive blocks gathered until they hold BATCH_ROWS records or BATCH_BYTES of text;
    a narrow table's block (half a MiB of text) holds more records and stays alone."""
    batch: list[Block] = []
    rows = size = 0
    for block in blocks:
        batch.append(block)
        rows, size = rows + len(block.lines), size + len(block.data)
        if rows >= BATCH_ROWS or size >= BATCH_BYTES:
            yield batch
            batch, rows, size = [], 0, 0
    if batch:
        yield batch


def joined(batch: list[Block]) -> Block:
    """Consecutive blocks as one (each holds whole records, so their text concatenates)."""
    return Block(
        b"".join(b.data for b in batch),
        np.concatenate([b.lines for b in batch]),
        batch[0].first_row,
    )
