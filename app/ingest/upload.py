"""Parse an uploaded CSV into X, y and metadata, or say precisely what is wrong with it.

The file is streamed (``csv_stream``: text and lines; ``csv_records``: header and records,
their field counts checked), its used columns filled into one preallocated array
(``csv_table``: numbers, or codes of text values), then prepared as the options ask
(``csv_prepare``: ID-like columns, text columns, missing values, the target; ``csv_problems``
words what an option can fix). Peak memory is about one float64 per used cell, plus a block.
Every problem an option can fix is reported in one answer; a file that is not text in the
declared encoding is read again as Windows or Latin-1 text to say what else needs fixing.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from app.errors import InvalidInput, TooLarge
from app.ingest.prepare import Limits, Prepared, prepare
from app.ingest.records import Records
from app.ingest.stream import (
    EBCDIC,
    SNIFF_CHARS,
    DecodeProblem,
    count_lines,
    line_blocks,
    looks_like_ebcdic,
    sniff,
    text_codec,
    text_pieces,
    text_sample,
)
from app.ingest.table import Column, Table, na_tokens
from app.ingest.words import EMPTY, Words
from app.models import Task, UploadOptions

GUESSES = ("cp1252", "latin-1")  # what a file that is not UTF-8 usually is
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")  # Excel's "Unicode text" starts so


@dataclass(frozen=True)
class UploadLimits:
    max_columns: int
    max_line_chars: int
    max_cells: int
    max_categories: int


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
    missing: list[int]  # missing or infinite cells in the file, per feature then the target
    delimiter: str
    dropped_rows: int
    meta: dict[str, Any] = field(default_factory=dict)  # how the file was prepared


def parse_csv(
    raw: BinaryIO, opts: UploadOptions, limits: UploadLimits, words: Words | None = None
) -> ParsedCsv:
    words = words or Words()
    codec = text_codec(opts.encoding, words)
    try:
        return _parse(raw, codec, opts, limits, words)
    except DecodeProblem as exc:
        # A fresh exception: the caught one's traceback holds the parse buffers.
        problem = DecodeProblem(exc.offset, exc.line, exc.byte)
    raise _diagnose(raw, problem, opts, limits, words)


def _parse(
    raw: BinaryIO, codec: str, opts: UploadOptions, limits: UploadLimits, words: Words
) -> ParsedCsv:
    capacity = count_lines(raw)
    notes = []
    if raw.read(2) in UTF16_BOMS and not codec.startswith(("utf-16", "utf-32")):
        notes.append(
            f"the file starts with UTF-16's byte-order mark: it was read as UTF-16, not {codec}"
        )
        codec = "utf-16"
    raw.seek(0)
    sample, pieces = text_sample(text_pieces(raw, codec, words))
    if not sample.strip():
        raise InvalidInput("the file is empty", loc=("body", "file"))
    delimiter = sniff(opts.delimiter, opts.decimal, sample, words)
    blocks = line_blocks(pieces, limits.max_line_chars)
    records = Records(blocks, delimiter, limits.max_line_chars, limits.max_columns)
    header = records.header
    target, features, explicit = select_columns(header.names, opts, words)
    check_names_early(opts, header.names, words)
    # The target first: y and X are then compacted in place, y at the front (csv_prepare).
    position = {name: j for j, name in enumerate(header.names)}
    columns = [Column(name, position[name]) for name in [target, *features]]
    per_row = max(len(columns) - 1, 1)
    capacity = min(capacity, limits.max_cells // per_row + 1)
    na = na_tokens(na_values(opts.na_values, words))
    table = Table(columns, header.width, capacity, limits.max_cells, delimiter, opts.decimal, na)
    table.add_all(records)
    if records.ragged.count:
        raise records.ragged.error()
    prepared = prepare(
        table,
        target,
        features,
        explicit,
        opts,
        words,
        Limits(limits.max_cells, limits.max_categories),
    )
    del table  # X may live in its buffer; nothing else of it is needed
    return ParsedCsv(
        X=prepared.X,
        y=prepared.y,
        feature_names=prepared.feature_names,
        target=target,
        task=prepared.task,
        classes=prepared.classes,
        groups=resolve_groups(opts.groups, prepared, words),
        true_support=resolve_true_support(opts.true_support, prepared, words),
        missing=prepared.missing,
        delimiter=delimiter,
        dropped_rows=prepared.dropped_rows,
        meta=_meta(prepared, [*notes, *header.notes], opts, na),
    )


def _meta(
    prepared: Prepared, notes: list[str], opts: UploadOptions, na: frozenset[str]
) -> dict[str, Any]:
    """How the file was prepared, kept with the data set (Dataset.meta) and shown on its page:
    the options, the missing-value tokens, what each option did, and the file column of every
    prepared column that is not one."""
    return {
        "decimal": opts.decimal,
        "text_columns": opts.text_columns,
        "missing": opts.missing,
        "categorical_missing": opts.categorical_missing,
        "reference_level": opts.reference_level,
        "id_columns": opts.id_columns,
        "task": opts.task.value if opts.task else None,
        "positive_class": opts.positive_class,
        "na_values": sorted(na - {""}),
        "id_like": prepared.id_like,
        "excluded": prepared.excluded,
        "one_hot": prepared.one_hot,
        "reference_levels": prepared.reference_levels,
        "imputed": prepared.imputed,
        "imputed_levels": prepared.imputed_levels,
        "sources": {
            name: source
            for name, source in zip(prepared.feature_names, prepared.sources, strict=True)
            if name != source
        },
        "notes": [*notes, *prepared.notes],
    }


def na_values(text: str | None, words: Words) -> list[str] | None:
    """The tokens of the na_values field (comma-separated or a JSON list); None: the default.
    Blank or [] leaves only empty cells missing."""
    if text is None:
        return None
    if not text.strip():
        return []
    if text.lstrip().startswith("["):
        tokens = _json(text, "na_values", list, words)
        if not all(isinstance(t, str) for t in tokens):
            raise InvalidInput(
                f"{words.field('na_values')} must be a list of strings", loc=("body", "na_values")
            )
        return [t.strip() for t in tokens]
    return [t.strip() for t in text.split(",")]


def _diagnose(
    raw: BinaryIO,
    problem: DecodeProblem,
    opts: UploadOptions,
    limits: UploadLimits,
    words: Words,
) -> InvalidInput:
    """The encoding error, and what a second read in a likely encoding finds wrong too."""
    byte = f"byte 0x{problem.byte:02x}" if problem.byte is not None else "a byte sequence"
    message = (
        f"{words.lead('encoding')}the file is not {opts.encoding} text: {byte} at offset "
        f"{problem.offset} (line {problem.line}) cannot be decoded"
    )
    others: list[InvalidInput] = []
    options: dict[str, list[str]] = {}
    raw.seek(0)
    if looks_like_ebcdic(raw.read(SNIFF_CHARS)):
        # Latin-1 reads any bytes: it would be named, and the garbage's columns criticised.
        message += f"; {EBCDIC}"
        return InvalidInput(message, ("body", "encoding"), line=problem.line, offset=problem.offset)
    for guess in GUESSES:
        if text_codec(guess, words) == text_codec(opts.encoding, words):
            continue
        raw.seek(0)
        try:
            _parse(raw, text_codec(guess, words), opts, limits, words)
        except DecodeProblem:
            continue
        except InvalidInput as exc:
            others = [exc]
        except TooLarge:
            pass
        message += (
            f"; it reads as {guess} text: {words.choose('encoding', guess)} if that is what "
            "it is (or save it as UTF-8)"
        )
        options = {"encoding": [guess]}
        break
    else:
        message += f"; save it as UTF-8, or {words.choose('encoding', 'utf-16')} if it is that"
    first = InvalidInput(
        message,
        loc=("body", "encoding"),
        line=problem.line,
        offset=problem.offset,
        options=options,
    )
    return InvalidInput.all_of([first, *others])


# --------------------------------------------------------------------------- columns


def select_columns(
    header: list[str], opts: UploadOptions, words: Words
) -> tuple[str, list[str], bool]:
    """The target, the candidate features, and whether the client named them."""
    target = opts.target.strip()
    if not target:
        said = EMPTY["target"] if opts.target else "no target column given"
        raise InvalidInput(
            f"{words.lead('target')}{said}; the target must be one of the columns "
            f"{_listing(header)}",
            loc=("body", "target"),
        )
    if target not in header:
        raise InvalidInput(
            f"{words.lead('target')}target column {target!r} is not in the file; its columns "
            f"are {_listing(header)}",
            loc=("body", "target"),
            column=target,
        )
    explicit = opts.features is not None and bool(opts.features.strip())
    if not explicit:
        features = [name for name in header if name != target]
    else:
        features = parse_names(opts.features or "", "features", words)
        _check_known(features, header, "features", words)
        if target in features:
            raise InvalidInput(
                f"{words.field('features')} include the target column "
                f"{target!r}; a column cannot predict itself",
                loc=("body", "features"),
                column=target,
            )
        order = {name: j for j, name in enumerate(header)}
        features.sort(key=order.__getitem__)  # X keeps the file's column order
    if not features:
        raise InvalidInput(
            "there are no feature columns: the file has only the target column",
            loc=("body", "features"),
        )
    return target, features, explicit


def check_names_early(opts: UploadOptions, header: list[str], words: Words) -> None:
    """Names in groups and true_support that no column of the file can match: a quick
    answer before the file is read (they are resolved against the features after)."""
    for field_name, text in (("groups", opts.groups), ("true_support", opts.true_support)):
        if text is None or not text.strip():
            continue
        if field_name == "groups":
            if not text.lstrip().startswith("{"):
                continue
            names = list(_json(text, "groups", dict, words))
        else:
            names = parse_names(text, "true_support", words)
        for name in names:
            if name not in header and name.split("=", 1)[0] not in header:
                _check_known([name], header, field_name, words)


# --------------------------------------------------------------------------- groups, truth


def resolve_groups(text: str | None, prepared: Prepared, words: Words) -> list[str] | None:
    """One group label per feature: the client's, else one group per one-hot encoded column
    (its indicators) and one per other column; None when neither says anything."""
    names, sources = prepared.feature_names, prepared.sources
    auto = list(sources) if prepared.one_hot else None
    if text is None or not text.strip():
        return auto
    if text.lstrip().startswith("{"):
        mapping = _json(text, "groups", dict, words)
        columns = [*names, *sorted(set(sources) - set(names))]
        _check_known(list(mapping), columns, "groups", words)
        return [
            str(mapping.get(name, mapping.get(source, source)))
            for name, source in zip(names, sources, strict=True)
        ]
    labels = parse_labels(text, words)
    columns = list(dict.fromkeys(sources))
    if len(labels) == len(names):
        return labels
    if prepared.one_hot and len(labels) == len(columns):
        per_column = dict(zip(columns, labels, strict=True))
        return [per_column[source] for source in sources]
    before = f" ({len(columns)} columns before one-hot encoding)" if prepared.one_hot else ""
    raise InvalidInput(
        f"{words.field('groups')} lists {len(labels)} labels but there "
        f"are {len(names)} features{before}; give one label per feature, in feature order, or "
        "a JSON object {column: group}",
        loc=("body", "groups"),
    )


def resolve_true_support(text: str | None, prepared: Prepared, words: Words) -> list[int] | None:
    if text is None or not text.strip():
        return None
    names, sources = prepared.feature_names, prepared.sources
    wanted = parse_names(text, "true_support", words)
    _check_known(wanted, [*names, *sorted(set(sources) - set(names))], "true_support", words)
    return sorted(
        j
        for j, (name, source) in enumerate(zip(names, sources, strict=True))
        if name in wanted or source in wanted
    )


def _json(text: str, field_name: str, kind: type, words: Words) -> Any:
    said = f"{words.field(field_name)}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{said} is not valid JSON: {exc}", loc=("body", field_name)) from None
    if not isinstance(value, kind):
        raise InvalidInput(
            f"{said} must be a JSON {'object' if kind is dict else 'list'}",
            loc=("body", field_name),
        )
    return value


def parse_names(text: str, field_name: str, words: Words) -> list[str]:
    """A JSON list of strings, or comma-separated names."""
    said = f"{words.field(field_name)}"
    if text.lstrip().startswith("["):
        names = _json(text, field_name, list, words)
        if not all(isinstance(n, str) for n in names):
            raise InvalidInput(f"{said} must be a list of column names", loc=("body", field_name))
    else:
        names = text.split(",")
    names = [n.strip() for n in names if n.strip()]
    repeated = [n for n, count in Counter(names).items() if count > 1]
    if repeated:
        raise InvalidInput(f"{said} names {repeated[0]!r} twice", loc=("body", field_name))
    return names


def parse_labels(text: str, words: Words) -> list[str]:
    """Group labels may repeat, unlike column names."""
    if text.lstrip().startswith("["):
        return [str(label) for label in _json(text, "groups", list, words)]
    return [label.strip() for label in text.split(",")]


def _check_known(names: list[str], allowed: list[str], field_name: str, words: Words) -> None:
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise InvalidInput(
            f"{words.field(field_name)} names {unknown[0]!r}, which is "
            f"not among the allowed columns {_listing(allowed)}",
            loc=("body", field_name),
            column=unknown[0],
        )


def _listing(names: list[str], most: int = 20) -> str:
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")
