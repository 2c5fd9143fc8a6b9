"""Judging a run's answer in the app (issue 23), on SQLite and PostgreSQL: the worker stores the
swap certificate (and, when asked, the exact optimum) with the result and appends the
certificate's checks to the trace; GET /api/runs/{id}/why-not/{feature} answers on demand,
bounded, cached."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from app_helpers import full_trace, regression_csv, upload_ok
from service_helpers import make_settings, serve, submit

import engine
from app import storage
from app.jobs import judging, lease
from app.jobs.evaluation import split_rows
from app.jobs.tasks import JobContext, run_job
from app.services import judging as judging_service


@pytest.fixture
def client(database_url: str, data_dir: Path):
    with serve(make_settings(data_dir, database_url=database_url)) as c:
        yield c


def execute(client, run_id: int) -> dict:
    """Run a queued run's job here (the app has no workers) and read it back."""
    db, store = client.app.state.db, client.app.state.store
    held = lease.claim(db, run_id, "test")
    assert (
        run_job(run_id, JobContext(db=db, store=store, claim=held, heartbeat_seconds=0.2)) == "done"
    )
    return client.get(f"/api/runs/{run_id}").json()


def brute_force_best(X: np.ndarray, y: np.ndarray, k: int, settings: dict) -> float:
    return min(
        engine.certify(X, y, list(S), **settings).objective
        for S in combinations(range(X.shape[1]), k)
    )


def test_the_worker_stores_certificate_exact_and_trace(client) -> None:
    ds = upload_ok(client, regression_csv(n=60, d=6, support=(1, 4)))
    run = submit(client, ds["id"], algorithm="omp", k=2, exact=True, test_fraction=0.25, seed=3)
    assert (run["certify"], run["exact"]) == (True, True)
    run = execute(client, run["id"])
    result = run["result"]
    cert, exact = result["certificate"], result["exact"]
    assert result["judged_as"]["objective"] == "least_squares"
    assert result["judged_as"]["standardize"] is True
    assert cert["support"] == sorted(f["index"] for f in result["support"])
    assert cert["n_exchanges"] == 2 * 4
    assert isinstance(cert["local_optimum"], bool) and cert["verdict"]
    # The exact optimum on the run's own training rows, checked by enumerating all 15 supports.
    arrays = client.app.state.store.load(ds_file(client, ds["id"]))
    X, y = storage.unpack_matrix(arrays), arrays["y"]
    train, _ = split_rows(y, "regression", 0.25, 3)
    best = brute_force_best(X[train], y[train], 2, result["judged_as"])
    assert exact["status"] == "optimal" and exact["optimal"] is True
    assert exact["objective"] == pytest.approx(best, rel=1e-9)
    assert exact["given_objective"] == pytest.approx(cert["objective"], rel=1e-9)
    assert exact["verdict"] == "optimal" or exact["verdict"].endswith(
        "above the best size-2 support"
    )
    # The certificate's checks close the trace, numbered on from the run's own events.
    events = full_trace(client, run["id"])
    stop = next(i for i, e in enumerate(events) if e["kind"] == "stop")
    after = events[stop + 1 :]
    assert after and all(e["kind"] == "check" and e["feature_out"] is not None for e in after)
    assert [e["step"] for e in events] == list(range(len(events)))
    assert after[0]["reason"] == cert["verdict"]


def ds_file(client, dataset_id: int) -> str:
    from sqlmodel import Session

    from app.models import Dataset

    with Session(client.app.state.db) as session:
        return session.get(Dataset, dataset_id).file


def test_judging_is_optional_and_bounded(client, monkeypatch) -> None:
    ds = upload_ok(client, regression_csv(n=40, d=5))
    plain = execute(client, submit(client, ds["id"], algorithm="omp", k=2, certify=False)["id"])
    assert plain["certify"] is False
    assert (plain["result"]["certificate"], plain["result"]["exact"]) == (None, None)
    assert all(e["kind"] != "check" for e in full_trace(client, plain["id"]))
    monkeypatch.setattr(judging, "WORKER_BUDGET", 100.0)
    big = execute(client, submit(client, ds["id"], algorithm="omp", k=2)["id"])
    skipped = big["result"]["certificate"]["skipped"]
    assert "40 x 5 x 2" in skipped and "above the bound" in skipped


def test_why_not_answers_in_place_and_refuses_large_problems(client, monkeypatch) -> None:
    ds = upload_ok(client, regression_csv(n=60, d=6, support=(1, 4)))
    run = execute(client, submit(client, ds["id"], algorithm="forward-obj", k=2)["id"])
    selected = [f["index"] for f in run["result"]["support"]]
    other = next(j for j in range(6) if j not in selected)
    answer = client.get(f"/api/runs/{run['id']}/why-not/{other}")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["selected"] is False and body["feature_name"] == ds["feature_names"][other]
    assert body["best"]["feature_in"] == other and body["best"]["feature_out"] in selected
    assert body["cost"] == pytest.approx(body["best"]["objective"] - body["objective"])
    assert repr(ds["feature_names"][other]) in body["explanation"]
    # The engine's own answer on the same rows and settings.
    cert = run["result"]["certificate"]
    assert body["objective"] == pytest.approx(cert["objective"], rel=1e-12)
    mine = client.get(f"/api/runs/{run['id']}/why-not/{selected[0]}").json()
    assert mine["selected"] is True and mine["best"]["feature_out"] == selected[0]
    # Cached: the same object again, without recomputing.
    monkeypatch.setattr(judging, "why_not_feature", lambda *a: pytest.fail("recomputed"))
    assert client.get(f"/api/runs/{run['id']}/why-not/{other}").json() == body
    assert client.get(f"/api/runs/{run['id']}/why-not/6").status_code == 422
    monkeypatch.setattr(judging, "WEB_BUDGET", 10.0)
    judging_service._cache.clear()
    refused = client.get(f"/api/runs/{run['id']}/why-not/{other}")
    assert refused.status_code == 422
    message = refused.json()["detail"][0]["msg"]
    assert "60 x 6 x 2" in message and "certificate" in message


