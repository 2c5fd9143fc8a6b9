"""The pages' regressions in a real Chromium: the player's charts keep their size, Back leaves a
consistent form, fast keys lose no step, the run page's keys and URL; and every page at a
laptop's and a projector's size, with screenshots for a person to look at."""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser_helpers import CHROMIUM, SHOTS, SIZES, api, new_page, wait_done

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (/usr/bin/chromium)"
)

CHARTS = ("chart-path", "chart-objective-step", "chart-objective-size")


def heights(page: Any) -> dict[str, float]:
    return page.evaluate(
        "ids => Object.fromEntries(ids.map(id => "
        "[id, document.getElementById(id).getBoundingClientRect().height]))",
        list(CHARTS),
    )


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
        page.screenshot(path=str(SHOTS / f"pages-run-player-{size}.png"), full_page=True)


def test_the_run_pages_keys_and_the_step_in_the_url(
    server: str, page: Any, finished_run: dict[str, Any]
) -> None:
    run_id = finished_run["id"]
    page.goto(f"{server}/runs/{run_id}?step=3")
    label = page.locator("#player .step-no")
    page.wait_for_function(
        "document.querySelector('#player .step-no').textContent.startsWith('Step 3 of')"
    )
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
    page.screenshot(path=str(SHOTS / "pages-run-presentation.png"), full_page=True)
    page.keyboard.press("p")
    assert page.locator(".metrics").is_visible()
    page.goto(f"{server}/runs/{run_id}?step=99999")
    page.wait_for_function(
        "document.querySelector('#player .step-no').textContent.includes('there is no step 99999')"
    )


def test_back_after_starting_a_run_leaves_a_consistent_form(server: str, page: Any) -> None:
    ds = api(
        server,
        "POST",
        "/api/datasets/generate",
        json={"generator": "gaussian_regression", "params": {"n": 60, "d": 10}},
    )
    page.goto(f"{server}/datasets/{ds['id']}")
    page.select_option("#run-algorithm", "omp")
    page.wait_for_selector('#run-params [data-algorithm="omp"]')
    page.click("#run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/runs/\d+$"))
    page.wait_for_selector("#results", timeout=60_000)  # the run page reloads itself when done
    page.go_back()
    page.wait_for_url(re.compile(r"/datasets/\d+$"))
    page.wait_for_timeout(500)
    chosen = page.input_value("#run-algorithm")
    page.wait_for_selector(f'#run-params [data-algorithm="{chosen}"]')
    page.click("#run-form button[type=submit]")  # the form is sendable as it stands
    page.wait_for_url(re.compile(r"/runs/\d+$"))
    run_id = page.url.rsplit("/", 1)[1]
    run = api(server, "GET", f"/api/runs/{run_id}")
    assert run["algorithm"] == chosen


def test_fast_arrow_keys_lose_no_step(server: str, page: Any, finished_run: dict[str, Any]) -> None:
    run_id = finished_run["id"]
    page.goto(f"{server}/teach/{run_id}?step=0")
    page.wait_for_selector('[data-step="0"]')
    for _ in range(8):
        page.keyboard.press("ArrowRight", delay=10)
    page.wait_for_selector('[data-step="8"]')
    page.wait_for_function("location.search === '?step=8'")
    page.wait_for_timeout(600)  # nothing late arrives to move it again
    assert page.locator("[data-step]").get_attribute("data-step") == "8"
    # Back returns to the step shown before (steps skipped by fast keys were never shown),
    # and the panel follows the URL.
    page.go_back()
    page.wait_for_function("location.search !== '?step=8'")
    back = int(page.evaluate("new URLSearchParams(location.search).get('step')"))
    assert back < 8
    page.wait_for_selector(f'[data-step="{back}"]')
    # Back to the page's first entry (it has no history state of its own) shows its step too.
    page.goto(f"{server}/teach/{run_id}?step=4")
    page.wait_for_selector('[data-step="4"]')
    page.keyboard.press("ArrowRight")
    page.wait_for_selector('[data-step="5"]')
    page.go_back()
    page.wait_for_function("location.search === '?step=4'")
    page.wait_for_selector('[data-step="4"]')


