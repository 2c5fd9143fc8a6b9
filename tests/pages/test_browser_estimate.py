"""The run form's warning of a long run, in Chromium: it appears when the fields make the run
long and goes when a faster setting is chosen (HTMX on change), at three screen sizes."""

from __future__ import annotations

from typing import Any

import pytest
from browser_helpers import CHROMIUM, SHOTS, api, new_page

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (/usr/bin/chromium)"
)

SCREENS = {"laptop": (1366, 768), "projector": (1920, 1080), "phone": (390, 844)}


@pytest.mark.parametrize("size", list(SCREENS))
def test_the_warning_follows_the_fields(server: str, browser: Any, size: str) -> None:
    ds = api(
        server,
        "POST",
        "/api/datasets/generate",
        json={"generator": "liu2014_logistic", "params": {"n": 80, "d": 10, "s": 3}},
    )
    width, height = SCREENS[size]
    with new_page(browser, width, height) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{server}/datasets/{ds['id']}")
        page.select_option("#run-algorithm", "foba-refit")
        page.wait_for_selector('#run-params [data-algorithm="foba-refit"]')
        page.wait_for_load_state("networkidle")
        assert "predicted" not in page.inner_text("#run-estimate")  # the defaults: short
        page.select_option("#alg-path_end", "zhang")
        page.fill("#alg-max_steps", "100000000")
        page.dispatch_event("#alg-max_steps", "change")
        page.wait_for_selector("#run-estimate .estimate-warning")
        text = page.inner_text("#run-estimate")
        assert "This run is predicted to take about" in text and "path_end = sparsity" in text
        page.locator("#run-estimate").scroll_into_view_if_needed()
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, overflow
        page.screenshot(path=str(SHOTS / f"estimate-{size}.png"), full_page=False)
        page.select_option("#alg-path_end", "sparsity")  # the faster setting: the warning goes
        page.wait_for_selector("#run-estimate .estimate-warning", state="detached")
    assert not errors, errors
