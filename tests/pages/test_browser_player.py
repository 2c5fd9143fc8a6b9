"""The trace player (static/js/player.js) in a real Chromium, on the run page and the teaching
page: stepping, play and its speed, the step in the URL, the sentence after the answer; the
teaching page steps through its frames without a request per step; screenshots at a laptop's,
a projector's and a phone's size."""

from __future__ import annotations

from typing import Any

import pytest
from browser_helpers import CHROMIUM, SHOTS, SIZES, api, figure2_foba_run, new_page

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (/usr/bin/chromium)"
)

CHARTS = ("chart-path", "chart-objective-step", "chart-objective-size")
SCREENS = {**SIZES, "phone": (390, 844)}
# The run page's step counter, once player.js has built it.
STEP_NO = "(document.querySelector('#player .step-no') || {textContent: ''}).textContent"


@pytest.fixture(scope="module")
def lesson(server: str) -> dict[str, Any]:
    """Zhang's Figure 2 lesson: its FoBa run (k = 2) goes on past its answer."""
    foba = figure2_foba_run(server)
    trace = api(server, "GET", f"/api/runs/{foba['id']}/trace")["events"]
    return {"run": foba, "events": trace}


def frames_in(page: Any) -> dict[str, Any]:
    return page.evaluate("JSON.parse(document.getElementById('teach-frames').textContent)")


def heights(page: Any) -> dict[str, float]:
    return page.evaluate(
        "ids => Object.fromEntries(ids.map(id => "
        "[id, document.getElementById(id).getBoundingClientRect().height]))",
        list(CHARTS),
    )


def shown_step(page: Any) -> int:
    return int(page.get_attribute(".player-status [data-step]", "data-step"))


def test_teaching_page_steps_without_asking_the_server(
    server: str, page: Any, lesson: dict[str, Any]
) -> None:
    run_id = lesson["run"]["id"]
    page.goto(f"{server}/teach/{run_id}?step=0")
    page.wait_for_selector("#chart-candidates .main-svg")
    page.wait_for_load_state("networkidle")
    data = frames_in(page)
    answer = data["answer"]
    assert answer is not None and answer["k"] == 2
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))

    def narrated(i: int) -> None:
        frame = data["frames"][i]
        assert shown_step(page) == frame["step"]
        assert page.inner_text(".narration .sentence") == frame["teach"]["sentence"]
        assert page.inner_text(".narration .step-label") == frame["teach"]["label"]
        assert page.evaluate("location.search") == f"?step={frame['step']}"
        assert page.is_visible(".player-answer") == (frame["step"] > answer["step"])

    narrated(0)
    assert "added: it has the largest" in page.inner_text(".narration")
    for i in range(1, len(data["frames"])):
        page.keyboard.press("ArrowRight")
        narrated(i)
        if data["frames"][i]["teach"]["figure"]:
            title = page.evaluate("document.getElementById('chart-candidates').layout.title.text")
            assert title == data["frames"][i]["teach"]["figure"]["layout"]["title"]["text"]
    assert answer["text"] in page.inner_text(".player-answer")
    page.keyboard.press("ArrowLeft")
    narrated(len(data["frames"]) - 2)
    page.keyboard.press("Home")
    narrated(0)
    page.keyboard.press("d")  # the next deletion: FoBa deletes f3
    removal = next(i for i, f in enumerate(data["frames"]) if f["kind"] == "remove")
    narrated(removal)
    assert page.inner_text(".narration .sentence").startswith("f3 removed")
    page.click(".timeline a[data-index='2']")  # a tick of the timeline
    narrated(2)
    page.eval_on_selector(
        ".player-bar .slider",
        "el => { el.value = 4; el.dispatchEvent(new Event('input', {bubbles: true})); }",
    )
    narrated(4)
    # Play at 4x: several steps a second, then pause.
    page.select_option(".player-bar select[data-act=speed]", "4")
    page.click(".player-bar [data-act=play]")
    page.wait_for_function("document.querySelector('.player-status [data-step]').dataset.step >= 7")
    page.click(".player-bar [data-act=play]")
    stopped = shown_step(page)
    page.wait_for_timeout(700)
    assert shown_step(page) == stopped
    assert requests == [], requests  # every step came from the frames in the page
    # The step is in the URL: a link reproduces the view, the speed is remembered.
    page.goto(f"{server}/teach/{run_id}?step={stopped}")
    page.wait_for_selector("#chart-candidates")
    assert shown_step(page) == stopped
    assert page.input_value(".player-bar select[data-act=speed]") == "4"
    page.goto(f"{server}/teach/{run_id}?step=9999")
    page.wait_for_selector(".player-note")
    assert "there is no step 9999" in page.inner_text(".player-status")


