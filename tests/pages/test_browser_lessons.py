"""Saved lessons in a real Chromium: from a run's page, "make a lesson", save it, open its
permanent link and answer a question with a hidden control staying hidden; then import the
exported file through the /teach form (static/js/lessons.js) and land on the new lesson.
Screenshots at 1366x768 and 1920x1080 (the predict page also at a 390x844 phone) go to
/tmp/shots/i27-lessons (or $LESSON_SHOTS)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_helpers import CHROMIUM, new_page

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

SHOTS = Path(os.environ.get("LESSON_SHOTS", "/tmp/shots/i27-lessons"))
SCREENS = {"1366x768": (1366, 768), "1920x1080": (1920, 1080)}


def test_make_a_lesson_open_its_link_and_import_its_file(
    server: str, page: Any, finished_run: dict, browser: Any, tmp_path: Path
) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{server}/runs/{finished_run['id']}")
    page.click("#make-lesson")
    page.wait_for_selector("#lesson-form")
    ticked = page.locator("input[name=steps]:checked").count()
    assert ticked >= 1
    page.fill("#l-title", "Which feature enters?")
    page.fill("#l-story", "Correlated columns: watch the first two steps.")
    page.check("input[name=hidden][value=score]")
    page.click("#lesson-save")
    page.wait_for_selector("#lesson-link")
    link = page.input_value("#lesson-url")
    assert f"/predict/{finished_run['id']}?steps=" in link and "hide=score" in link
    lesson_url = page.url
    page.click("#lesson-open")
    page.wait_for_selector(".choices button")
    assert "Correlated columns: watch the first two steps." in page.inner_text(".predict")
    assert page.locator(".score").count() == 0  # hidden by the lesson
    page.locator(".choices button").first.click()
    page.wait_for_selector(".reveal")
    assert "Answer:" in page.inner_text(".reveal")
    assert page.locator(".score").count() == 0  # still hidden on the next URL

    for size, (width, height) in SCREENS.items():
        with new_page(browser, width, height) as shot:
            for name, url in [
                ("new", f"{server}/lessons/new?run={finished_run['id']}"),
                ("page", lesson_url),
                ("predict", link),
                ("teach", f"{server}/teach"),
            ]:
                shot.goto(url)
                overflow = shot.evaluate("document.documentElement.scrollWidth - innerWidth")
                assert overflow <= 0, f"{name} scrolls sideways by {overflow} px at {size}"
                shot.screenshot(path=str(SHOTS / f"lesson-{name}-{size}.png"))
    with new_page(browser, 390, 844) as phone:
        phone.goto(link)
        overflow = phone.evaluate("document.documentElement.scrollWidth - innerWidth")
        assert overflow <= 0, f"the predict page scrolls sideways by {overflow} px on a phone"
        phone.screenshot(path=str(SHOTS / "lesson-predict-390x844.png"))

    # The exported file, imported through the /teach form, opens the imported lesson.
    lesson_id = int(lesson_url.rsplit("/", 1)[1])
    exported = httpx.get(f"{server}/api/lessons/{lesson_id}/export", timeout=30)
    assert exported.status_code == 200
    path = tmp_path / "lesson.json"
    path.write_bytes(exported.content)
    page.goto(f"{server}/teach")
    page.set_input_files("#lesson-file", str(path))
    page.click("#lesson-import button[type=submit]")
    page.wait_for_function(
        f"location.pathname.startsWith('/lessons/') && !location.pathname.endsWith('/{lesson_id}')"
    )
    page.wait_for_selector("#lesson-link")
    assert "imported from a file" in page.inner_text("#lesson-link")
    page.wait_for_selector("#lesson-questions table", timeout=60_000)  # its run finished
    page.screenshot(path=str(SHOTS / "lesson-imported-1366x900.png"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "foba-lab-lesson", "version": 9}')
    page.goto(f"{server}/teach")
    page.set_input_files("#lesson-file", str(bad))
    page.click("#lesson-import button[type=submit]")
    page.wait_for_selector("#lesson-import .form-error:not([hidden])")
    assert "version 9" in page.inner_text("#lesson-import .form-error")
