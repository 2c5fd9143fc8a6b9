"""Helpers for the page tests: the app with fast job settings, waiting for runs, and reading
the Plotly figures a page embeds."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.config import Settings
from app.main import create_app

if TYPE_CHECKING:
    from fastapi.testclient import TestClient

FAST_JOBS: dict[str, Any] = {
    "heartbeat_seconds": 0.2,
    "stale_after_seconds": 1.0,
    "monitor_seconds": 0.2,
    "poll_seconds": 0.1,
    "trace_batch_seconds": 0.1,
}
FINAL = ("done", "failed", "cancelled")
FIGURE = re.compile(r'<script type="application/json" data-plot="([^"]+)">(.*?)</script>', re.S)


def make_settings(data_dir: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"data_dir": data_dir, "workers": 0, "seed_samples": False}
    return Settings(_env_file=None, **{**values, **FAST_JOBS, **overrides})


@contextmanager
def serve(settings: Settings) -> Iterator[TestClient]:
    from fastapi.testclient import TestClient

    with TestClient(create_app(settings)) as client:
        yield client


def generate(client: TestClient, generator: str, **params: Any) -> dict[str, Any]:
    response = client.post(
        "/api/datasets/generate", json={"generator": generator, "params": params}
    )
    assert response.status_code == 201, response.text
    return response.json()


def submit(client: TestClient, dataset_id: int, **body: Any) -> dict[str, Any]:
    response = client.post("/api/runs", json={"dataset_id": dataset_id, **body})
    assert response.status_code == 202, response.text
    return response.json()


def wait_for(client: TestClient, run_id: int, timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        run = client.get(f"/api/runs/{run_id}").json()
        if run["status"] in FINAL:
            return run
        assert time.monotonic() < deadline, f"run {run_id} still {run['status']}"
        time.sleep(0.05)


def figures(html: str) -> dict[str, dict[str, Any]]:
    """The figures a page hands to Plotly, by the id of the element they are drawn in."""
    return {m.group(1): json.loads(m.group(2)) for m in FIGURE.finditer(html)}


def check_figure(figure: dict[str, Any]) -> None:
    """Valid for plotly.js (the Python package validates against the same schema), titled, and
    with titled axes."""
    import plotly.graph_objects as go

    go.Figure(figure)  # raises on any property plotly.js does not know
    layout = figure["layout"]
    assert layout["title"]["text"]
    if figure["data"]:
        assert layout["xaxis"]["title"]["text"] and layout["yaxis"]["title"]["text"]
        assert layout["font"]["family"]
