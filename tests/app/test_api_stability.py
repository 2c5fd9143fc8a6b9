"""How stable is a selection, through the API: each (method, subsample) is a run executed by
a real worker, and the study's frequencies are ``engine.stability.summarise`` of the stored
subsample results: the same frequencies ``engine.stability`` computes in one process with the
same seed."""

from __future__ import annotations

import csv
import io
from typing import Any

import numpy as np
import pytest
from app_helpers import regression_csv, upload_ok
from service_helpers import make_settings, serve, wait_done
from sqlalchemy import func
from sqlmodel import Session, select

from app.db import make_db
from app.models import Run, StabilityStudy
from engine import datasets as generators
from engine.stability import compare_stability, stability_selection

REGRESSION = {"generator": "gaussian_regression", "params": {"n": 80, "d": 12, "k_true": 3}}
CLASSIFICATION = {"generator": "liu2014_logistic", "params": {"n": 90, "d": 10, "s": 3}}


def generate(client, spec: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    response = client.post("/api/datasets/generate", json={**spec, "random_state": 3})
    assert response.status_code == 201, response.text
    problem = generators.generate(spec["generator"], random_state=3, **spec["params"])
    return response.json(), problem


def wait_study(client, study_id: int, timeout: float = 120.0) -> dict[str, Any]:
    return wait_done(client, f"/api/stability/{study_id}", timeout)


def test_a_study_runs_its_subsamples_as_runs_and_matches_the_engine(worker_client) -> None:
    client = worker_client
    ds, problem = generate(client, REGRESSION)
    body = {
        "dataset_id": ds["id"],
        "algorithm": "foba-obj",
        "compare_with": ["omp", "lasso"],
        "k_max": 4,
        "n_pairs": 3,
        "seed": 7,
        "threshold": 0.7,
        "max_false": 1.0,
    }
    response = client.post("/api/stability", json=body)
    assert response.status_code == 202, response.text
    submitted = response.json()
    assert response.headers["location"] == submitted["url"]
    assert submitted["parts_total"] == 3 * 6 and submitted["mode"] == "path"

    study = wait_study(client, submitted["id"])
    assert study["status"] == "done", study["error"]
    assert study["parts_done"] == 18 and study["progress"] == 1.0
    assert study["unit_names"] == ds["feature_names"]

    # Each part is a run of its own, executed by the worker, kept out of the run lists.
    for part in study["parts"][:4]:
        run = client.get(f"/api/runs/{part['run_id']}").json()
        assert (run["stability_id"], run["stability_index"]) == (study["id"], part["subsample"])
        assert run["result"] is None and run["worker"] and run["attempt"] == 1
    assert client.get("/api/runs", params={"dataset_id": ds["id"]}).json() == []
    page = client.get(f"/runs/{study['parts'][0]['run_id']}")
    assert page.status_code == 409 and f"stability study {study['id']}" in page.text

    # The same frequencies, stable sets and bounds as the engine in this process.
    expected = compare_stability(
        problem.X,
        problem.y,
        algorithms=["foba-obj", "omp", "lasso"],
        k_max=4,
        n_pairs=3,
        threshold=0.7,
        max_false=1.0,
        random_state=7,
    )
    for method in study["methods"]:
        want = expected.results[method["algorithm"]].summary
        got = method["summary"]
        assert method["subsamples_done"] == 6
        np.testing.assert_array_equal(np.array(got["frequency"]), want.frequency)
        assert got["stable"] == want.to_dict()["stable"]
        np.testing.assert_allclose(got["bound"], want.bound)
        assert got["nogueira"] == want.to_dict()["nogueira"]
    assert study["steadiest"] == expected.steadiest
    one = stability_selection(
        problem.X, problem.y, algorithm="foba-obj", k_max=4, n_pairs=3, random_state=7
    ).summary
    np.testing.assert_array_equal(
        np.array(study["methods"][0]["summary"]["frequency"]), one.frequency
    )

    # The export: one row per method, k and feature.
    export = client.get(f"/api/stability/{study['id']}/frequencies")
    assert export.status_code == 200 and export.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(export.text)))
    assert len(rows) == 3 * 4 * 12
    first = rows[0]
    assert (first["method"], first["k"], first["name"]) == ("foba-obj", "1", ds["feature_names"][0])
    assert float(first["frequency"]) == one.frequency[0, 0]
    as_json = client.get(f"/api/stability/{study['id']}/frequencies?format=json").json()
    assert len(as_json) == len(rows)


def test_a_classification_study_matches_the_engine_s_stratified_halves(worker_client) -> None:
    ds, problem = generate(worker_client, CLASSIFICATION)
    body = {"dataset_id": ds["id"], "algorithm": "forward-obj", "k_max": 3, "n_pairs": 2}
    study = wait_study(worker_client, worker_client.post("/api/stability", json=body).json()["id"])
    assert study["status"] == "done", study["error"]
    assert study["objective"] == "logistic"
    want = stability_selection(
        problem.X,
        problem.y,
        algorithm="forward-obj",
        objective="logistic",
        k_max=3,
        n_pairs=2,
        random_state=0,
    ).summary
    np.testing.assert_array_equal(
        np.array(study["methods"][0]["summary"]["frequency"]), want.frequency
    )


