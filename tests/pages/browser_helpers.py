"""What the browser tests share: the app served by ``python -m app`` (the README's start
command) in a subprocess, a headless Debian Chromium driven by Playwright, and small API
helpers. The fixtures live in conftest.py; screenshots go to test-output/screenshots (or
$SCREENSHOT_DIR) for a person to look at after the run."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_helpers import app_process, free_port

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("SCREENSHOT_DIR", ROOT / "test-output" / "screenshots"))
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SIZES = {"laptop": (1366, 768), "projector": (1920, 1080)}


def serve_app(
    tmp_path_factory: pytest.TempPathFactory,
    workers: int = 1,
    data_dir: Path | None = None,
    api_key: str | None = None,
) -> Iterator[str]:
    """``python -m app`` on a free port. ``workers=0``: an API-only app whose runs wait for a
    worker the test provides; with ``api_key``, a server that has that API_KEY."""
    port = free_port()
    env = {
        **os.environ,
        "DATA_DIR": str(data_dir or tmp_path_factory.mktemp("browser") / "data"),
        "DATABASE_URL": "",
        "WORKERS": str(workers),
        "SEED_SAMPLES": "false",
        "POLL_SECONDS": "0.2",
        "HEARTBEAT_SECONDS": "0.3",
        "STALE_AFTER_SECONDS": "5",
        "TRACE_BATCH_SECONDS": "0.2",
    }
    env.update(HOST="127.0.0.1", PORT=str(port))
    env.pop("API_KEY", None)  # without a key, the pages post to /api with no credentials
    if api_key is not None:
        env["API_KEY"] = api_key
    command = [sys.executable, "-m", "app"]  # the README's start command, on PORT
    with app_process(command, env, port) as base:
        yield base


def launch_browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


def open_page(browser: Any) -> Iterator[Any]:
    with new_page(browser) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        # The Content-Security-Policy refused something (a script, a style, a connection).
        page.on(
            "console",
            lambda msg: (
                errors.append(msg.text)
                if msg.type == "error" and "Content Security Policy" in msg.text
                else None
            ),
        )
        page.set_default_timeout(20_000)
        yield page
    assert not errors, f"JavaScript errors: {errors}"


def poll_without_eval(page: Any) -> None:
    """Playwright polls a string expression with eval() inside the page, which the app's
    Content-Security-Policy forbids (no 'unsafe-eval'); a function it compiles from outside
    the page. So every test's ``wait_for_function("expr")`` is sent as ``() => (expr)``."""
    wait = page.wait_for_function

    def wait_for_function(expression: str, *args: Any, **kwargs: Any) -> Any:
        text = expression.strip()
        if not (text.startswith(("function", "async")) or "=>" in text.split("\n")[0]):
            expression = f"() => ({text})"
        return wait(expression, *args, **kwargs)

    page.wait_for_function = wait_for_function


@contextmanager
def new_page(browser: Any, width: int = 1366, height: int = 900) -> Iterator[Any]:
    """A page in a context of its own at this viewport, closed afterwards; it polls without
    eval (see poll_without_eval)."""
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        poll_without_eval(page)
        yield page
    finally:
        context.close()


def api(base: str, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
    response = httpx.request(method, base + path, timeout=30, **kwargs)
    assert response.status_code < 300, response.text
    return response.json()


def wait_done(base: str, run_id: int, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while (run := api(base, "GET", f"/api/runs/{run_id}"))["status"] not in (
        "done",
        "failed",
        "cancelled",
    ):
        assert time.monotonic() < deadline, run["status"]
        time.sleep(0.1)
    return run


def finish_a_run(server: str) -> dict[str, Any]:
    """A small FoBa run with candidate scores, finished."""
    ds = api(
        server,
        "POST",
        "/api/datasets/generate",
        json={"generator": "gaussian_regression", "params": {"n": 80, "d": 15, "rho": 0.7}},
    )
    run = api(
        server,
        "POST",
        "/api/runs",
        json={
            "dataset_id": ds["id"],
            "algorithm": "foba-obj",
            "k": 4,
            "record_candidates": True,
            "test_fraction": 0.25,
        },
    )
    return wait_done(server, run["id"])


def figure2_foba_run(server: str) -> dict[str, Any]:
    """Zhang's Figure 2 lesson started on ``server``, and its FoBa run (k = 2), finished: it
    adds f3 first, deletes it later and goes on past its answer."""
    response = httpx.post(f"{server}/teach/lessons/figure2", timeout=60)
    assert response.status_code in (200, 303), response.text
    datasets = api(server, "GET", "/api/datasets")
    ds = next(d["id"] for d in datasets if "Figure 2" in d["name"])
    runs = api(server, "GET", "/api/runs")
    foba = next(r for r in runs if r["algorithm"] == "foba-obj" and r["dataset_id"] == ds)
    return wait_done(server, foba["id"])
