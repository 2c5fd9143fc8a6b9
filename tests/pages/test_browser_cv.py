"""Choosing k by cross-validation in Chromium: from the data set page's form to the CV page's
curve, and one click to the final run at the chosen k. Screenshots at a laptop's and a
projector's size go to test-output/screenshots."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import CHROMIUM, SHOTS, SIZES, api, new_page, serve_app, wait_done

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (/usr/bin/chromium)"
)


@pytest.fixture(scope="module")
def dataset(server: str) -> dict[str, Any]:
    return api(
        server,
        "POST",
        "/api/datasets/generate",
        json={
            "generator": "gaussian_regression",
            "params": {"n": 120, "d": 20, "k_true": 3},
            "random_state": 3,
            "name": "cv demo",
        },
    )


@pytest.mark.parametrize("size", list(SIZES))
def test_choose_k_from_the_data_set_page_then_run_at_it(
    server: str, browser: Any, dataset: dict[str, Any], size: str
) -> None:
    width, height = SIZES[size]
    with new_page(browser, width, height) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.set_default_timeout(30_000)
        page.goto(f"{server}/datasets/{dataset['id']}")
        form = page.locator("#cv-form")
        assert "Choose k by cross-validation" in form.inner_text()
        assert "reads every k off its path" in form.locator(".cv-mode").inner_text()
        # Another algorithm reloads the parameter panel (HTMX), as in the run form.
        page.select_option("#cv-algorithm", "forward-obj")
        page.wait_for_selector("#cv-params [data-algorithm='forward-obj']")
        page.select_option("#cv-algorithm", "foba-obj")
        page.wait_for_selector("#cv-params [data-algorithm='foba-obj']")
        page.fill("#cv-k-max", "8")
        page.fill("#cv-folds", "4")
        page.select_option("#cv-rule", "1se")
        form.screenshot(path=str(SHOTS / f"browser-cv-form-{size}.png"))
        form.locator("button[type=submit]").click()
        page.wait_for_url(re.compile(r"/cv/\d+$"))
        cv_id = int(page.url.rsplit("/", 1)[1])

        # The folds finish (the page follows them, then shows the curve).
        page.wait_for_function("document.getElementById('chart-cv')?.layout !== undefined")
        study = api(server, "GET", f"/api/cv/{cv_id}")
        curve = study["curve"]
        assert study["status"] == "done" and study["rule"] == "1se"
        chosen = page.locator("#cv-result .metric.chosen").inner_text().lower()
        assert str(curve["k_best"]) in chosen and "one-standard-error rule" in chosen
        result = page.locator("#cv-result").inner_text()
        assert f"k = {curve['k_min']}" in result and f"k = {curve['k_1se']}" in result
        names = page.evaluate("document.getElementById('chart-cv').data.map((t) => t.name)")
        assert "mean over the folds ± 1 standard error" in names
        assert f"chosen (one-standard-error rule): k = {curve['k_best']}" in names
        bars = page.evaluate(
            "document.getElementById('chart-cv').data.find((t) => t.error_y).error_y.array"
        )
        assert bars == pytest.approx(curve["se"])
        rows = page.locator("#cv-table tbody tr").count()
        assert rows == 8
        page.screenshot(path=str(SHOTS / f"browser-cv-curve-{size}.png"), full_page=True)

        # One click: the final run at the chosen k, on all rows.
        button = page.get_by_role("button", name=f"Run at k = {curve['k_best']} on all data")
        button.click()
        page.wait_for_url(re.compile(r"/runs/\d+$"))
        run_id = int(page.url.rsplit("/", 1)[1])
        page.wait_for_selector("#selected")  # the run page reloads itself once the run is done
        run = wait_done(server, run_id)
        page.screenshot(path=str(SHOTS / f"browser-cv-final-run-{size}.png"))
        assert (run["k"], run["algorithm"], run["test_fraction"]) == (
            curve["k_best"],
            "foba-obj",
            None,
        )
        assert api(server, "GET", f"/api/cv/{cv_id}")["final_run_id"] == run_id
        page.goto(f"{server}/cv/{cv_id}")
        assert f"run #{run_id}" in page.locator("#cv-final").inner_text()
        # The folds are not listed as runs of the data set; the study is.
        page.goto(f"{server}/datasets/{dataset['id']}")
        assert f"#{cv_id}" in page.locator(".cv-earlier").inner_text()
        page.screenshot(path=str(SHOTS / f"browser-cv-dataset-{size}.png"), full_page=True)
        listed = page.locator("#dataset-runs tbody tr").count()
        assert listed == len(api(server, "GET", f"/api/runs?dataset_id={dataset['id']}"))
        assert not errors, errors


# --------------------------------------------------------------------------- progress


@pytest.fixture(scope="module")
def idle_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """An app without workers (folds wait), and its data directory: the test is the worker."""
    data_dir = tmp_path_factory.mktemp("cv-idle") / "data"
    for base in serve_app(tmp_path_factory, workers=0, data_dir=data_dir):
        yield base, data_dir


def work_fold(data_dir: Path, run_id: int) -> None:
    """Claim one fold and run it to its end, as a worker process would."""
    from app.db import make_db
    from app.jobs import lease
    from app.jobs.tasks import JobContext, run_job
    from app.storage import DirectoryStore

    db = make_db(f"sqlite:///{data_dir / 'foba-lab.db'}")
    try:
        claim = lease.claim(db, run_id, "the test")
        assert claim is not None
        context = JobContext(db=db, store=DirectoryStore(data_dir), claim=claim)
        assert run_job(run_id, context) == "done"
    finally:
        db.dispose()


def test_the_page_counts_folds_in_place_then_draws_the_curve(
    idle_server: tuple[str, Path], browser: Any
) -> None:
    server, data_dir = idle_server
    ds = api(
        server,
        "POST",
        "/api/datasets/generate",
        json={"generator": "gaussian_regression", "params": {"n": 80, "d": 10, "k_true": 2}},
    )
    study = api(
        server,
        "POST",
        "/api/cv",
        json={"dataset_id": ds["id"], "algorithm": "omp", "k_max": 5, "n_folds": 4},
    )
    width, height = SIZES["laptop"]
    with new_page(browser, width, height) as page:
        page.set_default_timeout(20_000)
        page.goto(f"{server}/cv/{study['id']}")
        assert page.inner_text("#cv-live .live-title") == "Folds done: 0 of 4"
        page.evaluate("window.loadedOnce = true")  # gone if the page were loaded again
        work_fold(data_dir, study["folds"][0]["run_id"])
        page.wait_for_function("document.querySelector('#cv-live .folds-done').textContent === '1'")
        assert page.evaluate("window.loadedOnce") is True
        assert page.inner_text("[data-fold='0'] .badge") == "done"
        assert page.inner_text("[data-fold='1'] .badge") == "queued"
        assert page.get_attribute("#cv-live .progress", "aria-valuenow") == "25"
        assert page.inner_text("#cv-status") == "running"
        page.screenshot(path=str(SHOTS / "browser-cv-progress-laptop.png"))
        for fold in study["folds"][1:]:
            work_fold(data_dir, fold["run_id"])
        page.wait_for_selector("#chart-cv")
        page.wait_for_function("document.getElementById('chart-cv').layout !== undefined")
        assert page.evaluate("window.loadedOnce") is None
        # On these data the rules differ (minimum at 3, one standard error at 2): both offered.
        curve = api(server, "GET", f"/api/cv/{study['id']}")["curve"]
        assert (curve["k_min"], curve["k_1se"]) == (3, 2)
        final = page.locator("#cv-final")
        assert "Run at k = 3 on all data" in final.inner_text()
        page.screenshot(path=str(SHOTS / "browser-cv-two-rules-laptop.png"), full_page=True)
        final.get_by_role("button", name="Run at k = 2 (one-standard-error rule)").click()
        page.wait_for_url(re.compile(r"/runs/\d+$"))
        run = api(server, "GET", "/api/runs/" + page.url.rsplit("/", 1)[1])
        assert (run["k"], run["status"]) == (2, "queued")  # no worker on this server
