"""The problems of an uploaded CSV that an upload option fixes, as messages that say which.

Each is an InvalidInput whose ``ctx.options`` names the fields and values that fix it; the
words follow ``Words`` (API field names, or the upload form's controls).
"""

from __future__ import annotations

import numpy as np

from app.errors import InvalidInput
from app.ingest.stream import FILE
from app.ingest.table import Column, distinct_values
from app.ingest.words import Words
from app.models import Task, UploadOptions

SHOWN = 80  # characters of a cell value quoted in a message


def _shown(value: str) -> str:
    return repr(value if len(value) <= SHOWN else value[:SHOWN] + "...")


def _distinct(column: Column) -> str:
    """'3 distinct values', 'over 10,000 distinct values'."""
    n = len(column.labels)
    if column.overflow:
        return f"over {n:,} distinct values"
    return f"{n:,} distinct value{'s' * (n != 1)}"


def text_problem(column: Column, words: Words, max_categories: int) -> InvalidInput:
    row, value = column.example  # type: ignore[misc]
    name = column.name
    if column.n_numbers > column.n_text:
        what = (
            f"column {name!r} holds numbers but {column.n_text} cell"
            f"{'s' * (column.n_text > 1)} that {'are' if column.n_text > 1 else 'is'} not: "
            f"row {row}: {_shown(value)} is not a number"
        )
    else:
        what = f"column {name!r} holds text, e.g. {_shown(value)} in row {row}"
    what += f" ({_distinct(column)}"
    if column.overflow or len(column.labels) > max_categories:
        what += f", too many to one-hot encode: at most {max_categories} (MAX_CATEGORIES)"
    what += ")"
    options: dict[str, list[str]] = {"text_columns": ["onehot", "drop"]}
    if column.comma_numbers and column.comma_numbers == column.n_text:
        fix = f"its values look like numbers with a decimal comma: {words.choose('decimal', ',')}"
        options = {"decimal": [","]}
    elif column.n_numbers > column.n_text:
        fix = (
            f"fix {'those cells' if column.n_text > 1 else 'that cell'}, "
            f"{words.choose('text_columns', 'drop')}, or {words.leave_out(name)}"
        )
        options = {"text_columns": ["drop"]}
    elif words.form:  # the control's help says what one-hot does
        fix = words.choose("text_columns", "onehot", "drop")
    else:
        fix = (
            f"{words.choose('text_columns', 'onehot', 'drop')} (one-hot makes an indicator "
            f"column per value, {name}=value, selected as one group by group methods), "
            f"or {words.leave_out(name)}"
        )
    return InvalidInput(
        f"{words.lead('text_columns')}{what}; {fix}",
        loc=FILE,
        column=name,
        row=row,
        value=value,
        distinct_values=len(column.labels),
        options=options,
    )


def too_many_values(column: Column, words: Words, max_categories: int) -> InvalidInput:
    name = column.name
    return InvalidInput(
        f"{words.lead('text_columns')}column {name!r} has {_distinct(column)}, "
        f"too many to one-hot encode (at most {max_categories}, MAX_CATEGORIES); "
        f"{words.choose('text_columns', 'drop')}, or {words.leave_out(name)}",
        loc=("body", "text_columns"),
        column=name,
        distinct_values=len(column.labels),
        options={"text_columns": ["drop"]},
    )


def no_features(features: list[str], excluded: dict[str, str], words: Words) -> InvalidInput:
    if not features:
        return InvalidInput(
            "there are no feature columns: the file has only the target column",
            loc=("body", "features"),
        )
    reasons = "; ".join(f"{name!r}: {why}" for name, why in list(excluded.items())[:10])
    keep = (
        f"; to use ID-like columns, {words.choose('id_columns', 'keep')}"
        if "ID-like" in reasons
        else ""
    )
    return InvalidInput(
        f"{words.lead('features')}no feature column is left: {reasons}{keep}",
        loc=("body", "features"),
        excluded=excluded,
        options={"id_columns": ["keep"]} if keep else {},
    )


def missing_problems(
    columns: list[Column], opts: UploadOptions, words: Words
) -> list[InvalidInput]:
    bad = [c for c in columns if c.n_bad]
    if opts.missing != "error" or not bad:
        return []
    parts = []
    for c in bad[:8]:
        kinds = [f"{c.n_missing} missing"] * bool(c.n_missing)
        kinds += [f"{c.n_infinite} infinite"] * bool(c.n_infinite)
        parts.append(f"column {c.name!r} has {' and '.join(kinds)} (first at row {c.first_bad})")
    if len(bad) > 8:
        parts.append(f"and {len(bad) - 8} more columns")
    return [
        InvalidInput(
            f"{words.lead('missing') or 'missing or infinite values: '}{'; '.join(parts)}; "
            f"{words.choose('missing', 'drop', 'impute')} (the column mean fills numeric feature "
            "cells, the most frequent level text ones; rows without a target value are "
            "dropped)",
            loc=FILE,
            counts={c.name: c.n_bad for c in bad},
            options={"missing": ["drop", "impute"]},
        )
    ]


def _classes(column: Column, values: np.ndarray) -> list[str]:
    if column.text:
        return sorted(column.labels)
    return [f"{v:g}" for v in distinct_values(values, 100)]