def test_why_not_of_an_unfinished_run_is_a_conflict(client) -> None:
    ds = upload_ok(client, regression_csv(n=40, d=5))
    run = submit(client, ds["id"], algorithm="omp", k=2)
    assert client.get(f"/api/runs/{run['id']}/why-not/0").status_code == 409
    assert client.get("/api/runs/999999/why-not/0").status_code == 404


def test_abess_is_pre_ticked_in_comparisons_where_it_can_run(client) -> None:
    from sqlmodel import Session

    from app.models import Dataset
    from app.services import catalog

    ds = upload_ok(client, regression_csv(n=40, d=5))
    with Session(client.app.state.db) as session:
        choices = {c["name"]: c for c in catalog.compare_choices(session.get(Dataset, ds["id"]))}
    pytest.importorskip("abess")
    assert choices["abess"]["checked"] and choices["abess"]["blocked"] is None
    assert choices["foba-obj"]["checked"] and not choices["lasso"]["checked"]


def test_the_run_page_shows_the_verdicts_and_answers_why_not_in_place(client) -> None:
    ds = upload_ok(client, regression_csv(n=60, d=6, support=(1, 4)))
    run = execute(client, submit(client, ds["id"], algorithm="omp", k=2, exact=True)["id"])
    page = client.get(f"/runs/{run['id']}")
    assert page.status_code == 200
    html = page.text
    assert 'id="judgement"' in html and "Swap certificate" in html
    assert ("local optimum" in html) or ("not a local optimum" in html)
    assert ">optimal<" in html or "% above" in html
    assert f'hx-get="/runs/{run["id"]}/why-not?feature=' in html
    assert "<script>" not in html  # the Content-Security-Policy forbids inline scripts
    other = next(j for j in range(6) if j not in [f["index"] for f in run["result"]["support"]])
    fragment = client.get(
        f"/runs/{run['id']}/why-not?feature={other}", headers={"HX-Request": "true"}
    )
    assert fragment.status_code == 200
    assert f"Why not <strong>{ds['feature_names'][other]}</strong>?" in fragment.text
    assert "<html" not in fragment.text
    refused = client.get(f"/runs/{run['id']}/why-not?feature=99", headers={"HX-Request": "true"})
    assert refused.status_code == 200 and "column index from 0 to 5" in refused.text


def test_the_compare_page_marks_the_best_and_the_certified_and_disagreements_first(
    client,
) -> None:
    ds = upload_ok(client, regression_csv(n=60, d=6, support=(1, 4)))
    body = {
        "dataset_id": ds["id"],
        "test_fraction": 0.25,
        "runs": [
            {"algorithm": "forward-obj", "k": 2},
            {"algorithm": "omp", "k": 2, "certify": False},
            {"algorithm": "foba-obj", "k": 3},
        ],
    }
    comparison = client.post("/api/comparisons", json=body).json()
    runs = [execute(client, r["id"]) for r in comparison["runs"]]
    html = client.get(f"/comparisons/{comparison['id']}").text
    assert "★ best" in html
    assert "✓ local optimum" in html or "improving swap" in html
    assert "not judged" in html  # omp ran with certify off
    # Disagreements first: the first row of the sets table is chosen by only some runs.
    sets = html[html.index('id="sets"') :]
    first_row = sets[sets.index("<tbody>") : sets.index("</tr>", sets.index("<tbody>"))]
    assert 'class="some"' in first_row
    assert "where the runs disagree" in sets
    assert html.index('id="sets"') < html.index('id="by-k"')  # before the charts
    assert f'hx-get="/runs/{runs[2]["id"]}/why-not?feature=' in sets


def test_the_forms_offer_the_judging_options_with_runconfigs_defaults(client) -> None:
    from app.models import RunConfig

    ds = upload_ok(client, regression_csv(n=40, d=5))
    html = client.get(f"/datasets/{ds['id']}").text
    assert html.count('name="certify" data-type="bool"') == 2  # run form and compare form
    assert html.count('name="exact" data-type="bool"') == 2
    assert 'name="certify" data-type="bool" checked' in html
    assert 'name="exact" data-type="bool" checked' not in html
    help_text = RunConfig.model_fields["certify"].description
    assert help_text.split(";")[0][:60] in html.replace("&#39;", "'")


def test_judging_counts_against_the_run_s_time_limit() -> None:
    """What MAX_RUN_SECONDS leaves after the selection bounds the certificate and the exact
    search: nothing left, neither starts, and each says why; unbounded, both are computed."""
    from app.models import Run

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 6))
    y = X[:, 1] - X[:, 4] + 0.1 * rng.standard_normal(40)
    result = engine.select(X, y, algorithm="forward-obj", k=2)
    run = Run(dataset_id=1, algorithm="forward-obj", objective="least_squares", k=2, params={})
    run.certify, run.exact = True, True
    out_of_time = judging.judge_run(run, result, X, y, seconds_left=0.0)
    for what in (out_of_time.certificate, out_of_time.exact):
        assert what is not None and "MAX_RUN_SECONDS" in what["skipped"]
    assert out_of_time.events == []
    unbounded = judging.judge_run(run, result, X, y)
    assert unbounded.certificate is not None and "skipped" not in unbounded.certificate
    assert unbounded.exact is not None and "skipped" not in unbounded.exact
