"""The runs table: every run, filtered, sorted and a page at a time (the query: run_table)."""

from __future__ import annotations

import math
from typing import Any

from sqlmodel import Session

import engine

from ... import run_options
from ...models import Run, RunResult
from .. import run_table
from ..run_table import PAGE_SIZE, RunQuery

# The table's columns: heading, sort key (None: not sortable), numeric.
COLUMNS = [
    ("Run", "id", False),
    ("Data set", "dataset", False),
    ("Algorithm", "algorithm", False),
    ("k", "k", True),
    ("Parameters", None, False),  # those set away from their defaults
    ("Status", "status", False),
    ("Objective", "objective", True),
    ("Test error", "test_error", True),
    ("F-measure", "f_measure", True),
    ("AUC", "auc", True),
    ("Time", "time", True),
]


def key_params(run: Run) -> dict[str, Any]:
    """The parameters that differ from the algorithm's and the objective's defaults (what
    sets the run apart from another of the same method), and unscaled columns."""
    defaults: dict[str, Any] = {}
    for spec in (engine.ALGORITHMS.get(run.algorithm), engine.OBJECTIVES.get(run.objective)):
        if spec is not None:
            defaults.update({p.name: p.default for p in spec.params})
    params = run_options.engine_params(run.params)
    chosen = {n: v for n, v in params.items() if n not in defaults or defaults[n] != v}
    if not run_options.standardize(run.params):
        chosen["standardize"] = False
    return chosen


def _row(run: Run, dataset_name: str) -> dict[str, Any]:
    result = RunResult.model_validate(run.result) if run.result else None
    test_error = None
    if result and result.test:
        test = result.test
        test_error = test.mse if test.mse is not None else 1 - (test.accuracy or 0.0)
    return {
        "run": run,
        "dataset": dataset_name,
        "params": key_params(run),
        "result": result,
        "test_error": test_error,
        "f_measure": result.recovery.f_measure if result and result.recovery else None,
        "auc": result.recovery.auc if result and result.recovery else None,
        "selected": len(result.support) if result else None,
    }


def runs_table(session: Session, params: dict[str, str]) -> dict[str, Any]:
    query = RunQuery.parse(params)
    rows, total = run_table.page_of_runs(session, query)
    pages = max(1, math.ceil(total / PAGE_SIZE))
    return {
        "query": query,
        "rows": [_row(run, name) for run, name in rows],
        "total": total,
        "pages": pages,
        "first": (query.page - 1) * PAGE_SIZE + 1 if rows else 0,
        "last": (query.page - 1) * PAGE_SIZE + len(rows),
        "columns": COLUMNS,
        "choices": run_table.choices(session),
    }
