"""The teaching page in a real Chromium: "Predict first" (a wrong pick, why it lost, the
running score, keys, nothing asked of the server), "why not this feature?" from a support chip
and from a bar of the candidates chart, and the presentation mode of the teaching page and of
the class session at a laptop's and a projector's size (nothing that matters below the fold),
with screenshots at those sizes and a phone's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_helpers import CHROMIUM, SHOTS, SIZES, figure2_foba_run, new_page

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (/usr/bin/chromium)"
)

SCREENS = {**SIZES, "phone": (390, 844)}


@pytest.fixture(scope="module")
def lesson(server: str) -> dict[str, Any]:
    """Zhang's Figure 2 lesson: its FoBa run (k = 2) adds f3 first and deletes it later."""
    return {"run": figure2_foba_run(server)}


@pytest.fixture
def sized(browser: Any) -> Iterator[Any]:
    """new_page(browser, width, height), failing the test on a JavaScript error."""
    errors: list[str] = []

    def make(width: int, height: int) -> Any:
        manager = new_page(browser, width, height)
        page = manager.__enter__()
        opened.append(manager)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.set_default_timeout(20_000)
        return page

    opened: list[Any] = []
    yield make
    for manager in opened:
        manager.__exit__(None, None, None)
    assert not errors, errors


def frames_in(page: Any) -> dict[str, Any]:
    return page.evaluate("JSON.parse(document.getElementById('teach-frames').textContent)")


def shown_index(page: Any, data: dict[str, Any]) -> int:
    step = int(page.get_attribute(".player-status [data-step]", "data-step"))
    return next(i for i, f in enumerate(data["frames"]) if f["step"] == step)


def score(page: Any) -> tuple[int, int]:
    el = page.locator(".predict-score")
    return int(el.get_attribute("data-right")), int(el.get_attribute("data-answered"))


def test_predict_first_asks_then_reveals_why_a_wrong_pick_lost_and_keeps_the_score(
    server: str, page: Any, lesson: dict[str, Any]
) -> None:
    run_id = lesson["run"]["id"]
    page.goto(f"{server}/teach/{run_id}?step=0&predict=1")
    page.wait_for_selector(".predict-choices button")
    page.wait_for_load_state("networkidle")
    data = frames_in(page)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    assert page.is_checked("#predict-first")
    # Asked before the step: the chart, the sentence and the support are not shown yet.
    first = data["frames"][0]
    q = first["question"]
    assert page.inner_text(".predict-prompt") == q["prompt"] == "Which feature enters next?"
    assert not page.is_visible("#chart-candidates")
    assert not page.is_visible(".narration .sentence")
    assert not page.is_visible(".support-line")
    assert page.inner_text(".timeline a[data-index='0']") == "?"  # the tick names no feature
    assert [b for b in page.locator(".predict-choices button").all_inner_texts()] == [
        label for _, label in q["choices"]
    ]
    # A wrong pick: the step is revealed with the numbers that decide it, and why it lost.
    wrong = next(c for c, _ in q["choices"] if c != q["answer"])
    page.click(f".predict-choices button[data-choice='{wrong}']")
    page.wait_for_selector(".predict-reveal.wrong")
    reveal = page.inner_text(".predict-reveal")
    assert f"Answer: {q['answer']}" in reveal and f"you said {wrong}" in reveal
    assert q["lost"][wrong] in reveal and q["rule"] in reveal
    assert page.is_visible("#chart-candidates") and page.is_visible(".narration .sentence")
    assert page.inner_text(".narration .sentence") == first["teach"]["sentence"]
    assert score(page) == (0, 1)
    assert page.inner_text(".predict-score") == "0 of 1 right"
    # The next question, answered right with its number key (keyboard only).
    while True:
        page.keyboard.press("ArrowRight")
        i = shown_index(page, data)
        if "question" in data["frames"][i]:
            break
    q = data["frames"][i]["question"]
    assert page.is_visible(".predict-choices")
    key = 1 + [c for c, _ in q["choices"]].index(q["answer"])
    page.keyboard.press(str(key))
    page.wait_for_selector(".predict-reveal.right")
    assert score(page) == (1, 2)
    # Tab to a choice and Enter: the reveal takes the focus (read out: aria-live).
    while True:
        page.keyboard.press("ArrowRight")
        i = shown_index(page, data)
        if "question" in data["frames"][i]:
            break
    q = data["frames"][i]["question"]
    page.focus(".predict-choices button")
    first_choice = q["choices"][0][0]
    page.keyboard.press("Enter")
    page.wait_for_selector(".predict-reveal:not(:empty)")
    assert page.evaluate("document.activeElement.classList.contains('predict-reveal')")
    right = int(first_choice == q["answer"])
    assert score(page) == (1 + right, 3)
    # Going back shows the pick that was made, not the question again.
    page.keyboard.press("Home")
    assert page.is_visible(".predict-reveal.wrong")
    # Playing stops at the next unanswered question.
    page.click(".player-bar [data-act=play]")
    page.wait_for_selector(".teach-panel.asking")
    stopped = shown_index(page, data)
    assert "question" in data["frames"][stopped]
    assert page.inner_text(".player-bar [data-act=play]").endswith("Play")
    assert requests == [], requests  # the questions and reveals are in the frames
    assert "predict=1" in page.url
    page.screenshot(path=str(SHOTS / "teach-predict-1366x900.png"))
    # A what-if (another k) brings new frames and keeps asking; its score starts again.
    page.fill(".what-if input[name=k]", "3")
    page.dispatch_event(".what-if input[name=k]", "change")
    page.wait_for_selector(".what-if-note")
    page.wait_for_function(
        "location.search.includes('k=3') && location.search.includes('predict=1')"
    )
    assert page.is_checked("#predict-first")
    page.keyboard.press("Home")
    page.wait_for_selector(".teach-panel.asking .predict-choices button")
    assert not page.is_visible(".predict-score")
    # Switched off: the step itself, no question, no predict in the URL.
    page.uncheck("#predict-first")
    assert "predict" not in page.url
    assert not page.is_visible(".predict-box") and page.is_visible(".narration .sentence")


