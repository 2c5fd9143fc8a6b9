"""Helpers for the app tests: building CSV bodies, uploading them, reading traces and stored
files (the app itself, submitting and waiting for runs: ``service_helpers``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from fastapi.testclient import TestClient


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
