"""The pages in a real headless Chromium (Debian's ``chromium``), driven by Playwright, against
the app served by uvicorn in a subprocess with a temporary data directory.

Skipped only when /usr/bin/chromium is missing. Screenshots go to test-output/screenshots
(or $SCREENSHOT_DIR).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browser_helpers import CHROMIUM, ROOT, SHOTS, api

FIXTURES = ROOT / "tests" / "fixtures"

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (/usr/bin/chromium)"
)


def test_upload_csv_by_file_input(server: str, page: Any, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = 2 * X[:, 1] - X[:, 3] + 0.1 * rng.normal(size=60)
    good = tmp_path / "sensors.csv"
    rows = ["s1,s2,s3,s4,yield"] + [
        ",".join(f"{v:.5f}" for v in (*x, t)) for x, t in zip(X, y, strict=True)
    ]
    good.write_text("\n".join(rows) + "\n")

    page.goto(server + "/")
    page.set_input_files("#upload input[type=file]", str(good))
    # The header was read in the browser: the target defaults to the last column.
    page.wait_for_function("document.querySelector('#upload select[name=target]').value")
    assert page.input_value("#upload select[name=target]") == "yield"
    assert "sensors.csv" in page.inner_text("#upload .file-name")
    page.click("#upload button[type=submit]")
    page.wait_for_url(re.compile(r"/datasets/\d+$"))
    assert page.inner_text("h1") == "sensors"
    assert "s4" in page.inner_text("#columns")
    page.screenshot(path=str(SHOTS / "browser-dataset.png"), full_page=True)

    # A refused file: the server's message is shown in place.
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,label\n1,x,3\n2,y,4\n3,z,5\n")
    page.goto(server + "/")
    page.set_input_files("#upload input[type=file]", str(bad))
    page.wait_for_function("document.querySelector('#upload select[name=target]').value")
    page.click("#upload button[type=submit]")
    error = page.locator("#upload .form-error")
    error.wait_for(state="visible")
    assert "Text columns: column 'b' holds text, e.g. 'x' in row 1" in error.inner_text()
    assert "choose 'one-hot' or 'drop' under Text columns below" in error.inner_text()
    assert page.url == server + "/"
    page.screenshot(path=str(SHOTS / "browser-upload-refused.png"))


def test_upload_penguins_fix_in_the_form_then_group_omp(server: str, page: Any) -> None:
    """A real table with text columns and missing values: one refusal names every text column
    and the missing cells, the form marks the controls that fix them, the second try is
    stored, and group OMP selects one-hot groups on it."""
    page.goto(server + "/")
    page.set_input_files("#upload input[type=file]", str(FIXTURES / "penguins.csv"))
    page.wait_for_function("document.querySelector('#upload select[name=target]').value")
    assert page.input_value("#upload select[name=target]") == "year"  # no column named y/...
    assert "the last column" in page.inner_text("#upload .target-why")
    page.select_option("#upload select[name=target]", "species")
    assert "3 classes" in page.inner_text("#upload .task-guess")
    assert page.locator("#upload .positive-class").is_visible()
    page.select_option("#upload select[name=positive_class]", "Gentoo")
    assert "Gentoo against the 2 other classes" in page.inner_text("#upload .task-guess")
    page.locator("#upload").screenshot(path=str(SHOTS / "browser-upload-penguins-classes.png"))
    page.select_option("#upload select[name=target]", "body_mass_g")
    assert page.inner_text("#upload .task-guess").startswith("Regression: a numeric target")
    assert not page.locator("#upload .positive-class").is_visible()
    page.screenshot(path=str(SHOTS / "browser-upload-penguins-chosen.png"), full_page=True)

    page.click("#upload button[type=submit]")
    error = page.locator("#upload .form-error")
    error.wait_for(state="visible")
    message = error.inner_text()
    for column in ("species", "island", "sex"):
        assert f"Text columns: column '{column}' holds text" in message
    assert "Missing values: column 'bill_length_mm' has 2 missing" in message
    assert "text_columns=" not in message and "missing=" not in message  # the form's words
    for control in ("text_columns", "missing"):
        assert "attention" in page.get_attribute(f'#upload [data-field="{control}"]', "class")
    page.screenshot(path=str(SHOTS / "browser-upload-penguins-refused.png"), full_page=True)

    page.select_option("#upload select[name=text_columns]", "onehot")
    page.select_option("#upload select[name=missing]", "drop")
    page.click("#upload button[type=submit]")
    page.wait_for_url(re.compile(r"/datasets/\d+$"))
    columns = page.inner_text("#columns")
    assert "species=Adelie" in columns and "One-hot encoded" in columns
    assert "Rows dropped: 11" in columns
    page.screenshot(path=str(SHOTS / "browser-penguins-dataset.png"), full_page=True)

    page.select_option("#run-algorithm", "group-omp")
    page.wait_for_selector("#alg-n_groups")
    page.fill("#run-k", "")
    page.fill("#alg-n_groups", "3")
    page.click("#run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/runs/\d+$"))
    page.wait_for_selector("#results", timeout=60_000)
    assert page.locator(".facts .status-done").count() == 1
    run_id = page.url.rsplit("/", 1)[1]
    run = api(server, "GET", f"/api/runs/{run_id}")
    names = [f["name"] for f in run["result"]["support"]]
    assert any("=" in name for name in names), names  # an indicator group was selected
    assert run["standardize"] is True
    assert "standardized" in page.inner_text(".facts")
    page.screenshot(path=str(SHOTS / "browser-penguins-group-omp.png"), full_page=True)


def test_submit_a_run_and_watch_it_to_done(server: str, page: Any) -> None:
    ds = api(
        server,
        "POST",
        "/api/datasets/generate",
        json={"generator": "liu2014_logistic", "params": {"n": 400, "d": 300, "s": 10}},
    )
    page.goto(f"{server}/datasets/{ds['id']}")
    assert page.input_value("#run-objective") == "logistic"
    page.fill("#run-k", "60")
    page.click("#run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/runs/\d+$"))
    progress: list[int] = []  # the live bar's values while the run was queued or running
    deadline = time.monotonic() + 180  # generous: CI machines are shared and slow at times
    while not page.locator("#results").count():
        assert time.monotonic() < deadline, "the run did not finish"
        # Read in one script: the live part is replaced when the run ends, and a locator found
        # before that swap would wait for a bar that never comes back.
        now = page.evaluate(
            "document.querySelector('#run-live .progress')?.getAttribute('aria-valuenow') ?? null"
        )
        if now is not None:
            value = int(now or 0)
            if value and not any(progress):
                page.screenshot(path=str(SHOTS / "browser-run-live.png"), full_page=True)
            progress.append(value)
        page.wait_for_timeout(200)
    assert progress == sorted(progress), progress  # the bar only moves forward
    assert page.locator(".facts .status-done").count() == 1
    assert page.locator("#player").count() == 1
    # The path, objective and ROC charts are drawn: their Plotly divs hold data points.
    for chart in ("chart-path", "chart-objective-step", "chart-objective-size", "chart-roc"):
        page.wait_for_function(f"document.getElementById('{chart}').data !== undefined")
        points = page.evaluate(
            f"document.getElementById('{chart}').data"
            ".reduce((n, t) => n + (t.x ? t.x.length : 0), 0)"
        )
        assert points >= 2, (chart, points)
    page.screenshot(path=str(SHOTS / "browser-run-done.png"), full_page=True)


# The player's tests (run page and teaching page): test_browser_player.py.


def test_generate_then_compare_forms(server: str, page: Any) -> None:
    page.goto(server + "/")
    # The choice swaps the generator's fields in by HTMX, even when it is the one shown: type
    # into them only once that swap has settled, or it resets what was typed (seen under load:
    # the data set came out with the default d = 20).
    page.evaluate(
        "document.body.addEventListener('htmx:afterSettle', () => { window.genSettled = true },"
        " {once: true})"
    )
    page.select_option("#gen-name", "gaussian_regression")
    page.wait_for_function("window.genSettled === true")
    page.fill("#gen-d", "12")
    page.fill("#gen-dsname", "twelve columns")
    page.click("#generate button[type=submit]")
    page.wait_for_url(re.compile(r"/datasets/\d+$"))
    assert page.inner_text("h1") == "twelve columns"
    assert page.inner_text(".facts").count("12") >= 1

    # A run the browser cannot judge (the form's own ranges allow it) is refused in place with
    # the server's message.
    page.fill("#run-test", "0.995")
    page.click("#run-form button[type=submit]")
    error = page.locator("#run-form .form-error")
    error.wait_for(state="visible")
    assert "test_fraction: test_fraction 0.995 of 100 rows leaves" in error.inner_text()
    assert "/datasets/" in page.url

    # Compare: the default selection (FoBa-obj, FoBa-gdt, forward greedy, OMP), same k.
    page.fill("#cmp-k", "3")
    page.click("#compare-form button[type=submit]")
    page.wait_for_url(re.compile(r"/comparisons/\d+$"))
    page.wait_for_selector("#chart-objective-k .main-svg", timeout=30_000)
    assert page.locator("table.sets").count() == 1
    page.screenshot(path=str(SHOTS / "browser-comparison.png"), full_page=True)


def test_dataset_page_shows_what_the_upload_prepared(server: str, page: Any) -> None:
    """airquality with imputed cells and its row names left out; biopsy with its ID columns
    kept: the data set page says so in the column info, the preview and the summary."""
    files = {"file": ("airquality.csv", (FIXTURES / "airquality.csv").read_bytes())}
    air = api(
        server, "POST", "/api/datasets", files=files, data={"target": "Ozone", "missing": "impute"}
    )
    page.goto(f"{server}/datasets/{air['id']}")
    preparation = page.inner_text("#preparation")
    assert "rownames" in preparation and "an integer that grows row by row" in preparation
    assert "Solar.R 5" in preparation
    assert "Imputed" in page.inner_text("#summary thead")
    page.screenshot(path=str(SHOTS / "browser-airquality-prepared.png"), full_page=True)

    files = {"file": ("biopsy.csv", (FIXTURES / "biopsy.csv").read_bytes())}
    form = {"target": "class", "missing": "drop", "id_columns": "keep"}
    biopsy = api(server, "POST", "/api/datasets", files=files, data=form)
    page.goto(f"{server}/datasets/{biopsy['id']}")
    assert page.locator("#preview th .badge.id-like").count() == 2
    assert page.locator("#summary .badge.id-like").count() == 2
    page.screenshot(path=str(SHOTS / "browser-biopsy-id-kept.png"), full_page=True)
