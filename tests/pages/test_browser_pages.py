"""The pages' regressions in a real Chromium: Back leaves a consistent form, a running run is
followed; and every page at a laptop's and a projector's size, with screenshots for a person
to look at. The player's tests (run page and teaching page): test_browser_player.py."""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser_helpers import CHROMIUM, SHOTS, SIZES, api, new_page, wait_done

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (/usr/bin/chromium)"
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