def test_a_running_run_follows_its_trace(server: str, page: Any) -> None:
    ds = api(
        server,
        "POST",
        "/api/datasets/generate",
        json={"generator": "liu2014_logistic", "params": {"n": 200, "d": 60, "s": 5}},
    )
    run = api(
        server,
        "POST",
        "/api/runs",
        json={
            "dataset_id": ds["id"],
            "algorithm": "frank-wolfe",
            "objective": "logistic",
            "params": {"B1": 20.0, "epsilon": 1e-12, "max_iter": 60000},
        },
    )
    page.goto(f"{server}/runs/{run['id']}")
    polls: list[str] = []
    page.on("request", lambda r: polls.append(r.url) if r.url.endswith("/live") else None)
    page.wait_for_function(
        "document.querySelector('#run-status .badge').textContent.trim() === 'running'",
        timeout=60_000,
    )
    page.wait_for_function("document.getElementById('chart-path').data !== undefined")
    for _ in range(100):  # HTMX polls the live fragment again (the server draws the path)
        if len(polls) >= 2:
            break
        page.wait_for_timeout(200)
    assert len(polls) >= 2, polls
    assert "live" in page.evaluate("document.getElementById('chart-path').layout.title.text")
    assert "steps recorded" in page.inner_text("#run-live .progress-text")
    page.screenshot(path=str(SHOTS / "pages-run-live.png"), full_page=True)
    page.click("#run-live [data-act=cancel]")
    page.wait_for_selector("#results", timeout=60_000)  # it ended: the page reloaded itself
    assert "Cancelled by you" in page.inner_text(".stop-reason")
    assert wait_done(server, run["id"])["status"] == "cancelled"


@pytest.mark.parametrize("size", list(SIZES))
def test_every_page_at_a_laptops_and_a_projectors_size(
    server: str, browser: Any, finished_run: dict[str, Any], size: str
) -> None:
    width, height = SIZES[size]
    with new_page(browser, width, height) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        run_id, ds_id = finished_run["id"], finished_run["dataset_id"]
        comparison = api(
            server,
            "POST",
            "/api/comparisons",
            json={
                "dataset_id": ds_id,
                "test_fraction": 0.25,
                "runs": [{"algorithm": a, "k": 3} for a in ("foba-obj", "omp", "lasso")],
            },
        )
        for r in comparison["runs"]:
            wait_done(server, r["id"])
        pages = {
            "home": "/",
            "dataset": f"/datasets/{ds_id}",
            "run": f"/runs/{run_id}",
            "comparison": f"/comparisons/{comparison['id']}",
            "teach": f"/teach/{run_id}?step=1",
            "teach-index": "/teach",
            "docs": "/docs",
            "missing": "/no/such/page",
        }
        for name, url in pages.items():
            page.goto(server + url)
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(300)
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, (name, overflow)  # nothing wider than the screen
            page.screenshot(path=str(SHOTS / f"pages-{name}-{size}.png"), full_page=True)
    assert not errors, errors


def test_changing_k_in_teaching_mode_redraws_at_once(
    server: str, page: Any, finished_run: dict[str, Any]
) -> None:
    run_id = finished_run["id"]
    page.goto(f"{server}/teach/{run_id}?step=2")
    page.wait_for_selector("#chart-candidates .main-svg")
    page.evaluate("window.notReloaded = true")  # gone if the page were loaded again
    page.fill(".what-if input[name=k]", "2")
    page.dispatch_event(".what-if input[name=k]", "change")
    page.wait_for_selector(".what-if-note")
    assert "k = 2" in page.inner_text(".what-if-note")
    assert page.evaluate("window.notReloaded === true")
    page.wait_for_function("location.search.includes('k=2')")
    page.keyboard.press("ArrowRight")  # the keys keep the change
    page.wait_for_function("location.search === '?step=3&k=2'")
    assert "k = 2" in page.inner_text(".what-if-note")
    page.screenshot(path=str(SHOTS / "pages-teach-what-if.png"), full_page=True)


def test_a_what_if_saved_from_the_teaching_page_keeps_standardize(
    server: str, page: Any, finished_run: dict[str, Any]
) -> None:
    run = api(
        server,
        "POST",
        "/api/runs",
        json={
            "dataset_id": finished_run["dataset_id"],
            "algorithm": "foba-obj",
            "k": 4,
            "standardize": False,
            "seed": 3,
        },
    )
    wait_done(server, run["id"])
    page.goto(f"{server}/teach/{run['id']}?step=1")
    page.click("text=Run it again with the scores")  # this run did not record them
    page.wait_for_url(re.compile(r"/teach/\d+\?step=0$"))
    again = api(server, "GET", f"/api/runs/{page.url.split('/teach/')[1].split('?')[0]}")
    assert (again["standardize"], again["record_candidates"], again["seed"]) == (False, True, 3)
    assert again["k"] == 4  # the button beside the title runs the stored run again
    page.goto(f"{server}/teach/{run['id']}?step=1&k=2")
    page.click(".what-if-note button")  # "save it as a run"
    page.wait_for_url(re.compile(r"/teach/\d+\?step=0$"))
    saved = api(server, "GET", f"/api/runs/{page.url.split('/teach/')[1].split('?')[0]}")
    assert (saved["standardize"], saved["k"], saved["seed"]) == (False, 2, 3)