def test_run_page_player_slider_play_and_the_answer(
    server: str, page: Any, lesson: dict[str, Any]
) -> None:
    run_id = lesson["run"]["id"]
    page.goto(f"{server}/runs/{run_id}")
    label = page.locator("#player .step-no")
    page.wait_for_function("document.getElementById('chart-path').layout !== undefined")
    last = page.eval_on_selector("#player .slider", "el => Number(el.max)")
    assert label.inner_text().startswith(f"Step {last} of")
    events = lesson["events"]  # the answer's sentence shows after the answer's step only
    assert page.is_visible("#player .player-answer")
    assert "The answer was found at step" in page.inner_text("#player .player-answer")
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.eval_on_selector(
        "#player .slider",
        "el => { el.value = 3; el.dispatchEvent(new Event('input', {bubbles: true})); }",
    )
    assert label.inner_text().startswith("Step 3 of")
    assert not page.is_visible("#player .player-answer")
    assert page.evaluate("document.getElementById('chart-path').layout.shapes[0].x0") == 3
    page.click("#player [data-act=next]")
    assert label.inner_text().startswith("Step 4 of")
    page.click("#player [data-act=first]")
    page.select_option("#player select[data-act=speed]", "2")
    page.click("#player [data-act=play]")
    page.wait_for_function(
        "document.querySelector('#player .step-no').textContent.startsWith('Step 2 of')"
    )
    page.click("#player [data-act=play]")  # pause
    stopped = label.inner_text()
    page.wait_for_timeout(900)
    assert label.inner_text() == stopped
    page.keyboard.press("End")
    assert label.inner_text().startswith(f"Step {events[-1]['step']} of")
    assert requests == [], requests


def test_run_pages_keys_presentation_and_a_missing_step(
    server: str, page: Any, finished_run: dict[str, Any]
) -> None:
    run_id = finished_run["id"]
    page.goto(f"{server}/runs/{run_id}?step=3")
    label = page.locator("#player .step-no")
    page.wait_for_function(f"{STEP_NO}.startsWith('Step 3 of')")
    page.keyboard.press("ArrowRight")
    assert label.inner_text().startswith("Step 4 of")
    page.wait_for_function("location.search === '?step=4'")
    page.keyboard.press("Home")
    assert label.inner_text().startswith("Step 0 of")
    trace = api(server, "GET", f"/api/runs/{run_id}/trace")["events"]
    deletion = next((e["step"] for e in trace if e["kind"] in ("remove", "swap")), None)
    page.keyboard.press("d")
    if deletion is not None:
        assert label.inner_text().startswith(f"Step {deletion} of")
    page.keyboard.press("p")
    assert page.evaluate("document.documentElement.classList.contains('present')")
    assert not page.locator(".metrics").is_visible()
    page.wait_for_selector('#player[data-drawn="present"]')
    wide = page.evaluate(
        "['chart-path', 'chart-objective-step'].map(id => "
        "document.getElementById(id).querySelector('.main-svg').getBoundingClientRect().width)"
    )
    assert wide[1] > 0.9 * wide[0], wide  # one column: every chart as wide as the path
    page.screenshot(path=str(SHOTS / "player-run-presentation.png"), full_page=True)
    page.keyboard.press("p")
    assert page.locator(".metrics").is_visible()
    page.goto(f"{server}/runs/{run_id}?step=99999")
    page.wait_for_function(f"{STEP_NO}.includes('there is no step 99999')")


