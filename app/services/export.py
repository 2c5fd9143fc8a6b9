"""Export a run's selected features and coefficients as CSV or JSON.

Feature names come from uploaded headers, so in CSV a name starting with a formula character
(=, +, -, @, tab, carriage return) is prefixed with an apostrophe: a spreadsheet then shows it
as text instead of evaluating it. Numbers are written by us and left as numbers.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from .. import run_options
from ..errors import Conflict
from ..models import Dataset, Run, RunResult

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _result(run: Run) -> RunResult:
    if run.result is None:
        raise Conflict(
            f"run {run.id} is {run.status} and has no result to export; wait until it is done"
        )
    return RunResult.model_validate(run.result)


def as_json(run: Run, dataset: Dataset) -> dict[str, Any]:
    result = _result(run)
    return {
        "run_id": run.id,
        "dataset_id": dataset.id,
        "dataset": dataset.name,
        "target": dataset.target,
        "algorithm": run.algorithm,
        "objective": run.objective,
        "k": run.k,
        "params": run_options.engine_params(run.params),
        "standardize": run_options.standardize(run.params),
        "intercept": result.intercept,
        "features": [f.model_dump() for f in result.support],
    }


def as_csv(run: Run) -> str:
    result = _result(run)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["feature", "index", "coefficient"])
    for feature in result.support:
        writer.writerow([escape_cell(feature.name), feature.index, repr(feature.coef)])
    writer.writerow(["(intercept)", "", repr(result.intercept)])
    return out.getvalue()


def escape_cell(text: str) -> str:
    return "'" + text if text.startswith(FORMULA_STARTS) else text
