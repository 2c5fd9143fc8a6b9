"""The stability page, its 'why not' answers and the offers on the data set and run pages,
read as HTML (the figures are checked against plotly.js's schema)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from page_helpers import check_figure, figures, generate
from service_helpers import make_settings, serve, submit, wait_for


@pytest.fixture(scope="module")
def done(tmp_path_factory) -> Iterator[tuple[Any, dict, dict, dict]]:
    data_dir = tmp_path_factory.mktemp("stability") / "data"
    with serve(make_settings(data_dir, workers=1)) as client:
        ds = generate(client, "gaussian_regression", n=80, d=12, k_true=3, rho=0.6)
        run = wait_for(client, submit(client, ds["id"], algorithm="foba-obj", k=3)["id"])
        body = {"dataset_id": ds["id"], "run_id": run["id"], "k_max": 5, "n_pairs": 4}
        response = client.post("/api/stability", json={**body, "compare_with": ["omp"]})
        assert response.status_code == 202, response.text
        deadline = time.monotonic() + 120
        while (study := client.get(response.json()["url"]).json())["status"] != "done":
            assert study["status"] in ("queued", "running") and time.monotonic() < deadline
            time.sleep(0.2)
        yield client, ds, run, study


def test_the_page_draws_the_path_the_heatmap_and_the_methods(done) -> None:
    client, ds, _run, study = done
    page = client.get(f"/stability/{study['id']}")
    assert page.status_code == 200
    shown = figures(page.text)
    assert set(shown) == {
        "chart-stability-path",
        "chart-stability-heatmap",
        "chart-stability-index",
    }
    for figure in shown.values():
        check_figure(figure)
    path = shown["chart-stability-path"]
    names = [t["name"] for t in path["data"]]
    assert "threshold π = 0.6" in names and "bound on E[false selections] (right axis)" in names
    freq = study["methods"][0]["summary"]["frequency"]
    top = max(range(12), key=lambda u: (max(r[u] for r in freq), sum(r[u] for r in freq)))
    line = next(t for t in path["data"] if t["name"] == ds["feature_names"][top])
    assert line["y"] == [r[top] for r in freq]  # the engine's frequencies, as they are
    heat = shown["chart-stability-heatmap"]["data"][0]
    assert heat["x"] == [1, 2, 3, 4, 5] and len(heat["y"]) == 12
    assert "the run's k = 3" in str(path["layout"]["annotations"])
    assert f"/stability/{study['id']}/why-not?feature=" in page.text
    assert "frequencies CSV" in page.text and "Steadiest at each k" in page.text
    omp = client.get(f"/stability/{study['id']}?method=omp")
    assert "Stability path of omp" in str(figures(omp.text)["chart-stability-path"])


def test_why_not_answers_against_the_run_and_the_most_frequent_set(done) -> None:
    client, ds, run, study = done
    selected = {f["index"] for f in run["result"]["support"]}
    other = next(j for j in range(12) if j not in selected)
    answer = client.get(f"/api/stability/{study['id']}/why-not?feature={other}&k=3").json()
    assert answer["reference"] == f"run #{run['id']}'s selection (k = 3)"
    assert answer["verdict"]["selected"] is False and answer["verdict"]["explanation"]
    at_two = client.get(f"/api/stability/{study['id']}/why-not?feature={other}&k=2").json()
    assert "most often at k = 2" in at_two["reference"] and len(at_two["support"]) == 2
    page = client.get(f"/stability/{study['id']}/why-not?feature={other}&k=3")
    assert page.status_code == 200 and f"Why not {ds['feature_names'][other]}?" in page.text
    bad = client.get(f"/api/stability/{study['id']}/why-not?feature=99&k=3")
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["query", "feature"]
    assert client.get(f"/api/stability/{study['id']}/why-not?feature=0&k=9").status_code == 422


def test_a_running_study_shows_its_progress_and_a_cancel_button(idle) -> None:
    ds = generate(idle, "gaussian_regression", n=40, d=6, k_true=2)
    body = {"dataset_id": ds["id"], "algorithm": "omp", "k_max": 3, "n_pairs": 2}
    study = idle.post("/api/stability", json=body).json()
    page = idle.get(f"/stability/{study['id']}")
    assert page.status_code == 200 and "Half samples done" in page.text
    assert f'action="/api/stability/{study["id"]}/cancel"' in page.text
    assert "/static/js/stability.js" in page.text and "<script>" not in page.text
    idle.post(f"/api/stability/{study['id']}/cancel")
    assert "Cancelled." in idle.get(f"/stability/{study['id']}").text
    assert idle.get("/stability/999").status_code == 404


def test_the_data_set_and_run_pages_offer_it_and_list_the_studies(done) -> None:
    client, ds, run, study = done
    page = client.get(f"/datasets/{ds['id']}").text
    assert 'id="stability-form"' in page and 'action="/api/stability"' in page
    assert f'href="/stability/{study["id"]}"' in page
    run_page = client.get(f"/runs/{run['id']}").text
    assert 'id="stability-run"' in run_page and f'name="run_id" value="{run["id"]}"' in run_page
    assert f'href="/stability/{study["id"]}"' in run_page