def stored_rows(data_dir) -> tuple[int, int]:
    db = make_db(f"sqlite:///{data_dir / 'foba-lab.db'}")
    try:
        with Session(db) as session:
            runs = session.exec(select(func.count()).select_from(Run)).one()
            studies = session.exec(select(func.count()).select_from(StabilityStudy)).one()
    finally:
        db.dispose()
    return runs, studies


BAD = {
    "unknown data set": ({"dataset_id": 999}, ["dataset_id"], "data set 999 does not exist"),
    "unknown algorithm": ({"algorithm": "magic"}, ["algorithm"], "'magic'"),
    "algorithm without k": ({"algorithm": "ght"}, ["algorithm"], "does not take k"),
    "k_max too large": ({"k_max": 7}, ["k_max"], "k_max must be between 1 and 6"),
    "unknown peer": ({"compare_with": ["magic"]}, ["compare_with"], "magic"),
    "a method twice": ({"compare_with": ["foba-obj"]}, ["compare_with"], "named twice"),
    "threshold at a half": ({"threshold": 0.5}, ["threshold"], "greater than 0.5"),
    "no pairs": ({"n_pairs": 0}, ["n_pairs"], "greater than or equal to 1"),
    "unknown run": ({"run_id": 999}, ["run_id"], "run 999 does not exist"),
    "unknown field": ({"k": 3}, ["k"], "Extra inputs are not permitted"),
}


@pytest.mark.parametrize(("change", "loc", "words"), BAD.values(), ids=BAD.keys())
def test_bad_requests_say_what_to_fix_and_store_nothing(
    client, data_dir, change: dict[str, Any], loc: list[str], words: str
) -> None:
    ds = upload_ok(client, regression_csv(n=15, d=6, support=(1, 4)))
    body = {"dataset_id": ds["id"], "algorithm": "foba-obj", "k_max": 4, **change}
    response = client.post("/api/stability", json=body)
    assert response.status_code == 422, response.text
    error = response.json()["detail"][0]
    assert error["loc"] == ["body", *loc]
    assert words in error["msg"]
    assert stored_rows(data_dir) == (0, 0)


def test_an_idempotency_key_returns_the_first_study_and_cancel(client) -> None:
    ds = upload_ok(client, regression_csv(n=30, d=6, support=(1, 4)))
    body = {"dataset_id": ds["id"], "algorithm": "omp", "k_max": 3, "n_pairs": 2}
    key = {"Idempotency-Key": "stab-1"}
    first = client.post("/api/stability", json=body, headers=key)
    again = client.post("/api/stability", json=body, headers=key)
    assert first.status_code == again.status_code == 202
    assert again.json()["id"] == first.json()["id"]
    assert client.get("/api/stability/2").status_code == 404  # no second study was made
    other = client.post("/api/stability", json={**body, "k_max": 2}, headers=key)
    assert other.status_code == 422 and "different request" in other.json()["detail"][0]["msg"]

    study = first.json()
    assert study["status"] == "queued" and study["parts_total"] == 4  # no worker here
    cancelled = client.post(f"/api/stability/{study['id']}/cancel").json()
    assert cancelled["status"] == "cancelled"
    assert [p["status"] for p in cancelled["parts"]] == ["cancelled"] * 4
    assert client.get("/api/stability/999").status_code == 404
    assert client.post("/api/stability/999/cancel").status_code == 404
    # Nothing to explain before a subsample is done (the answers: tests/pages).
    why = client.get(f"/api/stability/{study['id']}/why-not?feature=0&k=2")
    assert why.status_code == 409 and "no subsample" in why.json()["detail"]
    assert client.get("/api/stability/999/why-not?feature=0&k=1").status_code == 404


def test_a_study_of_a_run_takes_the_run_s_settings(client) -> None:
    ds = upload_ok(client, regression_csv(n=30, d=6, support=(1, 4)))
    run = client.post(
        "/api/runs",
        json={"dataset_id": ds["id"], "algorithm": "omp", "k": 3, "seed": 5, "standardize": False},
    ).json()
    study = client.post("/api/stability", json={"dataset_id": ds["id"], "run_id": run["id"]})
    assert study.status_code == 202, study.text
    got = study.json()
    assert (got["run_id"], got["algorithm"], got["k_max"], got["seed"], got["standardize"]) == (
        run["id"],
        "omp",
        3,
        5,
        False,
    )
    assert got["n_pairs"] == 50 and got["parts_total"] == 100
    other = upload_ok(client, regression_csv(n=30, d=6, support=(1, 4)))
    wrong = client.post("/api/stability", json={"dataset_id": other["id"], "run_id": run["id"]})
    assert wrong.status_code == 422 and "is on data set" in wrong.text


def test_a_study_on_postgresql(postgres_url: str, data_dir) -> None:
    with serve(make_settings(data_dir, workers=1, database_url=postgres_url)) as client:
        ds, problem = generate(client, REGRESSION)
        body = {"dataset_id": ds["id"], "algorithm": "omp", "k_max": 3, "n_pairs": 2, "seed": 1}
        study = wait_study(client, client.post("/api/stability", json=body).json()["id"])
        assert study["status"] == "done", study["error"]
        want = stability_selection(
            problem.X, problem.y, algorithm="omp", k_max=3, n_pairs=2, random_state=1
        ).summary
        np.testing.assert_array_equal(
            np.array(study["methods"][0]["summary"]["frequency"]), want.frequency
        )
