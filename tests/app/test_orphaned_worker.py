"""A server killed while its in-process worker runs a long run (one that records nothing for
a while) leaves no orphan computing on: the worker notices its parent is gone at the next
cancellation point and exits."""

from __future__ import annotations

import os
import signal
import sys
import time

import httpx
from service_helpers import app_process, free_port

ENDLESS = {
    "algorithm": "randomized-sparsification",
    "k": 2,
    "params": {"B1": 2.0, "n_repeats": 2_000_000_000},
}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _server_pid(port: int) -> int:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
                environ = open(f"/proc/{entry}/environ", "rb").read().split(b"\0")
            except OSError:
                continue
            if b"-m" in cmd and b"app" in cmd and f"PORT={port}".encode() in environ:
                return int(entry)
    raise AssertionError("server process not found")


def test_a_killed_server_leaves_no_worker_computing(tmp_path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "DATA_DIR": str(tmp_path / "data"),
        "WORKERS": "1",
        "SEED_SAMPLES": "false",
    }
    with app_process([sys.executable, "-m", "app"], env, port, tmp_path / "log") as base:
        generated = httpx.post(
            f"{base}/api/datasets/generate",
            json={"generator": "gaussian_regression", "params": {"n": 60, "d": 8}},
        ).json()
        run = httpx.post(f"{base}/api/runs", json={"dataset_id": generated["id"], **ENDLESS})
        run_url = f"{base}/api/runs/{run.json()['id']}"
        deadline = time.monotonic() + 60
        while httpx.get(run_url).json()["status"] != "running":
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.1)
        workers = httpx.get(f"{base}/healthz").json()["jobs"]["pids"]
        assert len(workers) == 1
        os.kill(_server_pid(port), signal.SIGKILL)  # no shutdown: the worker is on its own
        deadline = time.monotonic() + 60
        while _alive(workers[0]):
            assert time.monotonic() < deadline, "the worker computes on after its server died"
            time.sleep(0.1)
