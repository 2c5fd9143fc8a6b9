"""Runs and comparisons through the API, without workers: validation, queueing,
idempotency, cancelling queued runs, reading traces and exports of unfinished runs."""

from __future__ import annotations

import pytest
from app_helpers import classification_csv, regression_csv, upload_ok
from service_helpers import submit, wait_for

REGRESSION = regression_csv(n=40, d=5, support=(1, 3))


@pytest.fixture
def dataset(client) -> dict:
    return upload_ok(client, REGRESSION, true_support="x1,x3")


def error(response) -> dict:
    return response.json()["detail"][0]


def test_submit_queues_a_run(client, dataset) -> None:
    response = client.post(
        "/api/runs",
        json={
            "dataset_id": dataset["id"],
            "algorithm": "foba-obj",
            "k": 2,
            "params": {"nu": 0.4},
            "test_fraction": 0.25,
            "seed": 7,
        },
    )
    assert response.status_code == 202
    run = response.json()
    assert response.headers["location"] == run["url"] == f"/api/runs/{run['id']}"
    assert run["trace_url"] == f"/api/runs/{run['id']}/trace"
    assert (run["status"], run["progress"], run["attempt"], run["result"]) == (
        "queued",
        0.0,
        0,
        None,
    )
    # Defaults are filled in from the registry, so the run is reproducible as stored.
    assert run["params"] == {
        "fit_intercept": True,
        "backward": "standard",
        "nu": 0.4,
        "delta": None,
        "max_steps": None,
        "deletion_cost": "fixed",
        "path_end": "auto",
        "polish": False,
    }
    assert (run["seed"], run["test_fraction"]) == (7, 0.25)
    assert client.get(run["url"]).json() == run


BAD_RUNS = {
    "unknown algorithm": ({"algorithm": "magic", "k": 2}, ["algorithm"], ["'magic'", "omp"]),
    "unknown objective": (
        {"algorithm": "omp", "objective": "hinge", "k": 2},
        ["objective"],
        ["'hinge'"],
    ),
    "unknown parameter": (
        {"algorithm": "omp", "k": 2, "params": {"nu": 0.5}},
        ["params"],
        ["has no parameter 'nu'", "epsilon"],
    ),
    "parameter out of range": (
        {"algorithm": "foba-obj", "k": 2, "params": {"nu": 2}},
        ["params"],
        ["'nu'", "<= 1"],
    ),
    "objective parameter out of range": (
        {"algorithm": "omp", "k": 2, "params": {"fit_intercept": "yes"}},
        ["params"],
        ["'fit_intercept'", "true or false"],
    ),
    "k too large": ({"algorithm": "omp", "k": 6}, ["k"], ["between 1 and 5", "got 6"]),
    "k zero": ({"algorithm": "omp", "k": 0}, ["k"], ["greater than or equal to 1"]),
    "logistic on a regression target": (
        {"algorithm": "omp", "objective": "logistic", "k": 2},
        ["objective"],
        ["binary target", "regression"],
    ),
    "test fraction leaving no test rows": (
        {"algorithm": "omp", "k": 2, "test_fraction": 0.001},
        ["test_fraction"],
        ["no row to test on"],
    ),
    "test fraction leaving too few to train": (
        {"algorithm": "omp", "k": 2, "test_fraction": 0.99},
        ["test_fraction"],
        ["fewer than 2 to train on"],
    ),
    "test fraction of one": (
        {"algorithm": "omp", "k": 2, "test_fraction": 1},
        ["test_fraction"],
        ["less than 1"],
    ),
    "group method on a data set without groups": (
        {"algorithm": "group-omp", "k": 2},
        ["algorithm"],
        ["needs groups"],
    ),
    "unknown field": ({"algorithm": "omp", "k": 2, "tol": 1}, ["tol"], ["Extra inputs"]),
    "negative seed": ({"algorithm": "omp", "k": 2, "seed": -1}, ["seed"], ["greater than"]),
}


@pytest.fixture(scope="module")
def shared_dataset(shared_client) -> dict:
    return upload_ok(shared_client, REGRESSION)


@pytest.mark.parametrize("case", list(BAD_RUNS))
def test_bad_run_is_422_and_stores_nothing(shared_client, shared_dataset, case) -> None:
    client, dataset = shared_client, shared_dataset
    body, loc, words = BAD_RUNS[case]
    response = client.post("/api/runs", json={"dataset_id": dataset["id"], **body})
    assert response.status_code == 422, response.text
    assert error(response)["loc"] == ["body", *loc]
    for word in words:
        assert word in error(response)["msg"]
    assert client.get("/api/runs").json() == []


