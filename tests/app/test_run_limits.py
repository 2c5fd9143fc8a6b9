"""A deployment bounds every run: past MAX_RUN_SECONDS a run is stopped and failed, saying
so, even inside a loop that records nothing for a while; past MAX_RUN_MEMORY_MB it fails,
saying so, and the worker goes on with the next run."""

from __future__ import annotations

from pathlib import Path

from service_helpers import make_settings, serve, submit, wait_for

ENDLESS = {
    "algorithm": "randomized-sparsification",
    "k": 2,
    "params": {"B1": 2.0, "n_repeats": 2_000_000_000},
}


def _dataset(client, n: int = 60, d: int = 8) -> int:
    answer = client.post(
        "/api/datasets/generate",
        json={"generator": "gaussian_regression", "params": {"n": n, "d": d}},
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def test_a_run_past_its_time_limit_fails_saying_so(data_dir: Path) -> None:
    # A limit every run exceeds at once: no test waits for a clock.
    with serve(make_settings(data_dir, workers=1, max_run_seconds=1e-9)) as client:
        run = submit(client, _dataset(client), **ENDLESS)
        done = wait_for(client, run["id"], timeout=60)
        assert done["status"] == "failed"
        assert "MAX_RUN_SECONDS" in done["error"]


def test_cancel_reaches_a_loop_that_records_nothing(data_dir: Path) -> None:
    with serve(make_settings(data_dir, workers=1)) as client:
        run = submit(client, _dataset(client), **ENDLESS)
        wait_for(client, run["id"], statuses=("running",), timeout=60)
        assert client.post(f"/api/runs/{run['id']}/cancel").status_code in (200, 202)
        assert wait_for(client, run["id"], timeout=60)["status"] == "cancelled"


def test_a_run_past_its_memory_limit_fails_and_the_worker_goes_on(data_dir: Path) -> None:
    with serve(make_settings(data_dir, workers=1, max_run_memory_mb=64)) as client:
        big = _dataset(client, n=3000, d=3000)  # 72 MB of X: more than the run may add
        failed = wait_for(client, submit(client, big, algorithm="omp", k=3)["id"], timeout=60)
        assert failed["status"] == "failed"
        assert "MAX_RUN_MEMORY_MB" in failed["error"]
        small = wait_for(client, submit(client, _dataset(client), algorithm="omp", k=2)["id"])
        assert small["status"] == "done"
