"""Read an uploaded CSV as a stream of text, in bounded memory (csv_records reads records).

The spooled upload is read 512 KiB at a time and decoded incrementally; newlines become ``\\n``
whatever the file used (``\\r\\n``, or ``\\r`` alone as old Mac files do). Lines are handed on
in blocks of whole lines; a line longer than the limit is refused as soon as it is seen,
without reading it whole. The delimiter is sniffed from the first 64 KiB.
"""

from __future__ import annotations

import codecs
import csv
from collections.abc import Iterator
from typing import BinaryIO

from app.errors import InvalidInput, TooLarge
from app.ingest.words import Words

PIECE_BYTES = 1 << 19  # raw bytes read at a time
SNIFF_CHARS = 64 * 1024
DELIMITERS = ",;\t|"
QUOTE = '"'
FILE = ("body", "file")
# Codecs that call themselves text encodings but do not read files: refused like base64.
NOT_FILE_ENCODINGS = frozenset(
    {"undefined", "idna", "punycode", "unicode-escape", "raw-unicode-escape"}
)


class DecodeProblem(Exception):
    """The bytes stop being text in the declared encoding (reported with a diagnosis)."""

    def __init__(self, offset: int, line: int, byte: int | None) -> None:
        super().__init__(f"undecodable byte at offset {offset}")
        self.offset, self.line, self.byte = offset, line, byte


SUPPORTED = "utf-8, cp1252 (Windows), latin-1 or utf-16"
HINT = f"use a text encoding such as {SUPPORTED}"
EBCDIC = (
    "it looks like EBCDIC (IBM mainframe) text, which is not a supported encoding (those are "
    "text encodings such as UTF-8, Latin-1, cp1252 or UTF-16): save it as UTF-8"
)


def text_codec(encoding: str, words: Words) -> str:
    """The codec's canonical name, if it is a text encoding Python knows that writes line
    breaks as ASCII does (lines are counted and split on the raw bytes)."""
    loc = ("body", "encoding")
    hint = HINT
    if not encoding.isprintable() or len(encoding) > 40:
        raise InvalidInput(f"{words.lead('encoding')}that is not an encoding name; {hint}", loc)
    try:
        codec = codecs.lookup(encoding)
    except LookupError:
        raise InvalidInput(
            f"{words.lead('encoding')}unknown encoding {encoding!r}; {hint}", loc
        ) from None
    if not getattr(codec, "_is_text_encoding", True) or codec.name in NOT_FILE_ENCODINGS:
        raise InvalidInput(
            f"{words.lead('encoding')}{encoding!r} is not a text encoding (it transforms bytes "
            f"or names, not text); {hint}",
            loc,
        )
    if not _ascii_line_breaks(codec.name):
        raise InvalidInput(
            f"{words.lead('encoding')}{encoding!r} is not a supported encoding: it does not "
            f"write line breaks as ASCII does (EBCDIC); save the file as UTF-8, or {hint}",
            loc,
        )
    return codec.name


def _ascii_line_breaks(codec: str) -> bool:
    """Whether a newline and a carriage return are written with their ASCII bytes (UTF-16 and
    UTF-32 pad them with zeros; EBCDIC code pages such as cp500 write 0x25 and 0x0d)."""
    try:
        return b"\n" in "\n".encode(codec) and b"\r" in "\r".encode(codec)
    except (UnicodeError, LookupError):
        return False


def looks_like_ebcdic(head: bytes) -> bool:
    """Whether these first bytes read as ordinary text lines in EBCDIC (cp500): nearly all
    printable ASCII once decoded so, with line breaks; as Latin-1 they would be garbage."""
    text = head.decode("cp500")
    if "\n" not in text:
        return False
    plain = sum(ch.isascii() and (ch.isprintable() or ch in "\t\n\r") for ch in text)
    return plain >= 0.95 * len(text)


def count_lines(raw: BinaryIO) -> int:
    """An upper bound of the number of lines (newline or carriage-return bytes, plus one)."""
    raw.seek(0)
    newlines = returns = 0
    while piece := raw.read(PIECE_BYTES):
        newlines += piece.count(b"\n")
        returns += piece.count(b"\r")
    raw.seek(0)
    return max(newlines, returns) + 1


def text_pieces(raw: BinaryIO, codec: str, words: Words) -> Iterator[str]:
    """Decoded text with universal newlines; raises DecodeProblem where the bytes stop being
    text, InvalidInput at a NUL (a binary file)."""
    decoder = codecs.getincrementaldecoder(codec)(errors="strict")
    consumed = lines = 0
    started = pending_cr = False
    while True:
        data = raw.read(PIECE_BYTES)
        final = not data
        try:
            text = decoder.decode(data, final)
        except UnicodeDecodeError as exc:
            held = len(exc.object) - len(data)  # bytes the decoder kept from the last piece
            byte = exc.object[exc.start] if exc.start < len(exc.object) else None
            line = lines + exc.object[: exc.start].count(b"\n") + 1
            raise DecodeProblem(consumed - held + exc.start, line, byte) from None
        except UnicodeError:
            raise DecodeProblem(consumed, lines + 1, None) from None
        consumed += len(data)
        if not started and text:
            # A BOM is not a column name; a file saved twice by a BOM-adding editor has two.
            text, started = text.lstrip("\ufeff"), True
        if pending_cr:
            text, pending_cr = "\r" + text, False
        if text.endswith("\r") and not final:
            text, pending_cr = text[:-1], True  # its \n may start the next piece
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        nul = text.find("\x00")
        if nul >= 0:
            line = lines + text.count("\n", 0, nul) + 1
            utf16 = "" if codec.startswith("utf-16") else words.choose("encoding", "utf-16")
            raise InvalidInput(
                f"the file holds a NUL character (line {line}): it is binary, not CSV text"
                + (f" (if it is UTF-16 text without a byte-order mark, {utf16})" if utf16 else ""),
                loc=FILE,
                line=line,
            )
        lines += text.count("\n")
        if text:
            yield text
        if final:
            return


