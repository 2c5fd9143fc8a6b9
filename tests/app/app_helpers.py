"""Helpers for the app tests: building CSV bodies, uploading, waiting for runs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

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


def csv_text(header: list[str], rows: list[list[Any]], delimiter: str = ",") -> str:
    lines = [delimiter.join(header)]
    lines += [delimiter.join(str(v) for v in row) for row in rows]
    return "\n".join(lines) + "\n"


def regression_csv(n: int = 60, d: int = 6, support=(1, 4), seed: int = 0) -> str:
    """y depends on the columns in ``support`` (x0, x1, ...); the target is the last column."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, list(support)] @ np.arange(2.0, 2.0 + len(support)) + 0.05 * rng.normal(size=n)
    rows = [[f"{v:.6f}" for v in x] + [f"{t:.6f}"] for x, t in zip(X, y, strict=True)]
    return csv_text([f"x{j}" for j in range(d)] + ["y"], rows)


def classification_csv(n: int = 80, d: int = 5, seed: int = 0) -> str:
    """Labels 'yes'/'no' driven by x0 and x2."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    labels = np.where(X[:, 0] - X[:, 2] + 0.3 * rng.normal(size=n) > 0, "yes", "no")
    rows = [[f"{v:.6f}" for v in x] + [c] for x, c in zip(X, labels, strict=True)]
    return csv_text([f"x{j}" for j in range(d)] + ["label"], rows)


def upload(client: TestClient, content: str | bytes, filename: str = "data.csv", **form: Any):
    """POST the CSV; the target defaults to the column ``y``."""
    body = content.encode() if isinstance(content, str) else content
    return client.post(
        "/api/datasets",
        files={"file": (filename, body, "text/csv")},
        data={"target": "y", **form},
    )


def upload_ok(client: TestClient, content: str | bytes, **form: Any) -> dict[str, Any]:
    response = upload(client, content, **form)
    assert response.status_code == 201, response.text
    return response.json()


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


def wait_for_events(client: TestClient, run_id: int, count: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while len(client.get(f"/api/runs/{run_id}/trace").json()["events"]) < count:
        assert time.monotonic() < deadline, f"run {run_id} wrote fewer than {count} events"
        time.sleep(0.02)


def full_trace(client: TestClient, run_id: int) -> list[dict[str, Any]]:
    return client.get(f"/api/runs/{run_id}/trace", params={"limit": 5000}).json()["events"]


def stored_files(data_dir: Path) -> list[Path]:
    """Files a data set may leave behind (the database files aside)."""
    folder = data_dir / "datasets"
    return sorted(folder.iterdir()) if folder.exists() else []
