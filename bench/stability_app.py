#!/usr/bin/env python
"""Stability through the app: a study of B = 50 pairs (100 subsample jobs) against 100
independent runs, each through the job backend, on one worker and on two.

Usage (from the repository root)::

    PYTHONPATH=. python bench/stability_app.py              # n = 400, d = 200, k_max = 16
    PYTHONPATH=. python bench/stability_app.py --quick      # n = 200, d = 50, B = 10
    PYTHONPATH=. python bench/stability_app.py --backend procrastinate   # worker processes

The app runs in this process (Starlette's test client) on a fresh SQLite database with the
in-process backend (WORKERS = 1, then 2), or on PostgreSQL with 1, then 2 `python -m app
worker` processes (``--backend procrastinate``). Each phase times, from the first submit to the
last job done:

* ``study``: POST /api/stability with B pairs: 2B subsample jobs on half the rows, each reading
  every k = 1..k_max off one path, merged by ``engine.stability.summarise`` when read;
* ``runs``: 2B independent POST /api/runs at k = k_max on all rows (what a user would do by
  hand: a full run each, its trace stored), for one k only.

Printed per phase: seconds, jobs per minute, the mean time a job ran (start to finish), the
CPU the workers got (in cores) and the load average before and after. One warm-up run per
worker first: the clock starts with the workers ready. The machine is shared:
read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from service_helpers import (  # noqa: E402
    find_postgres_user,
    make_settings,
    postgres_database,
    serve,
)

DEADLINE = 1800.0
# A deployment's liveness settings, not the tests' fast ones: on a loaded machine a run must not
# look dead (and be run twice) because its worker waited for a core.
JOBS = {"heartbeat_seconds": 1.0, "stale_after_seconds": 30.0, "poll_seconds": 0.2}


def tree_cpu(root: int) -> float:
    """CPU seconds (user + system) of ``root``'s descendants and ``root`` (Linux)."""
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(stat.parent.name)
        parent[pid] = int(fields[1])
        cpu[pid] = (int(fields[11]) + int(fields[12])) / tick

    def under(pid: int) -> bool:
        while pid > 1:
            if pid == root:
                return True
            pid = parent.get(pid, 0)
        return False

    return sum(c for pid, c in cpu.items() if under(pid))


def wait_all(client, ids: list[int]) -> list[dict]:
    deadline = time.monotonic() + DEADLINE
    while True:
        runs = [client.get(f"/api/runs/{i}").json() for i in ids]
        if all(r["status"] not in ("queued", "running") for r in runs):
            return runs
        if time.monotonic() > deadline:
            raise TimeoutError("the jobs did not finish")
        time.sleep(0.5)


def phase(client, dataset_id: int, kind: str, args, cpu_of) -> dict:
    load = os.getloadavg()[0]
    cpu0 = cpu_of()
    start = time.perf_counter()
    if kind == "study":
        body = {
            "dataset_id": dataset_id,
            "algorithm": args.algorithm,
            "k_max": args.k_max,
            "n_pairs": args.pairs,
        }
        study = client.post("/api/stability", json=body)
        study.raise_for_status()
        url = study.json()["url"]
        deadline = time.monotonic() + DEADLINE
        while (got := client.get(url).json())["status"] in ("queued", "running"):
            if time.monotonic() > deadline:
                raise TimeoutError("the study did not finish")
            time.sleep(0.5)
        seconds = time.perf_counter() - start
        ids = [p["run_id"] for p in got["parts"]]
        statuses = {got["status"]}
    else:
        ids = []
        for seed in range(2 * args.pairs):
            body = {
                "dataset_id": dataset_id,
                "algorithm": args.algorithm,
                "k": args.k_max,
                "seed": seed,
            }
            response = client.post("/api/runs", json=body)
            response.raise_for_status()
            ids.append(response.json()["id"])
        runs = wait_all(client, ids)
        seconds = time.perf_counter() - start
        statuses = {r["status"] for r in runs}
    runs = [client.get(f"/api/runs/{i}").json() for i in ids]
    ran = [r["run_seconds"] for r in runs if r["run_seconds"] is not None]
    retried = sum(r["attempt"] > 1 for r in runs)
    return {
        "kind": kind,
        "seconds": seconds,
        "jobs": len(ids),
        "per_minute": len(ids) / seconds * 60,
        "job_seconds": statistics.mean(ran),
        "cores": (cpu_of() - cpu0) / seconds,
        "load": (load, os.getloadavg()[0]),
        "statuses": sorted(statuses),
        "retried": retried,
    }


def report(workers: int, r: dict) -> None:
    print(
        f"{workers} worker(s), {r['kind']:>5}: {r['jobs']} jobs in {r['seconds']:.1f} s "
        f"({r['per_minute']:.0f} jobs/min), a job ran {r['job_seconds']:.3f} s on average, "
        f"workers' CPU {r['cores']:.2f} cores ({r['cores'] * r['seconds']:.1f} CPU-s), "
        f"load average {r['load'][0]:.2f} -> {r['load'][1]:.2f}, {r['statuses']}, "
        f"{r['retried']} run again",
        flush=True,
    )