def test_run_on_unknown_dataset_is_422(client) -> None:
    response = client.post("/api/runs", json={"dataset_id": 5, "algorithm": "omp", "k": 1})
    assert response.status_code == 422
    assert error(response)["loc"] == ["body", "dataset_id"]
    assert error(response)["msg"] == "data set 5 does not exist"


def test_single_class_training_split_is_refused(client) -> None:
    ds = upload_ok(client, "x,y\n1,0\n2,0\n3,0\n4,1\n5,0\n6,0\n", target="y")
    response = client.post(
        "/api/runs",
        json={
            "dataset_id": ds["id"],
            "algorithm": "omp",
            "objective": "logistic",
            "k": 1,
            "test_fraction": 0.6,
        },
    )
    assert response.status_code == 422
    assert "single class to train on" in error(response)["msg"]


def test_logistic_is_accepted_on_a_classification_target(client) -> None:
    ds = upload_ok(client, classification_csv(), target="label")
    run = submit(
        client, ds["id"], algorithm="foba-gdt", objective="logistic", k=2, params={"lam": 0.01}
    )
    assert run["params"]["lam"] == 0.01


def test_idempotency_key_returns_the_same_run(client, dataset) -> None:
    body = {"dataset_id": dataset["id"], "algorithm": "omp", "k": 2}
    headers = {"Idempotency-Key": "abc-123"}
    first = client.post("/api/runs", json=body, headers=headers)
    again = client.post("/api/runs", json=body, headers=headers)
    assert first.status_code == again.status_code == 202
    assert first.json()["id"] == again.json()["id"]
    assert len(client.get("/api/runs").json()) == 1
    other = client.post("/api/runs", json={**body, "k": 3}, headers=headers)
    assert other.status_code == 422
    assert error(other)["loc"] == ["header", "idempotency-key"]
    assert "different request" in error(other)["msg"]
    assert client.post("/api/runs", json=body).json()["id"] != first.json()["id"]


def test_list_runs_filters(client, dataset) -> None:
    other = upload_ok(client, REGRESSION)
    a = submit(client, dataset["id"], algorithm="omp", k=1)
    b = submit(client, other["id"], algorithm="omp", k=1)
    client.post(f"/api/runs/{a['id']}/cancel")
    assert [r["id"] for r in client.get("/api/runs").json()] == [b["id"], a["id"]]
    by_dataset = client.get("/api/runs", params={"dataset_id": other["id"]}).json()
    assert [r["id"] for r in by_dataset] == [b["id"]]
    cancelled = client.get("/api/runs", params={"status": "cancelled"}).json()
    assert [r["id"] for r in cancelled] == [a["id"]]
    assert client.get("/api/runs", params={"status": "lost"}).status_code == 422


def test_cancel_queued_run_is_immediate_and_idempotent(client, dataset) -> None:
    run = submit(client, dataset["id"], algorithm="omp", k=2)
    first = client.post(f"/api/runs/{run['id']}/cancel")
    assert first.status_code == 200
    assert (first.json()["status"], first.json()["cancel_requested"]) == ("cancelled", True)
    again = client.post(f"/api/runs/{run['id']}/cancel")
    assert again.status_code == 200 and again.json()["status"] == "cancelled"
    assert client.post("/api/runs/999/cancel").status_code == 404


def test_trace_of_a_queued_run_is_empty_and_incomplete(client, dataset) -> None:
    run = submit(client, dataset["id"], algorithm="omp", k=2)
    page = client.get(f"/api/runs/{run['id']}/trace", params={"after": 3}).json()
    assert page == {
        "run_id": run["id"],
        "status": "queued",
        "attempt": 0,
        "progress": 0.0,
        "cancel_requested": False,
        "events": [],
        "next_after": 3,
        "complete": False,
    }
    assert client.get("/api/runs/999/trace").status_code == 404
    assert client.get(f"/api/runs/{run['id']}/trace", params={"after": -2}).status_code == 422


def test_export_needs_a_result(client, dataset) -> None:
    run = submit(client, dataset["id"], algorithm="omp", k=2)
    for fmt in ("csv", "json"):
        response = client.get(f"/api/runs/{run['id']}/export", params={"format": fmt})
        assert response.status_code == 409
        assert "no result to export" in response.json()["detail"]
    assert client.get("/api/runs/999/export").status_code == 404
    bad = client.get(f"/api/runs/{run['id']}/export", params={"format": "xlsx"})
    assert bad.status_code == 422


