"""Header and records of an uploaded CSV, read block by block with their field counts checked.

Every record's field count is compared with the header's: pandas would otherwise fill short
rows with missing values, and on rows longer than the header turn the leading columns into an
index, shifting every value. A block without quote characters is checked with numpy on its
bytes; a block with quotes goes through the ``csv`` module, so that quoted delimiters and
newlines count right (a record that may go on in the next block is carried over to it).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from app.errors import InvalidInput, TooLarge
from app.ingest.stream import FILE, QUOTE, too_long

MAX_NAME_CHARS = 1000
ROW_NAMES = "rownames"  # R's write.csv leaves the row names' header cell blank


@dataclass
class Header:
    names: list[str]  # as used: stripped, the R row-names column named
    width: int  # fields per line, counting a trailing empty one
    trailing: bool  # every line ends with a delimiter: the last field is empty, unnamed
    notes: list[str] = field(default_factory=list)


def read_header(fields: list[str], max_columns: int, delimiter: str) -> Header:
    names = [name.strip() for name in fields]
    notes = []
    trailing = len(names) > 1 and names[-1] == ""
    if trailing:
        names = names[:-1]
    if len(names) > max_columns:
        raise TooLarge(
            f"the file has {len(names)} columns; at most {max_columns} are allowed (MAX_COLUMNS)"
        )
    if len(names) > 1 and names[0] == "" and ROW_NAMES not in names:
        names[0] = ROW_NAMES
        notes.append(
            f"the first column has no name (row names, as R's write.csv writes them): it is "
            f"called {ROW_NAMES!r}"
        )
    for position, name in enumerate(names, start=1):
        if not name:
            raise InvalidInput(
                f"column {position} has a blank header; every column needs a name",
                loc=FILE,
                column_position=position,
            )
        if len(name) > MAX_NAME_CHARS:
            raise InvalidInput(
                f"the name of column {position} is {len(name):,} characters long; at most "
                f"{MAX_NAME_CHARS:,} are allowed (is the first line a header?)",
                loc=FILE,
                column_position=position,
            )
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    duplicated = [name for name, n in seen.items() if n > 1]
    if duplicated:
        name = duplicated[0]
        where = [i for i, n in enumerate(names, start=1) if n == name]
        raise InvalidInput(
            f"column name {name!r} appears {len(where)} times (columns "
            f"{', '.join(map(str, where))}); column names must be unique",
            loc=FILE,
            column=name,
        )
    if trailing:
        notes.append(
            f"every line ends with {_shown(delimiter)}: the empty field after it is not a column"
        )
    return Header(names, len(fields), trailing, notes)


def _shown(delimiter: str) -> str:
    return "a tab" if delimiter == "\t" else repr(delimiter)


@dataclass
class Block:
    """Whole records ready for pandas: UTF-8 text without blank lines."""

    data: bytes
    lines: np.ndarray  # line number of each record's first line
    first_row: int  # data-row number (1 = the first after the header) of the first record


@dataclass
class Ragged:
    """Records whose field count is not the header's."""

    width: int
    delimiter: str
    trailing: bool  # the header line ends with a delimiter
    lines: list[tuple[int, int, bool]] = field(default_factory=list)  # line, fields, empty last
    count: int = 0
    rows: int = 0  # data rows seen

    def add(self, lines: np.ndarray, counts: np.ndarray, empty_last: np.ndarray) -> None:
        bad = np.flatnonzero(counts != self.width)
        self.count += len(bad)
        for i in bad[: 5 - len(self.lines)]:
            self.lines.append((int(lines[i]), int(counts[i]), bool(empty_last[i])))

    def error(self) -> InvalidInput:
        line, fields, _ = self.lines[0]
        message = f"line {line} has {fields} fields but the header has {self.width}"
        if self.count > 1:
            shown = ", ".join(f"line {ln}: {n}" for ln, n, _ in self.lines[1:])
            more = ", ..." if self.count > len(self.lines) else ""
            message += f"; {self.count - 1} more lines differ too ({shown}{more})"
        every = self.count == self.rows
        wider = all(n == self.width + 1 for _, n, _ in self.lines)
        if every and wider and all(empty for _, _, empty in self.lines):
            advice = (
                f"every data line ends with {_shown(self.delimiter)} but the header line does "
                "not: remove the trailing delimiters, or end the header line with one too"
            )
        elif every and self.trailing and all(n == self.width - 1 for _, n, _ in self.lines):
            advice = (
                f"the header line ends with {_shown(self.delimiter)} but the data lines do not: "
                "remove it from the header line"
            )
        elif every and wider:
            advice = (
                "every data line has one field more than the header: if the first field of each "
                "line is a row name (R's write.table writes them so), add a name for it at the "
                "start of the header line"
            )
        else:
            advice = "check the delimiter and the quoting of those lines"
        return InvalidInput(
            f"{message}; {advice}",
            loc=FILE,
            line=line,
            fields=fields,
            header_fields=self.width,
            lines=[ln for ln, _, _ in self.lines],
            count=self.count,
        )


