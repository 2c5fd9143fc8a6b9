"""The runs table's SQL (sorting on JSON result fields, tag and text filters) and the run
edits on both databases: a SQLite file and PostgreSQL."""

from __future__ import annotations

import re

import pytest
from app_helpers import regression_csv, upload_ok
from service_helpers import make_settings, serve
from sqlmodel import Session

from app.models import Run, RunStatus
from app.web.views.runs_table import SORTS


def result(objective: float, mse: float | None, f: float | None, seconds: float) -> dict:
    return {
        "support": [],
        "intercept": 0.0,
        "objective": objective,
        "n_steps": 1,
        "stop_reason": "k",
        "engine_seconds": seconds,
        "train": {"n_samples": 30},
        "test": None if mse is None else {"n_samples": 10, "mse": mse},
        "recovery": None
        if f is None
        else {
            "true_support": ["x1"],
            "true_positives": 1,
            "false_positives": 0,
            "false_negatives": 0,
            "precision": f,
            "recall": f,
            "f_measure": f,
            "selection_error": 0,
            "exact_recovery": False,
        },
    }


def ids(html: str) -> list[int]:
    return [int(i) for i in re.findall(r'<tr data-run="(\d+)">', html)]


@pytest.fixture
def client(database_url, data_dir):
    with serve(make_settings(data_dir, database_url=database_url)) as c:
        yield c


def test_sorts_filters_and_edits_on_both_databases(client) -> None:
    ds = upload_ok(client, regression_csv(n=40, d=5))
    rows = [
        ("a", ["slides"], result(3.0, 0.5, 0.8, 0.2)),
        ("b", ["slides", "x%_"], result(1.0, None, 1.0, 0.1)),
        ("c", [], result(2.0, 0.1, None, 0.3)),
        ("d", [], None),
    ]
    with Session(client.app.state.db) as session:
        runs = [
            Run(
                dataset_id=ds["id"],
                algorithm="omp",
                objective="least_squares",
                k=i + 1,
                status=RunStatus.done if res else RunStatus.failed,
                name=name,
                tags=tags,
                result=res,
            )
            for i, (name, tags, res) in enumerate(rows)
        ]
        session.add_all(runs)
        session.commit()
        a, b, c, d = (r.id for r in runs)
    # Unknown values last whichever the direction, ties newest first.
    expected = {
        ("objective", "asc"): [b, c, a, d],
        ("objective", "desc"): [a, c, b, d],
        ("test_error", "asc"): [c, a, d, b],
        ("test_error", "desc"): [a, c, d, b],
        ("f_measure", "asc"): [a, b, d, c],
        ("f_measure", "desc"): [b, a, d, c],
        ("time", "asc"): [b, a, c, d],
        ("time", "desc"): [c, a, b, d],
        ("name", "asc"): [a, b, c, d],
        ("k", "desc"): [d, c, b, a],
    }
    for sort in SORTS:
        for direction in ("asc", "desc"):
            response = client.get(f"/runs?sort={sort}&dir={direction}")
            assert response.status_code == 200, (sort, direction, response.text[:300])
            if (sort, direction) in expected:
                assert ids(response.text) == expected[sort, direction], (sort, direction)
    assert ids(client.get("/runs?tag=slides").text) == [b, a]
    assert ids(client.get("/runs?tag=x%25_").text) == [b]
    assert ids(client.get("/runs?tag=slide").text) == []  # a tag is matched whole
    assert ids(client.get("/runs?q=X%25").text) == [b]  # LIKE wildcards are escaped
    # Edits and deletion on this database too.
    assert client.patch(f"/api/runs/{c}", json={"tags": ["new"]}).status_code == 200
    assert ids(client.get("/runs?tag=new").text) == [c]
    compared = client.post("/api/comparisons/from-runs", json={"run_ids": [a, c]})
    assert compared.status_code == 201, compared.text
    assert client.delete(f"/api/runs/{a}").status_code == 204
    runs_left = client.get(compared.json()["url"]).json()["runs"]
    assert [r["id"] for r in runs_left] == [c]
