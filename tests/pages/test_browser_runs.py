"""The runs table and the edit/delete/compare actions in a real Chromium: sorting and
filtering without a page load, ticking runs of one data set to compare them, the delete
dialog naming what goes, the run page's name and tags, the data set's rename and delete, and
backward elimination greyed out; screenshots at a laptop's and a projector's size."""

from __future__ import annotations

from typing import Any

import pytest
from browser_helpers import CHROMIUM, SHOTS, SIZES, api, wait_done

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (/usr/bin/chromium)"
)


def make_runs(server: str, name: str, n: int = 80, d: int = 12) -> tuple[dict, list[dict]]:
    ds = api(
        server,
        "POST",
        "/api/datasets/generate",
        json={"generator": "gaussian_regression", "params": {"n": n, "d": d}, "name": name},
    )
    runs = [
        api(
            server,
            "POST",
            "/api/runs",
            json={
                "dataset_id": ds["id"],
                "algorithm": a,
                "k": 3,
                "test_fraction": 0.25,
                "params": {"nu": 0.3} if a == "foba-obj" else {},
            },
        )
        for a in ("foba-obj", "omp", "forward-obj")
    ]
    return ds, [wait_done(server, r["id"]) for r in runs]


@pytest.fixture(scope="module")
def two_sets(server: str) -> dict[str, Any]:
    a, runs_a = make_runs(server, "table A")
    b, runs_b = make_runs(server, "table B")
    api(server, "PATCH", f"/api/runs/{runs_a[0]['id']}", json={"name": "first", "tags": ["demo"]})
    return {"a": a, "b": b, "runs_a": runs_a, "runs_b": runs_b}


def rows(page: Any) -> list[int]:
    return [
        int(x)
        for x in page.eval_on_selector_all("#runs-table tbody tr", "t => t.map(r => r.dataset.run)")
    ]


@pytest.mark.parametrize("size", list(SIZES))
def test_sort_and_filter_without_a_page_load(
    server: str, browser: Any, two_sets: dict[str, Any], size: str
) -> None:
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(server + "/")
        page.click("header a[href='/runs']")
        page.wait_for_url("**/runs")
        page.evaluate("window.sameDocument = true")
        page.screenshot(path=str(SHOTS / f"runs-table-{size}.png"), full_page=True)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, overflow
        # Sort by objective: click the heading, then again for the other order.
        page.click("#runs-table th a.sort:text('Objective')")
        page.wait_for_url("**sort=objective**")
        objective = {
            r["id"]: r["result"]["objective"] for r in two_sets["runs_a"] + two_sets["runs_b"]
        }
        shown = [i for i in rows(page) if i in objective]
        assert [objective[i] for i in shown] == sorted(objective.values(), reverse=True)
        page.click("#runs-table th a.sort:text('Objective')")
        page.wait_for_url("**order=asc**")
        shown = [i for i in rows(page) if i in objective]
        assert [objective[i] for i in shown] == sorted(objective.values())
        # Filter by data set: the URL says so, the table follows, the page stays.
        page.select_option("#runs-dataset", str(two_sets["b"]["id"]))
        page.wait_for_url(f"**dataset={two_sets['b']['id']}**")
        page.wait_for_function(
            "n => document.querySelectorAll('#runs-table tbody tr').length === n",
            arg=len(two_sets["runs_b"]),
        )
        assert sorted(rows(page)) == sorted(r["id"] for r in two_sets["runs_b"])
        assert "sort=objective" in page.url  # the sort is kept
        page.fill("#runs-q", "no such run")
        page.wait_for_selector("text=No run matches these filters.")
        page.fill("#runs-q", "")
        page.select_option("#runs-dataset", "")
        page.select_option("#runs-tag", "demo")
        page.wait_for_function("document.querySelectorAll('#runs-table tbody tr').length === 1")
        assert rows(page) == [two_sets["runs_a"][0]["id"]]
        assert page.evaluate("window.sameDocument") is True  # no full page load
        # The shared URL opens the same table.
        page.goto(page.url)
        assert rows(page) == [two_sets["runs_a"][0]["id"]]
        assert page.input_value("#runs-tag") == "demo"
    finally:
        context.close()
    assert not errors, errors


def test_compare_ticked_runs_of_one_data_set(
    server: str, page: Any, two_sets: dict[str, Any]
) -> None:
    a, b = two_sets["runs_a"], two_sets["runs_b"]
    page.goto(server + "/runs")
    button = page.locator(".compare-go")
    assert button.is_disabled()
    page.check(f"input.tick[data-run='{a[0]['id']}']")
    page.check(f"input.tick[data-run='{b[0]['id']}']")
    assert button.is_disabled()
    note = page.text_content(".compare-note")
    assert "2 data sets" in note and "table A" in note and "table B" in note
    page.screenshot(path=str(SHOTS / "runs-compare-refused.png"))
    page.uncheck(f"input.tick[data-run='{b[0]['id']}']")
    page.check(f"input.tick[data-run='{a[1]['id']}']")
    # A search swaps the table without a page load; the ticks stay, and more can be added.
    page.evaluate("window.sameDocument = true")
    page.fill("#runs-q", "table A")
    page.press("#runs-q", "Enter")
    page.wait_for_url("**q=table%20A**")
    page.wait_for_function("document.querySelectorAll('#runs-table tbody tr').length === 3")
    assert page.evaluate("window.sameDocument") is True
    assert page.is_checked(f"input.tick[data-run='{a[0]['id']}']")
    assert page.is_checked(f"input.tick[data-run='{a[1]['id']}']")
    page.check(f"input.tick[data-run='{a[2]['id']}']")
    assert button.is_enabled()
    ids = ", ".join(f"#{r['id']}" for r in a)
    assert page.text_content(".compare-note") == f"3 runs of table A ticked ({ids})."
    page.fill(".compare-name", "picked by hand")
    page.press(".compare-name", "Enter")  # Enter in the name compares
    page.wait_for_url("**/comparisons/*")
    page.wait_for_selector("#by-k .chart, #by-k svg")
    assert "picked by hand" in page.text_content("h1")
    table = page.text_content("#comparison-runs")
    for run in a:
        assert page.locator(f"#comparison-runs a[href='/runs/{run['id']}']").count() == 1
    assert "done" in table
    page.wait_for_timeout(300)
    page.screenshot(path=str(SHOTS / "runs-compare-result.png"), full_page=True)


