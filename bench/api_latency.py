"""API latency: submit -> first trace event, and GET run while two jobs run (and idle).

Starts the app with uvicorn in a subprocess on 127.0.0.1 (a free port, a temporary data
directory, two worker processes) and prints median / p95 / max in milliseconds::

    python bench/api_latency.py [--submits 20] [--gets 200]

Every loop is bounded (a count and a deadline); nothing leaves the loopback interface.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

POLL_SECONDS = 0.005
DEADLINE_SECONDS = 60.0
SMALL = {"generator": "gaussian_regression", "params": {"n": 200, "d": 50}}
SLOW = {"generator": "liu2014_logistic", "params": {"n": 400, "d": 300, "s": 10}}
SLOW_RUN = {"algorithm": "foba-obj", "objective": "logistic", "k": 60}  # seconds each
MAX_ROUNDS = 20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(data_dir: Path, port: int) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATA_DIR": str(data_dir),
        "WORKERS": "2",
        "SEED_SAMPLES": "false",
        "HOST": "127.0.0.1",
        "PORT": str(port),
    }
    env.pop("DATABASE_URL", None)  # the default: SQLite in the data directory
    command = [sys.executable, "-m", "app"]  # the README's start command, on PORT
    return subprocess.Popen(command, env=env)


def until(check: Callable[[], bool], what: str, timeout: float = DEADLINE_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        time.sleep(POLL_SECONDS)


def server_up(client: httpx.Client) -> bool:
    try:
        return client.get("/healthz").json()["jobs"]["alive"] == 2
    except httpx.TransportError:
        return False


def generate(client: httpx.Client, body: dict) -> int:
    response = client.post("/api/datasets/generate", json=body)
    response.raise_for_status()
    return response.json()["id"]


def submit(client: httpx.Client, dataset_id: int, **config) -> int:
    response = client.post("/api/runs", json={"dataset_id": dataset_id, **config})
    response.raise_for_status()
    return response.json()["id"]


def finished(client: httpx.Client, run_id: int) -> bool:
    return status(client, run_id) in ("done", "failed", "cancelled")


def first_event_latency(client: httpx.Client, dataset_id: int) -> tuple[int, float]:
    """The run, and seconds from sending its submit to its first trace event being readable."""
    start = time.perf_counter()
    run_id = submit(client, dataset_id, algorithm="omp", k=5)
    until(lambda: client.get(f"/api/runs/{run_id}/trace").json()["events"], "a first event")
    latency = time.perf_counter() - start
    until(lambda: finished(client, run_id), f"run {run_id} to finish")
    return run_id, latency


def get_latencies_idle(client: httpx.Client, run_id: int, count: int) -> list[float]:
    """The same GET with the workers idle: the baseline for the figure under load."""
    latencies = []
    for _ in range(count):
        start = time.perf_counter()
        status(client, run_id)
        latencies.append(time.perf_counter() - start)
    return latencies


def get_latencies_under_load(client: httpx.Client, dataset_id: int, count: int) -> list[float]:
    """GET /api/runs/{id} latencies while two slow runs occupy both workers; pairs of runs
    are submitted until ``count`` GETs were timed (at most MAX_ROUNDS pairs)."""
    latencies: list[float] = []
    for _ in range(MAX_ROUNDS):
        if len(latencies) >= count:
            break
        latencies += time_gets_during_two_runs(client, dataset_id, count - len(latencies))
    return latencies


def time_gets_during_two_runs(client: httpx.Client, dataset_id: int, most: int) -> list[float]:
    runs = [submit(client, dataset_id, **SLOW_RUN) for _ in range(2)]
    until(lambda: all(status(client, r) != "queued" for r in runs), "both runs to start")
    latencies: list[float] = []
    while len(latencies) < most:
        start = time.perf_counter()
        running = status(client, runs[len(latencies) % 2]) == "running"
        elapsed = time.perf_counter() - start
        if not (running and status(client, runs[(len(latencies) + 1) % 2]) == "running"):
            break  # time only while both jobs run
        latencies.append(elapsed)
    for run_id in runs:  # the results are not needed: free the workers for the next pair
        client.post(f"/api/runs/{run_id}/cancel")
    until(lambda: all(finished(client, r) for r in runs), "both runs to end")
    return latencies


def status(client: httpx.Client, run_id: int) -> str:
    return client.get(f"/api/runs/{run_id}").json()["status"]


def describe(name: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return (
        f"{name:<38} n={len(ms):<4} median {statistics.median(ms):7.1f} ms   "
        f"p95 {p95:7.1f} ms   max {ms[-1]:7.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submits", type=int, default=20)
    parser.add_argument("--gets", type=int, default=200)
    args = parser.parse_args()

    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(Path(tmp) / "data", port)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
                until(lambda: server_up(client), "the server and its two workers")
                small, slow = generate(client, SMALL), generate(client, SLOW)
                run_id, _ = first_event_latency(client, small)  # warm-up: workers import
                firsts = [first_event_latency(client, small)[1] for _ in range(args.submits)]
                idle = get_latencies_idle(client, run_id, args.gets)
                gets = get_latencies_under_load(client, slow, args.gets)
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=30)
    print(describe("submit -> first trace event", firsts))
    print(describe("GET /api/runs/{id}, workers idle", idle))
    print(describe("GET /api/runs/{id}, two jobs running", gets))


if __name__ == "__main__":
    main()
