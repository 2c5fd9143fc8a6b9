"""Choosing k by cross-validation through the API: each fold is a run executed by a real
worker, and the study's curve is ``engine.cv.summarise`` of the stored fold results, the same
curve ``engine.cv.cross_validate_k`` computes in one process with the same folds and seed."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest
from app_helpers import csv_text, regression_csv, upload_ok
from service_helpers import make_settings, serve, wait_done, wait_for
from sqlalchemy import func
from sqlmodel import Session, select

from app.db import make_db
from app.models import CVStudy, Run
from engine import datasets as generators
from engine.cv import cross_validate_k

REGRESSION = {"generator": "gaussian_regression", "params": {"n": 120, "d": 20, "k_true": 3}}
CLASSIFICATION = {"generator": "liu2014_logistic", "params": {"n": 150, "d": 12, "s": 3}}


def generate(client, spec: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """The data set through the API, and the same problem from the engine's generator."""
    response = client.post("/api/datasets/generate", json={**spec, "random_state": 3})
    assert response.status_code == 201, response.text
    problem = generators.generate(spec["generator"], random_state=3, **spec["params"])
    preview = client.get(f"/api/datasets/{response.json()['id']}/preview").json()
    assert np.allclose(np.array(preview["rows"][0][:-1], dtype=float), problem.X[0])
    return response.json(), problem


def wait_study(client, cv_id: int, timeout: float = 60.0) -> dict[str, Any]:
    return wait_done(client, f"/api/cv/{cv_id}", timeout)