class Records:
    """Data records in blocks, field counts checked; the header is read first."""

    def __init__(
        self,
        blocks: Iterator[tuple[str, int]],
        delimiter: str,
        max_line: int,
        max_columns: int,
    ) -> None:
        self.blocks = blocks
        self.delimiter = delimiter
        self.max_line = max_line
        self.rows = 0
        self.carry = ""  # the start of a record that may go on in the next block
        self.carry_line = 1
        self.header = self._header(max_columns)
        self.ragged = Ragged(self.header.width, delimiter, self.header.trailing)

    def _header(self, max_columns: int) -> Header:
        text, line_no = "", 1
        for block, first in self.blocks:
            if not text:
                line_no = first
            lines = (text + block).split("\n")[:-1]
            blank = 0
            while blank < len(lines) and not lines[blank].strip():
                blank += 1
            rest = lines[blank:]
            line_no += blank
            if not rest:
                text = ""
                continue
            consumed, fields = self._first_record(rest, line_no)
            if consumed is None:  # a quoted header cell goes on in the next block
                text = "".join(line + "\n" for line in rest)
                if len(text) > self.max_line:
                    too_long(line_no, self.max_line)
                continue
            self.carry = "".join(line + "\n" for line in rest[consumed:])
            self.carry_line = line_no + consumed
            return read_header(fields, max_columns, self.delimiter)
        raise InvalidInput("the file is empty", loc=FILE)

    def _first_record(self, lines: list[str], line_no: int) -> tuple[int | None, list[str]]:
        """Lines the first record takes and its fields; None if it may go on further."""
        taken = [0]

        def feed() -> Iterator[str]:
            for line in lines:
                taken[0] += 1
                yield line + "\n"

        try:
            fields = next(csv.reader(feed(), delimiter=self.delimiter, quotechar=QUOTE))
        except csv.Error as exc:
            _csv_error(exc, line_no)
        complete = taken[0] < len(lines) or _closed(lines[: taken[0]])
        return (taken[0] if complete else None), fields

    def __iter__(self) -> Iterator[Block]:
        for block, line_no in self.blocks:
            if self.carry:
                block, line_no = self.carry + block, self.carry_line
                self.carry = ""
            found = self._records(block, line_no, final=False)
            if found is not None:
                yield found
        if self.carry:
            block, self.carry = self.carry, ""
            found = self._records(block, self.carry_line, final=True)
            if found is not None:
                yield found

    def _records(self, block: str, line_no: int, final: bool) -> Block | None:
        if QUOTE in block:
            return self._quoted(block, line_no, final)
        data = block.encode("utf-8")
        codes = np.frombuffer(data, dtype=np.uint8)
        ends = np.flatnonzero(codes == 10)
        starts = np.concatenate(([0], ends[:-1] + 1))
        # Fields per line: delimiter bytes before each line's end, differenced (a multi-byte
        # UTF-8 character holds no ASCII byte, so counting bytes is safe).
        delimiters = np.flatnonzero(codes == ord(self.delimiter))
        counts = np.diff(np.searchsorted(delimiters, ends), prepend=0) + 1
        keep = np.ones(len(ends), dtype=bool)
        for i in np.flatnonzero(counts == 1):  # blank lines have no delimiter
            keep[i] = bool(data[starts[i] : ends[i]].strip())
        empty_last = codes[np.maximum(ends - 1, starts)] == ord(self.delimiter)
        lines = line_no + np.arange(len(ends))
        if not keep.all():
            data = b"".join(data[starts[i] : ends[i] + 1] for i in np.flatnonzero(keep))
        return self._block(data, lines[keep], counts[keep], empty_last[keep])

    def _quoted(self, block: str, line_no: int, final: bool) -> Block | None:
        lines = block.split("\n")[:-1]
        taken = [0]

        def feed() -> Iterator[str]:
            for line in lines:
                taken[0] += 1
                yield line + "\n"

        reader = csv.reader(feed(), delimiter=self.delimiter, quotechar=QUOTE)
        spans: list[tuple[int, int, int, bool]] = []  # first line, end, fields, empty last
        start = 0
        try:
            for fields in reader:
                end = taken[0]
                blank = not fields or (
                    len(fields) == 1 and not fields[0].strip() and QUOTE not in lines[start]
                )
                if not blank:
                    spans.append((start, end, len(fields), not fields[-1]))
                start = end
        except csv.Error as exc:
            _csv_error(exc, line_no + start)
        if spans and not final and not _closed(lines[spans[-1][0] : spans[-1][1]]):
            first = spans.pop()[0]  # its quoted field may go on in the next block
            self.carry = "".join(line + "\n" for line in lines[first:])
            self.carry_line = line_no + first
            if len(self.carry) > self.max_line:
                raise InvalidInput(
                    f"line {self.carry_line} opens a quoted field that has not closed after "
                    f'{self.max_line // 1024} KiB: check the quote characters (") of that line',
                    loc=FILE,
                    line=self.carry_line,
                )
        if not spans:
            return None
        data = "".join(line + "\n" for s, e, _, _ in spans for line in lines[s:e]).encode()
        firsts = np.array([line_no + s for s, _, _, _ in spans])
        counts = np.array([n for _, _, n, _ in spans])
        empty_last = np.array([empty for _, _, _, empty in spans])
        return self._block(data, firsts, counts, empty_last)

    def _block(
        self, data: bytes, lines: np.ndarray, counts: np.ndarray, empty_last: np.ndarray
    ) -> Block | None:
        if not len(lines):
            return None
        first_row = self.rows + 1
        self.rows += len(lines)
        self.ragged.rows = self.rows
        if self.ragged.count or (counts != self.ragged.width).any():
            self.ragged.add(lines, counts, empty_last)
            return None  # nothing more is parsed; the rest is only counted
        if self.header.trailing and not empty_last.all():
            line = int(lines[np.flatnonzero(~empty_last)[0]])
            raise InvalidInput(
                f"the header line ends with {_shown(self.delimiter)} (an unnamed last column) "
                f"but line {line} has a value there: name that column in the header",
                loc=FILE,
                line=line,
            )
        return Block(data, lines, first_row)


def _closed(lines: list[str]) -> bool:
    """Whether these lines end outside a quoted field (quote characters come in pairs)."""
    return sum(line.count(QUOTE) for line in lines) % 2 == 0


def _csv_error(exc: csv.Error, line: int) -> None:
    message = str(exc)
    if "field larger than field limit" in message:
        limit = csv.field_size_limit()
        raise InvalidInput(
            f"line {line} holds a field of more than {limit:,} characters, the longest a cell "
            "may be (a quote that never closes can make the rest of a file one field)",
            loc=FILE,
            line=line,
        ) from None
    raise InvalidInput(f"line {line} is not valid CSV: {message}", loc=FILE, line=line) from None
