"""How upload errors name their fixes: by the API's field names for API clients
("send text_columns=onehot"), by the upload form's own controls for the form ("choose
'one-hot' under Text columns below"), by the command line's options for ``foba-lab select``
("use --text-columns onehot").

The form asks for its wording with the request header ``X-Wording: form``; everything else
(``loc``, ``ctx``, the status) is the same for all.
"""

from __future__ import annotations

from dataclasses import dataclass

# The upload form's label of each field (templates/macros.html, upload_form).
LABELS = {
    "file": "File",
    "target": "Target column",
    "features": "Feature columns",
    "task": "Task",
    "positive_class": "Positive class",
    "text_columns": "Text columns",
    "missing": "Missing values",
    "na_values": "Missing-value tokens",
    "categorical_missing": "Missing text cells",
    "reference_level": "Reference level",
    "id_columns": "ID-like columns",
    "decimal": "Decimal mark",
    "encoding": "Encoding",
    "delimiter": "Delimiter",
    "groups": "Feature groups",
    "true_support": "True support",
}

# A required field sent empty: multipart forms drop empty values, so FastAPI says "Field
# required" (app.web.errors says this instead); the reader says it of a blank name.
EMPTY = {"target": "the target column name is empty", "file": "no file was chosen"}

# The form's words for the choices of its selects.
CHOICES = {
    ("text_columns", "onehot"): "one-hot",
    ("text_columns", "drop"): "drop",
    ("missing", "drop"): "drop those rows",
    ("missing", "impute"): "fill with the column mean",
    ("id_columns", "keep"): "keep",
    ("categorical_missing", "most_frequent"): "the most frequent level",
    ("categorical_missing", "level"): "a level of their own",
    ("reference_level", "none"): "keep every level",
    ("reference_level", "most_frequent"): "leave out the most frequent",
    ("decimal", ","): "comma (1,5)",
    ("decimal", "."): "point (1.5)",
    ("task", "regression"): "regression",
    ("task", "classification"): "classification",
}


@dataclass(frozen=True)
class Words:
    form: bool = False

    def choose(self, field: str, *values: str) -> str:
        """The instruction to set ``field`` to one of ``values``."""
        if self.form:
            names = " or ".join(f"'{CHOICES.get((field, v), v)}'" for v in values)
            return f"choose {names} under {LABELS[field]} below"
        return "send " + " or ".join(f"{field}={v}" for v in values)

    def lead(self, field: str) -> str:
        """What a form message starts with: the control it is about."""
        return f"{LABELS[field]}: " if self.form else ""

    def field(self, field: str) -> str:
        return LABELS[field] if self.form else f"'{field}'"

    def leave_out(self, column: str) -> str:
        if self.form:
            return f"list the other columns under {LABELS['features']} (More options)"
        return f"leave {column!r} out of 'features'"


# The command line's option of each field (foba_lab/cli.py, select): the field's name with
# dashes, but for the task, which the objective decides there.
OPTIONS = {"task": "--objective"}
# Values a command-line option takes for a field's value, where they differ.
OPTION_VALUES = {("task", "classification"): "logistic", ("task", "regression"): "least_squares"}


def option(field: str) -> str:
    """The ``foba-lab select`` option that sets an upload field."""
    return OPTIONS.get(field, "--" + field.replace("_", "-"))


@dataclass(frozen=True)
class CommandWords(Words):
    """Fixes named by ``foba-lab select``'s options: "use --text-columns onehot"."""

    def choose(self, field: str, *values: str) -> str:
        return "use " + " or ".join(
            f"{option(field)} {OPTION_VALUES.get((field, v), v)}" for v in values
        )

    def lead(self, field: str) -> str:
        return ""

    def field(self, field: str) -> str:
        return option(field)

    def leave_out(self, column: str) -> str:
        return f"leave {column!r} out of {option('features')}"