@pytest.mark.parametrize("size", list(SIZES))
def test_the_players_charts_keep_their_height(
    server: str, browser: Any, finished_run: dict[str, Any], size: str
) -> None:
    width, height = SIZES[size]
    with new_page(browser, width, height) as page:
        page.goto(f"{server}/runs/{finished_run['id']}")
        page.wait_for_function("document.getElementById('chart-path').layout !== undefined")
        before = heights(page)
        assert min(before.values()) > 300, before
        page.click("#player [data-act=first]")
        page.click("#player [data-act=next]")
        page.eval_on_selector(
            "#player .slider",
            "el => { el.value = 2; el.dispatchEvent(new Event('input', {bubbles: true})); }",
        )
        page.click("#player [data-act=play]")
        page.wait_for_timeout(1400)
        page.click("#player [data-act=play]")
        after = heights(page)
        for chart, h in before.items():
            assert abs(after[chart] - h) <= 0.05 * h, (chart, h, after[chart])


def test_changing_k_in_teaching_mode_brings_new_frames(
    server: str, page: Any, finished_run: dict[str, Any]
) -> None:
    run_id = finished_run["id"]
    page.goto(f"{server}/teach/{run_id}?step=2")
    page.wait_for_selector("#chart-candidates .main-svg")
    before = frames_in(page)
    page.evaluate("window.notReloaded = true")  # gone if the page were loaded again
    page.fill(".what-if input[name=k]", "2")
    page.dispatch_event(".what-if input[name=k]", "change")
    page.wait_for_selector(".what-if-note")
    assert "k = 2" in page.inner_text(".what-if-note")
    assert page.evaluate("window.notReloaded === true")
    page.wait_for_function("location.search.includes('k=2')")
    assert frames_in(page)["frames"] != before["frames"]
    assert shown_step(page) == 2
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.keyboard.press("ArrowRight")  # the keys step the what-if's frames, keeping the change
    assert shown_step(page) == 3
    page.wait_for_function("location.search.includes('step=3') && location.search.includes('k=2')")
    assert "k = 2" in page.inner_text(".what-if-note")
    assert requests == [], requests
    page.screenshot(path=str(SHOTS / "player-teach-what-if.png"), full_page=True)


@pytest.mark.parametrize("size", list(SCREENS))
def test_screenshots_of_the_run_and_teaching_pages(
    server: str, browser: Any, lesson: dict[str, Any], size: str
) -> None:
    width, height = SCREENS[size]
    run_id = lesson["run"]["id"]
    step = lesson["events"][7]["step"]  # a forward step after the answer
    with new_page(browser, width, height) as page:
        page.goto(f"{server}/teach/{run_id}?step={step}")
        page.wait_for_selector("#chart-candidates .main-svg")
        page.wait_for_timeout(300)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, overflow
        if size != "phone":  # what matters is above the fold: controls, chart, sentence
            for selector in (".player-controls", "#chart-candidates", ".sentence"):
                box = page.locator(selector).bounding_box()
                assert box is not None and box["y"] < height - 40, (selector, box)
        page.screenshot(path=str(SHOTS / f"player-teach-{size}.png"))
        page.screenshot(path=str(SHOTS / f"player-teach-{size}-full.png"), full_page=True)
        page.goto(f"{server}/runs/{run_id}?step={step}")
        page.wait_for_function("document.getElementById('chart-path').layout !== undefined")
        page.wait_for_timeout(300)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, overflow
        page.locator("#player").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"player-run-{size}.png"))
        page.screenshot(path=str(SHOTS / f"player-run-{size}-full.png"), full_page=True)
