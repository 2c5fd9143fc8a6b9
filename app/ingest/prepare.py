"""From the columns of an uploaded CSV to X and y, as the upload options ask.

Every problem an option can fix (text columns, missing values, a target with more than two
classes, a single class) is collected and reported in one answer, so that a refused file is
fixed in one more try. Then: ID-like columns are left out (unless kept), text columns dropped
or one-hot encoded (indicators ``column=value``, one group per source column), rows with a
missing cell dropped or feature cells imputed with the column mean. Without one-hot encoding X
is compacted in place inside the parse buffer, so memory stays one array.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import numpy as np

from app.errors import InvalidInput, TooLarge
from app.ingest.problems import (
    missing_problems,
    no_features,
    positive_value,
    target_problems,
    text_problem,
    too_many_values,
)
from app.ingest.stream import FILE
from app.ingest.table import ROWS_PER_BLOCK, Column, Table, blocks, distinct_values
from app.ingest.words import Words
from app.models import Task, UploadOptions

MIN_ID_ROWS = 10  # fewer rows tell nothing about a column being an identifier
ID_SHARE = 0.9  # distinct values of a column named like an identifier
ID_NAMES = re.compile(
    r"(id|ids|index|idx|key|uuid|guid|rownames|row\.?names|row|row_?id|unnamed: ?\d+)"
    r"|.+[_ .-]id",
    re.IGNORECASE,
)
CAMEL_ID = re.compile(r".*[a-z0-9](Id|ID)")  # patientId, PatientID (case matters: not 'valid')


@dataclass
class Prepared:
    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    sources: list[str]  # the file column of each feature (the text column of an indicator)
    task: Task
    classes: list[str] | None
    missing: list[int]  # missing or infinite cells in the file, per feature then the target
    imputed: dict[str, int]  # feature -> cells filled with the column mean
    dropped_rows: int
    id_like: dict[str, str]  # column -> why it looks like an identifier
    excluded: dict[str, str]  # file column left out -> why
    one_hot: dict[str, list[str]]  # text column -> its values, in indicator order
    reference_levels: dict[str, str] = field(default_factory=dict)  # text column -> level left out
    imputed_levels: dict[str, str] = field(default_factory=dict)  # text column -> level filled in
    notes: list[str] = field(default_factory=list)


@dataclass
class Limits:
    max_cells: int
    max_categories: int


def prepare(
    table: Table,
    target: str,
    features: list[str],
    explicit: bool,
    opts: UploadOptions,
    words: Words,
    limits: Limits,
) -> Prepared:
    if table.n_rows == 0:
        raise InvalidInput("the file has a header but no data rows", loc=FILE)
    index = {c.name: j for j, c in enumerate(table.columns)}
    col = {c.name: c for c in table.columns}
    id_like = {
        name: reason
        for name in features
        if (reason := id_reason(col[name], table.column(index[name]))) is not None
    }
    excluded = {
        name: f"ID-like: {reason}"
        for name, reason in id_like.items()
        if opts.id_columns == "drop" and not explicit
    }
    problems: list[InvalidInput] = []
    texts = [n for n in features if col[n].text and n not in excluded]
    if opts.text_columns == "drop":
        excluded.update({name: "text" for name in texts})
    for name in texts:
        if opts.text_columns == "error":
            problems.append(text_problem(col[name], words, limits.max_categories))
        elif opts.text_columns == "onehot" and (
            col[name].overflow or len(col[name].labels) > limits.max_categories
        ):
            problems.append(too_many_values(col[name], words, limits.max_categories))
    kept = [name for name in features if name not in excluded]
    if not kept:
        problems.append(no_features(features, excluded, words))
    target_col = col[target]
    y_values = table.column(index[target])
    problems += target_problems(target_col, y_values, opts, words)
    problems += missing_problems([col[n] for n in [*kept, target]], opts, words)
    if problems:
        raise InvalidInput.all_of(problems)

    rows = _rows_kept(table, [index[n] for n in kept], index[target], opts.missing)
    n_keep = table.n_rows if rows is None else int(rows.sum())
    if n_keep < 2:
        raise InvalidInput(
            f"only {n_keep} rows have no missing or infinite value; at least 2 are needed",
            loc=FILE,
        )
    # onehot: the only way text columns get here
    texts = [name for name in kept if col[name].text]
    references = reference_option(opts.reference_level, texts, col, words)
    levels = {
        name: plan_levels(
            col[name], table.column(index[name]), rows, opts, references.get(name, False)
        )
        for name in texts
    }
    one_hot = {name: plan.labels for name, plan in levels.items()}
    names, sources = _feature_names(kept, one_hot)
    cells = n_keep * len(names)
    if cells > limits.max_cells:
        raise TooLarge(
            f"{n_keep:,} rows x {len(names):,} feature columns (after one-hot encoding) make "
            f"{cells:,} cells; at most {limits.max_cells:,} are allowed (MAX_CELLS)"
        )
    feature_columns = [index[name] for name in kept]
    if one_hot:
        X = _one_hot(table, kept, feature_columns, levels, rows, n_keep, len(names))
        y_raw = y_values[rows] if rows is not None else y_values.copy()
    else:  # y and X end up in the parse buffer itself: no second copy of the data
        both = compact(table.values, table.n_rows, rows, [index[target], *feature_columns])
        y_raw, X = both[:, 0], both[:, 1:]
    _refuse_huge(X, names, y_raw, target)
    task, y, classes = target_values(target_col, y_raw, opts, words)
    imputed = _impute(X, names) if opts.missing == "impute" else {}
    imputed.update({name: plan.n_imputed for name, plan in levels.items() if plan.n_imputed})
    missing = [col[source].n_bad for source in sources] + [target_col.n_bad]
    notes = []
    dropped = table.n_rows - n_keep
    if dropped and opts.missing == "impute":
        notes.append(f"{dropped} rows without a target value were dropped")
    return Prepared(
        X=X,
        y=y,
        feature_names=names,
        sources=sources,
        task=task,
        classes=classes,
        missing=missing,
        imputed=imputed,
        dropped_rows=dropped,
        id_like=id_like,
        excluded=excluded,
        one_hot=one_hot,
        reference_levels={n: p.reference for n, p in levels.items() if p.reference is not None},
        imputed_levels={n: p.imputed_as for n, p in levels.items() if p.n_imputed},
        notes=notes,
    )


# Finite values this large overflow the sums of squares that standardisation and every
# objective compute (1e200 squared is inf): the run would fail with a message nobody can act
# on, or store metrics that are not numbers. 1e150 squared, summed over rows, stays finite.
HUGE = 1e150


def _refuse_huge(X: np.ndarray, names: list[str], y: np.ndarray, target: str) -> None:
    """Refuse columns whose values are too large to compute with, naming each and its
    largest value."""
    with np.errstate(invalid="ignore"):
        largest = np.nanmax(np.where(np.isfinite(X), np.abs(X), np.nan), axis=0, initial=0.0)
        y_largest = float(np.nanmax(np.where(np.isfinite(y), np.abs(y), np.nan), initial=0.0))
    columns = [(names[j], float(largest[j])) for j in np.flatnonzero(largest > HUGE)]
    if y_largest > HUGE:
        columns.append((target, y_largest))
    problems = [
        InvalidInput(
            f"column {name!r} holds values as large as {value:.3g}: beyond {HUGE:.0e} the sums "
            "of squares that selection computes overflow; rescale the column (other units, "
            "or a logarithm) before uploading",
            loc=FILE,
            column=name,
        )
        for name, value in columns
    ]
    if problems:
        raise InvalidInput.all_of(problems)


# --------------------------------------------------------------------------- ID-like columns


def id_reason(column: Column, values: np.ndarray) -> str | None:
    """Why the column looks like a row identifier, or None.

    A column with a missing cell, or with fractions, is never one. Otherwise: text with a
    different value in every row; integers that grow (or shrink) in every row, a counter or
    sorted keys; every integer from a to b exactly once, a shuffled row number; or a name
    such as id, index or patient_id with at least 90% distinct values."""
    n = len(values)
    if n < MIN_ID_ROWS or column.n_bad:
        return None
    named = bool(ID_NAMES.fullmatch(column.name) or CAMEL_ID.fullmatch(column.name))
    if column.text:
        if not column.repeated:
            return "a different text in every row"
        distinct = len(column.labels)
        if named and not column.overflow and distinct >= ID_SHARE * n:
            return f"named like an identifier, {distinct} distinct values in {n} rows"
        return None
    if not _integers(values):
        return None
    if _monotone(values, 1):
        return "an integer that grows row by row"
    if _monotone(values, -1):
        return "an integer that falls row by row"
    low, high = float(values.min()), float(values.max())
    if high - low == n - 1 and _each_once(values, low):
        return f"every integer from {low:g} to {high:g} once (a row number)"
    if named:
        distinct = len(np.unique(values))  # a sorted copy, only for columns named like ids
        if distinct >= ID_SHARE * n:
            return f"named like an identifier, {distinct} distinct values in {n} rows"
    return None


def _integers(values: np.ndarray) -> bool:
    return all(np.array_equal(block, np.round(block)) for _, block in blocks(values))


def _monotone(values: np.ndarray, sign: int) -> bool:
    """Every value larger (sign 1) or smaller (-1) than the one before."""
    previous = None
    for _, block in blocks(values):
        steps = np.diff(block) * sign
        if (steps <= 0).any() or (previous is not None and (block[0] - previous) * sign <= 0):
            return False
        previous = block[-1]
    return True


def _each_once(values: np.ndarray, low: float) -> bool:
    """Integers from ``low`` to ``low + n - 1``: whether each occurs once."""
    seen = np.zeros(len(values), dtype=bool)
    for _, block in blocks(values):
        index = (block - low).astype(np.intp)
        if seen[index].any() or len(np.unique(index)) < len(index):
            return False
        seen[index] = True
    return True


def target_values(
    column: Column, values: np.ndarray, opts: UploadOptions, words: Words
) -> tuple[Task, np.ndarray, list[str] | None]:
    """y from the target column's values (its rows kept), overwritten in place: 0/1 for
    classification."""
    name = column.name
    if opts.positive_class is not None:
        positive = positive_value(column, opts.positive_class)
        for _, block in blocks(values):
            block[:] = block == positive
        label = opts.positive_class.strip()
        if values.min() == values.max():
            raise InvalidInput(
                f"{words.lead('positive_class')}after dropping rows, every row of {name!r} "
                f"{'is' if values[0] else 'is not'} {label!r}: the target must vary",
                loc=("body", "positive_class"),
                column=name,
            )
        return Task.classification, values, [f"not {label}", label]
    if column.text:
        labels = sorted(column.labels)
        order = np.empty(len(labels))
        order[[column.labels[label] for label in labels]] = np.arange(len(labels))
        for _, block in blocks(values):
            block[:] = order[block.astype(np.intp)]
        present = distinct_values(values, 2)
        if len(present) < 2:
            raise _single(name, labels[int(present[0])], words)
        return Task.classification, values, labels
    found = distinct_values(values, 2)
    if len(found) < 2:
        raise _single(name, f"{found[0]:g}", words)
    task = opts.task or (Task.classification if len(found) == 2 else Task.regression)
    if task == Task.regression:
        return task, values, None
    for _, block in blocks(values):
        block[:] = block == found[1]
    return task, values, [f"{v:g}" for v in found]


def _single(name: str, value: str, words: Words) -> InvalidInput:
    return InvalidInput(
        f"{words.lead('target')}target column {name!r} holds the single value {value} in every "
        "row left; a target must vary",
        loc=("body", "target"),
        column=name,
    )


def _rows_kept(table: Table, features: list[int], target: int, policy: str) -> np.ndarray | None:
    """Rows to keep: all (None), or without a missing cell (drop), or with a target (impute)."""
    used = [*features, target] if policy == "drop" else [target]
    keep = np.ones(table.n_rows, dtype=bool)
    for j in used:
        keep &= np.isfinite(table.column(j))
    return None if keep.all() else keep


def _feature_names(kept: list[str], one_hot: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    names, sources = [], []
    for name in kept:
        for label in one_hot.get(name, [None]):
            names.append(name if label is None else f"{name}={label}")
            sources.append(name)
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InvalidInput(
                f"one-hot encoding makes a column {name!r}, and the file has one of that name "
                "already: rename it",
                loc=FILE,
                column=name,
            )
        seen.add(name)
    return names, sources


def _one_hot(
    table: Table,
    kept: list[str],
    columns: list[int],
    levels: dict[str, Levels],
    rows: np.ndarray | None,
    n_keep: int,
    d: int,
) -> np.ndarray:
    """X with every text column replaced by its indicator columns: 0 or 1, a missing cell as
    its plan says (the most frequent level's, a level of its own), else NaN for the
    missing-value policy to handle (it drops or refuses those rows)."""
    X = np.empty((n_keep, d), order="F")
    j = 0
    for name, source in zip(kept, columns, strict=True):
        cells = table.column(source)
        if rows is not None:
            cells = cells[rows]
        if name not in levels:
            X[:, j] = cells
            j += 1
            continue
        plan = levels[name]
        for code in plan.codes:
            for start, block in blocks(cells):
                out = X[start : start + len(block), j]
                missing = np.isnan(block)
                if code is None:  # the level of missing cells
                    out[:] = missing
                    continue
                out[:] = block == code
                if plan.imputed_as:  # the level it was given, whichever that is
                    out[missing] = float(code == plan.fill)
                else:
                    out[missing] = np.nan
            j += 1
    return X


# --------------------------------------------------------------------------- categoricals

MISSING_LEVEL = "(missing)"  # the level of missing cells (categorical_missing=level)


@dataclass
class Levels:
    """How one text column becomes indicator columns."""

    labels: list[str]  # one per indicator column, in order (the reference level left out)
    codes: list[float | None]  # the code of each label in the column (None: missing cells)
    reference: str | None = None  # the level left out
    fill: float | None = None  # the code a missing cell takes (imputed by the most frequent)
    imputed_as: str = ""  # the level missing cells were given
    n_imputed: int = 0


def plan_levels(
    column: Column,
    values: np.ndarray,
    rows: np.ndarray | None,
    opts: UploadOptions,
    reference: str | bool,
) -> Levels:
    """The indicators of a text column: its levels sorted, missing cells (of the rows kept)
    given the most frequent level or a level of their own when imputing, and the reference
    level (``reference``: that label, True for the most frequent, False for none) left out.
    The most frequent is counted over the rows kept; a tie goes to the first in sort order."""
    labels = sorted(column.labels)
    codes: list[float | None] = [float(column.labels[label]) for label in labels]
    counts = np.zeros(len(column.labels), dtype=np.int64)
    n_missing = 0
    for start, block in blocks(values):
        if rows is not None:
            block = block[rows[start : start + len(block)]]
        present = block[np.isfinite(block) & (block >= 0)].astype(np.intp)
        counts += np.bincount(present, minlength=len(counts))
        n_missing += int(np.count_nonzero(np.isnan(block)))
    by_label = [int(counts[int(code)]) for code in codes if code is not None]
    most = labels[int(np.argmax(by_label))] if labels else None
    plan = Levels(labels, codes)
    if n_missing and opts.missing == "impute":
        plan.n_imputed = n_missing
        if opts.categorical_missing == "level":
            plan.labels, plan.codes = [*labels, MISSING_LEVEL], [*codes, None]
            plan.imputed_as = MISSING_LEVEL
        elif most is not None:
            plan.fill, plan.imputed_as = float(column.labels[most]), most
    chosen = most if reference is True else reference or None
    if chosen is not None and len(plan.labels) > 1:
        at = plan.labels.index(chosen)
        plan.reference = chosen
        del plan.labels[at], plan.codes[at]
    return plan


def reference_option(
    text: str, texts: list[str], col: dict[str, Column], words: Words
) -> dict[str, str | bool]:
    """The reference level of each one-hot encoded column: a level it names, True for its
    most frequent, absent for none."""
    text = text.strip()
    if text in ("", "none"):
        return {}
    if text == "most_frequent":
        return dict.fromkeys(texts, True)
    loc = ("body", "reference_level")
    said = words.field("reference_level")
    if not text.startswith("{"):
        raise InvalidInput(
            f"{said} is {text!r}: give none, most_frequent or a JSON object {{column: level}}",
            loc=loc,
        )
    try:
        given = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{said} is not valid JSON: {exc}", loc=loc) from None
    if not isinstance(given, dict):
        raise InvalidInput(f"{said} must be a JSON object {{column: level}}", loc=loc)
    chosen: dict[str, str | bool] = dict.fromkeys(texts, True)
    for name, level in given.items():
        if name not in chosen:
            raise InvalidInput(
                f"{said} names {name!r}, which is no one-hot encoded column; those are "
                f"{', '.join(repr(t) for t in texts) or 'none'}",
                loc=loc,
                column=name,
            )
        if str(level) not in col[name].labels:
            shown = ", ".join(repr(v) for v in sorted(col[name].labels)[:20])
            raise InvalidInput(
                f"{said}: column {name!r} has no level {level!r}; its levels: {shown}",
                loc=loc,
                column=name,
            )
        chosen[name] = str(level)
    return chosen


def compact(
    values: np.ndarray, n_rows: int, rows: np.ndarray | None, columns: list[int]
) -> np.ndarray:
    """The ``columns`` of ``values`` (one column per row of it), their first ``n_rows`` cells
    and of those the ``rows`` kept, written over the front of ``values`` itself: an
    (n_kept, len(columns)) array in Fortran order.

    ``columns`` must increase: column k then goes to ``k * n_kept``, at or before where it is
    read from (``columns[k] * capacity``), and blocks are copied front to back, so nothing is
    overwritten before it is read."""
    capacity = values.shape[1]
    flat = values.reshape(-1)
    n_kept = n_rows if rows is None else int(np.count_nonzero(rows))
    for k, j in enumerate(columns):
        if rows is None and k * n_kept == j * capacity:
            continue  # already in place
        out = k * n_kept
        for start in range(0, n_rows, ROWS_PER_BLOCK):
            block = values[j, start : min(start + ROWS_PER_BLOCK, n_rows)]
            if rows is not None:
                block = block[rows[start : start + len(block)]]
            else:
                block = block.copy()  # it may overlap where it goes
            flat[out : out + len(block)] = block
            out += len(block)
    return flat[: n_kept * len(columns)].reshape(len(columns), n_kept).T


def _impute(X: np.ndarray, names: list[str]) -> dict[str, int]:
    """Fill missing or infinite cells with the mean of the column's other cells."""
    imputed = {}
    for j, name in enumerate(names):
        column = X[:, j]
        total, count, bad = 0.0, 0, 0
        for _, block in blocks(column):
            finite = np.isfinite(block)
            total += float(block[finite].sum())
            count += int(finite.sum())
            bad += len(block) - int(finite.sum())
        if bad:
            mean = total / count if count else 0.0
            for _, block in blocks(column):
                block[~np.isfinite(block)] = mean
            imputed[name] = bad
    return imputed
