"""Transient database errors: another process holds SQLite's write lock longer than the busy
timeout. Workers wait it out (the run completes on its first attempt), the API answers 503
with Retry-After and stores nothing, and no run error shows SQL, claim tokens or paths."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from app_helpers import stored_files, wait_for_events
from service_helpers import make_settings, serve, submit, wait_for
from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError
from sqlmodel import Session

from app.db import make_db
from app.db.transient import is_transient
from app.jobs import lease
from app.jobs.tasks import JobContext, run_job
from app.migrations import prepare_schema
from app.models import DatasetGenerate, Run, RunStatus
from app.services.datasets import create_generated
from app.storage import DirectoryStore

BUSY_SECONDS = 0.3  # the busy timeout under test; every lock below outlasts it
GENERATE = {"generator": "gaussian_regression", "params": {"n": 60, "d": 8}}


@contextmanager
def write_lock(db_file: Path, seconds: float) -> Iterator[None]:
    """Another writer holds the database for ``seconds`` from the moment this enters (the
    block runs meanwhile; leaving waits for the lock to be released)."""
    taken = threading.Event()

    def hold() -> None:
        conn = sqlite3.connect(db_file, isolation_level=None, timeout=30)
        conn.execute("BEGIN IMMEDIATE")
        taken.set()
        time.sleep(seconds)
        conn.execute("COMMIT")
        conn.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert taken.wait(10)
    try:
        yield
    finally:
        holder.join()


@pytest.fixture
def db(data_dir: Path) -> Iterator[Engine]:
    data_dir.mkdir(parents=True)
    db = make_db(f"sqlite:///{data_dir / 'busy.db'}", busy_timeout_seconds=BUSY_SECONDS)
    prepare_schema(db)
    yield db
    db.dispose()


def queued_run(db: Engine, store: DirectoryStore) -> int:
    with Session(db) as session:
        dataset = create_generated(session, store, DatasetGenerate(**GENERATE))
        run = Run(dataset_id=dataset.id, algorithm="foba-obj", objective="least_squares", k=5)
        session.add(run)
        session.commit()
        return run.id


def test_the_busy_timeout_is_a_setting(db: Engine) -> None:
    with db.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == BUSY_SECONDS * 1000


def test_a_lock_longer_than_the_busy_timeout_is_transient(db: Engine, data_dir: Path) -> None:
    with write_lock(data_dir / "busy.db", 1.0), pytest.raises(OperationalError) as locked:
        with db.begin() as conn:
            conn.execute(text("UPDATE runs SET progress = 0"))
    assert is_transient(locked.value)


def test_a_worker_waits_out_a_lock_and_its_run_completes(
    db: Engine, data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = DirectoryStore(data_dir)
    run_id = queued_run(db, store)
    held = lease.claim(db, run_id, "here")
    ctx = JobContext(db=db, store=store, claim=held, batch_events=1, batch_seconds=0.0)
    with caplog.at_level(logging.WARNING, logger="app.db.transient"):
        with write_lock(data_dir / "busy.db", 1.5):  # the run's first trace write waits
            status = run_job(run_id, ctx)
    assert status == RunStatus.done
    assert "transient database error, retrying" in caplog.text
    with Session(db) as session:
        run = session.get(Run, run_id)
        assert (run.status, run.attempt, run.error) == ("done", 1, None)


def test_the_api_answers_503_with_retry_after_and_stores_nothing(data_dir: Path) -> None:
    settings = make_settings(data_dir, sqlite_busy_timeout_seconds=BUSY_SECONDS)
    with serve(settings) as client:
        first = client.post("/api/datasets/generate", json=GENERATE).json()
        with write_lock(data_dir / "foba-lab.db", 1.5):
            busy = client.post("/api/datasets/generate", json=GENERATE)
            body = {"dataset_id": first["id"], "algorithm": "omp", "k": 2}
            run = client.post("/api/runs", json=body)
            listed = client.get("/api/datasets")  # reading goes on (WAL)
        assert busy.status_code == run.status_code == 503
        assert busy.headers["Retry-After"] == "2"
        detail = busy.json()["detail"]
        assert "busy" in detail and "again" in detail
        assert "SQL" not in detail and "locked" not in detail
        assert listed.status_code == 200
        assert [d["id"] for d in client.get("/api/datasets").json()] == [first["id"]]
        assert client.get("/api/runs").json() == []
        assert len(stored_files(data_dir)) == 1  # the refused data set left no file


def test_a_running_run_outlives_a_lock_on_its_first_attempt(data_dir: Path, blocking) -> None:
    settings = make_settings(
        data_dir, workers=1, sqlite_busy_timeout_seconds=BUSY_SECONDS, stale_after_seconds=2.0
    )
    with serve(settings) as client:
        dataset = client.post("/api/datasets/generate", json=GENERATE).json()
        run = submit(client, dataset["id"], **blocking.config)  # runs until the gate opens
        wait_for_events(client, run["id"], 1)
        # Longer than the busy timeout, and than stale_after_seconds: no heartbeat gets
        # through meanwhile, yet the run is not taken for dead.
        with write_lock(data_dir / "foba-lab.db", 3.0):
            pass
        blocking.open()
        final = wait_for(client, run["id"], timeout=60)
        assert (final["status"], final["attempt"], final["error"]) == ("done", 1, None)
        assert len(blocking.attempts()) == 1
        steps = [
            e["step"]
            for e in client.get(f"/api/runs/{run['id']}/trace?limit=5000").json()["events"]
        ]
        assert steps == list(range(len(steps)))


def test_stored_run_errors_show_no_sql_tokens_or_paths(db: Engine, data_dir: Path) -> None:
    store = DirectoryStore(data_dir)
    run_id = queued_run(db, store)
    held = lease.claim(db, run_id, "here")
    with write_lock(data_dir / "busy.db", 1.0), pytest.raises(OperationalError) as locked:
        with db.begin() as conn:
            conn.execute(text("UPDATE runs SET claim_token = :t"), {"t": held.token})
    raw = f"{locked.value}\nclaim {held.token} reading {data_dir.resolve()}/datasets/x.npz"
    assert "[SQL:" in raw  # what the exception carries
    lease.finish(db, held, RunStatus.failed, error=raw)
    with Session(db) as session:
        error = session.get(Run, run_id).error
    assert error.startswith("database is locked")
    for secret in ("SQL", "UPDATE", held.token, str(data_dir), "/datasets/", "sqlalche.me"):
        assert secret not in error