def target_problems(
    column: Column, values: np.ndarray, opts: UploadOptions, words: Words
) -> list[InvalidInput]:
    name = column.name
    target_loc = ("body", "target")
    if column.text and column.overflow:
        return [
            InvalidInput(
                f"{words.lead('target')}target column {name!r} holds text with "
                f"{_distinct(column)}: it is no class label",
                loc=target_loc,
                column=name,
            )
        ]
    if column.text and column.comma_numbers == column.n_text:
        row, value = column.example  # type: ignore[misc]
        return [
            InvalidInput(
                f"{words.lead('decimal')}target column {name!r} holds numbers with a decimal "
                f"comma, e.g. {_shown(value)} in row {row}: {words.choose('decimal', ',')}",
                loc=target_loc,
                column=name,
                row=row,
                value=value,
                options={"decimal": [","]},
            )
        ]
    classes = _classes(column, values)
    if opts.positive_class is not None:
        if opts.task == Task.regression:
            return [
                InvalidInput(
                    f"{words.lead('positive_class')}a positive class makes the task a "
                    f"classification, but {words.field('task')} says regression",
                    loc=("body", "positive_class"),
                )
            ]
        positive = positive_value(column, opts.positive_class)
        if positive is None or not (column.text or (values == positive).any()):
            return [_class_problem(name, classes, words, f"has no class {opts.positive_class!r}")]
        return []
    if column.text and opts.task == Task.regression:
        row, value = column.example  # type: ignore[misc]
        return [
            InvalidInput(
                f"{words.lead('target')}column {name!r}, row {row}: {_shown(value)} is not a "
                "number, and a regression target must be numeric; for class labels, "
                f"{words.choose('task', 'classification')}",
                loc=target_loc,
                column=name,
                row=row,
                value=value,
            )
        ]
    if len(classes) == 1:
        return [
            InvalidInput(
                f"{words.lead('target')}target column {name!r} holds the single value "
                f"{classes[0]} in every row; a target must vary (binary classification needs "
                "two classes)",
                loc=target_loc,
                column=name,
            )
        ]
    if opts.task is None and not column.text and (coded := integer_classes(values)):
        return [task_problem(name, coded, words)]
    many = len(classes) > 2 and (column.text or opts.task == Task.classification)
    if many:
        return [_class_problem(name, classes, words, f"has {_count(classes)} classes")]
    return []


MAX_CODED_CLASSES = 10  # a numeric target with at most so many integers may be class labels


def integer_classes(values: np.ndarray) -> list[str] | None:
    """The values of a numeric target that looks like class labels coded as integers (0/1/2,
    0-9): 3 to MAX_CODED_CLASSES distinct integers, each met twice on average; else None."""
    found = distinct_values(values, MAX_CODED_CLASSES)
    n = int(np.count_nonzero(np.isfinite(values)))
    if not 3 <= len(found) <= MAX_CODED_CLASSES or 2 * len(found) > n:
        return None
    if not np.array_equal(found, np.round(found)):
        return None
    return [f"{v:g}" for v in found]


def task_problem(name: str, classes: list[str], words: Words) -> InvalidInput:
    """A numeric target whose few integer values may be classes: which task is meant."""
    shown = ", ".join(classes)
    if words.form:
        fix = (
            f"{words.choose('task', 'regression')} to predict the number, or choose the class "
            f"to predict under {words.field('positive_class')} (told from all the others)"
        )
    else:
        positive = words.choose("positive_class", "<one of them>").split(" ", 1)[1]
        fix = (
            f"{words.choose('task', 'regression')} to predict the number, or "
            f"{words.choose('task', 'classification')} with {positive} to predict that class "
            "against all the others"
        )
    return InvalidInput(
        f"{words.lead('task')}target column {name!r} holds {len(classes)} distinct integers "
        f"({shown}): class labels or a quantity? {fix}",
        loc=("body", "task"),
        column=name,
        classes=classes,
        options={"task": ["regression", "classification"], "positive_class": classes},
    )


def _count(classes: list[str]) -> str:
    return "over 100" if len(classes) > 100 else str(len(classes))


def _class_problem(name: str, classes: list[str], words: Words, what: str) -> InvalidInput:
    shown = ", ".join(repr(c) for c in classes[:20]) + (", ..." if len(classes) > 20 else "")
    how = (
        "choose the class to predict under Positive class (it is then told from all the others)"
        if words.form
        else f"{words.choose('positive_class', '<one of them>')} to predict that class against "
        "all the others"
    )
    return InvalidInput(
        f"{words.lead('positive_class')}target column {name!r} {what} ({shown}); binary "
        f"classification needs two: {how}",
        loc=("body", "positive_class"),
        column=name,
        classes=classes[:100],
        options={"positive_class": classes[:100]},
    )


def positive_value(column: Column, given: str) -> float | None:
    """The code or value of the positive class in the target column."""
    given = given.strip()
    if column.text:
        code = column.labels.get(given)
        return None if code is None else float(code)
    try:
        return float(given)
    except ValueError:
        return None


# --------------------------------------------------------------------------- building X and y
