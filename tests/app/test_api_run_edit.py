"""Editing and deleting runs through the API, and comparisons made from existing runs
(without workers: runs stay queued, and a cancelled queued run counts as finished)."""

from __future__ import annotations

import pytest
from app_helpers import regression_csv, upload_ok
from service_helpers import submit

REGRESSION = regression_csv(n=40, d=5, support=(1, 3))


@pytest.fixture
def dataset(client) -> dict:
    return upload_ok(client, REGRESSION, true_support="x1,x3")


def stopped(client, dataset_id: int, **body) -> dict:
    """A run that is no longer active: queued, then cancelled."""
    run = submit(client, dataset_id, algorithm="foba-obj", k=2, **body)
    assert client.post(f"/api/runs/{run['id']}/cancel").status_code == 200
    return client.get(f"/api/runs/{run['id']}").json()


def test_patch_sets_name_notes_and_tags(client, dataset) -> None:
    run = submit(client, dataset["id"], algorithm="omp", k=2)
    assert (run["name"], run["notes"], run["tags"]) == ("", "", [])
    response = client.patch(
        f"/api/runs/{run['id']}",
        json={"name": "  baseline ", "tags": ["lecture 3", "omp", "lecture 3"], "notes": "n"},
    )
    assert response.status_code == 200, response.text
    patched = response.json()
    assert (patched["name"], patched["notes"], patched["tags"]) == (
        "baseline",
        "n",
        ["lecture 3", "omp"],
    )
    # Fields left out stay; an empty name clears it.
    again = client.patch(f"/api/runs/{run['id']}", json={"name": ""}).json()
    assert (again["name"], again["tags"], again["notes"]) == ("", ["lecture 3", "omp"], "n")
    assert client.get(f"/api/runs/{run['id']}").json()["tags"] == ["lecture 3", "omp"]


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"name": "x" * 201}, "name", "200"),
        ({"notes": "x" * 5001}, "notes", "5000"),
        ({"tags": ["a,b"]}, "tags", "comma"),
        ({"tags": [" "]}, "tags", "1 to 40"),
        ({"tags": ["t"] * 21}, "tags", "20"),
        ({"algorithm": "omp"}, "algorithm", "not permitted"),
        ({"name": None}, "name", "cannot be null"),
    ],
)
def test_patch_refuses_what_it_cannot_store(client, dataset, body, field, words) -> None:
    run = submit(client, dataset["id"], algorithm="omp", k=2)
    response = client.patch(f"/api/runs/{run['id']}", json=body)
    assert response.status_code == 422, response.text
    detail = response.json()["detail"][0]
    assert detail["loc"][1] == field and words in detail["msg"]
    assert client.get(f"/api/runs/{run['id']}").json()["name"] == ""
    assert client.patch("/api/runs/999", json={"name": "a"}).status_code == 404


def test_delete_refuses_an_active_run_then_removes_it_with_its_trace(client, dataset) -> None:
    run = submit(client, dataset["id"], algorithm="omp", k=2)
    refused = client.delete(f"/api/runs/{run['id']}")
    assert refused.status_code == 409
    assert "cancel it first" in refused.json()["detail"]
    client.post(f"/api/runs/{run['id']}/cancel")
    assert client.delete(f"/api/runs/{run['id']}").status_code == 204
    assert client.get(f"/api/runs/{run['id']}").status_code == 404
    assert client.get(f"/api/runs/{run['id']}/trace").status_code == 404
    assert client.delete("/api/runs/999").status_code == 404


def test_a_comparison_of_existing_runs_links_them(client, dataset) -> None:
    a = stopped(client, dataset["id"])
    b = submit(client, dataset["id"], algorithm="omp", k=2)  # active runs may be compared
    body = {"dataset_id": dataset["id"], "run_ids": [b["id"], a["id"]], "name": "picked"}
    response = client.post("/api/comparisons", json=body)
    assert response.status_code == 202, response.text
    comparison = response.json()
    assert [r["id"] for r in comparison["runs"]] == sorted([a["id"], b["id"]])
    assert {r["comparison_id"] for r in comparison["runs"]} == {None}  # the runs are not moved
    # A run may sit in several comparisons; the comparison pages and export read them.
    second = client.post("/api/comparisons", json={**body, "run_ids": [a["id"]]}).json()
    assert [r["id"] for r in second["runs"]] == [a["id"]]
    assert client.get(f"/comparisons/{comparison['id']}").status_code == 200
    assert client.get(f"/api/comparisons/{comparison['id']}/export").status_code == 200
    # Deleting a run takes it out of the comparisons, which stay.
    assert client.delete(f"/api/runs/{a['id']}").status_code == 204
    assert [r["id"] for r in client.get(comparison["url"]).json()["runs"]] == [b["id"]]
    assert client.get(second["url"]).json()["runs"] == []


def test_a_comparison_of_runs_of_several_data_sets_is_refused(client, dataset) -> None:
    other = upload_ok(client, REGRESSION, name="other")
    a = stopped(client, dataset["id"])
    b = stopped(client, other["id"])
    response = client.post(
        "/api/comparisons", json={"dataset_id": dataset["id"], "run_ids": [a["id"], b["id"]]}
    )
    assert response.status_code == 422
    detail = response.json()["detail"][0]
    assert detail["loc"] == ["body", "run_ids"]
    assert f"run {b['id']} is on another data set" in detail["msg"]
    assert "one data set" in detail["msg"]
    for body, words in [
        ({"run_ids": [a["id"], 999]}, "no run 999"),
        ({"run_ids": [a["id"], a["id"]]}, "twice"),
        ({"run_ids": [a["id"]], "test_fraction": 0.2}, "keep their own"),
        ({"run_ids": [a["id"]], "runs": [{"algorithm": "omp"}]}, "either runs"),
    ]:
        response = client.post("/api/comparisons", json={"dataset_id": dataset["id"], **body})
        assert response.status_code == 422, body
        assert words in str(response.json()["detail"]), response.text
    assert client.get("/comparisons/1").status_code == 404  # nothing was stored
