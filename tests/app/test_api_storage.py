"""Storage through the API: database storage end to end (no files), lost arrays (410, a
failed run saying what to do, /healthz degraded), ids never reused, idempotency keys after
a deletion. Against SQLite and, where noted, PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import regression_csv, stored_files, upload_ok
from service_helpers import make_settings, serve, submit, wait_for
from sqlalchemy import delete, select

from app.models import ArrayChunk, Dataset

GENERATE = {"generator": "gaussian_regression", "params": {"n": 60, "d": 8}}


def generate(client) -> dict:
    response = client.post("/api/datasets/generate", json=GENERATE)
    assert response.status_code == 201, response.text
    return response.json()


def lose_arrays(client, data_dir: Path) -> None:
    """What a lost volume or a deleted blob does: every data set's arrays are gone."""
    if client.app.state.store.kind == "directory":
        for file in stored_files(data_dir):
            file.unlink()
    else:
        with client.app.state.db.begin() as conn:
            conn.execute(delete(ArrayChunk))


def test_database_storage_keeps_no_files(data_dir: Path, database_url: str) -> None:
    settings = make_settings(data_dir, storage="database", workers=1, database_url=database_url)
    with serve(settings) as client:
        uploaded = upload_ok(client, regression_csv())
        generated = generate(client)
        assert client.get(f"/api/datasets/{uploaded['id']}").json() == uploaded
        preview = client.get(f"/api/datasets/{generated['id']}/preview").json()
        assert len(preview["rows"]) == 20
        run = submit(client, uploaded["id"], algorithm="foba-obj", k=2, test_fraction=0.25)
        done = wait_for(client, run["id"])
        assert done["status"] == "done", done["error"]
        assert done["result"]["support"] and done["result"]["test"] is not None
        health = client.get("/healthz").json()
        assert health["storage"] == {
            "kind": "database",
            "status": "ok",
            "datasets": 2,
            "missing_datasets": [],
        }
        assert client.delete(f"/api/datasets/{uploaded['id']}").status_code == 204
        with client.app.state.db.connect() as conn:
            keys = set(conn.scalars(select(ArrayChunk.key)))
            files = set(conn.scalars(select(Dataset.file)))
        assert keys == files and len(files) == 1  # the deleted data set's chunks went with it
    assert stored_files(data_dir) == []


@pytest.mark.parametrize("storage", ["directory", "database"])
def test_lost_arrays_answer_410_fail_runs_plainly_and_degrade_health(
    data_dir: Path, storage: str
) -> None:
    with serve(make_settings(data_dir, storage=storage, workers=1)) as client:
        dataset = generate(client)
        assert client.get("/healthz").json()["status"] == "ok"
        lose_arrays(client, data_dir)

        for url in (f"/api/datasets/{dataset['id']}", f"/api/datasets/{dataset['id']}/preview"):
            gone = client.get(url)
            assert gone.status_code == 410 and gone.headers["content-type"] == "application/json"
            assert "upload" in gone.json()["detail"] and str(data_dir) not in gone.text
        split = client.post(
            "/api/runs",
            json={"dataset_id": dataset["id"], "algorithm": "omp", "k": 2, "test_fraction": 0.2},
        )
        assert split.status_code == 410
        page = client.get(f"/datasets/{dataset['id']}", headers={"accept": "text/html"})
        assert page.status_code == 410 and "upload" in page.text

        run = wait_for(client, submit(client, dataset["id"], algorithm="omp", k=2)["id"])
        assert run["status"] == "failed" and run["attempt"] == 1
        assert "missing" in run["error"] and "upload" in run["error"]
        assert "/" not in run["error"] and "Error" not in run["error"]

        health = client.get("/healthz")
        assert health.status_code == 200
        assert health.json()["status"] == "degraded"
        assert health.json()["storage"]["status"] == "degraded"
        assert health.json()["storage"]["missing_datasets"] == [dataset["id"]]
        assert str(data_dir) not in health.text

        # Deleting the data set clears the complaint.
        assert client.delete(f"/api/datasets/{dataset['id']}").status_code == 204
        assert client.get("/healthz").json()["status"] == "ok"


def test_ids_are_never_reused(data_dir: Path, database_url: str) -> None:
    with serve(make_settings(data_dir, database_url=database_url)) as client:
        first, newest = generate(client), generate(client)
        assert client.delete(f"/api/datasets/{newest['id']}").status_code == 204
        assert generate(client)["id"] > newest["id"]

        run = submit(client, first["id"], algorithm="omp", k=2)
        comparison = client.post(
            "/api/comparisons",
            json={"dataset_id": first["id"], "runs": [{"algorithm": "omp", "k": 1}]},
        ).json()
        for r in (run, *comparison["runs"]):
            client.post(f"/api/runs/{r['id']}/cancel")
        assert client.delete(f"/api/datasets/{first['id']}").status_code == 204  # with its runs

        other = generate(client)
        assert submit(client, other["id"], algorithm="omp", k=2)["id"] > comparison["runs"][0]["id"]
        again = client.post(
            "/api/comparisons",
            json={"dataset_id": other["id"], "runs": [{"algorithm": "omp", "k": 1}]},
        ).json()
        assert again["id"] > comparison["id"]


def test_an_idempotency_key_never_replays_onto_another_data_set(client) -> None:
    old = generate(client)
    body = {"dataset_id": old["id"], "algorithm": "omp", "k": 2}
    key = {"Idempotency-Key": "k-1"}
    first = client.post("/api/runs", json=body, headers=key)
    assert client.post("/api/runs", json=body, headers=key).json()["id"] == first.json()["id"]
    client.post(f"/api/runs/{first.json()['id']}/cancel")
    assert client.delete(f"/api/datasets/{old['id']}").status_code == 204
    new = generate(client)
    assert new["id"] != old["id"]
    replay = client.post("/api/runs", json=body, headers=key)
    assert replay.status_code == 422
    assert f"data set {old['id']} does not exist" in replay.json()["detail"][0]["msg"]
    other_body = client.post("/api/runs", json={**body, "dataset_id": new["id"]}, headers=key)
    assert other_body.status_code == 202 and other_body.json()["dataset_id"] == new["id"]