def test_why_not_from_a_support_chip_and_a_bar_of_the_chart(
    server: str, page: Any, lesson: dict[str, Any]
) -> None:
    run_id = lesson["run"]["id"]
    page.goto(f"{server}/teach/{run_id}?step=0")
    page.wait_for_selector("#chart-candidates .main-svg")
    data = frames_in(page)
    f3 = data["names"].index("f3")
    # The first step adds f3 (best alone), which the run deletes later: "why not f3?".
    page.click(f".support-chips button[data-why-not='{f3}']")
    page.wait_for_selector("#why-not-answer h3")
    assert "Why not f3?" in page.inner_text("#why-not-answer h3")
    page.screenshot(path=str(SHOTS / "teach-why-not-chip-1366x900.png"))
    # A bar of the candidates chart: the first trace holds the other candidates.
    other = page.evaluate("document.getElementById('chart-candidates').data[0].y[0]")
    assert other != "f3"
    page.locator("#chart-candidates g.trace.bars").first.locator("path").first.click(force=True)
    page.wait_for_function(
        "name => document.querySelector('#why-not-answer h3')?.textContent.includes(name)",
        arg=other,
    )
    assert page.inner_text("#why-not-answer h3").startswith((f"Why {other}?", f"Why not {other}?"))


def test_presentation_mode_fits_the_screen_at_both_sizes(
    server: str, sized: Any, lesson: dict[str, Any]
) -> None:
    run_id = lesson["run"]["id"]
    for width, height in SIZES.values():
        page = sized(width, height)
        page.goto(f"{server}/teach/{run_id}?step=3")
        page.wait_for_selector("#chart-candidates .main-svg")
        page.click("[data-present]")
        page.wait_for_function("document.documentElement.classList.contains('present')")
        page.wait_for_timeout(400)  # the chart is drawn again in its new room
        assert "present=1" in page.url
        assert page.get_attribute("[data-present]", "aria-pressed") == "true"
        print(
            f"full screen granted at {width}x{height}:",
            page.evaluate("!!document.fullscreenElement"),
        )
        assert not page.is_visible("header.top") and not page.is_visible("footer")
        assert not page.is_visible(".crumbs") and not page.is_visible(".teach-lead")
        inside(page, height, (".player-bar", "#chart-candidates", ".narration .sentence"))
        chart = page.locator("#chart-candidates").bounding_box()
        sentence = page.locator(".narration .sentence").bounding_box()
        assert chart and sentence
        assert sentence["x"] > chart["x"] + chart["width"] / 2  # side by side
        page.screenshot(path=str(SHOTS / f"teach-present-{width}x{height}.png"))
        page.keyboard.press("Escape")
        page.wait_for_function("!document.documentElement.classList.contains('present')")
        assert "present" not in page.url and page.is_visible("header.top")
        assert page.evaluate("document.fullscreenElement === null")
        # A link opens in it.
        page.goto(f"{server}/teach/{run_id}?step=3&present=1&predict=1")
        page.wait_for_selector(".predict-choices button")
        assert page.evaluate("document.documentElement.classList.contains('present')")
        inside(page, height, (".player-bar", ".predict-prompt", ".predict-choices"))
        page.screenshot(path=str(SHOTS / f"teach-present-predict-{width}x{height}.png"))


