"""One run, four doors (issue 25): the browser's run form, POST /api/runs with defaults, the
CLI and engine.sklearn give the same default test split, objective, k and support on the same
data set, and candidate recording is off by default in all of them."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

import engine
from engine.sklearn import SparseClassifier, SparseRegressor
from foba_lab.cli import main as cli
from tests.app.app_helpers import csv_text, upload_ok
from tests.service_helpers import submit, wait_for

if TYPE_CHECKING:
    from fastapi.testclient import TestClient


def zero_one_csv(n: int = 90, d: int = 12, seed: int = 3) -> tuple[str, np.ndarray, np.ndarray]:
    """A 0/1 target driven by x1, x4 and x7: the case the CLI used to fit by least squares."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 6)
    score = 2 * X[:, 1] - 1.5 * X[:, 4] + X[:, 7] + 0.3 * rng.normal(size=n)
    y = (score > 0).astype(int)
    rows = [[f"{v:.6f}" for v in x] + [int(t)] for x, t in zip(X, y, strict=True)]
    return csv_text([f"x{j}" for j in range(d)] + ["y"], rows), X, y


def form_defaults(html: str) -> dict[str, object]:
    """What the data set page's run form would send untouched."""
    form = html[html.index('id="run-form"') : html.index('id="compare-form"')]
    test = re.search(r'name="test_fraction"[^>]*value="([^"]*)"', form)
    k = re.search(r'name="k"[^>]*value="([^"]*)"', form)
    objective = re.search(r'name="objective".*?<option value="([^"]+)" selected', form, re.S)
    candidates = re.search(r'<input[^>]*name="record_candidates"[^>]*>', form)
    assert test and k and objective and candidates
    return {
        "test_fraction": float(test.group(1)) if test.group(1) else None,
        "k": int(k.group(1)) if k.group(1) else None,
        "objective": objective.group(1),
        "record_candidates": " checked" in candidates.group(0),
    }


def test_every_door_gives_the_same_defaults(worker_client: TestClient, tmp_path: Path) -> None:
    text, X, y = zero_one_csv()
    ds = upload_ok(worker_client, text)
    assert ds["task"] == "classification"
    algorithm = engine.REGISTRY.default_algorithm

    # The browser: the form's starting values.
    page = worker_client.get(f"/datasets/{ds['id']}")
    assert page.status_code == 200
    form = form_defaults(page.text)

    # The API, nothing but the algorithm given: the stored run records the resolved values.
    run = wait_for(worker_client, submit(worker_client, ds["id"], algorithm=algorithm)["id"])
    assert run["status"] == "done", run["error"]
    api_support = sorted(f["index"] for f in run["result"]["support"])

    # The CLI.
    path = tmp_path / "data.csv"
    path.write_text(text)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli(["select", str(path), "--target", "y", "--json", "--no-certify"]) == 0
    printed = json.loads(out.getvalue())
    cli_support = sorted(f["index"] for f in printed["selected"])

    # engine.sklearn: the estimator for class labels.
    est = SparseClassifier(algorithm).fit(X, y)

    assert form["objective"] == run["objective"] == printed["objective"] == est.objective
    assert run["objective"] == "logistic"
    assert form["k"] == run["k"] == printed["k"] == len(est.support_) == engine.config.DEFAULT_K
    assert form["test_fraction"] is None and run["test_fraction"] is None
    assert run["result"]["test"] is None  # trained on every row, as the CLI and sklearn
    assert form["record_candidates"] is False and run["record_candidates"] is False
    assert api_support == cli_support == sorted(est.support_.tolist())
    assert {1, 4, 7} <= set(api_support)


def test_a_regression_table_defaults_to_least_squares(client: TestClient, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    rows = [[f"{v:.6f}" for v in x] + [f"{x[0] + 0.1 * x[2]:.6f}"] for x in X]
    ds = upload_ok(client, csv_text(["a", "b", "c", "d", "y"], rows))
    run = submit(client, ds["id"], algorithm="omp")
    assert (run["objective"], run["k"]) == ("least_squares", 4)  # k: every feature when d < 5
    assert SparseRegressor("omp").objective == "least_squares"
    assert form_defaults(client.get(f"/datasets/{ds['id']}").text)["objective"] == "least_squares"


def test_the_schema_says_what_a_left_out_objective_means(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()["components"]["schemas"]["RunCreate"]
    objective = schema["properties"]["objective"]
    assert objective.get("default") is None
    assert "task decides" in objective["description"]
    assert schema["properties"]["test_fraction"].get("default") is None
    assert schema["properties"]["record_candidates"]["default"] is False


def test_studies_follow_the_task_too(client: TestClient) -> None:
    """A cross-validation that names no objective fits a 0/1 target by logistic, as a run."""
    ds = upload_ok(client, zero_one_csv()[0])
    answer = client.post("/api/cv", json={"dataset_id": ds["id"], "algorithm": "omp", "k_max": 3})
    assert answer.status_code == 202, answer.text
    assert answer.json()["objective"] == "logistic"
    folds = client.get(answer.json()["url"]).json()["folds"]
    assert all(
        client.get(f"/api/runs/{f['run_id']}").json()["objective"] == "logistic" for f in folds
    )
