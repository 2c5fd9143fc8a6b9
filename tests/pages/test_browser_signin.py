"""A server with an API_KEY in a real Chromium: sign in once with the key, upload a CSV, run,
sign out; a page fetched without the session is refused. The Content-Security-Policy holds on
every page (open_page fails on any CSP report in the console)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from browser_helpers import CHROMIUM, SHOTS, serve_app

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (/usr/bin/chromium)"
)

KEY = "browser-key-7"


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve_app(tmp_path_factory, api_key=KEY)


def write_csv(path: Path) -> Path:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 5))
    y = 3 * X[:, 0] - 2 * X[:, 2] + 0.1 * rng.normal(size=80)
    rows = ["a,b,c,d,e,y"] + [
        ",".join(f"{v:.5f}" for v in (*x, t)) for x, t in zip(X, y, strict=True)
    ]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_without_the_session_nothing_is_shown(keyed_server: str) -> None:
    page = httpx.get(keyed_server + "/", headers={"Accept": "text/html"})
    assert page.status_code == 303 and page.headers["location"] == "/signin?next=%2F"
    assert httpx.get(keyed_server + "/api/datasets").status_code == 401
    assert httpx.get(keyed_server + "/docs", headers={"Accept": "text/html"}).status_code == 303


def test_sign_in_upload_run_sign_out(keyed_server: str, page: Any, tmp_path: Path) -> None:
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(keyed_server + "/teach")
    page.wait_for_url(re.compile(r"/signin\?next=%2Fteach$"))
    page.screenshot(path=str(SHOTS / "signin-1366x768.png"))
    page.fill("#signin-key", "not the key")
    page.click("form[action='/signin'] button[type=submit]")
    assert "not this server" in page.inner_text(".alert.error")
    page.screenshot(path=str(SHOTS / "signin-wrong-key-1366x768.png"))
    page.fill("#signin-key", KEY)
    page.click("form[action='/signin'] button[type=submit]")
    page.wait_for_url(keyed_server + "/teach")  # back where the browser wanted to go
    cookie = next(c for c in page.context.cookies() if c["name"] == "foba_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.evaluate("document.cookie") == ""  # HttpOnly: scripts cannot read it

    # Upload (XMLHttpRequest with the CSRF header), then run (fetch with the header).
    page.goto(keyed_server + "/")
    page.set_input_files("#upload input[type=file]", str(write_csv(tmp_path / "keyed.csv")))
    page.wait_for_function("document.querySelector('#upload select[name=target]').value")
    page.click("#upload button[type=submit]")
    page.wait_for_url(re.compile(r"/datasets/\d+$"))
    assert page.inner_text("h1") == "keyed"
    page.select_option("#run-algorithm", "foba-obj")
    page.wait_for_function(
        "document.querySelector('#run-params [data-algorithm]')?.dataset.algorithm === 'foba-obj'"
    )
    page.fill("#run-k", "2")
    page.click("#run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/runs/\d+$"))
    page.locator(".facts .status-done").wait_for(timeout=60_000)
    page.wait_for_function("document.getElementById('chart-path').data !== undefined")
    page.screenshot(path=str(SHOTS / "signin-run-done-1366x768.png"))  # the sign-out button

    # The API documentation (Swagger UI) loads its schema on the session, within the CSP.
    page.goto(keyed_server + "/docs")
    page.locator(".swagger-ui .opblock").first.wait_for()
    assert "FoBa Lab" in page.inner_text(".swagger-ui .info")

    page.goto(keyed_server + "/")
    page.click("form.signout button")
    page.wait_for_url(re.compile(r"/signin$"))
    assert not [c for c in page.context.cookies() if c["name"] == "foba_session"]
    page.goto(keyed_server + "/")  # the session is gone: the page asks for the key again
    page.wait_for_url(re.compile(r"/signin\?next=%2F$"))
