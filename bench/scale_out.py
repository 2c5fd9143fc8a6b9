"""Scale-out: the same 100 runs through 1 and then 2 `python -m app worker` processes.

JOB_BACKEND=procrastinate on the PostgreSQL at 127.0.0.1:5432 (a database of its own, dropped
at the end). The web process is the app in this process (Starlette's test client); the workers
are real subprocesses, started and registered before the clock starts. Each phase submits the
runs as five comparisons of 20 (mixed algorithms, logistic loss) and waits for all of them.

Printed per phase: runs per minute (first enqueue to last finish), enqueue-to-start latency
p50/p95 (a burst of 100: most of it is waiting for a free worker), the mean start-to-finish
time of a run, the CPU the worker processes got (in cores, over the phase: on a shared machine
this, not the worker count, bounds the throughput), the load average before and after; then the
2-worker/1-worker throughput ratio. Timings on a shared machine are figures to
read, never pass/fail::

    python bench/scale_out.py [--runs 100] [--workers 1,2]     # 1x2: one process, 2 threads
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from service_helpers import (  # noqa: E402
    find_postgres_user,
    make_settings,
    postgres_database,
    serve,
)

DATA = {"generator": "liu2014_logistic", "params": {"n": 400, "d": 300, "s": 10}}
MIX = [
    {"algorithm": "foba-obj", "objective": "logistic", "k": 40},
    {"algorithm": "foba-gdt", "objective": "logistic", "k": 40},
    {"algorithm": "forward-obj", "objective": "logistic", "k": 40},
    {"algorithm": "omp", "objective": "logistic", "k": 40},
]
PER_COMPARISON = 20
DEADLINE_SECONDS = 600.0
WORKER_ENV = {"HEARTBEAT_SECONDS": "1", "STALE_AFTER_SECONDS": "10", "POLL_SECONDS": "0.5"}


@contextmanager
def database() -> Iterator[str]:
    user, reason = find_postgres_user()
    if user is None:
        raise SystemExit(reason)
    with postgres_database(user, "foba_bench") as url:
        yield url


def start_workers(
    count: int, url: str, data_dir: Path, concurrency: int = 1
) -> list[subprocess.Popen]:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "JOB_BACKEND": "procrastinate",
        "DATA_DIR": str(data_dir),
        "WORKER_CONCURRENCY": str(concurrency),
        **WORKER_ENV,
    }
    command = [sys.executable, "-m", "app", "worker"]
    # Each worker in a session of its own, as on a host of its own: with the kernel's
    # autogroup scheduling, processes of one session share one session's CPU share, so
    # workers started from this session would split one share however many they are.
    return [
        subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True) for _ in range(count)
    ]


def until(check, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        time.sleep(0.2)


def phase(client, url: str, data_dir: Path, dataset_id: int, runs: int, spec: str) -> dict:
    """``spec``: N worker processes, or NxC for N processes of WORKER_CONCURRENCY=C each."""
    workers, _, concurrency = spec.partition("x")
    workers = int(workers)
    procs = start_workers(workers, url, data_dir, int(concurrency or 1))
    expected = workers * int(concurrency or 1)
    try:
        until(lambda: len(client.get("/healthz").json()["jobs"]["workers"]) == expected, "workers")
        load_before = os.getloadavg()[0]
        cpu_before = _tree_cpu([proc.pid for proc in procs])
        ids: list[int] = []
        while len(ids) < runs:
            size = min(PER_COMPARISON, runs - len(ids))
            body = {"dataset_id": dataset_id, "runs": [MIX[i % len(MIX)] for i in range(size)]}
            response = client.post("/api/comparisons", json=body)
            response.raise_for_status()
            ids += [run["id"] for run in response.json()["runs"]]
        until(lambda: finished(url, ids), f"{runs} runs on {workers} worker(s)")
        load_after = os.getloadavg()[0]
        cpu = _tree_cpu([proc.pid for proc in procs]) - cpu_before
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(30)
    result = measure(url, ids)
    # The cores the workers actually got: on a shared machine, what bounds the ratio.
    result["cores"] = cpu / result["span"]
    return result | {"load": (load_before, load_after), "workers": spec}


def _tree_cpu(pids: list[int]) -> float:
    """CPU seconds (user + system) so far of these processes and their children (Linux)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        pid, ppid = int(stat.parent.name), int(fields[1])
        if pid in pids or ppid in pids:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def finished(url: str, ids: list[int]) -> bool:
    with psycopg.connect(url) as conn:
        left = conn.execute(
            "SELECT count(*) FROM runs WHERE id = ANY(%s) AND status IN ('queued', 'running')",
            (ids,),
        ).fetchone()[0]
    return left == 0