def test_the_class_sessions_present_button_at_both_sizes(
    server: str, sized: Any, lesson: dict[str, Any]
) -> None:
    page = sized(1366, 768)
    page.goto(f"{server}/class/new?run={lesson['run']['id']}")
    page.click("button[type=submit].primary")
    page.wait_for_url("**/class/*")
    url = page.url
    page.click("#c-next")  # posted in place (HTMX): the page is not loaded again
    page.wait_for_selector("#c-reveal")
    page.wait_for_selector(".live .prompt")
    for width, height in SIZES.values():
        page.set_viewport_size({"width": width, "height": height})
        page.click("[data-present]")
        page.wait_for_selector(".classroom.present")
        assert "present=1" in page.url
        assert not page.is_visible("header.top")
        inside(page, height, (".join-code", ".live .prompt", "#c-reveal"))
        page.screenshot(path=str(SHOTS / f"class-present-{width}x{height}.png"))
        page.keyboard.press("Escape")
        page.wait_for_selector(".classroom:not(.present)")
        assert page.is_visible("header.top")
    # The controls keep the mode: reveal while presenting, still presenting after it.
    page.goto(url + "?present=1")
    page.click("#c-reveal")
    page.wait_for_selector(".reveal .answer")
    page.wait_for_selector("#c-next")
    assert page.evaluate("document.querySelector('.classroom').classList.contains('present')")


def test_screenshots_of_the_teach_page_in_predict_mode(
    server: str, sized: Any, lesson: dict[str, Any]
) -> None:
    run_id = lesson["run"]["id"]
    for width, height in SCREENS.values():
        page = sized(width, height)
        page.goto(f"{server}/teach/{run_id}?step=0&predict=1")
        page.wait_for_selector(".predict-choices button")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, overflow
        page.screenshot(path=str(SHOTS / f"teach-ask-{width}x{height}.png"), full_page=True)
        page.click(".predict-choices button >> nth=1")
        page.wait_for_selector(".predict-reveal:not(:empty)")
        page.screenshot(path=str(SHOTS / f"teach-reveal-{width}x{height}.png"), full_page=True)


def inside(page: Any, height: int, selectors: tuple[str, ...]) -> None:
    """Each element is wholly inside the viewport (nothing that matters below the fold).

    Measured in one script, not element by element: the classroom's live part is replaced by a
    poll every half second, and an element handle taken before a swap has no box after it.
    """
    boxes = page.evaluate(
        """(selectors) => selectors.map((s) => {
            const e = document.querySelector(s);
            if (!e) return null;
            const r = e.getBoundingClientRect();
            return {y: r.y, height: r.height};
        })""",
        list(selectors),
    )
    for selector, box in zip(selectors, boxes, strict=True):
        assert box is not None and box["height"] > 0, selector
        assert box["y"] >= 0 and box["y"] + box["height"] <= height, (selector, box, height)
