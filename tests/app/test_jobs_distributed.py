"""JOB_BACKEND=procrastinate against the real PostgreSQL: real `python -m app worker` processes,
a run and its job inserted together, workers killed, stopped, cut off from the database.

The module creates its own database (its connections are terminated on purpose mid-run, so it
cannot share one) and drops it at the end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from app_helpers import full_trace, regression_csv, upload_ok, wait_for_events
from procrastinate.exceptions import AlreadyEnqueued
from service_helpers import FAST_JOBS, make_settings, postgres_database, serve, submit, wait_for
from sqlalchemy import text
from sqlmodel import Session

from app.config import Settings
from app.db import make_db
from app.jobs.distributed import queue
from app.jobs.distributed.queue import NeedsPostgres
from app.models import ComparisonCreate, RunCreate
from app.services import runs as run_service

ROOT = Path(__file__).resolve().parents[2]
# Where the workers find the arrays. "directory": the web process's data directory, shared;
# "database": each worker gets its own empty DATA_DIR (switch once the storage setting exists).
STORAGE = "directory"
# The workers' own liveness settings: Procrastinate's worker heartbeat and the age at which a
# worker counts as dead. Looser than FAST_JOBS: a loaded 2-core machine must not make a live
# worker look dead.
WORKER_JOBS = {**FAST_JOBS, "heartbeat_seconds": 0.3, "stale_after_seconds": 3.0}
ALGORITHMS = ["foba-obj", "foba-gdt", "forward-obj", "omp", "stepwise", "backward"]


@pytest.fixture(scope="module")
def queue_db(postgres_user: str) -> Iterator[str]:
    with postgres_database(postgres_user, "foba_q") as url:
        yield url


def web_settings(data_dir: Path, url: str) -> Settings:
    return make_settings(data_dir, database_url=url, job_backend="procrastinate")


class Workers:
    """`python -m app worker` processes, each with its own log (shown when a test fails)."""

    def __init__(self, url: str, web_data_dir: Path, tmp: Path) -> None:
        self.url, self.web_data_dir, self.tmp = url, web_data_dir, tmp
        self.procs: list[subprocess.Popen] = []

    def start(self, count: int = 1, **env: str) -> list[subprocess.Popen]:
        started = [self._one(len(self.procs) + i, env) for i in range(count)]
        self.procs += started
        return started

    def _one(self, index: int, extra: dict[str, str]) -> subprocess.Popen:
        own = self.tmp / f"worker{index}"
        own.mkdir()
        data_dir = own / "data" if STORAGE == "database" else self.web_data_dir
        env = {
            **os.environ,
            "DATABASE_URL": self.url,
            "JOB_BACKEND": "procrastinate",
            "DATA_DIR": str(data_dir),
            "STORAGE": STORAGE,
            **{name.upper(): str(value) for name, value in WORKER_JOBS.items()},
            **extra,
        }
        log = (own / "log").open("w")
        return subprocess.Popen(
            [sys.executable, "-m", "app", "worker"], cwd=ROOT, env=env, stdout=log, stderr=log
        )

    def stop(self) -> str:
        """Kill what is left; return the logs."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        return "\n".join(p.read_text()[-3000:] for p in sorted(self.tmp.glob("worker*/log")))


@pytest.fixture
def workers(queue_db: str, data_dir: Path, tmp_path: Path) -> Iterator[Workers]:
    pool = Workers(queue_db, data_dir, tmp_path)
    yield pool
    print(pool.stop())  # pytest shows it when the test failed


def sql(url: str, query: str, **params: Any) -> list[Any]:
    db = make_db(url)
    try:
        with db.begin() as conn:
            result = conn.execute(text(query), params)
            return list(result.all()) if result.returns_rows else []
    finally:
        db.dispose()