def measure(url: str, ids: list[int]) -> dict:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT status, created_at, started_at, finished_at FROM runs WHERE id = ANY(%s)",
            (ids,),
        ).fetchall()
    statuses = {status for status, *_ in rows}
    span = (max(r[3] for r in rows) - min(r[1] for r in rows)).total_seconds()
    waits = sorted((r[2] - r[1]).total_seconds() for r in rows)
    # Start to finish of each run: grows when the workers compete for the cores.
    durations = [(r[3] - r[2]).total_seconds() for r in rows]
    return {
        "statuses": statuses,
        "per_minute": len(rows) / span * 60,
        "span": span,
        "p50": statistics.median(waits),
        "p95": waits[min(len(waits) - 1, round(0.95 * (len(waits) - 1)))],
        "run_seconds": statistics.mean(durations),
        "first_start": (min(r[2] for r in rows) - min(r[1] for r in rows)).total_seconds(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument(
        "--workers",
        default="1,2",
        help="worker processes per phase, in order; NxC: N processes of concurrency C",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="repeat the phases, interleaved (load drifts)"
    )
    args = parser.parse_args()
    specs = args.workers.split(",")
    print(f"# scale-out: {args.runs} runs per phase, workers {specs}, {os.cpu_count()} cores")
    print(f"load average at start {os.getloadavg()[0]:.2f} (a shared machine: read as figures)")
    results: dict[str, list[dict]] = {spec: [] for spec in specs}
    with database() as url, tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        settings = make_settings(data_dir, database_url=url, job_backend="procrastinate")
        with serve(settings) as client:
            response = client.post("/api/datasets/generate", json=DATA)
            response.raise_for_status()
            dataset_id = response.json()["id"]
            for _ in range(args.rounds):
                for spec in specs:
                    result = phase(client, url, data_dir, dataset_id, args.runs, spec)
                    results[spec].append(result)
                    report(result, args.runs)
    base = statistics.median(r["per_minute"] for r in results[specs[0]])
    base_cpu = statistics.median(r["per_minute"] / r["cores"] for r in results[specs[0]])
    for spec in specs[1:]:
        rate = statistics.median(r["per_minute"] for r in results[spec])
        per_cpu = statistics.median(r["per_minute"] / r["cores"] for r in results[spec])
        print(
            f"throughput ratio {spec} vs {specs[0]} worker process(es) (medians over "
            f"{args.rounds} round(s)): {rate / base:.2f}x; per CPU the workers got: "
            f"{per_cpu / base_cpu:.2f}x (1.00: no loss to coordination)"
        )
    print(f"load average at end {os.getloadavg()[0]:.2f}")


def report(result: dict, runs: int) -> None:
    print(
        f"{result['workers']} worker process(es): {result['per_minute']:.1f} runs/min "
        f"({runs} in {result['span']:.1f} s, first start after {result['first_start']:.2f} s), "
        f"enqueue-to-start p50 {result['p50']:.2f} s "
        f"p95 {result['p95']:.2f} s, mean run {result['run_seconds']:.2f} s, "
        f"workers' CPU {result['cores']:.2f} cores "
        f"({result['per_minute'] / result['cores']:.0f} runs per CPU-minute), "
        f"load average {result['load'][0]:.2f} -> {result['load'][1]:.2f}, "
        f"statuses {sorted(result['statuses'])}",
        flush=True,
    )


if __name__ == "__main__":
    main()
