"""The runs table (/runs): every run with its metrics, sorted, filtered and paged by query
parameters (HTMX gets the table alone); editing and deleting from the pages; the data set
page's rename and delete; backward elimination greyed out where n <= d."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from page_helpers import generate
from service_helpers import make_settings, serve, submit, wait_for

ROW = re.compile(r'<tr data-run="(\d+)">')
HTMX = {"HX-Request": "true", "HX-Target": "runs-table"}


def ids(html: str) -> list[int]:
    return [int(i) for i in ROW.findall(html)]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Finished runs on two data sets, one named and tagged."""
    data_dir: Path = tmp_path_factory.mktemp("runs-table") / "data"
    with serve(make_settings(data_dir, workers=1)) as client:
        ds = generate(client, "gaussian_regression", n=80, d=12, k_true=3, rho=0.6)
        wide = generate(client, "gaussian_regression", n=10, d=20, k_true=3)
        runs = [
            submit(
                client, ds["id"], algorithm="foba-obj", k=3, test_fraction=0.25, params={"nu": 0.3}
            ),
            submit(client, ds["id"], algorithm="omp", k=3, test_fraction=0.25),
            submit(client, ds["id"], algorithm="forward-obj", k=2),
            submit(client, wide["id"], algorithm="forward-obj", k=2),
        ]
        runs = [wait_for(client, r["id"]) for r in runs]
        assert {r["status"] for r in runs} == {"done"}
        client.patch(
            f"/api/runs/{runs[0]['id']}",
            json={"name": "the FoBa one", "tags": ["lecture 3"], "notes": "seen in class"},
        )
        yield {"client": client, "ds": ds, "wide": wide, "runs": runs}


def test_the_header_links_to_the_runs_table_which_lists_every_run(lab) -> None:
    client = lab["client"]
    assert 'href="/runs"' in client.get("/").text
    html = client.get("/runs").text
    assert ids(html) == sorted((r["id"] for r in lab["runs"]), reverse=True)  # newest first
    foba = lab["runs"][0]
    row = html.split(f'<tr data-run="{foba["id"]}">')[1].split("</tr>")[0]
    result = foba["result"]
    for text in (
        "the FoBa one",
        "lecture 3",
        "seen in class",
        lab["ds"]["name"],
        "foba-obj",
        "nu=0.3",  # the parameters set away from their defaults
        "done",
        f"{result['objective']:.4g}"[:5],
        f"{result['test']['mse']:.4g}"[:5],
        f"{result['recovery']['f_measure']:.3g}"[:4],
        f"{result['recovery']['auc']:.3g}"[:4],
        " ms" if result["engine_seconds"] < 1 else " s",
    ):
        assert text in row, text
    assert "backward=standard" not in row and "fit_intercept" not in row
    # The AUC stored with the result is the one the run page draws from the trace.
    page = client.get(f"/runs/{foba['id']}").text
    drawn = re.search(r'ROC AUC</span><span class="value">([^<]+)<', page).group(1)
    assert f'<td class="num">{drawn}</td>' in row
    omp = html.split(f'<tr data-run="{lab["runs"][1]["id"]}">')[1].split("</tr>")[0]
    assert '<span class="muted">defaults</span>' in omp
    for heading in ("Objective", "Test error", "F-measure", "AUC", "Time", "Parameters"):
        assert heading in html


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("objective", lambda r: r["result"]["objective"]),
        ("test_error", lambda r: r["result"]["test"]["mse"] if r["result"]["test"] else None),
        ("k", lambda r: r["k"]),
        ("time", lambda r: r["result"]["engine_seconds"]),
        ("auc", lambda r: r["result"]["recovery"]["auc"]),
    ],
)
def test_sorting_by_a_column_in_both_orders(lab, key, value) -> None:
    client = lab["client"]
    known = [r for r in lab["runs"] if value(r) is not None]
    unknown = [r["id"] for r in lab["runs"] if value(r) is None]
    for order in ("asc", "desc"):
        html = client.get(f"/runs?sort={key}&order={order}").text
        shown = ids(html)
        expected = sorted(known, key=value, reverse=order == "desc")
        # Compared by value (ties may come in either order); runs without one come last.
        assert [value(next(r for r in known if r["id"] == i)) for i in shown[: len(known)]] == [
            value(r) for r in expected
        ]
        assert set(shown[len(known) :]) == set(unknown)
        assert 'aria-sort="' + ("ascending" if order == "asc" else "descending") in html


