"""The classroom in a real Chromium: a lecturer and 30 students (one browser, a context each)
join by code, vote, and the lecturer's histogram shows every vote within a second of its
arrival (p95 over the test's votes, both rounds); then the reveal reaches the phones. With
API_KEY set, a student sees the session and nothing else. Screenshots of every classroom view
at 1366x768, 1920x1080 and a 390x844 phone go to SHOTS/classroom-*.png."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_helpers import ARGS, CHROMIUM, SHOTS, poll_without_eval, serve_app

pytestmark = [
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed"),
]

STUDENTS = 30
SEEN: dict[str, Any] = {}  # what the first test made, for the screenshots of every view
PHONE = {"width": 390, "height": 844}
SCREENS = {"1366x768": (1366, 768), "1920x1080": (1920, 1080)}
KEY = "classroom-key-27"
# A MutationObserver on the projector records when the vote count changes (CDP runs this
# function outside the page's CSP, as Playwright's evaluate does).
WATCH_COUNT = """() => {
  window.__counts = [];
  const read = () => {
    const el = document.getElementById("vote-total");
    const n = el ? Number(el.textContent) : -1;
    const last = window.__counts[window.__counts.length - 1];
    if (!last || last[0] !== n) window.__counts.push([n, Date.now()]);
  };
  new MutationObserver(read).observe(document.body, { childList: true, subtree: true });
  read();
}"""


def lesson_run(base: str, headers: dict[str, str] | None = None) -> int:
    """The FoBa run of the Figure 2 lesson, finished."""
    started = httpx.post(f"{base}/teach/lessons/figure2", headers=headers, timeout=60)
    assert started.status_code in (200, 303), started.text
    runs = httpx.get(f"{base}/api/runs", headers=headers, timeout=30).json()
    items = runs["items"] if isinstance(runs, dict) else runs
    foba = next(r for r in items if r["algorithm"] == "foba-obj")
    deadline = time.monotonic() + 90
    while httpx.get(f"{base}/api/runs/{foba['id']}", headers=headers).json()["status"] != "done":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    return int(foba["id"])


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("classroom") / "data"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Iterator[str]:
    yield from serve_app(tmp_path_factory, workers=1, data_dir=data_dir)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield browser
        browser.close()


def context(browser: Any, errors: list[str], **viewport: int) -> Any:
    ctx = browser.new_context(viewport=viewport or {"width": 1366, "height": 768})
    page = ctx.new_page()
    poll_without_eval(page)
    page.set_default_timeout(30_000)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on(
        "console",
        lambda m: (
            errors.append(m.text)
            if m.type == "error" and "Content Security Policy" in m.text
            else None
        ),
    )
    return page


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"classroom-{name}.png"))


def vote_times(data_dir: Path, question_position: int, rnd: int) -> list[float]:
    """When the server stored each vote of a question's round (epoch ms), oldest first."""
    with sqlite3.connect(data_dir / "foba-lab.db") as db:
        rows = db.execute(
            "SELECT v.voted_at FROM class_votes v JOIN class_questions q ON q.id = v.question_id"
            " WHERE q.position = ? AND v.round = ? ORDER BY v.voted_at",
            (question_position, rnd),
        ).fetchall()
    return sorted(datetime.fromisoformat(t).timestamp() * 1000 for (t,) in rows)


def latencies(stored: list[float], counts: list[list[float]]) -> list[float]:
    """For the i-th vote stored, seconds until the projector first showed at least i votes."""
    found = []
    for i, t in enumerate(stored, start=1):
        shown = next(at for n, at in counts if n >= i and at >= t - 50)
        found.append(max(0.0, (shown - t) / 1000))
    return found


def cast(phones: list[Any], pick: Any) -> None:
    for i, phone in enumerate(phones):
        phone.locator(".choices button", has_text=pick(i)).first.click(no_wait_after=True)