@pytest.mark.parametrize(
    ("spec", "body"),
    [
        (REGRESSION, {"algorithm": "foba-obj", "k_max": 8, "n_folds": 5, "rule": "1se"}),
        (
            CLASSIFICATION,
            {"algorithm": "forward-obj", "objective": "logistic", "k_max": 6, "n_folds": 4},
        ),
        (REGRESSION, {"algorithm": "lasso", "k_max": 4, "n_folds": 3}),
    ],
    ids=["foba-regression-1se", "forward-logistic-min", "lasso-one-run-per-k"],
)
def test_a_study_runs_its_folds_as_runs_and_matches_the_engine(
    worker_client, spec: dict[str, Any], body: dict[str, Any]
) -> None:
    client = worker_client
    ds, problem = generate(client, spec)
    response = client.post("/api/cv", json={"dataset_id": ds["id"], "seed": 4, **body})
    assert response.status_code == 202, response.text
    submitted = response.json()
    assert response.headers["location"] == submitted["url"] == f"/api/cv/{submitted['id']}"
    assert submitted["folds_total"] == body["n_folds"] and submitted["curve"] is None

    study = wait_study(client, submitted["id"])
    assert study["status"] == "done", study
    assert study["folds_done"] == study["folds_total"] == body["n_folds"]

    # Each fold is a run of its own, executed by the worker, kept out of the run lists.
    run_ids = [f["run_id"] for f in study["folds"]]
    assert len(set(run_ids)) == body["n_folds"]
    for i, run_id in enumerate(run_ids):
        run = client.get(f"/api/runs/{run_id}").json()
        assert (run["cv_id"], run["cv_fold"], run["status"]) == (study["id"], i, "done")
        assert run["worker"] and run["attempt"] == 1
    assert client.get("/api/runs", params={"dataset_id": ds["id"]}).json() == []
    assert sum(f["n_test"] for f in study["folds"]) == problem.X.shape[0]

    # The same curve and choices as the engine's cross-validation in this process.
    expected = cross_validate_k(
        problem.X,
        problem.y,
        algorithm=body["algorithm"],
        objective=body.get("objective", "least_squares"),
        k_max=body["k_max"],
        n_folds=body["n_folds"],
        rule=body.get("rule", "min"),
        random_state=4,
    ).summary
    curve = study["curve"]
    assert curve["k"] == list(range(1, body["k_max"] + 1))
    np.testing.assert_allclose(curve["mean"], expected.mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(curve["se"], expected.se, rtol=1e-9, atol=1e-12)
    assert (curve["k_min"], curve["k_1se"], curve["k_best"]) == (
        expected.k_min,
        expected.k_1se,
        expected.k_best,
    )
    assert study["mode"] == ("per-k" if body["algorithm"] == "lasso" else "path")
    if body.get("rule") == "1se":  # a clear signal on 3 of 20 features: the rule finds them
        assert curve["k_best"] == len(ds["true_support"]) == 3

    # One click: the final run at the chosen k on every row; the same request, the same run.
    final = client.post(f"/api/cv/{study['id']}/final", json={})
    assert final.status_code == 202, final.text
    run = final.json()
    assert (run["k"], run["algorithm"], run["test_fraction"], run["seed"]) == (
        curve["k_best"],
        body["algorithm"],
        None,
        4,
    )
    assert client.post(f"/api/cv/{study['id']}/final", json={}).json()["id"] == run["id"]
    done = wait_for(client, run["id"])
    assert done["status"] == "done" and len(done["result"]["support"]) == curve["k_best"]
    again = client.get(f"/api/cv/{study['id']}").json()
    assert (again["final_run_id"], again["final_run_url"]) == (run["id"], run["url"])
    assert client.get("/api/runs", params={"dataset_id": ds["id"]}).json()[0]["id"] == run["id"]

    outside = client.post(f"/api/cv/{study['id']}/final", json={"k": body["k_max"] + 1})
    assert outside.status_code == 422
    assert f"k_max = {body['k_max']}" in outside.json()["detail"][0]["msg"]


# --------------------------------------------------------------------------- refusals


def stored_rows(data_dir) -> tuple[int, int]:
    db = make_db(f"sqlite:///{data_dir / 'foba-lab.db'}")
    try:
        with Session(db) as session:
            runs = session.exec(select(func.count()).select_from(Run)).one()
            studies = session.exec(select(func.count()).select_from(CVStudy)).one()
    finally:
        db.dispose()
    return runs, studies


BAD = {
    "unknown data set": ({"dataset_id": 999}, ["dataset_id"], "data set 999 does not exist"),
    "unknown algorithm": ({"algorithm": "magic"}, ["algorithm"], "'magic'"),
    "algorithm without k": ({"algorithm": "ght"}, ["algorithm"], "does not take k"),
    "k_max too large": ({"k_max": 7}, ["k_max"], "k_max must be between 1 and 6"),
    "k_max zero": ({"k_max": 0}, ["k_max"], "k_max must be between 1 and 6"),
    "too many folds": ({"n_folds": 16}, ["n_folds"], "more than the data set's 15 rows"),
    "one fold": ({"n_folds": 1}, ["n_folds"], "greater than or equal to 2"),
    "unknown rule": ({"rule": "max"}, ["rule"], "'min' or '1se'"),
    "metric of another task": ({"metric": "error"}, ["metric"], "mse, mae"),
    "unknown parameter": ({"params": {"zeta": 1}}, ["params"], "no parameter 'zeta'"),
    "classification objective": ({"objective": "logistic"}, ["objective"], "logistic"),
    "sequence objective": ({"objective": "crf"}, ["objective"], "labelled sequences"),
    "unknown field": ({"k": 3}, ["k"], "Extra inputs are not permitted"),
}


@pytest.mark.parametrize(("change", "loc", "words"), BAD.values(), ids=BAD.keys())
def test_bad_requests_say_what_to_fix_and_store_nothing(
    client, data_dir, change: dict[str, Any], loc: list[str], words: str
) -> None:
    ds = upload_ok(client, regression_csv(n=15, d=6, support=(1, 4)))
    body = {"dataset_id": ds["id"], "algorithm": "foba-obj", "k_max": 4, "n_folds": 3, **change}
    response = client.post("/api/cv", json=body)
    assert response.status_code == 422, response.text
    error = response.json()["detail"][0]
    assert error["loc"] == ["body", *loc]
    assert words in error["msg"]
    assert stored_rows(data_dir) == (0, 0)


def test_unknown_and_unfinished_studies(client) -> None:
    assert client.get("/api/cv/999").status_code == 404
    assert client.post("/api/cv/999/final", json={}).status_code == 404
    assert client.post("/api/cv/999/cancel").status_code == 404
    ds = upload_ok(client, regression_csv(n=30, d=6, support=(1, 4)))
    study = client.post(
        "/api/cv", json={"dataset_id": ds["id"], "algorithm": "omp", "k_max": 4, "n_folds": 3}
    ).json()
    assert study["status"] == "queued"  # no worker here
    early = client.post(f"/api/cv/{study['id']}/final", json={})
    assert early.status_code == 409
    assert "needs every fold of cross-validation" in early.json()["detail"]
    cancelled = client.post(f"/api/cv/{study['id']}/cancel").json()
    assert cancelled["status"] == "cancelled"
    assert [f["status"] for f in cancelled["folds"]] == ["cancelled"] * 3
    assert client.get(f"/datasets/{ds['id']}").status_code == 200
    page = client.get(f"/cv/{study['id']}")
    assert page.status_code == 200 and "Cancelled." in page.text
    assert client.get("/cv/999").status_code == 404


def test_an_idempotency_key_returns_the_first_study_and_queues_its_folds_once(client) -> None:
    ds = upload_ok(client, regression_csv(n=30, d=6, support=(1, 4)))
    body = {"dataset_id": ds["id"], "algorithm": "omp", "k_max": 4, "n_folds": 3}
    key = {"Idempotency-Key": "cv-1"}
    first = client.post("/api/cv", json=body, headers=key)
    again = client.post("/api/cv", json=body, headers=key)
    assert first.status_code == again.status_code == 202
    assert again.json()["id"] == first.json()["id"]
    assert len(client.get(f"/api/cv/{first.json()['id']}").json()["folds"]) == 3
    assert client.get("/api/cv/2").status_code == 404  # no second study was made
    other = client.post("/api/cv", json={**body, "k_max": 3}, headers=key)
    assert other.status_code == 422 and "different request" in other.json()["detail"][0]["msg"]
    # The same key on a run is another request too: the key names one request only.
    run = client.post(
        "/api/runs", json={"dataset_id": ds["id"], "algorithm": "omp", "k": 2}, headers=key
    )
    assert run.status_code == 422


def test_a_fold_is_read_through_its_study(client) -> None:
    """A fold's result is held-out errors, not a selection: the run pages and the export
    point to the study instead of failing on it."""
    ds = upload_ok(client, regression_csv(n=30, d=6, support=(1, 4)))
    study = client.post(
        "/api/cv", json={"dataset_id": ds["id"], "algorithm": "omp", "k_max": 4, "n_folds": 3}
    ).json()
    fold = study["folds"][1]["run_id"]
    run = client.get(f"/api/runs/{fold}").json()
    assert (run["cv_id"], run["cv_fold"], run["k"], run["result"]) == (study["id"], 1, 4, None)
    for url in (f"/runs/{fold}", f"/runs/{fold}/figures", f"/teach/{fold}"):
        page = client.get(url)
        assert page.status_code == 409, url
        assert f"fold 1 of cross-validation {study['id']}" in page.text
    export = client.get(f"/api/runs/{fold}/export")
    assert export.status_code == 409
    assert f"/api/cv/{study['id']}" in export.json()["detail"]


def test_a_fold_training_on_one_class_is_refused(client, data_dir) -> None:
    rows = [[(i * 3) % 4, (i * 7) % 5, "yes" if i == 0 else "no"] for i in range(12)]
    ds = upload_ok(client, csv_text(["a", "b", "label"], rows), target="label")
    body = {"dataset_id": ds["id"], "algorithm": "omp", "objective": "logistic", "k_max": 2}
    response = client.post("/api/cv", json={**body, "n_folds": 3})
    assert response.status_code == 422, response.text
    error = response.json()["detail"][0]
    assert error["loc"] == ["body", "n_folds"]
    assert "would train on a single class" in error["msg"]
    assert stored_rows(data_dir) == (0, 0)


def test_a_study_on_postgresql(postgres_url: str, data_dir) -> None:
    """The fold results are JSON in PostgreSQL too (no NaN), and the curve the same."""
    with serve(make_settings(data_dir, workers=1, database_url=postgres_url)) as client:
        ds, problem = generate(client, REGRESSION)
        body = {"algorithm": "omp", "k_max": 5, "n_folds": 3}
        submitted = client.post("/api/cv", json={"dataset_id": ds["id"], **body}).json()
        study = wait_study(client, submitted["id"])
        assert study["status"] == "done", study
        expected = cross_validate_k(problem.X, problem.y, random_state=0, **body).summary
        np.testing.assert_allclose(study["curve"]["mean"], expected.mean, rtol=1e-9)
        assert study["curve"]["k_min"] == expected.k_min


def test_a_failing_fold_fails_the_study_with_its_reason(worker_client) -> None:
    # Column c copies a: the full model of backward elimination is not identifiable, which
    # only the fit on a fold can find out.
    twins = "a,b,c,y\n" + "".join(f"{i},{i * i % 7},{i},{i % 3}\n" for i in range(12))
    ds = upload_ok(worker_client, twins, id_columns="keep", task="regression")
    body = {"dataset_id": ds["id"], "algorithm": "backward", "k_max": 2, "n_folds": 3}
    submitted = worker_client.post("/api/cv", json=body)
    assert submitted.status_code == 202, submitted.text
    study = wait_study(worker_client, submitted.json()["id"])
    assert study["status"] == "failed" and study["curve"] is None
    assert study["error"].startswith("fold "), study["error"]
    failed = next(f for f in study["folds"] if f["status"] == "failed")
    assert failed["error"] and failed["error"] in study["error"]
    page = worker_client.get(f"/cv/{study['id']}")
    assert "The cross-validation failed." in page.text
    final = worker_client.post(f"/api/cv/{study['id']}/final", json={})
    assert final.status_code == 409 and "it is failed" in final.json()["detail"]
    # Deleting the data set deletes its studies and their folds, once no fold is left running
    # (the study failed with its first failing fold; the others may still be at work).
    deadline = time.monotonic() + 60
    while any(
        f["status"] in ("queued", "running")
        for f in worker_client.get(f"/api/cv/{study['id']}").json()["folds"]
    ):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert worker_client.delete(f"/api/datasets/{ds['id']}").status_code == 204
    assert worker_client.get(f"/api/cv/{study['id']}").status_code == 404
    assert worker_client.get(f"/api/runs/{failed['run_id']}").status_code == 404
