"""A stability study on JOB_BACKEND=procrastinate against the real PostgreSQL: its subsamples
spread over two `python -m app worker` processes, a worker killed while it holds a subsample
has that subsample run again once (on the other worker), and the frequencies are the engine's.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from service_helpers import postgres_database, serve, wait_done
from test_jobs_distributed import Workers, jobs_of, pid_of, until_workers, web_settings

from engine import datasets as generators
from engine.stability import stability_selection

DATA = {"generator": "liu2014_logistic", "params": {"n": 200, "d": 60, "s": 5}}


@pytest.fixture(scope="module")
def queue_db(postgres_user: str) -> Iterator[str]:
    with postgres_database(postgres_user, "foba_qs") as url:
        yield url


@pytest.fixture
def workers(queue_db: str, data_dir: Path, tmp_path: Path) -> Iterator[Workers]:
    pool = Workers(queue_db, data_dir, tmp_path)
    yield pool
    print(pool.stop())  # pytest shows it when the test failed


def test_subsamples_spread_over_two_workers_and_a_killed_one_s_is_rerun_once(
    blocking, queue_db, data_dir, workers
) -> None:
    # OMP behind the test's gate (tests/blocking_algorithm.py): every subsample waits there, so
    # the kill lands in the middle of one whatever the machine's speed.
    params = {"gate": str(blocking.path)}
    body = {"algorithm": "test-gated-omp", "objective": "logistic", "k_max": 8, "n_pairs": 4}
    body |= {"seed": 11, "params": params}
    with serve(web_settings(data_dir, queue_db)) as client:
        made = client.post("/api/datasets/generate", json={**DATA, "random_state": 2})
        assert made.status_code == 201, made.text
        ds = made.json()
        submitted = client.post("/api/stability", json={"dataset_id": ds["id"], **body})
        assert submitted.status_code == 202, submitted.text
        study_id = submitted.json()["id"]
        workers.start(2)
        until_workers(client, 2)

        # Once both workers hold a subsample at the gate, kill one of them.
        deadline = time.monotonic() + 180
        holders: dict[str, dict] = {}
        while len(holders) < 2 or len(blocking.attempts()) < 2:
            assert time.monotonic() < deadline, f"the subsamples were not shared: {holders}"
            study = client.get(f"/api/stability/{study_id}").json()
            running = [p for p in study["parts"] if p["status"] == "running"]
            runs_now = [client.get(f"/api/runs/{p['run_id']}").json() for p in running]
            holders = {r["worker"]: r for r in runs_now if r["status"] == "running"}
            time.sleep(0.05)
        victim = next(iter(holders.values()))
        assert victim["attempt"] == 1
        os.kill(pid_of(victim), signal.SIGKILL)
        blocking.open()

        study = wait_done(client, f"/api/stability/{study_id}", timeout=300)
        assert study["status"] == "done", study["error"]
        runs = [client.get(f"/api/runs/{p['run_id']}").json() for p in study["parts"]]

    again = next(r for r in runs if r["id"] == victim["id"])
    assert again["attempt"] == 2 and again["worker"] != victim["worker"]
    assert all(r["attempt"] == 1 for r in runs if r["id"] != victim["id"])
    assert set(holders) == {victim["worker"], again["worker"]}  # both held subsamples
    jobs = jobs_of(queue_db, [r["id"] for r in runs])
    assert jobs[victim["id"]] == ("succeeded", 2)  # run again once
    assert {s for s, _ in jobs.values()} == {"succeeded"} and len(jobs) == 8

    problem = generators.generate(DATA["generator"], random_state=2, **DATA["params"])
    config = {name: value for name, value in body.items() if name != "seed"}
    want = stability_selection(problem.X, problem.y, random_state=body["seed"], **config).summary
    np.testing.assert_array_equal(
        np.array(study["methods"][0]["summary"]["frequency"]), want.frequency
    )
