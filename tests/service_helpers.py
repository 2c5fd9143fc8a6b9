"""Helpers shared by the app and page tests: the real app with fast job settings, submitting a
run and waiting for it. (``tests`` is on pytest's ``pythonpath``.)"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.config import Settings
from app.main import create_app

if TYPE_CHECKING:
    from fastapi.testclient import TestClient

# Fast supervision so that dead workers are noticed within about a second.
FAST_JOBS: dict[str, Any] = {
    "heartbeat_seconds": 0.2,
    "stale_after_seconds": 1.0,
    "monitor_seconds": 0.2,
    "poll_seconds": 0.2,
    "trace_batch_seconds": 0.1,
}
FINAL = ("done", "failed", "cancelled")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_settings(data_dir: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"data_dir": data_dir, "workers": 0, "seed_samples": False}
    return Settings(_env_file=None, **{**values, **FAST_JOBS, **overrides})


@contextmanager
def serve(settings: Settings) -> Iterator[TestClient]:
    """The real app, lifespan included (database, samples, worker processes)."""
    # Imported here, inside a test, where the conftest's warning filter applies.
    from fastapi.testclient import TestClient

    with TestClient(create_app(settings)) as client:
        yield client


def submit(client: TestClient, dataset_id: int, **body: Any) -> dict[str, Any]:
    response = client.post("/api/runs", json={"dataset_id": dataset_id, **body})
    assert response.status_code == 202, response.text
    return response.json()


def wait_for(
    client: TestClient, run_id: int, statuses=FINAL, timeout: float = 30.0
) -> dict[str, Any]:
    """Poll the run until its status is one of ``statuses``."""
    deadline = time.monotonic() + timeout
    while True:
        run = client.get(f"/api/runs/{run_id}").json()
        if run["status"] in statuses:
            return run
        assert time.monotonic() < deadline, f"run {run_id} still {run['status']}"
        time.sleep(0.05)


@contextmanager
def postgres_database(user: str, prefix: str) -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped afterwards (even with clients
    still connected): for tests whose subject is a whole database (migrations, the queue)."""
    import uuid

    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = f"postgresql://{user}@127.0.0.1:5432/test"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield f"postgresql://{user}@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