def jobs_of(url: str, run_ids: list[int]) -> dict[int, tuple[str, int]]:
    """Each run's jobs: run id -> (status, attempts); fails if a run has more than one."""
    rows = sql(
        url,
        "SELECT (args->>'run_id')::int, status::text, attempts FROM procrastinate_jobs"
        " WHERE (args->>'run_id')::int = ANY(:ids)",
        ids=run_ids,
    )
    seen = [row[0] for row in rows]
    assert len(seen) == len(set(seen)), "a run has more than one job"
    return {row[0]: (row[1], row[2]) for row in rows}


def assert_clean_trace(events: list[dict]) -> None:
    """Steps 0, 1, 2, ... once each, ending with the one stop event."""
    assert [e["step"] for e in events] == list(range(len(events)))
    kinds = [e["kind"] for e in events]  # the certificate's checks follow the stop
    assert kinds.count("stop") == 1 and set(kinds[kinds.index("stop") + 1 :]) <= {"check"}


def small_dataset(client) -> dict:
    return upload_ok(client, regression_csv(n=40, d=4, support=(1,)))


def wait_running(client, run_id: int, events: int = 3) -> dict:
    wait_for_events(client, run_id, events)
    run = client.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "running", run
    return run


def until_workers(client, count: int = 1, pids: set[int] | None = None, timeout: float = 120.0):
    """Wait until /healthz lists ``count`` workers (or exactly the processes ``pids``); return
    them. A worker cut off from the database registers again only after its run stopped."""
    deadline = time.monotonic() + timeout
    while True:
        seen = client.get("/healthz").json()["jobs"]["workers"]
        if len(seen) >= count if pids is None else {w["pid"] for w in seen} == pids:
            return seen
        assert time.monotonic() < deadline, f"the workers did not register: {seen}"
        time.sleep(0.1)


def pid_of(run: dict) -> int:
    return int(run["worker"].rsplit(":", 1)[1])


# --------------------------------------------------------------------------- refusing SQLite


