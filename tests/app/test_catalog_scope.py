"""The app runs what fits its feature-table data sets and says why for the rest: the engine's
linear-chain CRF objective and its chain generator take labelled sequences."""

from __future__ import annotations

import engine
from engine import datasets as generators


def test_catalog_lists_only_what_runs_on_tables(client):
    objectives = {o["name"] for o in client.get("/api/objectives").json()}
    assert "crf" in engine.OBJECTIVES and "crf" not in objectives
    assert {"least_squares", "logistic"} <= objectives
    gens = {g["name"] for g in client.get("/api/generators").json()}
    assert "liu2014_crf" in generators.GENERATORS and "liu2014_crf" not in gens
    assert "zhang2008" in gens


def test_crf_run_is_refused_with_the_reason(client):
    ds = client.post(
        "/api/datasets/generate", json={"generator": "zhang2008", "params": {"n": 30, "d": 10}}
    ).json()
    response = client.post(
        "/api/runs",
        json={"dataset_id": ds["id"], "algorithm": "omp", "objective": "crf", "k": 2},
    )
    assert response.status_code == 422
    text = response.text
    assert "labelled sequences" in text and "engine.select" in text
    assert client.get("/api/runs").json() == []


def test_chain_generator_is_refused_with_the_reason(client):
    response = client.post("/api/datasets/generate", json={"generator": "liu2014_crf"})
    assert response.status_code == 422
    assert "labelled sequences" in response.text
    assert client.get("/api/datasets").json() == []


def test_run_form_does_not_offer_the_crf(client):
    ds = client.post(
        "/api/datasets/generate", json={"generator": "zhang2008", "params": {"n": 30, "d": 10}}
    ).json()
    page = client.get(f"/datasets/{ds['id']}").text
    assert 'value="least_squares"' in page
    assert 'value="crf"' not in page
    assert "liu2014_crf" not in client.get("/").text
