"""The teaching page's Geometry card (static/js/geometry.js) in a real Chromium, on Zhang's
Figure 2 lesson: it redraws on every step of the player, shows the 3-D view while the support
has one or two columns, can be hidden and shown again; screenshots at a laptop's and a
projector's size (and a phone's)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import CHROMIUM, SHOTS, SIZES, figure2_foba_run, new_page

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (/usr/bin/chromium)"
)

CARD = "#geometry-card"
CHOICE = "document.getElementById('chart-geometry-choice')"
VIEW = "document.getElementById('chart-geometry-3d')"


@pytest.fixture(scope="module")
def lesson(server: str) -> dict[str, Any]:
    """Zhang's Figure 2 lesson's FoBa run (k = 2), finished."""
    return figure2_foba_run(server)


def drawn(page: Any) -> dict[str, Any]:
    """What the card shows: its step, the choice chart's title and the 3-D view's traces."""
    return page.evaluate(
        f"""() => ({{
          step: document.querySelector('{CARD}').dataset.step,
          title: {CHOICE}.hidden ? null : {CHOICE}.layout.title.text,
          view: {VIEW}.hidden ? null : {VIEW}.data.map((t) => t.name),
          text: document.querySelector('.geometry-choice-text').textContent,
        }})"""
    )


def test_the_geometry_card_redraws_when_the_player_steps(
    server: str, page: Any, lesson: dict[str, Any]
) -> None:
    page.goto(f"{server}/teach/{lesson['id']}?step=0")
    page.wait_for_selector("#chart-geometry-choice .main-svg")
    data = page.evaluate("JSON.parse(document.getElementById('teach-frames').textContent)")
    frames = data["frames"]
    first = drawn(page)
    assert first["step"] == "0" and "|cosine| with the residual" in first["title"]
    assert "f3 makes an angle of 26°" in first["text"]
    assert first["view"] is not None and {"y", "fit", "f3"} <= set(first["view"])
    seen = [first]
    for i in range(1, len(frames)):
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            f"document.querySelector('{CARD}').dataset.step === '{frames[i]['step']}'"
        )
        now = drawn(page)
        g = frames[i]["geometry"]
        if g and g.get("forward"):
            assert now["title"].startswith(f"Step {frames[i]['step']}: |cosine|")
        elif g and g.get("deletion"):
            assert now["title"].startswith(f"Step {frames[i]['step']}: the cost of each deletion")
        assert (now["view"] is not None) == bool(g and g.get("view"))
        seen.append(now)
    removal = next(i for i, f in enumerate(frames) if f["kind"] == "remove")
    assert "Deleting f3" in seen[removal]["text"] and "it goes" in seen[removal]["text"]
    assert {"f1", "f2", "f3"} <= set(seen[removal]["view"])
    # Hidden, it stops drawing; opened again, it draws the step the player shows.
    page.click(f"{CARD} > summary")
    assert not page.is_visible("#chart-geometry-choice")
    page.keyboard.press("Home")
    page.click(f"{CARD} > summary")
    page.wait_for_function(f"document.querySelector('{CARD}').dataset.step === '0'")
    assert drawn(page)["title"] == first["title"]
    page.reload()
    page.wait_for_selector("#chart-geometry-choice .main-svg")
    assert page.evaluate(f"document.querySelector('{CARD}').open")


@pytest.mark.parametrize("size", [*SIZES, "phone"])
def test_screenshots_of_the_geometry_card(
    server: str, browser: Any, lesson: dict[str, Any], size: str
) -> None:
    width, height = {**SIZES, "phone": (390, 844)}[size]
    shots = Path(os.environ.get("GEOMETRY_SHOTS", SHOTS))
    shots.mkdir(parents=True, exist_ok=True)
    with new_page(browser, width, height) as page:
        for step in (0, 2, 5):  # f3 alone; f3 and f2; f3 deleted, f1 and f2 left
            page.goto(f"{server}/teach/{lesson['id']}?step={step}")
            page.wait_for_selector("#chart-geometry-3d .main-svg")
            page.wait_for_timeout(300)
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, overflow
            page.locator(CARD).scroll_into_view_if_needed()
            page.locator(CARD).screenshot(path=str(shots / f"geometry-{size}-step{step}.png"))
        page.screenshot(path=str(shots / f"geometry-{size}-full.png"), full_page=True)