def test_delete_from_the_table_asks_in_a_dialog(server: str, page: Any) -> None:
    ds, runs = make_runs(server, "to delete from")
    victim = runs[1]
    page.goto(server + f"/runs?dataset={ds['id']}")
    page.click(f"tr[data-run='{victim['id']}'] [data-delete]")
    dialog = page.locator("#confirm-delete")
    assert dialog.is_visible()
    text = dialog.text_content()
    assert f"Delete run #{victim['id']} (omp on to delete from) and its trace?" in text
    page.screenshot(path=str(SHOTS / "runs-delete-dialog.png"))
    page.click("#confirm-delete .confirm-cancel")  # keep it
    assert not dialog.is_visible()
    assert victim["id"] in rows(page)
    page.click(f"tr[data-run='{victim['id']}'] [data-delete]")
    page.click("#confirm-delete .confirm-go")
    page.wait_for_function(f"!document.querySelector(\"tr[data-run='{victim['id']}']\")")
    assert sorted(rows(page)) == sorted(r["id"] for r in runs if r is not victim)
    import httpx

    assert httpx.get(f"{server}/api/runs/{victim['id']}").status_code == 404


def test_the_run_page_names_tags_and_deletes(server: str, page: Any) -> None:
    _, runs = make_runs(server, "to rename runs on")
    run = runs[0]
    page.goto(server + f"/runs/{run['id']}")
    page.click("#run-edit summary")
    page.fill("#run-name", "my best run")
    page.fill("#run-tags", "lecture 3, final")
    page.fill("#run-notes", "nu = 0.5 works")
    page.click("#run-edit button[type=submit]")
    page.wait_for_selector("h1:has-text('my best run')")
    assert page.locator("a.chip.tag").all_text_contents() == ["lecture 3", "final"]
    assert "nu = 0.5 works" in page.text_content("p.notes")
    # A refusal says what to fix, in place.
    page.click("#run-edit summary")
    page.fill("#run-tags", "a" * 41)
    page.click("#run-edit button[type=submit]")
    page.wait_for_selector("#run-edit .form-error:not([hidden])")
    assert "1 to 40 characters" in page.text_content("#run-edit .form-error")
    page.screenshot(path=str(SHOTS / "run-edit-refused.png"), full_page=True)
    page.click("#run-edit [data-delete]")
    assert f"run #{run['id']} “my best run” (foba-obj on to rename runs on)" in page.text_content(
        "#confirm-delete"
    )
    page.click("#confirm-delete .confirm-go")
    page.wait_for_url("**/runs")


def test_a_data_set_is_renamed_and_deleted_with_its_runs(server: str, page: Any) -> None:
    ds, _ = make_runs(server, "to rename")
    page.goto(server + f"/datasets/{ds['id']}")
    page.click("#dataset-edit summary")
    page.fill("#ds-name", "renamed set")
    page.fill("#ds-description", "kept for the lecture")
    page.click("#dataset-edit button[type=submit]")
    page.wait_for_selector("h1:has-text('renamed set')")
    assert "kept for the lecture" in page.text_content(".lead")
    page.click("#dataset-edit summary")
    page.click("#dataset-edit [data-delete]")
    text = page.text_content("#confirm-delete .confirm-text")
    assert text == "Delete data set “renamed set” with its 3 runs?"
    page.screenshot(path=str(SHOTS / "dataset-delete-dialog.png"))
    page.click("#confirm-delete .confirm-go")
    page.wait_for_url(server + "/")
    assert "renamed set" not in page.text_content("#datasets")


def test_backward_elimination_is_greyed_out_on_wide_data(server: str, page: Any) -> None:
    ds = api(
        server,
        "POST",
        "/api/datasets/generate",
        json={"generator": "gaussian_regression", "params": {"n": 10, "d": 20, "k_true": 3}},
    )
    page.goto(server + f"/datasets/{ds['id']}")
    option = page.locator("#run-algorithm option[value=backward]")
    assert option.is_disabled()
    assert "needs more rows than features" in option.text_content()
    assert "Greyed out: Backward elimination" in page.text_content("#run-form")
    page.screenshot(path=str(SHOTS / "dataset-backward-greyed.png"))


def test_the_dialog_shows_a_refusal_in_place(server: str, page: Any) -> None:
    import httpx

    ds, runs = make_runs(server, "deleted elsewhere")
    page.goto(server + f"/runs?dataset={ds['id']}")
    gone = runs[0]["id"]
    assert httpx.delete(f"{server}/api/runs/{gone}").status_code == 204  # another tab
    page.click(f"tr[data-run='{gone}'] [data-delete]")
    page.click("#confirm-delete .confirm-go")
    error = page.locator("#confirm-delete .form-error")
    error.wait_for()
    assert f"run {gone} does not exist" in error.text_content()
    assert page.locator("#confirm-delete").is_visible()
    page.keyboard.press("Escape")  # a native dialog: Escape keeps everything
    assert not page.locator("#confirm-delete").is_visible()
