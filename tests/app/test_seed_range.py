"""Seeds up to MAX_SEED (2^32 - 1, what the API takes) are stored and read back on both
databases: PostgreSQL's 32-bit ``seed`` columns made a seed above 2^31 - 1 a 500 in POST
/api/runs, /api/cv and /api/stability (found by schemathesis; migration 0014)."""

from __future__ import annotations

from pathlib import Path

from service_helpers import make_settings, serve

from app.models import MAX_SEED

DATA = {"generator": "gaussian_regression", "params": {"n": 40, "d": 5}}


def test_the_largest_seed_is_stored_and_read_back(data_dir: Path, database_url: str) -> None:
    with serve(make_settings(data_dir, database_url=database_url)) as client:
        dataset = client.post("/api/datasets/generate", json=DATA).json()["id"]
        common = {"dataset_id": dataset, "algorithm": "omp", "seed": MAX_SEED}
        for path, body in [
            ("/api/runs", {**common, "k": 2}),
            ("/api/cv", {**common, "k_max": 2}),
            ("/api/stability", {**common, "k_max": 2, "n_pairs": 1}),
        ]:
            answer = client.post(path, json=body)
            assert answer.status_code in (201, 202), (path, answer.status_code, answer.text)
            stored = client.get(answer.headers["Location"]).json()
            assert stored["seed"] == MAX_SEED, (path, stored)