def test_sqlite_is_refused_by_the_web_process_and_the_worker(data_dir: Path) -> None:
    settings = make_settings(data_dir, job_backend="procrastinate")  # the SQLite default
    with pytest.raises(NeedsPostgres, match="needs PostgreSQL"), serve(settings):
        pass
    env = {**os.environ, "JOB_BACKEND": "procrastinate", "DATA_DIR": str(data_dir)}
    env.pop("DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "app", "worker"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 2 and "needs PostgreSQL" in done.stderr, done.stderr


# --------------------------------------------------------------------------- one transaction


class FailsAfterDefer:
    """The real backend, then a failure before the commit (a crash, a lost connection)."""

    def __init__(self, backend) -> None:
        self.backend = backend

    def enqueue(self, session: Session, run_ids) -> None:
        self.backend.enqueue(session, run_ids)
        assert sql_count(session, "procrastinate_jobs") > 0  # the jobs are in the transaction
        raise RuntimeError("the web process died before its commit")


def sql_count(session: Session, table: str) -> int:
    return session.connection().execute(text(f"SELECT count(*) FROM {table}")).scalar_one()


def test_a_run_and_its_job_are_stored_together_and_orphans_adopted(queue_db, data_dir) -> None:
    with serve(web_settings(data_dir, queue_db)) as client:
        ds = upload_ok(client, regression_csv(n=40, d=4, support=(1,)))
        app = client.app
        before = sql(queue_db, "SELECT count(*) FROM runs")[0][0]
        jobs_before = sql(queue_db, "SELECT count(*) FROM procrastinate_jobs")[0][0]
        failing = FailsAfterDefer(app.state.backend)
        single = RunCreate(dataset_id=ds["id"], algorithm="omp", k=1)
        several = ComparisonCreate(
            dataset_id=ds["id"], runs=[{"algorithm": a, "k": 1} for a in ("omp", "foba-obj")]
        )
        with Session(app.state.db) as session, pytest.raises(RuntimeError):
            run_service.submit_run(session, failing, data_dir, single, "key-1")
        with Session(app.state.db) as session, pytest.raises(RuntimeError):
            run_service.submit_comparison(session, failing, data_dir, several, None)
        assert sql(queue_db, "SELECT count(*) FROM runs")[0][0] == before
        assert sql(queue_db, "SELECT count(*) FROM procrastinate_jobs")[0][0] == jobs_before
        assert sql(queue_db, "SELECT count(*) FROM comparisons")[0][0] == 0

        # And when nothing fails: one job per run, carrying the run id alone.
        response = client.post(
            "/api/comparisons", json=several.model_dump(exclude_none=True, mode="json")
        )
        assert response.status_code == 202, response.text
        ids = [run["id"] for run in response.json()["runs"]]
        assert jobs_of(queue_db, ids) == {i: ("todo", 0) for i in ids}
        args = sql(queue_db, "SELECT args FROM procrastinate_jobs WHERE task_name = 'foba.run'")
        assert {tuple(a[0]) for a in args} == {("run_id",)}

        with Session(app.state.db) as session, pytest.raises(AlreadyEnqueued):
            queue.defer_runs(app.state.backend.queue, session, ids[:1])  # one job per run

        # A run inserted by code that did not enqueue it gets its job after the commit.
        sql(queue_db, "DELETE FROM procrastinate_jobs")
        app.state.backend.submit(ids[0])
        assert jobs_of(queue_db, ids) == {ids[0]: ("todo", 0)}
        # Runs queued without a job (by the in-process backend, before a switch of backend)
        # get one when the web process starts.
        sql(queue_db, "DELETE FROM procrastinate_jobs")
    with serve(web_settings(data_dir, queue_db)):
        assert jobs_of(queue_db, ids) == {i: ("todo", 0) for i in ids}
    sql(queue_db, "UPDATE runs SET status = 'cancelled' WHERE status = 'queued'")
    sql(queue_db, "DELETE FROM procrastinate_jobs")  # no later test's worker runs them


# --------------------------------------------------------------------------- workers at work


def test_thirty_runs_on_three_workers_after_a_web_restart_and_lost_connections(
    blocking, queue_db, data_dir, workers
) -> None:
    with serve(web_settings(data_dir, queue_db)) as client:  # nobody runs these yet
        ds = upload_ok(client, regression_csv(n=80, d=6, support=(1, 4)), true_support="x1,x4")
        # Two runs that are still running when the connections are cut, whatever the speed.
        slow_ids = [submit(client, ds["id"], **blocking.config)["id"] for _ in range(2)]
        ids = [
            submit(client, ds["id"], algorithm=a, k=2, seed=i)["id"]
            for i in range(5)
            for a in ALGORITHMS
        ]
    assert sql(queue_db, "SELECT count(*) FROM runs WHERE status = 'queued'")[0][0] >= 32

    with serve(web_settings(data_dir, queue_db)) as client:  # the web process restarted
        workers.start(3)
        wait_running(client, slow_ids[0])
        killed = sql(
            queue_db,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        assert killed, "no connection was open"
        blocking.open()
        finished = [wait_for(client, run_id, timeout=60) for run_id in slow_ids + ids]
        for run in finished:
            assert run["status"] == "done", (run["algorithm"], run["error"])
            assert_clean_trace(full_trace(client, run["id"]))
        for run in finished[2:]:
            assert [f["name"] for f in run["result"]["support"]] == ["x1", "x4"]
        assert len({run["worker"] for run in finished}) >= 2  # the work was shared
        # Every worker process comes back after the lost connections, under its own pid.
        seen = until_workers(client, pids={proc.pid for proc in workers.procs})
        assert all(w["host"] and w["last_heartbeat"] for w in seen)
        health = client.get("/healthz").json()["jobs"]
    jobs = jobs_of(queue_db, slow_ids + ids)
    assert {status for status, _ in jobs.values()} == {"succeeded"}
    assert len(jobs) == 32
    assert health["queue"] == {"waiting": 0, "running": 0}


def test_a_killed_worker_s_run_completes_on_another(blocking, queue_db, data_dir, workers):
    with serve(web_settings(data_dir, queue_db)) as client:
        run_id = submit(client, small_dataset(client)["id"], **blocking.config)["id"]
        workers.start(2)
        running = wait_running(client, run_id)
        assert running["attempt"] == 1
        os.kill(pid_of(running), signal.SIGKILL)
        blocking.open()  # the second attempt may finish

        run = wait_for(client, run_id, timeout=60)
        assert run["status"] == "done", run["error"]
        assert run["attempt"] == 2 and run["worker"] != running["worker"]
        assert len(blocking.attempts()) == 2
        assert_clean_trace(full_trace(client, run_id))  # the first attempt's trace is gone
    assert jobs_of(queue_db, [run_id]) == {run_id: ("succeeded", 2)}  # two attempts


def test_a_stopped_worker_hands_its_run_back(blocking, queue_db, data_dir, workers) -> None:
    with serve(web_settings(data_dir, queue_db)) as client:
        run_id = submit(client, small_dataset(client)["id"], **blocking.config)["id"]
        (first,) = workers.start(1)
        wait_running(client, run_id)
        first.send_signal(signal.SIGTERM)
        assert first.wait(15) == 0
        run = client.get(f"/api/runs/{run_id}").json()
        assert (run["status"], run["attempt"], run["error"]) == ("queued", 1, None)
        assert jobs_of(queue_db, [run_id]) == {run_id: ("todo", 1)}

        blocking.open()
        workers.start(1)
        run = wait_for(client, run_id, timeout=60)
        assert (run["status"], run["attempt"]) == ("done", 2), run["error"]
        assert_clean_trace(full_trace(client, run_id))
    assert jobs_of(queue_db, [run_id]) == {run_id: ("succeeded", 2)}


def test_cancel_reaches_a_run_on_a_worker_process(blocking, queue_db, data_dir, workers):
    with serve(web_settings(data_dir, queue_db)) as client:
        # The gate stays closed: only the cancel can end this run.
        run_id = submit(client, small_dataset(client)["id"], **blocking.config)["id"]
        workers.start(1)
        wait_running(client, run_id)
        assert client.post(f"/api/runs/{run_id}/cancel").json()["cancel_requested"] is True
        run = wait_for(client, run_id, timeout=60)
        assert run["status"] == "cancelled"
        assert run["result"]["stop_reason"] == "cancelled at the user's request"
        events = full_trace(client, run_id)
        assert_clean_trace(events)
        assert events[-1]["reason"] == "cancelled at the user's request"
    assert jobs_of(queue_db, [run_id]) == {run_id: ("succeeded", 1)}


def test_one_command_runs_worker_concurrency_processes(blocking, queue_db, data_dir, workers):
    with serve(web_settings(data_dir, queue_db)) as client:
        ds = small_dataset(client)
        (command,) = workers.start(1, WORKER_CONCURRENCY="2")
        until_workers(client, 2)  # both ready: the two runs start together
        run_ids = [submit(client, ds["id"], **blocking.config)["id"] for _ in range(2)]
        running = [wait_running(client, run_id) for run_id in run_ids]  # at the same time
        pids = {pid_of(run) for run in running}
        assert len(pids) == 2 and command.pid not in pids  # two worker processes of its own
        health = client.get("/healthz").json()["jobs"]
        assert pids <= {w["pid"] for w in health["workers"]}

        command.send_signal(signal.SIGTERM)  # passed on: both runs go back to the queue
        assert command.wait(20) == 0
        for run_id in run_ids:
            assert client.get(f"/api/runs/{run_id}").json()["status"] == "queued"
            client.post(f"/api/runs/{run_id}/cancel")  # nothing left for later tests
    assert jobs_of(queue_db, run_ids) == {i: ("todo", 1) for i in run_ids}
