"""Mixed load: many clients reading pages and the API while others write, against one web
process (and one worker), on SQLite and on PostgreSQL.

Starts ``python -m app`` on 127.0.0.1 (a free port, a temporary data directory; for
PostgreSQL a new database at 127.0.0.1:5432, dropped afterwards), stores two data sets and
some finished runs (long enough traces to matter), then runs ``--clients`` threads for
``--seconds``, each picking a request by weight. Prints the load average before and after,
requests/s, p50/p95/p99 per route group and the errors by status (and whether the machine was
busy, and how much of a latency is the clients' own queue)::

    PYTHONPATH=. python bench/load.py [--seconds 60] [--clients 40] [--database both]
        [--rounds 1]

With ``--database both`` the variants run interleaved (sqlite, postgresql, sqlite, ...) so a
machine whose load changes affects both alike: compare their ratios, not absolute figures.
Every loop is bounded (a deadline, and MAX_REQUESTS per client); nothing leaves loopback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

DATA = [
    {"generator": "gaussian_regression", "params": {"n": 300, "d": 200}},
    {"generator": "liu2014_logistic", "params": {"n": 300, "d": 200, "s": 10}},
]
# Finished runs to read, by data set (traces of 30-120 events).
FINISHED_RUNS = [
    [{"algorithm": "omp", "k": 60}, {"algorithm": "foba-obj", "k": 30}],
    [{"algorithm": "omp", "objective": "logistic", "k": 30}],
]
WRITE_RUN = {"algorithm": "omp", "k": 5}
MAX_REQUESTS = 100_000  # per client: the deadline ends a run long before
START_SECONDS = 120
PG_ADMIN = "postgresql://{user}@127.0.0.1:5432/test"

# Route groups by weight: mostly reads of the common pages and the API, a few writes.
WEIGHTS = {
    "page run": 12,
    "page run figures": 4,
    "page run live": 6,
    "page runs": 6,
    "page index": 4,
    "page dataset": 4,
    "api run": 16,
    "api runs": 8,
    "api trace": 6,
    "api datasets": 4,
    "write patch run": 4,
    "write submit run": 2,
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def database(kind: str) -> Iterator[str]:
    """A DATABASE_URL: empty for SQLite (the default, in the data directory), or a new
    PostgreSQL database dropped afterwards."""
    if kind == "sqlite":
        yield ""
        return
    import psycopg

    admin = PG_ADMIN.format(user=os.environ.get("PGUSER", "postgres"))
    name = f"load_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield admin.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


@contextlib.contextmanager
def server(database_url: str) -> Iterator[str]:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "DATA_DIR": str(Path(tmp) / "data"),
            "DATABASE_URL": database_url,
            "WORKERS": "1",
            "SEED_SAMPLES": "false",
            "HOST": "127.0.0.1",
            "PORT": str(port),
        }
        env.pop("API_KEY", None)
        log = (Path(tmp) / "server.log").open("wb")
        proc = subprocess.Popen([sys.executable, "-m", "app"], env=env, stdout=log, stderr=log)
        base = f"http://127.0.0.1:{port}"
        try:
            until(lambda: up(base), "the server", START_SECONDS)
            yield base
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()


def up(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=2).json()["jobs"]["alive"] >= 1
    except (httpx.HTTPError, KeyError, ValueError):
        return False


def until(check: Callable[[], bool], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        time.sleep(0.1)


def seed(base: str) -> dict[str, list[int]]:
    """Data sets and finished runs to read; one run left running (for the live fragment)."""
    with httpx.Client(base_url=base, timeout=60) as c:

        def post(path: str, body: dict) -> int:
            response = c.post(path, json=body)
            response.raise_for_status()
            return response.json()["id"]

        datasets = [post("/api/datasets/generate", body) for body in DATA]
        runs = [
            post("/api/runs", {"dataset_id": d, **config})
            for d, configs in zip(datasets, FINISHED_RUNS, strict=True)
            for config in configs
        ]

        def all_done() -> bool:
            statuses = [c.get(f"/api/runs/{r}").json()["status"] for r in runs]
            return all(s in ("done", "failed", "cancelled") for s in statuses)

        until(all_done, "the seeded runs", 600)
        # A long run for the live fragment: it keeps the one worker busy through the load.
        long_run = {"algorithm": "foba-obj", "objective": "logistic", "k": 150}
        live = post("/api/runs", {"dataset_id": datasets[1], **long_run})
    return {"datasets": datasets, "runs": runs, "live": [live]}


def request(c: httpx.Client, group: str, ids: dict[str, list[int]], rng: random.Random):
    run = rng.choice(ids["runs"])
    dataset = rng.choice(ids["datasets"])
    match group:
        case "page run":
            return c.get(f"/runs/{run}")
        case "page run figures":
            return c.get(f"/runs/{run}/figures")
        case "page run live":
            return c.get(f"/runs/{ids['live'][0]}/live")
        case "page runs":
            return c.get("/runs")
        case "page index":
            return c.get("/")
        case "page dataset":
            return c.get(f"/datasets/{dataset}")
        case "api run":
            return c.get(f"/api/runs/{run}")
        case "api runs":
            return c.get("/api/runs")
        case "api trace":
            return c.get(f"/api/runs/{run}/trace")
        case "api datasets":
            return c.get("/api/datasets")
        case "write patch run":
            return c.patch(f"/api/runs/{run}", json={"notes": f"note {rng.random()}"})
        case "write submit run":
            return c.post("/api/runs", json={"dataset_id": ids["datasets"][0], **WRITE_RUN})
    raise ValueError(group)


def load(base: str, ids: dict[str, list[int]], clients: int, seconds: float) -> dict:
    groups, weights = list(WEIGHTS), list(WEIGHTS.values())
    latencies: dict[str, list[float]] = defaultdict(list)
    statuses: Counter[tuple[str, str]] = Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(seed: int) -> None:
        rng = random.Random(seed)
        mine: list[tuple[str, float, str]] = []
        with httpx.Client(base_url=base, timeout=60) as c:
            for _ in range(MAX_REQUESTS):
                if time.monotonic() >= deadline:
                    break
                group = rng.choices(groups, weights)[0]
                start = time.perf_counter()
                try:
                    status = str(request(c, group, ids, rng).status_code)
                except httpx.HTTPError as exc:
                    status = type(exc).__name__
                mine.append((group, time.perf_counter() - start, status))
        with lock:
            for group, elapsed, status in mine:
                latencies[group].append(elapsed)
                statuses[group, status] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 120)
    elapsed = time.monotonic() - started
    return {"latencies": latencies, "statuses": statuses, "seconds": elapsed}


def percentile(ms: list[float], q: float) -> float:
    return ms[min(len(ms) - 1, round(q * (len(ms) - 1)))]


def report(kind: str, result: dict, before: tuple, after: tuple, clients: int) -> None:
    latencies, statuses = result["latencies"], result["statuses"]
    total = sum(len(v) for v in latencies.values())
    every = sorted(s * 1000 for v in latencies.values() for s in v)
    rate = total / result["seconds"]
    print(f"\n== {kind}: {total} requests in {result['seconds']:.1f} s: "
          f"{rate:.1f} requests/s, {clients} clients")  # fmt: skip
    print("load average before {:.2f} {:.2f} {:.2f}, after {:.2f} {:.2f} {:.2f}".format(
        *before, *after))  # fmt: skip
    cores = os.cpu_count() or 1
    if max(before[0], after[0]) > cores:
        print(f"the machine is busy: a load average above its {cores} cores; every latency "
              "includes waiting for a core")  # fmt: skip
    if clients > 1:
        # Little's law: with every client always waiting, a request's time is mostly queueing.
        print(f"{clients} clients at {rate:.0f}/s: about {1000 * clients / rate:.0f} ms per "
              "request is the queue; --clients 1 measures each route's own time")  # fmt: skip
    print(f"{'group':<20} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}  errors")
    rows = [(g, sorted(s * 1000 for s in v)) for g, v in sorted(latencies.items())]
    for group, ms in [*rows, ("all", every)]:
        errors = {
            status: n
            for (g, status), n in statuses.items()
            if (g == group or group == "all") and not status.startswith(("2", "3"))
        }
        errors_text = ", ".join(f"{s}: {n}" for s, n in sorted(Counter(errors).items()))
        print(
            f"{group:<20} {len(ms):>6} {percentile(ms, 0.5):>8.0f} {percentile(ms, 0.95):>8.0f}"
            f" {percentile(ms, 0.99):>8.0f}  {errors_text or '-'}"
        )


def one(kind: str, clients: int, seconds: float) -> None:
    with database(kind) as url, server(url) as base:
        ids = seed(base)
        before = os.getloadavg()
        result = load(base, ids, clients, seconds)
        after = os.getloadavg()
    report(kind, result, before, after, clients)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=40)
    parser.add_argument("--database", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--rounds", type=int, default=1, help="repeat (interleaved)")
    args = parser.parse_args()
    kinds = ["sqlite", "postgresql"] if args.database == "both" else [args.database]
    for _ in range(max(1, args.rounds)):
        for kind in kinds:
            one(kind, args.clients, args.seconds)


if __name__ == "__main__":
    main()