def test_comparison_queues_one_run_per_configuration(client, dataset) -> None:
    body = {
        "dataset_id": dataset["id"],
        "name": "greedy vs foba",
        "test_fraction": 0.2,
        "seed": 3,
        "runs": [
            {"algorithm": "forward-obj", "k": 2},
            {"algorithm": "foba-obj", "k": 2, "params": {"nu": 0.3}},
            {"algorithm": "omp", "k": 3},
        ],
    }
    response = client.post("/api/comparisons", json=body, headers={"Idempotency-Key": "c1"})
    assert response.status_code == 202
    comparison = response.json()
    assert response.headers["location"] == comparison["url"]
    assert [r["algorithm"] for r in comparison["runs"]] == ["forward-obj", "foba-obj", "omp"]
    assert {
        (r["status"], r["seed"], r["test_fraction"], r["comparison_id"]) for r in comparison["runs"]
    } == {("queued", 3, 0.2, comparison["id"])}
    assert client.get(comparison["url"]).json() == comparison
    replay = client.post("/api/comparisons", json=body, headers={"Idempotency-Key": "c1"})
    assert replay.json()["id"] == comparison["id"]
    assert len(client.get("/api/runs").json()) == 3
    assert client.get("/api/comparisons/99").status_code == 404


def test_comparison_with_one_bad_configuration_stores_nothing(client, dataset) -> None:
    body = {
        "dataset_id": dataset["id"],
        "runs": [
            {"algorithm": "omp", "k": 2},
            {"algorithm": "omp", "k": 2, "params": {"bogus": 1}},
        ],
    }
    response = client.post("/api/comparisons", json=body)
    assert response.status_code == 422
    assert error(response)["loc"] == ["body", "runs", 1, "params"]
    assert client.get("/api/runs").json() == []
    empty = client.post("/api/comparisons", json={"dataset_id": dataset["id"], "runs": []})
    assert empty.status_code == 422


# --------------------------------------------------------------------------- names, deletion


def test_patch_names_notes_and_tags_a_run(client, dataset) -> None:
    run = submit(client, dataset["id"], algorithm="omp", k=2)
    assert (run["name"], run["notes"], run["tags"]) == ("", "", [])
    response = client.patch(
        run["url"], json={"name": "  baseline ", "tags": ["slides", "omp", "slides"]}
    )
    assert response.status_code == 200, response.text
    changed = response.json()
    assert (changed["name"], changed["tags"], changed["notes"]) == (
        "baseline",
        ["slides", "omp"],
        "",
    )
    response = client.patch(run["url"], json={"notes": "k from the paper"})
    assert response.json()["name"] == "baseline"  # fields left out stay
    assert client.get(run["url"]).json()["notes"] == "k from the paper"
    assert client.patch(run["url"], json={"name": ""}).json()["name"] == ""


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"name": "x" * 201}, "name", "at most 200 characters"),
        ({"notes": "x" * 5001}, "notes", "at most 5000 characters"),
        ({"tags": ["a" * 41]}, "tags", "longer than 40 characters"),
        ({"tags": ["a,b"]}, "tags", "comma"),
        ({"tags": [" "]}, "tags", "empty"),
        ({"tags": [str(i) for i in range(21)]}, "tags", "at most 20 items"),
        ({"name": None}, "name", 'send "" to clear it'),
        ({"status": "done"}, "status", "Extra inputs are not permitted"),
    ],
)
def test_patch_refuses_what_does_not_fit(client, dataset, body, field, words) -> None:
    run = submit(client, dataset["id"], algorithm="omp", k=2)
    response = client.patch(run["url"], json=body)
    assert response.status_code == 422, response.text
    detail = error(response)
    assert detail["loc"][:2] == ["body", field] and words in detail["msg"], detail
    assert client.get(run["url"]).json()["name"] == ""  # nothing stored
    assert client.patch("/api/runs/9999", json={"name": "a"}).status_code == 404


def test_delete_refuses_an_active_run_then_deletes_it_with_its_trace(worker_client) -> None:
    client = worker_client
    ds = upload_ok(client, REGRESSION, true_support="x1,x3")
    queued = submit(client, ds["id"], algorithm="foba-obj", k=2)
    run = wait_for(client, queued["id"])
    assert client.get(f"{run['url']}/trace").json()["events"]
    other = wait_for(client, submit(client, ds["id"], algorithm="omp", k=2)["id"])
    compared = client.post("/api/comparisons/from-runs", json={"run_ids": [run["id"], other["id"]]})
    assert compared.status_code == 201, compared.text
    assert client.delete(run["url"]).status_code == 204
    assert client.get(run["url"]).status_code == 404
    assert client.get(f"{run['url']}/trace").status_code == 404
    assert client.delete(run["url"]).status_code == 404
    # It left the comparison; the comparison keeps the other run.
    comparison = client.get(compared.json()["url"]).json()
    assert [r["id"] for r in comparison["runs"]] == [other["id"]]


