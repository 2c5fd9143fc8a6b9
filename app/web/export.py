"""Exports: a run's selected features with everything needed to read and reproduce them (the
setting, the split, the parameters, the metrics), a comparison's runs side by side, a
cross-validation's curve, and a data set as the runs see it (prepared), as CSV, JSON or a zip.

One table per file (issue 25): a CSV holds one table that ``pandas.read_csv`` reads whole; a
download with several tables is a zip of CSVs named after them (``zip_of``), or JSON with the
tables named. Column names are snake_case, the same in the CSV and the JSON.

Feature names come from uploaded headers, so in CSV a name starting with a formula character
(=, +, -, @, tab, carriage return) is prefixed with an apostrophe: a spreadsheet then shows it
as text instead of evaluating it. Numbers are written by us and left as numbers.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from fastapi import Response
from fastapi.responses import JSONResponse, PlainTextResponse

from app.errors import Conflict
from app.models import (
    ColumnSummary,
    ComparisonPublic,
    CVPublic,
    Dataset,
    FitMetrics,
    Run,
    RunPublic,
    RunResult,
)

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


Table = list[dict[str, Any]]


def run_tables(run: Run, dataset: Dataset) -> dict[str, Table]:
    """A run as two tables: ``features`` (one row per selected feature) and ``run`` (name,
    value: the setting, the intercept and the metrics, nested names dotted)."""
    result = _result(run)
    features = [
        {"feature": f.name, "index": f.index, "coefficient": f.coef} for f in result.support
    ]
    about = {**setting(run, dataset), "intercept": result.intercept, **metrics(result)}
    return {"features": features, "run": [{"name": n, "value": v} for n, v in _flat(about)]}


def cv_tables(
    study: CVPublic, fold_results: Mapping[int, dict[str, Any] | None]
) -> dict[str, Table]:
    """A finished cross-validation as ``curve`` (k, the mean held-out error over the folds, its
    standard error, which rule chose k) and ``folds`` (fold, k, error: every held-out error the
    curve averages)."""
    curve = study.curve
    if curve is None:
        raise Conflict(
            f"cross-validation {study.id} is {study.status} and has no curve yet; wait until "
            "every fold is done"
        )
    rows = [
        {
            "k": k,
            "mean_error": mean,
            "se_error": se,
            "metric": study.metric,
            "k_min": k == curve.k_min,
            "k_1se": k == curve.k_1se,
            "chosen": k == curve.k_best,
        }
        for k, mean, se in zip(curve.k, curve.mean, curve.se, strict=True)
    ]
    folds = [
        {"fold": fold, "k": k, "error": error}
        for fold, result in sorted(fold_results.items())
        if result is not None
        for k, error in enumerate(result["errors"], start=1)
    ]
    return {"curve": rows, "folds": folds}


def prepared_tables(
    dataset: Dataset,
    X: np.ndarray,
    y: np.ndarray,
    columns: Sequence[ColumnSummary],
    standardize: bool,
) -> dict[str, Table]:
    """The data set as every run reads it (text columns one-hot encoded, missing cells imputed
    or their rows dropped, ID-like columns left out) as ``data`` (the feature columns, then the
    target; class labels as the 0/1 the objectives fit), and ``columns``: each prepared
    column's index, name, the text column it encodes, its mean and standard deviation (what
    ``standardize`` divides by; ``standardized`` says whether ``data`` is scaled)."""
    features = [c for c in columns if c.role == "feature"]
    mean = np.array([c.mean if c.mean is not None else 0.0 for c in features])
    std = np.array([c.std if c.std else 1.0 for c in features])
    values = (X - mean) / std if standardize else X
    names = dataset.feature_names
    data = [
        {**dict(zip(names, row.tolist(), strict=True)), dataset.target: target}
        for row, target in zip(values, y.tolist(), strict=True)
    ]
    mapping = [
        {
            "index": j,
            "column": c.name,
            "source": c.source or c.name,
            "kind": "one_hot" if c.source else c.type,
            "role": "feature",
            "mean": c.mean,
            "std": c.std,
            "imputed": c.imputed,
            "standardized": standardize,
        }
        for j, c in enumerate(features)
    ]
    classes = f"0 = {dataset.classes[0]}, 1 = {dataset.classes[1]}" if dataset.classes else ""
    mapping.append(
        {
            "index": len(features),
            "column": dataset.target,
            "source": dataset.target,
            "kind": "target " + (f"({classes})" if classes else str(dataset.task)),
            "role": "target",
            "mean": None,
            "std": None,
            "imputed": 0,
            "standardized": False,
        }
    )
    return {"data": data, "columns": mapping}


def table_csv(rows: Table, columns: Sequence[str] | None = None) -> str:
    """One table as CSV: a header, then a row per dict (None as an empty cell)."""
    names = list(columns) if columns is not None else (list(rows[0]) if rows else [])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(names)
    for row in rows:
        cells = ["" if row.get(c) is None else row[c] for c in names]
        writer.writerow([escape_cell(c) if isinstance(c, str) else c for c in cells])
    return out.getvalue()


def download(filename: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{filename}"'}


def tables_response(tables: Mapping[str, Table], format: str, stem: str, alone: str) -> Response:
    """Named tables as a download: ``<stem>.zip`` (a CSV each), ``<stem>.json`` (by name), or
    ``<stem>.csv``, the one table ``alone`` (a CSV file holds one table)."""
    headers = download(f"{stem}.{format}")
    if format == "json":
        return JSONResponse(tables, headers=headers)
    if format == "zip":
        return Response(zip_of(tables), media_type="application/zip", headers=headers)
    return PlainTextResponse(table_csv(tables[alone]), media_type="text/csv", headers=headers)


def zip_of(tables: Mapping[str, Table]) -> bytes:
    """Tables as a zip of CSV files, ``<name>.csv`` each."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, rows in tables.items():
            archive.writestr(f"{name}.csv", table_csv(rows))
    return buffer.getvalue()


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