def line_blocks(pieces: Iterator[str], max_line: int) -> Iterator[tuple[str, int]]:
    """Whole lines (each ending in ``\\n``), about a piece at a time, with the number of the
    first; a line longer than ``max_line`` characters is refused once that many are seen."""
    carry, line_no = "", 1
    for piece in pieces:
        text = carry + piece
        cut = text.rfind("\n") + 1
        block, carry = text[:cut], text[cut:]
        if block:
            lines = block.split("\n")
            if max(map(len, lines)) > max_line:
                too_long(
                    line_no + next(i for i, t in enumerate(lines) if len(t) > max_line), max_line
                )
            yield block, line_no
            line_no += len(lines) - 1
        if len(carry) > max_line:
            too_long(line_no, max_line)
    if carry:
        yield carry + "\n", line_no


def too_long(line: int, max_line: int) -> None:
    raise TooLarge(
        f"line {line} is longer than {max_line // 1024} KiB, the longest line allowed "
        "(MAX_LINE_KB); a CSV line holds one row: check the file's line endings and delimiter"
    )


def sniff(given: str | None, decimal: str, sample: str, words: Words) -> str:
    """The delimiter: the one given, else the one the sample's lines use. A header it leaves
    in one piece where another delimiter would split it is refused, naming the option that
    clashes (a column named 'y;a;b' would be reported as a missing target, or worse)."""
    if "\n" in sample:
        sample = sample[: sample.rindex("\n")]  # whole lines only
    lines = [line + "\n" for line in sample.split("\n") if line.strip()]
    if given is not None:
        delimiter = _given(given, decimal, words)
    else:
        delimiter = _detect(decimal, sample, lines)
    if len(_header_fields(lines, delimiter)) == 1:
        other = next((d for d in DELIMITERS if len(_header_fields(lines, d)) > 1), None)
        if other is not None:
            raise _one_column(delimiter, other, given is not None, decimal, words)
    return delimiter


def _given(given: str, decimal: str, words: Words) -> str:
    delimiter = "\t" if given in ("tab", "\\t") else given
    if len(delimiter) != 1 or delimiter in '"\r\n':
        raise InvalidInput(
            f"{words.lead('delimiter')}delimiter must be one character other than a quote "
            f"or a newline (or 'tab'), got {given!r}",
            loc=("body", "delimiter"),
        )
    if delimiter == decimal:
        raise InvalidInput(
            f"{words.lead('decimal')}the delimiter and the decimal mark are both "
            f"{decimal!r}: one character cannot separate the fields and a number's decimals; "
            f"{words.choose('decimal', '.')} if the numbers are written 1.5, else "
            f"{words.choose('delimiter', ';')} (or the file's own delimiter)",
            loc=("body", "decimal"),
            options={"decimal": ["."]},
        )
    return delimiter


def _detect(decimal: str, sample: str, lines: list[str]) -> str:
    # With a decimal comma the comma cannot also separate the fields.
    candidates = DELIMITERS.replace(",", "") if decimal == "," else DELIMITERS
    widest = max(candidates, key=lambda d: len(_header_fields(lines, d)))
    try:
        sniffed = csv.Sniffer().sniff(sample, delimiters=candidates).delimiter
    except csv.Error:  # rows too irregular for the sniffer: the one that splits the header most
        return widest
    # A delimiter the header does not hold is the sniffer misled by the data's cells.
    return sniffed if len(_header_fields(lines, sniffed)) > 1 else widest


def _one_column(
    delimiter: str, other: str, given: bool, decimal: str, words: Words
) -> InvalidInput:
    """The header is one column with ``delimiter`` but splits with ``other``."""
    shown = "tab" if other == "\t" else other
    if not given:  # detection splits the header if it can: the decimal comma ruled out ','
        return InvalidInput(
            f"{words.lead('decimal')}the file's fields look separated by commas (its header "
            f"splits at them), but the decimal mark is {decimal!r} too: one character cannot "
            f"be both; {words.choose('decimal', '.')} if the numbers are written 1.5",
            loc=("body", "decimal"),
            options={"decimal": ["."]},
        )
    return InvalidInput(
        f"{words.lead('delimiter')}the file's header is one column when read with the "
        f"delimiter {delimiter!r}; its fields look separated by {shown!r}: "
        f"{words.choose('delimiter', shown)} (or leave the delimiter out to have it detected)",
        loc=("body", "delimiter"),
        options={"delimiter": [shown]},
    )


def _header_fields(lines: list[str], delimiter: str) -> list[str]:
    """The first record's fields (it may span lines: a quoted newline in a name)."""
    try:
        return next(csv.reader(lines, delimiter=delimiter, quotechar=QUOTE), [])
    except csv.Error:
        return []


def text_sample(pieces: Iterator[str]) -> tuple[str, Iterator[str]]:
    """The first SNIFF_CHARS characters, and the pieces with them still at the front."""
    taken: list[str] = []
    size = 0
    for piece in pieces:
        taken.append(piece)
        size += len(piece)
        if size >= SNIFF_CHARS:
            break

    def again() -> Iterator[str]:
        yield from taken
        yield from pieces

    return "".join(taken)[:SNIFF_CHARS], again()
