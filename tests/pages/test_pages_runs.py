"""The runs table (/runs) and the pages' edit and delete controls, through the test client."""

from __future__ import annotations

import re
from datetime import timedelta

from page_helpers import generate
from service_helpers import submit, wait_for
from sqlmodel import Session

from app.models import Run, RunStatus, utcnow

HX = {"HX-Request": "true"}
TABLE = {**HX, "HX-Target": "runs-table"}


def html_of(client, url: str, status: int = 200, **kwargs) -> str:
    response = client.get(url, **kwargs)
    assert response.status_code == status, (url, response.status_code, response.text[:500])
    assert response.headers["content-type"].startswith("text/html")
    return response.text


def run_ids(html: str) -> list[int]:
    return [int(m) for m in re.findall(r'<tr data-run="(\d+)">', html)]


def test_runs_table_lists_runs_with_their_metrics_and_links(site):
    page = html_of(site.client, "/runs")
    assert 'href="/runs"' in page  # the header links here
    ids = run_ids(page)
    assert site.foba["id"] in ids and site.failed["id"] in ids
    assert ids == sorted(ids, reverse=True)  # newest first
    row = page[page.index(f'<tr data-run="{site.foba["id"]}">') :]
    row = row[: row.index("</tr>")]
    result = site.foba["result"]
    assert "foba-obj" in row and site.dataset["name"] in row and "nu=" in row
    assert f"{result['recovery']['f_measure']:.3g}"[:4] in row and "MSE" in row
    assert 'class="tick"' in row and f'data-dataset="{site.dataset["id"]}"' in row
    assert 'data-delete="/api/runs/{}"'.format(site.foba["id"]) in row
    assert 'id="confirm-delete"' in page and "<dialog" in page
    assert "<script>" not in page and "onclick" not in page  # no inline script (CSP)


def test_runs_table_filters_and_sorts_in_the_url(site):
    client = site.client
    only_omp = html_of(client, "/runs?algorithm=omp")
    assert run_ids(only_omp) and all(
        r["algorithm"] == "omp"
        for r in (client.get(f"/api/runs/{i}").json() for i in run_ids(only_omp))
    )
    failed = run_ids(html_of(client, "/runs?status=failed"))
    assert failed == [site.failed["id"]]
    on_logistic = html_of(client, f"/runs?dataset={site.logistic['id']}")
    assert "No run matches these filters" in on_logistic and "show all" in on_logistic
    # Sorted by F-measure, best first; a heading clicked again turns the direction round.
    by_f = html_of(client, "/runs?sort=f_measure")
    assert 'aria-sort="descending"' in by_f and "/runs?sort=f_measure&amp;dir=asc" in by_f
    scores = [client.get(f"/api/runs/{i}").json()["result"] for i in run_ids(by_f)]
    known = [r["recovery"]["f_measure"] for r in scores if r and r["recovery"]]
    assert known == sorted(known, reverse=True)
    assert run_ids(by_f)[-1] == site.failed["id"] or scores[-1] is None  # unknown values last
    by_k = run_ids(html_of(client, "/runs?sort=k&dir=asc"))
    ks = [client.get(f"/api/runs/{i}").json()["k"] for i in by_k]
    assert ks == sorted(ks, key=lambda k: (k is None, k))
    # HTMX asks for the table alone; the sort travels with the filter form.
    response = client.get("/runs?sort=time&status=done&dataset=&q=&page=1", headers=TABLE)
    assert response.headers["HX-Push-Url"] == "/runs?status=done&sort=time&dir=asc"
    fragment = response.text
    assert "<html" not in fragment and "<form" not in fragment
    assert 'name="sort" value="time" form="runs-filter"' in fragment
    assert 'hx-target="#runs-table"' in fragment
    # Values a person typed are read leniently.
    assert run_ids(html_of(client, "/runs?sort=bogus&page=abc&status=nope"))
    text = html_of(client, f"/runs?q=%23{site.forward['id']}")
    assert run_ids(text) == [site.forward["id"]]


