"""The runs table in a real Chromium: filter and sort without a page load, rename a run,
delete one through the confirmation dialog, compare two ticked runs; screenshots of /runs at
a laptop's and a projector's size."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from browser_helpers import CHROMIUM, SHOTS, SIZES, api, new_page, wait_done

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (/usr/bin/chromium)"
)


def generate(server: str, name: str, **params: Any) -> dict[str, Any]:
    body = {"generator": "gaussian_regression", "params": params, "name": name}
    return api(server, "POST", "/api/datasets/generate", json=body)


def run(server: str, dataset_id: int, algorithm: str, k: int = 3) -> dict[str, Any]:
    body = {"dataset_id": dataset_id, "algorithm": algorithm, "k": k, "test_fraction": 0.25}
    return api(server, "POST", "/api/runs", json=body)


@pytest.fixture(scope="module")
def runs(server: str) -> dict[str, Any]:
    first = generate(server, "first set", n=80, d=12, k_true=3)
    second = generate(server, "second set", n=60, d=10, k_true=2)
    made = {
        "omp": run(server, first["id"], "omp"),
        "foba": run(server, first["id"], "foba-obj"),
        "forward": run(server, first["id"], "forward-obj", k=2),
        "other": run(server, second["id"], "omp", k=2),
    }
    return {name: wait_done(server, r["id"]) for name, r in made.items()}


def rows(page: Any) -> list[int]:
    return [
        int(i)
        for i in page.eval_on_selector_all(
            "#runs-table tr[data-run]", "trs => trs.map(t => t.dataset.run)"
        )
    ]


def test_filter_sort_rename_delete_and_compare(server: str, page: Any, runs: dict) -> None:
    page.goto(f"{server}/runs")
    assert set(rows(page)) >= {r["id"] for r in runs.values()}
    page.evaluate("window.sameDocument = true")  # gone if a full page load happens

    # Filter: the table is swapped by HTMX and the URL says what it shows.
    page.select_option("#f-algorithm", "omp")
    page.wait_for_function("location.search.includes('algorithm=omp')")
    page.wait_for_function(
        "[...document.querySelectorAll('#runs-table tr[data-run] code')]"
        ".every(c => c.textContent === 'omp')"
    )
    assert set(rows(page)) == {runs["omp"]["id"], runs["other"]["id"]}
    page.fill("#f-q", "second")
    page.wait_for_function("location.search.includes('q=second')")
    page.wait_for_function("document.querySelectorAll('#runs-table tr[data-run]').length === 1")
    assert rows(page) == [runs["other"]["id"]]
    page.fill("#f-q", "")
    page.select_option("#f-algorithm", "")
    page.wait_for_function("!location.search.includes('algorithm')")

    # Sort: by k, then the same heading again turns it round; the filters stay.
    page.select_option("#f-dataset", str(runs["omp"]["dataset_id"]))
    page.wait_for_function("document.querySelectorAll('#runs-table tr[data-run]').length === 3")
    page.click("#runs-table th a[data-sort=k]")
    page.wait_for_function("location.search.includes('sort=k')")
    assert rows(page)[0] == runs["forward"]["id"]  # k = 2 first
    page.click("#runs-table th a[data-sort=k]")
    page.wait_for_function("location.search.includes('dir=desc')")
    assert rows(page)[-1] == runs["forward"]["id"]
    assert "dataset=" in page.evaluate("location.search")
    assert page.evaluate("window.sameDocument") is True

    # Compare: runs of two data sets cannot be compared; two of one data set can.
    page.goto(f"{server}/runs")
    compare = page.locator("#compare-ticked button[type=submit]")
    page.check(f"#runs-table tr[data-run='{runs['omp']['id']}'] input.tick")
    page.check(f"#runs-table tr[data-run='{runs['other']['id']}'] input.tick")
    assert compare.is_disabled()
    assert "2 data sets" in page.inner_text("#compare-ticked .tick-note")
    page.uncheck(f"#runs-table tr[data-run='{runs['other']['id']}'] input.tick")
    page.check(f"#runs-table tr[data-run='{runs['foba']['id']}'] input.tick")
    assert compare.is_enabled()
    page.screenshot(path=str(SHOTS / "runs-ticked-laptop.png"), full_page=False)
    compare.click()
    page.wait_for_url("**/comparisons/*")
    page.wait_for_selector("#comparison-runs")
    body = page.inner_text("main")
    assert "omp" in body and "foba-obj" in body

    # Rename a run on its page.
    page.goto(f"{server}/runs/{runs['forward']['id']}")
    page.click("#run-edit summary")
    page.fill("#run-name", "forward, two features")
    page.fill("#run-tags", "slides, baseline")
    page.click("#run-edit button[type=submit]")
    page.wait_for_function(
        "document.querySelector('h1').textContent.includes('forward, two features')"
    )
    stored = api(server, "GET", f"/api/runs/{runs['forward']['id']}")
    assert stored["name"] == "forward, two features" and stored["tags"] == ["slides", "baseline"]

    # Delete one from the table, through the dialog that names it.
    page.goto(f"{server}/runs?tag=slides")
    assert rows(page) == [runs["forward"]["id"]]
    page.click(f"#runs-table tr[data-run='{runs['forward']['id']}'] [data-delete]")
    dialog = page.locator("#confirm-delete")
    assert dialog.is_visible()
    text = dialog.inner_text()
    assert f"Delete run #{runs['forward']['id']} “forward, two features”" in text
    page.screenshot(path=str(SHOTS / "runs-delete-dialog-laptop.png"))
    page.click("#confirm-delete [data-act=close-dialog]")
    assert not dialog.is_visible()
    page.click(f"#runs-table tr[data-run='{runs['forward']['id']}'] [data-delete]")
    page.click("#confirm-delete button[type=submit]")
    page.wait_for_function("document.querySelectorAll('#runs-table tr[data-run]').length === 0")
    gone = httpx.get(f"{server}/api/runs/{runs['forward']['id']}", timeout=10)
    assert gone.status_code == 404


@pytest.mark.parametrize("size", list(SIZES))
def test_runs_table_screenshots(server: str, browser: Any, runs: dict, size: str) -> None:
    width, height = SIZES[size]
    with new_page(browser, width, height) as page:
        page.goto(f"{server}/runs")
        page.wait_for_selector("#runs-table tr[data-run]")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the page scrolls sideways by {overflow} px at {size}"
        page.screenshot(path=str(SHOTS / f"runs-{size}.png"), full_page=False)


def test_rename_and_delete_a_data_set_from_its_page(server: str, page: Any) -> None:
    ds = generate(server, "to rename", n=40, d=6, k_true=2)
    wait_done(server, run(server, ds["id"], "omp", k=2)["id"])
    page.goto(f"{server}/datasets/{ds['id']}")
    page.click("#dataset-edit summary")
    page.fill("#ds-name", "renamed in the browser")
    page.click("#dataset-edit button[type=submit]")
    page.wait_for_function("document.querySelector('h1').textContent === 'renamed in the browser'")
    page.click("#dataset-edit summary")
    page.click("#dataset-edit [data-delete]")
    text = page.inner_text("#confirm-delete")
    assert "“renamed in the browser”" in text and "its 1 run and their traces" in text
    page.click("#confirm-delete button[type=submit]")
    page.wait_for_url(f"{server}/")
    assert httpx.get(f"{server}/api/datasets/{ds['id']}", timeout=10).status_code == 404


def test_ticks_survive_sorting_and_filtering(server: str, page: Any, runs: dict) -> None:
    """Runs can be picked from several views of the table: a tick stays while HTMX swaps it
    (a filter that hides the run, a sort), and the comparison takes every ticked run."""
    # (The test above deletes the forward run: "other", on the second data set, stays.)
    omp, foba, other = runs["omp"]["id"], runs["foba"]["id"], runs["other"]["id"]
    page.goto(f"{server}/runs")
    page.evaluate("window.sameDocument = true")
    page.check(f"#runs-table tr[data-run='{omp}'] input.tick")
    page.select_option("#f-algorithm", "foba-obj")  # hides the ticked omp run
    page.wait_for_function("location.search.includes('algorithm=foba-obj')")
    page.wait_for_function(
        "id => document.querySelector(`#runs-table tr[data-run='${id}']`)", arg=foba
    )
    page.check(f"#runs-table tr[data-run='{foba}'] input.tick")
    compare = page.locator("#compare-ticked button[type=submit]")
    assert compare.is_enabled()
    assert f"(#{omp}, #{foba})" in page.inner_text("#compare-ticked .tick-note")
    page.select_option("#f-algorithm", "")
    page.wait_for_function("!location.search.includes('algorithm')")
    page.click("#runs-table th a[data-sort=k]")
    page.wait_for_function("location.search.includes('sort=k')")
    # The ticks come back once HTMX has settled the new table (just after the URL changes).
    page.wait_for_function(
        "ids => ids.every(([id, on]) => "
        "document.querySelector(`#runs-table tr[data-run='${id}'] input.tick`).checked === on)",
        arg=[[omp, True], [foba, True], [other, False]],
    )
    assert page.evaluate("window.sameDocument") is True
    compare.click()
    page.wait_for_url("**/comparisons/*")
    compared = api(server, "GET", "/api/comparisons/" + page.url.rsplit("/", 1)[1])
    assert sorted(r["id"] for r in compared["runs"]) == sorted([omp, foba])
