"""Helpers shared by the app and page tests: the real app with fast job settings, submitting a
run and waiting for it. (``tests`` is on pytest's ``pythonpath``.)"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from app.config import Settings
from app.main import create_app

if TYPE_CHECKING:
    from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[1]

# Fast supervision so that dead workers are noticed within about a second.
FAST_JOBS: dict[str, Any] = {
    "heartbeat_seconds": 0.2,
    "stale_after_seconds": 1.0,
    "monitor_seconds": 0.2,
    "poll_seconds": 0.2,
    "trace_batch_seconds": 0.1,
}
FINAL = ("done", "failed", "cancelled")
STARTUP_SECONDS = 120.0  # how long a server subprocess may take to answer before a test fails


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_settings(data_dir: Path, **overrides: Any) -> Settings:
    # FastAPI's TestClient sends Host: testserver.
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "workers": 0,
        "seed_samples": False,
        "allowed_hosts": "testserver,localhost,127.0.0.1,::1",
    }
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


def wait_done(client: TestClient, url: str, timeout: float = 60.0) -> dict[str, Any]:
    """Poll a study (or any resource with a ``status``) until it is neither queued nor
    running; a guard fails the test after ``timeout`` seconds instead of hanging the suite."""
    deadline = time.monotonic() + timeout
    while (state := client.get(url).json())["status"] in ("queued", "running"):
        if time.monotonic() > deadline:
            pytest.fail(f"{url} still {state['status']} after {timeout:g} s")
        time.sleep(0.1)
    return state


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


def find_postgres_user() -> tuple[str | None, str]:
    """A user that can connect to PostgreSQL on 127.0.0.1:5432/test, or None and the reason."""
    try:
        import psycopg
    except ImportError:
        return None, "psycopg is not installed"
    reason = "nothing listens on 127.0.0.1:5432"
    for user in ("postgres", "root"):
        try:
            psycopg.connect(
                host="127.0.0.1", port=5432, dbname="test", user=user, connect_timeout=2
            ).close()
            return user, ""
        except psycopg.OperationalError as exc:
            reason = f"cannot connect to PostgreSQL at 127.0.0.1:5432/test: {exc}".strip()
    return None, reason


@contextmanager
def app_process(
    command: list[str], env: dict[str, str], port: int, log: Path | None = None
) -> Iterator[str]:
    """The app started by ``command`` in a subprocess (from the repository root), listening on
    ``port``: its base URL once /healthz answers; terminated afterwards (killed if it hangs).
    Output goes to ``log`` when given, and a server that does not start shows it."""
    out = log.open("wb") if log is not None else None
    err = subprocess.STDOUT if out is not None else None
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=err)
    base = f"http://127.0.0.1:{port}"
    try:
        # A generous bound, not a speed check: on 2 cores shared with other work the imports
        # alone took over 30 s (the app process exits or answers long before).
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                shown = f":\n{log.read_text()}" if log is not None else ""
                raise AssertionError(f"the app did not start{shown}")
            time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if out is not None:
            out.close()