def test_runs_table_leaves_out_cross_validation_folds(site):
    ds = generate(site.client, "gaussian_regression", n=60, d=8, k_true=2)
    response = site.client.post(
        "/api/cv", json={"dataset_id": ds["id"], "algorithm": "omp", "k_max": 3, "n_folds": 2}
    )
    assert response.status_code == 202, response.text
    page = html_of(site.client, f"/runs?dataset={ds['id']}")
    assert run_ids(page) == [] and "No run matches" in page


def test_runs_table_stays_light_with_thousands_of_runs(idle):
    """3,000 runs: one page of 50 rows, a small page, and the pager to the rest."""
    ds = generate(idle, "gaussian_regression", n=40, d=8)
    now = utcnow()
    with Session(idle.app.state.db) as session:
        session.add_all(
            Run(
                dataset_id=ds["id"],
                algorithm="omp" if i % 2 else "foba-obj",
                objective="least_squares",
                k=1 + i % 5,
                params={"epsilon": 0.0},
                status=RunStatus.done,
                created_at=now - timedelta(seconds=i),
                result={
                    "support": [],
                    "intercept": 0.0,
                    "objective": 1.0 + i,
                    "n_steps": 3,
                    "stop_reason": "k",
                    "engine_seconds": 0.01,
                    "train": {"n_samples": 40},
                    "test": None,
                    "recovery": None,
                },
            )
            for i in range(3000)
        )
        session.commit()
    response = idle.get(f"/runs?dataset={ds['id']}")
    assert response.status_code == 200
    assert len(run_ids(response.text)) == 50 and "of 3000" in response.text
    assert len(response.content) < 120_000, len(response.content)
    assert "page 1 of 60" in response.text and "page=2" in response.text
    last = idle.get(f"/runs?dataset={ds['id']}&page=60&sort=objective&dir=asc").text
    assert len(run_ids(last)) == 50 and "page 60 of 60" in last
    beyond = idle.get(f"/runs?dataset={ds['id']}&page=999").text
    assert "page 60 of 60" in beyond


def test_backward_elimination_is_greyed_out_in_the_run_form(site):
    page = html_of(site.client, f"/datasets/{site.wide['id']}")
    form = page[page.index('id="run-algorithm"') :]
    option = form[form.index('value="backward"') :]
    option = option[: option.index("</option>")]
    assert "disabled" in option and "needs more rows than features" in option
    tall = html_of(site.client, f"/datasets/{site.dataset['id']}")
    form = tall[tall.index('id="run-algorithm"') :]
    option = form[form.index('value="backward"') :]
    assert "disabled" not in option[: option.index("</option>")]


def test_queued_runs_cannot_be_deleted_from_the_table(idle):
    ds = generate(idle, "gaussian_regression", n=40, d=8)
    run = submit(idle, ds["id"], algorithm="omp", k=2)
    page = html_of(idle, f"/runs?dataset={ds['id']}")
    assert run_ids(page) == [run["id"]] and "data-delete" not in page


def test_run_page_renames_tags_and_deletes_through_the_api(site):
    ds = generate(site.client, "gaussian_regression", n=40, d=8, k_true=2)
    run = wait_for(site.client, submit(site.client, ds["id"], algorithm="omp", k=2)["id"])
    page = html_of(site.client, f"/runs/{run['id']}")
    assert f'action="/api/runs/{run["id"]}" method="post" data-method="PATCH"' in page
    assert 'name="tags" data-type="tags"' in page and 'name="notes"' in page
    assert f'data-delete="/api/runs/{run["id"]}" data-after="/runs"' in page
    assert f"Delete run #{run['id']} (omp on {ds['name']})? Its trace goes with it" in page
    assert 'id="confirm-delete"' in page and "<script>" not in page
    site.client.patch(run["url"], json={"name": "my omp", "tags": ["demo"], "notes": "why"})
    page = html_of(site.client, f"/runs/{run['id']}")
    assert f"Run #{run['id']}: my omp" in page and '<span class="chip tag">demo</span>' in page
    assert "“my omp”" in page
    table = html_of(site.client, "/runs?tag=demo")
    assert run_ids(table) == [run["id"]] and "my omp" in table
    assert run_ids(html_of(site.client, "/runs?q=MY+OMP")) == [run["id"]]