def test_delete_of_a_queued_run_is_a_conflict_saying_to_cancel(client, dataset) -> None:
    run = submit(client, dataset["id"], algorithm="omp", k=2)
    response = client.delete(run["url"])
    assert response.status_code == 409
    assert "cancel it first" in response.json()["detail"]
    assert client.post(f"{run['url']}/cancel").status_code == 200
    assert client.delete(run["url"]).status_code == 204


def test_a_comparison_left_without_runs_goes_too(client, dataset) -> None:
    response = client.post(
        "/api/comparisons",
        json={"dataset_id": dataset["id"], "runs": [{"algorithm": "omp", "k": 2}]},
    )
    comparison = response.json()
    run = comparison["runs"][0]
    client.post(f"/api/runs/{run['id']}/cancel")
    assert client.delete(f"/api/runs/{run['id']}").status_code == 204
    assert client.get(comparison["url"]).status_code == 404


# --------------------------------------------------------------------------- compare existing


def test_compare_existing_runs_of_one_data_set(client, dataset) -> None:
    a = submit(client, dataset["id"], algorithm="omp", k=2)
    b = submit(client, dataset["id"], algorithm="foba-obj", k=2)
    response = client.post(
        "/api/comparisons/from-runs", json={"run_ids": [b["id"], a["id"], a["id"]], "name": "x"}
    )
    assert response.status_code == 201, response.text
    comparison = response.json()
    assert response.headers["location"] == comparison["url"]
    assert comparison["dataset_id"] == dataset["id"] and comparison["name"] == "x"
    assert [r["id"] for r in comparison["runs"]] == [a["id"], b["id"]]
    # A run may be in several comparisons; its own comparison_id is unchanged.
    again = client.post("/api/comparisons/from-runs", json={"run_ids": [a["id"], b["id"]]})
    assert again.status_code == 201 and again.json()["id"] != comparison["id"]
    assert client.get(a["url"]).json()["comparison_id"] is None


def test_compare_existing_runs_refuses_mixed_data_sets_and_unknown_runs(client, dataset) -> None:
    other = upload_ok(client, REGRESSION)
    a = submit(client, dataset["id"], algorithm="omp", k=2)
    b = submit(client, other["id"], algorithm="omp", k=2)
    url = "/api/comparisons/from-runs"
    mixed = client.post(url, json={"run_ids": [a["id"], b["id"]]})
    assert mixed.status_code == 422
    msg = error(mixed)["msg"]
    assert "2 data sets" in msg and f"run {a['id']}" in msg and "compare runs of one" in msg
    unknown = client.post(url, json={"run_ids": [a["id"], 9999]})
    assert unknown.status_code == 422 and "no run 9999" in error(unknown)["msg"]
    one = client.post(url, json={"run_ids": [a["id"], a["id"]]})
    assert one.status_code == 422 and "at least two different runs" in error(one)["msg"]
    assert client.post(url, json={"run_ids": [a["id"]]}).status_code == 422


def test_a_runs_name_and_tags_travel_with_its_comparison_export(client, dataset) -> None:
    a = submit(client, dataset["id"], algorithm="omp", k=2)
    b = submit(client, dataset["id"], algorithm="omp", k=1)
    client.patch(a["url"], json={"name": "=risky", "tags": ["t1"]})
    comparison = client.post("/api/comparisons/from-runs", json={"run_ids": [a["id"], b["id"]]})
    url = comparison.json()["url"]
    rows = client.get(f"{url}/export?format=json").json()
    assert [(r["run_id"], r["name"], r["tags"]) for r in rows] == [
        (a["id"], "=risky", ["t1"]),
        (b["id"], "", []),
    ]
    csv_text = client.get(f"{url}/export?format=csv").text
    assert "'=risky" in csv_text  # a spreadsheet does not run it as a formula


def test_rerun_builds_the_new_run_from_the_stored_one(client, dataset) -> None:
    """POST /api/runs/{id}/rerun: the stored run's configuration, split and seed, with only the
    changes sent (the teach page's "save it as a run"); standardize is kept, not reset."""
    run = submit(
        client,
        dataset["id"],
        algorithm="foba-obj",
        k=2,
        standardize=False,
        test_fraction=0.25,
        seed=7,
    )
    again = client.post(f"/api/runs/{run['id']}/rerun", json={"k": 3, "nu": 0.3})
    assert again.status_code == 202, again.text
    body = again.json()
    assert (body["k"], body["params"]["nu"], body["standardize"]) == (3, 0.3, False)
    assert (body["test_fraction"], body["seed"], body["record_candidates"]) == (0.25, 7, True)
    assert client.post("/api/runs/999999/rerun", json={}).status_code == 404
    assert client.post(f"/api/runs/{run['id']}/rerun", json={"k": 0}).status_code == 422
