"""The runs table's SQL on both databases: sorting on metrics inside the result JSON, the
tag and text filters, and deleting and comparing runs (SQLite, and PostgreSQL when it is
reachable)."""

from __future__ import annotations

import re

from app_helpers import regression_csv, upload_ok
from service_helpers import make_settings, serve
from sqlmodel import Session

from app.db import make_db
from app.models import Run


def result(objective: float, mse: float | None, f_measure: float | None) -> dict:
    fit = {"n_samples": 10, "mse": mse, "r2": 0.5}
    recovery = None
    if f_measure is not None:
        recovery = {
            "true_support": ["x1"],
            "true_positives": 1,
            "false_positives": 0,
            "false_negatives": 0,
            "precision": 1.0,
            "recall": 1.0,
            "f_measure": f_measure,
            "selection_error": 0,
            "exact_recovery": True,
            "auc": 1 - f_measure,
        }
    return {
        "support": [{"index": 1, "name": "x1", "coef": 1.0}],
        "intercept": 0.0,
        "objective": objective,
        "n_steps": 1,
        "stop_reason": "k reached",
        "engine_seconds": objective / 100,
        "train": fit,
        "test": fit if mse is not None else None,
        "recovery": recovery,
    }


def test_sort_filter_delete_and_compare(database_url, data_dir) -> None:
    with serve(make_settings(data_dir, database_url=database_url)) as client:
        ds = upload_ok(client, regression_csv(n=30, d=4, support=(1,)), name="prices")
        rows = [  # objective, test MSE, F-measure, tags, name
            (3.0, 0.5, 0.9, ["lecture 3", "café"], "third"),
            (1.0, None, 0.4, ["lecture"], "first"),
            (2.0, 0.7, None, [], "50%_off"),
        ]
        with Session(make_db(database_url)) as session:
            runs = [
                Run(
                    dataset_id=ds["id"],
                    algorithm="omp",
                    objective="least_squares",
                    k=1,
                    status="done",
                    result=result(objective, mse, f),
                    tags=tags,
                    name=name,
                )
                for objective, mse, f, tags, name in rows
            ]
            session.add_all(runs)
            session.commit()
            ids = [run.id for run in runs]

        def shown(query: str) -> list[int]:
            page = client.get(f"/runs?{query}")
            assert page.status_code == 200, page.text
            return [int(i) for i in re.findall(r'<tr data-run="(\d+)">', page.text)]

        a, b, c = ids
        assert shown("sort=objective&order=asc") == [b, c, a]
        assert shown("sort=objective") == [a, c, b]
        assert shown("sort=test_error&order=asc") == [a, c, b]  # no test split: last
        assert shown("sort=f_measure") == [a, b, c]
        assert shown("sort=auc") == [b, a, c]
        assert shown("sort=time&order=asc") == [b, c, a]
        assert shown("tag=lecture") == [b]  # whole tags only
        assert shown("tag=caf%C3%A9") == [a]  # non-ASCII, as the JSON stores it
        assert shown("q=50%25_") == [c]  # LIKE wildcards are plain characters
        assert shown("q=PRICES") == [c, b, a]
        html = client.get("/runs").text
        assert '<option value="café"' in html and '<option value="lecture 3"' in html
        body = {"dataset_id": ds["id"], "run_ids": [a, c]}
        comparison = client.post("/api/comparisons", json=body).json()
        assert [r["id"] for r in comparison["runs"]] == [a, c]
        assert client.delete(f"/api/runs/{a}").status_code == 204
        assert [r["id"] for r in client.get(comparison["url"]).json()["runs"]] == [c]
        assert shown("") == [c, b]