def test_thirty_students_vote_and_the_projector_follows(
    server: str, chromium: Any, data_dir: Path
) -> None:
    errors: list[str] = []
    run_id = lesson_run(server)
    lecturer = context(chromium, errors)
    lecturer.goto(f"{server}/class")
    shot(lecturer, "index-1366x768")
    lecturer.goto(f"{server}/class/new?run={run_id}")
    shot(lecturer, "new-1366x768")
    lecturer.fill("#c-story", "f3 looks best alone. Does FoBa keep it?")
    lecturer.click("button[type=submit].primary")
    lecturer.wait_for_url("**/class/*")
    code = lecturer.text_content(".join-code").strip()
    SEEN.update(run=run_id, code=code, session=lecturer.url.rsplit("/", 1)[1])
    lecturer.goto(lecturer.url + "?present=true")

    phones = [context(chromium, errors, **PHONE) for _ in range(STUDENTS)]
    phones[0].goto(f"{server}/join")
    shot(phones[0], "join-phone")
    phones[0].fill("#code", code.lower())
    phones[0].click("button.primary")
    phones[0].wait_for_selector("p.wait")
    for phone in phones[1:]:
        phone.goto(f"{server}/c/{code}")
    shot(phones[1], "waiting-phone")
    shot(lecturer, "start-1366x768")

    lecturer.click("#c-next")
    lecturer.wait_for_selector("#vote-total")
    lecturer.evaluate(WATCH_COUNT)
    for phone in phones:
        phone.wait_for_selector(".choices button")
    shot(phones[0], "question-phone")
    # 20 see through f3 being best alone ... and 10 pick f1.
    cast(phones, lambda i: "f3" if i % 3 else "f1")
    lecturer.wait_for_function(
        f"document.getElementById('vote-total')?.textContent === '{STUDENTS}'"
    )
    round1 = latencies(vote_times(data_dir, 0, 1), lecturer.evaluate("() => window.__counts"))
    shot(phones[1], "voted-phone")
    for name, (w, h) in SCREENS.items():
        lecturer.set_viewport_size({"width": w, "height": h})
        shot(lecturer, f"votes-{name}")

    lecturer.click("#c-reveal")
    lecturer.wait_for_selector(".reveal .answer")
    for phone in phones:
        phone.wait_for_selector(".reveal")
    assert "Answer: f3" in phones[1].text_content(".reveal .answer")
    assert "Your pick, f1, scored" in phones[0].text_content(".reveal")
    shot(phones[0], "reveal-wrong-phone")
    shot(phones[1], "reveal-right-phone")
    for name, (w, h) in SCREENS.items():
        lecturer.set_viewport_size({"width": w, "height": h})
        shot(lecturer, f"reveal-{name}")

    # Vote again after discussion: everyone now says f3; both rounds are kept.
    lecturer.click("#c-again")
    lecturer.wait_for_function(
        "document.querySelector('.step-line')?.textContent.includes('round 2')"
    )
    lecturer.evaluate(WATCH_COUNT)
    for phone in phones:
        phone.wait_for_selector(".choices button")
    cast(phones, lambda i: "f3")
    lecturer.wait_for_function(
        f"document.getElementById('vote-total')?.textContent === '{STUDENTS}'"
    )
    round2 = latencies(vote_times(data_dir, 0, 2), lecturer.evaluate("() => window.__counts"))
    lecturer.click("#c-reveal")
    lecturer.wait_for_selector(".reveal .answer")
    assert "round 1: 30" in lecturer.text_content(".votes")
    shot(lecturer, "again-1920x1080")

    # The deletion question, on the projector at both sizes: nothing below the fold.
    lecturer.click("#c-next")
    lecturer.wait_for_selector("#c-reveal")
    lecturer.goto(lecturer.url.split("?")[0] + "?present=true")
    for name, (w, h) in SCREENS.items():
        lecturer.set_viewport_size({"width": w, "height": h})
        box = lecturer.locator("#c-reveal").bounding_box()
        shot(lecturer, f"question2-{name}")
        assert box and box["y"] + box["height"] <= h, (name, box)
        shot(lecturer, f"delete-{name}")
    phones[0].wait_for_selector(".choices button")
    shot(phones[0], "delete-phone")

    every = sorted(round1 + round2)
    p50, p95 = every[len(every) // 2], every[int(0.95 * (len(every) - 1))]
    summary = (
        f"{len(every)} votes: vote stored -> projector histogram p50 {p50:.3f} s, "
        f"p95 {p95:.3f} s, max {every[-1]:.3f} s; last vote of round 1 -> all 30 shown "
        f"{round1[-1]:.3f} s, round 2 {round2[-1]:.3f} s"
    )
    (SHOTS / "classroom-latency.txt").write_text(summary + "\n")
    print(summary)
    assert not errors, errors
    # Every vote of both rounds reached the projector's histogram. How fast is reported here
    # (classroom-latency.txt) and measured by bench/classroom_votes.py, not asserted: a test
    # never asserts a wall-clock time.
    assert len(round1) == len(round2) == 30, summary


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve_app(tmp_path_factory, workers=1, api_key=KEY)


def test_with_an_api_key_a_student_sees_the_session_and_nothing_else(
    keyed_server: str, chromium: Any
) -> None:
    errors: list[str] = []
    bearer = {"Authorization": f"Bearer {KEY}"}
    run_id = lesson_run(keyed_server, bearer)
    made = httpx.post(
        f"{keyed_server}/class", data={"run": run_id}, headers=bearer, follow_redirects=False
    )
    assert made.status_code == 303, made.text
    page = httpx.get(keyed_server + made.headers["location"], headers=bearer).text
    code = page.split('aria-label="join code">')[1].split("<")[0]
    session_id = made.headers["location"].rsplit("/", 1)[1]
    httpx.post(f"{keyed_server}/class/{session_id}/next", headers=bearer)

    phone = context(chromium, errors, **PHONE)
    phone.goto(f"{keyed_server}/c/{code}")
    phone.locator(".choices button").first.click()
    phone.wait_for_selector(".choices button.picked")
    shot(phone, "keyed-phone")
    for path in (f"/class/{session_id}", "/class", "/teach", f"/teach/{run_id}", "/", "/runs"):
        phone.goto(keyed_server + path)
        assert "/signin" in phone.url, (path, phone.url)
    for path in ("/api/runs", f"/api/runs/{run_id}/trace", f"/class/{session_id}/live"):
        answer = phone.request.get(keyed_server + path)
        assert answer.status in (401, 303), (path, answer.status)
    assert not errors, errors


def test_every_view_at_three_sizes(server: str, chromium: Any) -> None:
    """Screenshots of each classroom view at 1366x768, 1920x1080 and a 390x844 phone."""
    if not SEEN:
        pytest.skip("needs the class the first test made")
    errors: list[str] = []
    run, code, sid = SEEN["run"], SEEN["code"], SEEN["session"]
    views = {
        "index": "/class",
        "new": f"/class/new?run={run}",
        "session": f"/class/{sid}",
        "present": f"/class/{sid}?present=true",
        "join": "/join",
        "student": f"/c/{code}",
        "predict": f"/predict/{run}?steps=0,5&story=f3+looks+best+alone",
        "predict-reveal": f"/predict/{run}?steps=0,5&q=1&pick=none&right=1&answered=1",
    }
    sizes = {**SCREENS, "phone": (PHONE["width"], PHONE["height"])}
    for size, (w, h) in sizes.items():
        page = context(chromium, errors, width=w, height=h)
        for name, path in views.items():
            page.goto(server + path)
            shot(page, f"view-{name}-{size}")
            wide = page.evaluate("() => document.documentElement.scrollWidth")
            assert wide <= w + 1, (name, size, wide)  # nothing wider than the screen
        page.context.close()
    assert not errors, errors
