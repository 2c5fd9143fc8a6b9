"""GET /api/datasets/{id}/estimate: a run's predicted time and, when long, what to change."""

from __future__ import annotations

import pytest
from app_helpers import classification_csv, upload_ok

BIG = "algorithm=foba-refit&objective=logistic&k=3&path_end=zhang&max_steps=100000000"


@pytest.fixture(scope="module")
def dataset(shared_client):
    ds = upload_ok(shared_client, classification_csv(n=80, d=6), target="label")
    yield ds
    assert shared_client.delete(f"/api/datasets/{ds['id']}").status_code == 204


def _estimate(client, ds, query: str, status: int = 200):
    response = client.get(f"/api/datasets/{ds['id']}/estimate?{query}")
    assert response.status_code == status, response.text
    return response.json()


def test_a_small_run_has_no_sentence(shared_client, dataset) -> None:
    est = _estimate(shared_client, dataset, "algorithm=foba-obj&k=3")["estimate"]
    assert est["long"] is False and est["sentence"] is None and est["faster"] == []
    assert 0 < est["seconds"] < est["long_seconds"]
    # The objective defaults to the data set's (logistic for a classification target).
    same = _estimate(shared_client, dataset, "algorithm=foba-obj&objective=logistic&k=3")
    assert same["estimate"] == est


def test_a_big_configuration_gets_the_sentence_and_faster_settings(shared_client, dataset):
    est = _estimate(shared_client, dataset, BIG)["estimate"]
    assert est["long"] is True and est["seconds"] > est["long_seconds"]
    assert est["sentence"].startswith("This run is predicted to take about")
    settings = [f["settings"] for f in est["faster"]]
    assert settings == [{"path_end": "sparsity"}, {"max_steps": 6}]  # 2k, not 10^8
    assert all(f["seconds"] < est["seconds"] and f["changes"] for f in est["faster"])


@pytest.mark.parametrize(
    ("query", "loc"),
    [
        ("algorithm=foba-obj&k=3&colour=red", ["query", "colour"]),
        ("algorithm=foba-obj&k=3&max_steps=many", ["query", "max_steps"]),
        ("algorithm=foba-obj&k=3&lam=nan", ["query", "lam"]),
        ("algorithm=foba-obj&k=3&fit_intercept=maybe", ["query", "fit_intercept"]),
        ("algorithm=foba-obj&k=3&path_end=sideways", ["query", "params"]),
        ("algorithm=nope&k=3", ["query", "algorithm"]),
        ("algorithm=foba-obj&k=7", ["query", "k"]),
    ],
)
def test_bad_settings_are_422_naming_the_field(shared_client, dataset, query, loc) -> None:
    body = _estimate(shared_client, dataset, query, status=422)
    assert body["detail"][0]["loc"] == loc, body


def test_bounds_and_missing_data_set(shared_client, dataset) -> None:
    assert _estimate(shared_client, dataset, "k=0", status=422)["detail"][0]["loc"][-1] == "k"
    response = shared_client.get("/api/datasets/999999/estimate?k=3")
    assert response.status_code == 404