def test_filters_are_query_parameters_and_htmx_gets_the_table_alone(lab) -> None:
    client = lab["client"]
    runs, ds, wide = lab["runs"], lab["ds"], lab["wide"]
    on_ds = sorted((r["id"] for r in runs if r["dataset_id"] == ds["id"]), reverse=True)
    cases = {
        f"dataset={ds['id']}": on_ds,
        f"dataset={wide['id']}": [runs[3]["id"]],
        "algorithm=forward-obj": [runs[3]["id"], runs[2]["id"]],
        "status=done": sorted((r["id"] for r in runs), reverse=True),
        "status=failed": [],
        "tag=lecture+3": [runs[0]["id"]],
        "tag=lecture": [],  # a tag matches whole
        "q=foba+ONE": [runs[0]["id"]],  # name, case-insensitive
        "q=in+class": [runs[0]["id"]],  # notes
        "q=100%25": [],  # a LIKE wildcard is a character
        "q=GAUSSIAN&algorithm=omp": [runs[1]["id"]],  # the data set's name, and a filter
        "q=no+such+thing": [],
    }
    for query, expected in cases.items():
        page = client.get(f"/runs?{query}")
        assert page.status_code == 200 and ids(page.text) == expected, query
        fragment = client.get(f"/runs?{query}", headers=HTMX)
        assert "<html" not in fragment.text and 'id="runs-table"' in fragment.text
        assert ids(fragment.text) == expected, query
    assert "No run matches these filters." in client.get("/runs?status=failed").text
    # A stale or mistyped URL still opens the table.
    for query in ("sort=bogus&order=up&page=x&dataset=abc&status=nope", "page=999"):
        assert client.get(f"/runs?{query}").status_code == 200
    # The sort links keep the filters.
    html = client.get(f"/runs?dataset={ds['id']}").text
    assert f'href="/runs?dataset={ds["id"]}&amp;sort=objective"' in html


def test_thousands_of_runs_come_a_page_at_a_time(tmp_path: Path) -> None:
    from app.services.run_table import PAGE_SIZE

    with serve(make_settings(tmp_path / "data")) as client:  # no workers: runs stay queued
        ds = generate(client, "gaussian_regression", n=30, d=5, k_true=2)
        made = [submit(client, ds["id"], algorithm="omp", k=2)["id"] for _ in range(PAGE_SIZE + 5)]
        first = client.get("/runs").text
        assert ids(first) == sorted(made, reverse=True)[:PAGE_SIZE]
        assert f"Runs 1\u2013{PAGE_SIZE} of {PAGE_SIZE + 5}" in first and "page 1 of 2" in first
        second = client.get("/runs?page=2").text
        assert ids(second) == sorted(made, reverse=True)[PAGE_SIZE:]
        # An active run has no delete button: it must be cancelled first.
        assert "data-delete=" not in second


def test_the_run_page_edits_and_deletes(lab) -> None:
    client = lab["client"]
    foba = lab["runs"][0]
    html = client.get(f"/runs/{foba['id']}").text
    assert "the FoBa one" in html and 'href="/runs?tag=lecture%203"' in html
    assert 'data-method="PATCH"' in html and f'action="/api/runs/{foba["id"]}"' in html
    assert f'data-delete="/api/runs/{foba["id"]}"' in html
    assert f"run #{foba['id']} “the FoBa one” (foba-obj on" in html
    assert '<dialog id="confirm-delete"' in html
    assert "<script>" not in html  # no inline script (a CSP will forbid them)


def test_a_comparison_of_existing_runs_opens(lab) -> None:
    client = lab["client"]
    picked = [r["id"] for r in lab["runs"][:3]]
    response = client.post(
        "/api/comparisons", json={"dataset_id": lab["ds"]["id"], "run_ids": picked}
    )
    assert response.status_code == 202, response.text
    comparison = response.json()
    html = client.get(f"/comparisons/{comparison['id']}").text
    for run_id in picked:
        assert f'href="/runs/{run_id}"' in html
    # These runs differ in k and split: the page says so rather than quoting the first run's.
    assert "k = 2, 3 (differs between runs)" in html
    assert "splits differ between runs" in html
    by_k = client.get(f"/comparisons/{comparison['id']}/by-k")
    assert by_k.status_code == 200 and "chart-objective-k" in by_k.text


def test_the_data_set_page_renames_and_deletes(lab) -> None:
    client = lab["client"]
    ds = lab["ds"]
    html = client.get(f"/datasets/{ds['id']}").text
    assert f'action="/api/datasets/{ds["id"]}"' in html and 'data-method="PATCH"' in html
    assert f'data-delete="/api/datasets/{ds["id"]}"' in html
    assert f"data set “{ds['name']}” with its 3 runs" in html


def test_backward_elimination_is_greyed_out_when_n_is_at_most_d(lab) -> None:
    client = lab["client"]
    wide, ds = lab["wide"], lab["ds"]
    option = re.compile(r'<option value="backward"[^>]*>[^<]*</option>')
    html = client.get(f"/datasets/{wide['id']}").text
    greyed = option.search(html).group(0)
    assert "disabled" in greyed and "needs more rows than features (10 rows, 20 features)" in greyed
    assert "Greyed out: Backward elimination needs more rows than features" in html
    # Asking for it by URL falls back to the default algorithm.
    html = client.get(f"/datasets/{wide['id']}?algorithm=backward").text
    assert '<div class="spec-summary" data-algorithm="backward"' not in html
    assert '<div class="spec-summary" data-algorithm="' in html
    assert "disabled" not in option.search(client.get(f"/datasets/{ds['id']}").text).group(0)