def warm_up(client, dataset_id: int, workers: int, args) -> None:
    """One run per worker, waited for: the clock starts with every worker ready (a spawned
    worker process imports numpy and the app first: seconds on a loaded machine)."""
    body = {"dataset_id": dataset_id, "algorithm": args.algorithm, "k": 2}
    ids = []
    for _ in range(workers):
        response = client.post("/api/runs", json=body)
        response.raise_for_status()
        ids.append(response.json()["id"])
    wait_all(client, ids)


def run_inprocess(args, dataset: dict) -> dict[int, dict[str, dict]]:
    out: dict[int, dict[str, dict]] = {}
    for workers in args.workers:
        with tempfile.TemporaryDirectory() as tmp:
            settings = make_settings(Path(tmp) / "data", workers=workers, **JOBS)
            with serve(settings) as client:
                made = client.post("/api/datasets/generate", json=dataset)
                made.raise_for_status()
                warm_up(client, made.json()["id"], workers, args)
                out[workers] = {}
                for kind in ("study", "runs"):
                    out[workers][kind] = r = phase(
                        client, made.json()["id"], kind, args, lambda: tree_cpu(os.getpid())
                    )
                    report(workers, r)
    return out


def run_procrastinate(args, dataset: dict) -> dict[int, dict[str, dict]]:
    user, reason = find_postgres_user()
    if user is None:
        raise SystemExit(reason)
    out: dict[int, dict[str, dict]] = {}
    with postgres_database(user, "foba_bench_st") as url, tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        settings = make_settings(data_dir, database_url=url, job_backend="procrastinate", **JOBS)
        with serve(settings) as client:
            made = client.post("/api/datasets/generate", json=dataset)
            made.raise_for_status()
            for workers in args.workers:
                env = {
                    **os.environ,
                    "DATABASE_URL": url,
                    "JOB_BACKEND": "procrastinate",
                    "DATA_DIR": str(data_dir),
                    **{name.upper(): str(value) for name, value in JOBS.items()},
                }
                with ExitStack() as stack:
                    procs = [
                        subprocess.Popen(
                            [sys.executable, "-m", "app", "worker"],
                            cwd=ROOT,
                            env=env,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                        )
                        for _ in range(workers)
                    ]
                    for proc in procs:
                        stack.callback(proc.wait, 30)
                        stack.callback(proc.terminate)
                    deadline = time.monotonic() + 120
                    while len(client.get("/healthz").json()["jobs"]["workers"]) < workers:
                        if time.monotonic() > deadline:
                            raise TimeoutError("the workers did not register")
                        time.sleep(0.2)
                    warm_up(client, made.json()["id"], workers, args)
                    out[workers] = {}
                    for kind in ("study", "runs"):
                        out[workers][kind] = r = phase(
                            client,
                            made.json()["id"],
                            kind,
                            args,
                            lambda procs=procs: sum(tree_cpu(p.pid) for p in procs),
                        )
                        report(workers, r)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("inprocess", "procrastinate"), default="inprocess")
    parser.add_argument("--algorithm", default="foba-obj")
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--k-max", type=int, default=16)
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--d", type=int, default=200)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.n, args.d, args.k_max = 10, 200, 50, 8
    args.workers = [int(w) for w in args.workers.split(",")]
    dataset = {
        "generator": "gaussian_regression",
        "params": {"n": args.n, "d": args.d, "k_true": 8, "rho": 0.5},
        "random_state": 1,
    }
    print(
        f"# stability through the app ({args.backend}): B = {args.pairs} pairs "
        f"({2 * args.pairs} subsample jobs) against {2 * args.pairs} runs at k = {args.k_max}; "
        f"{args.algorithm}, gaussian_regression n = {args.n}, d = {args.d}; "
        f"{os.cpu_count()} cores, load average at start {os.getloadavg()[0]:.2f}"
    )
    run = run_procrastinate if args.backend == "procrastinate" else run_inprocess
    out = run(args, dataset)
    for workers, phases in out.items():
        s, r = phases["study"], phases["runs"]
        print(
            f"{workers} worker(s): study / runs = {s['seconds'] / r['seconds']:.2f} "
            f"(study {s['seconds']:.1f} s, runs {r['seconds']:.1f} s); in the workers' CPU "
            f"seconds: {s['cores'] * s['seconds'] / (r['cores'] * r['seconds']):.2f}"
        )
    first, *rest = args.workers
    for workers in rest:
        for kind in ("study", "runs"):
            speedup = out[first][kind]["seconds"] / out[workers][kind]["seconds"]
            print(f"{kind}: {workers} workers vs {first}: {speedup:.2f}x faster")
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