def test_comparison_page_of_runs_compared_later(site):
    ids = [site.foba["id"], site.forward["id"]]
    response = site.client.post("/api/comparisons/from-runs", json={"run_ids": ids})
    assert response.status_code == 201, response.text
    cid = response.json()["id"]
    page = html_of(site.client, f"/comparisons/{cid}")
    assert "foba-obj" in page and "forward-obj" in page and "Selected sets side by side" in page
    # One with a test split, one without: the page says so rather than quoting the first run's.
    assert "objective least_squares, k = 3, splits differ between runs" in page
    by_k = html_of(site.client, f"/comparisons/{cid}/by-k", headers=HX)
    assert "chart-objective-k" in by_k
    assert 'id="compare-ticked"' in html_of(site.client, "/runs")


def test_dataset_page_renames_and_names_what_a_deletion_takes(site, idle):
    ds = generate(site.client, "gaussian_regression", n=40, d=8, k_true=2)
    wait_for(site.client, submit(site.client, ds["id"], algorithm="omp", k=2)["id"])
    page = html_of(site.client, f"/datasets/{ds['id']}")
    assert f'action="/api/datasets/{ds["id"]}" method="post" data-method="PATCH"' in page
    assert f'data-delete="/api/datasets/{ds["id"]}" data-after="/"' in page
    assert "With it go its 1 run and their traces, 0 comparisons and 0 cross-validations" in page
    renamed = site.client.patch(f"/api/datasets/{ds['id']}", json={"name": "renamed set"})
    assert renamed.status_code == 200
    assert "<h1>renamed set</h1>" in html_of(site.client, f"/datasets/{ds['id']}")
    # A queued run blocks the deletion: the button says so instead of failing.
    busy = generate(idle, "gaussian_regression", n=40, d=8)
    submit(idle, busy["id"], algorithm="omp", k=2)
    page = html_of(idle, f"/datasets/{busy['id']}")
    button = page[page.index(f'data-delete="/api/datasets/{busy["id"]}"') :]
    assert "disabled" in button[: button.index(">")]
    assert "1 run is queued or running on it: cancel it or wait, then delete." in page
    assert site.client.delete(f"/api/datasets/{ds['id']}").status_code == 204


def test_runs_table_shows_the_stored_auc_the_run_page_draws(site):
    """The support-recovery AUC is stored with the result (from the path), so the table shows
    and sorts it without reading traces; it is the run page's AUC."""
    client = site.client
    auc = site.foba["result"]["recovery"]["auc"]
    assert auc is not None and 0 <= auc <= 1
    run_page = html_of(client, f"/runs/{site.foba['id']}")
    drawn = re.search(r'ROC AUC</span><span class="value">([^<]+)<', run_page).group(1)
    table = html_of(client, "/runs?sort=auc")
    row = table[table.index(f'<tr data-run="{site.foba["id"]}">') :]
    assert f'<td class="num">{drawn}</td>' in row[: row.index("</tr>")]
    assert 'data-sort="auc">AUC ▼<' in table
    scores = [client.get(f"/api/runs/{i}").json()["result"] for i in run_ids(table)]
    known = [r["recovery"]["auc"] for r in scores if r and r["recovery"]]
    assert known == sorted(known, reverse=True)
    assert site.failed["result"] is None or site.failed["result"]["recovery"] is None


def test_a_finished_run_whose_metrics_are_null_still_has_a_page(idle):
    """Metrics stored as null (an overflow before uploads refused such data) once made the run
    page compute 1 - null: a 500."""
    ds = generate(idle, "liu2014_logistic", n=40, d=8, s=2)
    with Session(idle.app.state.db) as session:
        run = Run(
            dataset_id=ds["id"],
            algorithm="omp",
            objective="logistic",
            k=2,
            status=RunStatus.done,
            test_fraction=0.25,
            result={
                "support": [],
                "intercept": 0.0,
                "objective": None,
                "n_steps": 2,
                "stop_reason": "k",
                "engine_seconds": 0.01,
                "train": {"n_samples": 30, "accuracy": None, "log_loss": None},
                "test": {"n_samples": 10, "accuracy": None, "log_loss": None},
                "recovery": None,
            },
        )
        session.add(run)
        session.commit()
        run_id = run.id
    page = idle.get(f"/runs/{run_id}")
    assert page.status_code == 200, page.text[:500]
    assert "Train error" in page.text
