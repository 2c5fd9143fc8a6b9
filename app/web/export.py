"""Exports: a run's selected features with everything needed to read and reproduce them (the
setting, the split, the parameters, the metrics), and a comparison's runs side by side, as CSV
or JSON.

Feature names come from uploaded headers, so in CSV a name starting with a formula character
(=, +, -, @, tab, carriage return) is prefixed with an apostrophe: a spreadsheet then shows it
as text instead of evaluating it. Numbers are written by us and left as numbers.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from app.errors import Conflict
from app.models import ComparisonPublic, Dataset, FitMetrics, Run, RunPublic, RunResult

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _result(run: Run) -> RunResult:
    if run.result is None:
        raise Conflict(
            f"run {run.id} is {run.status} and has no result to export; wait until it is done"
        )
    return RunResult.model_validate(run.result)


def setting(run: Run | RunPublic, dataset: Dataset) -> dict[str, Any]:
    """What the run was: data, method, split and seed (enough to run it again)."""
    return {
        "run_id": run.id,
        "dataset_id": dataset.id,
        "dataset": dataset.name,
        "target": dataset.target,
        "algorithm": run.algorithm,
        "objective": run.objective,
        "k": run.k,
        "params": run.params,
        "standardize": run.standardize,
        "seed": run.seed,
        "test_fraction": run.test_fraction,
        "name": run.name,  # what people called it (PATCH /api/runs/{id}); after the old keys
        "tags": run.tags,
    }


def metrics(result: RunResult) -> dict[str, Any]:
    """How the run did: the objective's value (``objective`` names the objective in the
    setting; the two once shared a key, and the value overwrote the name), steps, time, fit
    on each split, support recovery."""
    return {
        "objective_value": result.objective,
        "n_steps": result.n_steps,
        "stop_reason": result.stop_reason,
        "engine_seconds": result.engine_seconds,
        "train": result.train.model_dump(),
        "test": result.test.model_dump() if result.test else None,
        "recovery": result.recovery.model_dump() if result.recovery else None,
    }


def as_json(run: Run, dataset: Dataset) -> dict[str, Any]:
    result = _result(run)
    return {
        **setting(run, dataset),
        "metrics": metrics(result),
        "intercept": result.intercept,
        "features": [f.model_dump() for f in result.support],
    }


def as_csv(run: Run, dataset: Dataset) -> str:
    """The features table, then a blank line and the setting and metrics as name, value rows
    (a spreadsheet shows both; ``pandas.read_csv(..., nrows=len(features) + 1)`` reads the
    table alone)."""
    result = _result(run)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["feature", "index", "coefficient"])
    for feature in result.support:
        writer.writerow([escape_cell(feature.name), feature.index, repr(feature.coef)])
    writer.writerow(["(intercept)", "", repr(result.intercept)])
    writer.writerow([])
    writer.writerow(["setting", "value"])
    for name, value in _flat({**setting(run, dataset), **metrics(result)}):
        writer.writerow([name, escape_cell(value) if isinstance(value, str) else value])
    return out.getvalue()


def comparison_rows(comparison: ComparisonPublic, dataset: Dataset) -> list[dict[str, Any]]:
    """One row per run of the comparison: its setting, its metrics, its selected features."""
    rows = []
    for run in comparison.runs:
        row: dict[str, Any] = {**setting(run, dataset), "status": run.status}
        if run.result is not None:
            row.update(metrics(run.result))
            row["selected"] = [f.name for f in run.result.support]
        rows.append(row)
    return rows


def comparison_csv(comparison: ComparisonPublic, dataset: Dataset) -> str:
    rows = [dict(_flat(row)) for row in comparison_rows(comparison, dataset)]
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        cells = [row.get(c, "") for c in columns]
        writer.writerow([escape_cell(c) if isinstance(c, str) else c for c in cells])
    return out.getvalue()


def _flat(values: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Nested dicts as dotted names; lists as JSON text; None as an empty cell."""
    out: list[tuple[str, Any]] = []
    for name, value in values.items():
        key = f"{prefix}{name}"
        if isinstance(value, FitMetrics):
            value = value.model_dump()
        if isinstance(value, dict):
            out += _flat(value, f"{key}.")
        elif isinstance(value, list):
            out.append((key, json.dumps(value)))
        else:
            out.append((key, "" if value is None else value))
    return out


def escape_cell(text: str) -> str:
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def stability_csv(rows: list[dict[str, Any]]) -> str:
    """A stability study's frequencies, one row per (method, k, unit)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    columns = list(rows[0]) if rows else ["method", "k", "unit", "name", "frequency"]
    writer.writerow(columns)
    for row in rows:
        cells = ["" if row.get(c) is None else row[c] for c in columns]
        writer.writerow([escape_cell(c) if isinstance(c, str) else c for c in cells])
    return out.getvalue()
