"""Every page and fragment through the test client: status codes and the content that matters."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from page_helpers import check_figure, figures, generate
from service_helpers import submit, wait_for

import engine
from engine import datasets as generators

ROOT = Path(__file__).resolve().parents[2]
HX = {"HX-Request": "true"}


FRAMES = re.compile(r'<script type="application/json" id="teach-frames">(.*?)</script>', re.S)


def frames_of(html: str) -> dict:
    """The frames the teaching page's player steps through (embedded in the page)."""
    found = FRAMES.search(html)
    assert found, "the page holds no frames"
    return json.loads(found.group(1))


def html_of(client, url: str, status: int = 200, **kwargs) -> str:
    response = client.get(url, **kwargs)
    assert response.status_code == status, (url, response.status_code, response.text[:500])
    assert response.headers["content-type"].startswith("text/html")
    return response.text


# --------------------------------------------------------------------------- assets


def test_templates_reference_no_cdn():
    scripts = ROOT.joinpath("static", "js").glob("*.js")
    for path in [*ROOT.joinpath("templates").rglob("*.html"), *scripts]:
        text = path.read_text()
        for url in re.findall(r'(?:src|href)\s*=\s*["\'](https?:)?//', text):
            pytest.fail(f"{path.name} loads from another host: {url}")
        assert "cdn" not in text.lower(), path


def test_vendored_libraries_are_served(site):
    for name in ("htmx.min.js", "plotly.min.js"):
        response = site.client.get(f"/static/vendor/{name}")
        assert response.status_code == 200
        assert len(response.content) > 10_000
    readme = (ROOT / "static" / "vendor" / "README.md").read_text()
    assert "htmx.org" in readme and "plotly.js-dist-min" in readme and "MIT" in readme
    for script in ROOT.joinpath("static/js").glob("*.js"):
        assert site.client.get(f"/static/js/{script.name}").status_code == 200
    assert site.client.get("/static/app.css").status_code == 200


def test_each_page_loads_only_the_scripts_it_needs(site):
    """Small ES modules under static/js, loaded by the templates that need them; the CSRF
    token goes through api() and hx-headers, never by patching fetch or XMLHttpRequest."""

    def scripts(url: str) -> set[str]:
        tag = r'<script type="module" src="/static/js/(\w+)\.js"'
        return set(re.findall(tag, html_of(site.client, url)))

    common = {"figures", "forms"}
    assert scripts("/") == common | {"upload"}
    assert scripts("/runs") == common | {"runs_table"}
    assert scripts(f"/runs/{site.foba['id']}") >= common | {"run"}
    assert scripts(f"/teach/{site.foba['id']}?step=0") == common | {"teach"}
    assert scripts(f"/comparisons/{site.comparison['id']}") == common
    for path in ROOT.joinpath("static/js").glob("*.js"):
        text = path.read_text()
        assert "window.fetch =" not in text and "XMLHttpRequest.prototype" not in text, path
        assert "eval(" not in text and "new Function" not in text, path
    assert not ROOT.joinpath("static", "app.js").exists()


# --------------------------------------------------------------------------- home


def test_home_lists_data_sets_runs_and_the_forms(site):
    page = html_of(site.client, "/")
    assert f'href="/datasets/{site.dataset["id"]}"' in page
    assert f'href="/runs/{site.foba["id"]}"' in page
    assert f'href="/comparisons/{site.comparison["id"]}"' in page
    assert 'action="/api/datasets"' in page and 'type="file"' in page
    assert 'action="/api/datasets/generate"' in page
    for name, spec in generators.GENERATORS.items():
        # generators of tables are offered; the CRF's chains are engine-only
        offered = spec.task in ("regression", "classification")
        assert (f'value="{name}"' in page) == offered, name
    assert 'src="/static/vendor/htmx.min.js"' in page
    assert "plotly.min.js" not in page  # no chart on this page: no 4.8 MB download


def test_generator_fragment_has_every_parameter(site):
    spec = generators.GENERATORS["zhang2008"]
    page = html_of(site.client, "/partials/generator?generator=zhang2008", headers=HX)
    assert "<html" not in page
    for p in spec.params:
        assert f'name="params.{p.name}"' in page
    assert spec.reference in page
    html_of(site.client, "/partials/generator?generator=nope", 404)


# --------------------------------------------------------------------------- data set


def test_dataset_page_shows_data_and_forms(site):
    ds = site.dataset
    page = html_of(site.client, f"/datasets/{ds['id']}")
    assert "Preview" in page and "Column summary" in page
    for name in ds["feature_names"]:
        assert name in page
    for name in ds["true_support"]:
        assert f"{name} ★" in page
    # The run form comes from the registry: every algorithm, FoBa's parameters with defaults.
    for name in engine.ALGORITHMS:
        assert f'value="{name}"' in page
    assert 'name="params.nu"' in page and 'value="0.5"' in page
    assert 'name="record_candidates"' in page and 'name="test_fraction"' in page
    assert 'action="/api/runs"' in page and 'action="/api/comparisons"' in page
    assert "Liu, Fujimaki &amp; Ye 2014" in page  # FoBa-obj's paper
    assert f'href="/runs/{site.foba["id"]}"' in page


def test_run_params_fragment_follows_the_algorithm(site):
    ds = site.dataset
    page = html_of(site.client, f"/datasets/{ds['id']}/run-params?algorithm=omp", headers=HX)
    assert "<html" not in page
    spec = engine.ALGORITHMS["omp"]
    assert spec.summary in page and spec.reference in page
    assert 'name="params.epsilon"' in page and 'name="params.nu"' not in page
    # A regression data set is not offered the logistic objective.
    assert 'value="logistic"' not in page
    logistic = html_of(
        site.client,
        f"/datasets/{site.logistic['id']}/run-params?algorithm=foba-gdt&objective=logistic",
    )
    assert 'value="logistic" selected' in logistic and 'name="params.lam"' in logistic


def test_missing_pages_are_html_404s(site):
    for url in (
        "/datasets/9999",
        "/runs/9999",
        "/comparisons/9999",
        "/teach/9999",
        "/teach/lessons/nope",
        "/runs/9999/figures",
    ):
        page = html_of(site.client, url, 404)
        assert "does not exist" in page or "no lesson" in page


# --------------------------------------------------------------------------- run


def test_finished_run_page_has_player_charts_and_results(site):
    run = site.foba
    page = html_of(site.client, f"/runs/{run['id']}")
    assert 'id="player"' in page and 'class="player-bar"' in page  # player.js fills it
    assert 'data-figures="/runs/{}/figures"'.format(run["id"]) in page
    for div in ("chart-path", "chart-objective-step", "chart-objective-size", "chart-coef"):
        assert f'id="{div}"' in page
    assert not figures(page)  # the page holds no chart data: it fetches it
    response = site.client.get(f"/runs/{run['id']}/figures")
    assert response.status_code == 200 and response.headers["content-encoding"] == "gzip"
    payload = response.json()
    figs = {f"chart-{key.replace('_', '-')}": fig for key, fig in payload["figures"].items()}
    assert {
        "chart-path",
        "chart-objective-step",
        "chart-objective-size",
        "chart-coef",
        "chart-roc",
    } <= set(figs)
    for fig in figs.values():
        check_figure(fig)
    names = site.dataset["feature_names"]
    # Feature names, not indices, on the path's rows.
    rows = figs["chart-path"]["layout"]["yaxis"]["categoryarray"]
    assert rows and all(r.split(" ")[0] in names for r in rows)
    markers = {t["name"] for t in figs["chart-path"]["data"] if t["mode"] == "markers"}
    assert "addition" in markers  # deletions: test_path_chart_marks_deletions_apart
    frames = payload["frames"]
    assert len(frames["frames"]) == len(
        site.client.get(f"/api/runs/{run['id']}/trace").json()["events"]
    )
    assert "answer" in frames and "teach" not in frames["frames"][0]  # the run page's frames
    result = run["result"]
    for feature in result["support"]:
        assert feature["name"] in page
    assert f"/api/runs/{run['id']}/export?format=csv" in page
    assert f"/api/runs/{run['id']}/export?format=json" in page
    assert f'href="/api/runs/{run["id"]}"' in page
    assert "F-measure" in page and "ROC AUC" in page and "Test MSE" in page
    assert f'href="/teach/{run["id"]}?step=0"' in page


def test_path_chart_marks_deletions_apart(site):
    """A run that surely deletes (Zhang's Figure 2: FoBa takes f3 first, then deletes it):
    its deletions are drawn at their steps, by another shape and colour than additions."""
    from app.services.lessons import figure2_problem

    problem = figure2_problem()
    header = ",".join([*problem.feature_names, "y"])
    lines = [
        ",".join(f"{v:.17g}" for v in (*x, t)) for x, t in zip(problem.X, problem.y, strict=True)
    ]
    upload = site.client.post(
        "/api/datasets",
        files={"file": ("figure2.csv", "\n".join([header, *lines]) + "\n")},
        data={"target": "y"},
    )
    assert upload.status_code == 201, upload.text
    run = wait_for(
        site.client, submit(site.client, upload.json()["id"], algorithm="foba-obj", k=2)["id"]
    )
    assert run["status"] == "done", run["error"]
    events = site.client.get(f"/api/runs/{run['id']}/trace").json()["events"]
    removals = [e["step"] for e in events if e["kind"] == "remove"]
    assert removals, "FoBa deletes f3 on Zhang's Figure 2"
    payload = site.client.get(f"/runs/{run['id']}/figures").json()
    traces = {t["name"]: t for t in payload["figures"]["path"]["data"] if t["mode"] == "markers"}
    added, deleted = traces["addition"], traces["deletion"]
    assert deleted["x"] == removals and all(y.split(" ")[0] == "f3" for y in deleted["y"])
    assert added["marker"]["symbol"] != deleted["marker"]["symbol"]
    assert added["marker"]["color"] != deleted["marker"]["color"]


def test_failed_run_page_shows_the_error(site):
    page = html_of(site.client, f"/runs/{site.failed['id']}")
    assert "The run failed" in page and "linear combination" in page


def test_backward_elimination_is_greyed_out_and_refused_when_n_is_not_above_d(site):
    page = html_of(site.client, f"/datasets/{site.wide['id']}")
    label = page[page.index('data-algorithm="backward"') :]
    label = label[: label.index("</label>")]
    assert "disabled" in label and "needs more rows than features" in label
    response = site.client.post(
        "/api/runs", json={"dataset_id": site.wide["id"], "algorithm": "backward", "k": 3}
    )
    assert response.status_code == 422
    assert "more samples than features" in response.json()["detail"][0]["msg"]


def test_queued_run_page_is_followed_by_htmx_polling(idle):
    """While a run is queued or running, HTMX polls its live fragment, which holds the path
    drawn by the server (the finished page's function); once it has ended, HX-Refresh."""
    ds = generate(idle, "gaussian_regression", n=40, d=8)
    run = submit(idle, ds["id"], algorithm="foba-obj", k=2)
    rid = run["id"]
    page = html_of(idle, f"/runs/{rid}")
    assert f'hx-get="/runs/{rid}/live" hx-trigger="every 1s"' in page
    assert f'hx-post="/api/runs/{rid}/cancel"' in page and "Cancel the run" in page
    assert 'role="progressbar"' in page and 'id="run-status"' in page
    for fig in figures(page).values():
        check_figure(fig)
    live = idle.get(f"/runs/{run['id']}/live", headers=HX)
    assert live.status_code == 200 and "HX-Refresh" not in live.headers
    assert "<html" not in live.text and 'hx-trigger="every 1s"' in live.text
    assert 'id="run-status" hx-swap-oob="true"' in live.text
    assert set(figures(live.text)) == {"chart-path", "chart-objective-step"}
    assert idle.post(f"/api/runs/{run['id']}/cancel").status_code == 200
    ended = idle.get(f"/runs/{run['id']}/live", headers=HX)
    assert ended.headers["HX-Refresh"] == "true"  # the page loads again, finished


def test_live_path_is_the_finished_pages_figure():
    """The live page's path comes from charts/run.py; no script draws one of its own."""
    from app.web.charts import run as run_charts
    from engine.trace import Event

    events = [
        Event(step=0, kind="add", feature=1, objective=2.0, support_size=1),
        Event(step=1, kind="add", feature=0, objective=1.0, support_size=2),
    ]
    fig = run_charts.path_figure(events, ["a", "b"], title="Features by step (live)")
    check_figure(fig)
    for path in ROOT.joinpath("static", "js").glob("*.js"):
        assert "pathFigure" not in path.read_text()


def test_a_long_run_keeps_its_page_light(site):
    """10,000 events: the page's HTML stays small (the charts come as compressed JSON) and a
    poll for the events after the last one seen returns only those."""
    ds = generate(site.client, "gaussian_regression", n=60, d=30, k_true=3)
    run = submit(
        site.client,
        ds["id"],
        algorithm="frank-wolfe",
        params={"B1": 3.0, "epsilon": 1e-12, "max_iter": 9999},
        certify=False,  # its checks would follow the 10,000 events
    )
    run = wait_for(site.client, run["id"], timeout=180)
    assert run["status"] == "done", run["error"]
    page = site.client.get(f"/runs/{run['id']}")
    assert len(page.content) < 400_000, len(page.content)
    trace = site.client.get(f"/api/runs/{run['id']}/trace?after=-1&limit=5000").json()
    last = site.client.get(f"/api/runs/{run['id']}/trace?limit=5000&after=9990").json()
    assert [e["step"] for e in last["events"]] == list(range(9991, 10000))
    assert trace["next_after"] == 4999 and not trace["complete"] and last["complete"]
    figures_json = site.client.get(f"/runs/{run['id']}/figures")
    assert figures_json.headers["content-encoding"] == "gzip"


# --------------------------------------------------------------------------- comparison


def test_comparison_page_overlays_the_runs(site):
    cid = site.comparison["id"]
    page = html_of(site.client, f"/comparisons/{cid}")
    for label in ("foba-obj", "forward-obj", "omp"):
        assert label in page
    assert "Selected sets side by side" in page and "Chosen by" in page
    assert f'hx-get="/comparisons/{cid}/by-k"' in page
    figs = figures(page)
    assert {"chart-roc", "chart-time"} <= set(figs)
    for fig in figs.values():
        check_figure(fig)
    assert len([t for t in figs["chart-roc"]["data"] if "AUC" in t["name"]]) == 3


def test_comparison_by_k_fragment(site):
    fragment = html_of(site.client, f"/comparisons/{site.comparison['id']}/by-k", headers=HX)
    figs = figures(fragment)
    assert set(figs) == {"chart-objective-k", "chart-error-k"}
    for fig in figs.values():
        check_figure(fig)
        assert len(fig["data"]) == 3
    # forward greedy visits k = 1..3 once each: its curve has those points.
    forward = next(t for t in figs["chart-objective-k"]["data"] if t["name"] == "forward-obj")
    assert forward["x"] == [1, 2, 3]


def test_comparison_live_fragment(site):
    response = site.client.get(f"/comparisons/{site.comparison['id']}/live", headers=HX)
    assert response.status_code == 200 and response.headers["HX-Refresh"] == "true"
    assert "<html" not in response.text


# --------------------------------------------------------------------------- teaching


def test_teach_index_lists_the_lessons(site):
    from app.services.lessons import LESSONS

    page = html_of(site.client, "/teach")
    for lesson in LESSONS.values():
        assert lesson.title.replace("'", "&#39;") in page
        assert f'action="/teach/lessons/{lesson.key}"' in page or (
            f'href="/teach/lessons/{lesson.key}"' in page
        )
    assert f'href="/teach/{site.foba["id"]}?step=0"' in page


def test_starting_a_lesson_twice_creates_it_once(site):
    client = site.client
    before = len(client.get("/api/datasets").json())
    response = client.post("/teach/lessons/figure2", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/teach/lessons/figure2"
    runs_once = {r["id"] for r in client.get("/api/runs").json()}
    assert client.post("/teach/lessons/figure2", follow_redirects=False).status_code == 303
    assert len(client.get("/api/datasets").json()) == before + 1
    assert {r["id"] for r in client.get("/api/runs").json()} == runs_once
    page = html_of(client, "/teach/lessons/figure2")
    assert "Forward greedy" in page and "FoBa" in page and "Step through it" in page
    lesson_runs = [r for r in client.get("/api/runs").json() if r["record_candidates"]]
    forward = next(r for r in lesson_runs if r["algorithm"] == "forward-obj")
    foba = next(r for r in lesson_runs if r["algorithm"] == "foba-obj" and r["k"] == 2)
    forward, foba = wait_for(client, forward["id"]), wait_for(client, foba["id"])
    # Zhang's Figure 2: forward greedy keeps f3, FoBa deletes it.
    assert "f3" in [f["name"] for f in forward["result"]["support"]]
    assert sorted(f["name"] for f in foba["result"]["support"]) == ["f1", "f2"]
    events = client.get(f"/api/runs/{foba['id']}/trace").json()["events"]
    removal = next(e for e in events if e["kind"] == "remove")
    data = frames_of(html_of(client, f"/teach/{foba['id']}?step={removal['step']}"))
    i = next(i for i, f in enumerate(data["frames"]) if f["step"] == removal["step"])
    sentence = data["frames"][i]["teach"]["sentence"]
    assert sentence.startswith("f3 removed: deleting it raises the objective by")
    assert "below 0.5 \u00d7 " in sentence
    # Paired by decision: the deletion leaves two features, as forward greedy's step 1 does.
    forward_events = client.get(f"/api/runs/{forward['id']}/trace").json()["events"]
    pair = next(e["step"] for e in forward_events if e["support_size"] == 2)
    (other,) = data["lesson"]
    assert (other["label"], other["run"], other["steps"][i]) == (
        "Forward greedy",
        forward["id"],
        pair,
    )
    assert len(other["steps"]) == len(data["frames"])


def test_teach_page_steps_through_forward_and_backward_decisions(site):
    run = site.foba
    events = site.client.get(f"/api/runs/{run['id']}/trace").json()["events"]
    data = frames_of(html_of(site.client, f"/teach/{run['id']}?step=0"))
    # Every step is in the page: the player steps through them without asking the server.
    assert [f["step"] for f in data["frames"]] == [e["step"] for e in events]
    first = data["frames"][0]["teach"]
    assert first["label"] == "Forward step"
    assert "added: it has the largest objective drop" in first["sentence"]
    fig = first["figure"]
    check_figure(fig)
    chosen = next(t for t in fig["data"] if t["name"] == "chosen")
    assert chosen["y"] == [site.dataset["feature_names"][events[0]["feature"]]]
    i, check = next((i, e) for i, e in enumerate(events) if e["kind"] == "check")
    narrated = data["frames"][i]["teach"]
    assert narrated["sentence"].startswith("Nothing removed: the cheapest deletion")
    fig = narrated["figure"]
    assert fig["layout"]["shapes"][0]["x0"] == pytest.approx(check["threshold"])
    # The stop (the swap certificate's checks follow it in the trace): no choice.
    stop = next(i for i, e in enumerate(events) if e["kind"] == "stop")
    assert data["frames"][stop]["teach"]["figure"] is None
    assert data["frames"][stop]["teach"]["chart_note"] == (
        "This step is not a choice among candidates."
    )


def test_teach_fragment_for_htmx_and_the_step_asked(site):
    run_id = site.foba["id"]
    fragment = html_of(
        site.client, f"/teach/{run_id}?step=1", headers={**HX, "HX-Target": "teach-panel"}
    )
    assert fragment.lstrip().startswith('<section id="teach-panel"')
    assert 'id="teach-frames"' in fragment  # a what-if swaps in new frames
    assert '<input type="hidden" name="step" value="1">' in fragment
    playing = html_of(site.client, f"/teach/{run_id}?step=0&play=true")
    assert 'data-play="1"' in playing
    for odd in ("-1", "abc", "99999"):  # the player says so (player.js); the page still works
        page = html_of(site.client, f"/teach/{run_id}?step={odd}")
        assert frames_of(page)["frames"]


def test_teach_page_of_a_run_without_candidate_scores(site):
    page = html_of(site.client, f"/teach/{site.forward['id']}?step=0")
    assert "did not record candidate scores" in page
    first = frames_of(page)["frames"][0]["teach"]
    assert first["figure"] is None
    assert "started without \u201crecord candidate scores\u201d" in first["chart_note"]


def test_the_teach_pages_frames_are_the_narration_of_every_step_of_a_lesson(site):
    """The page holds, for every step of a built-in lesson's runs, exactly what teach_step
    says of it (sentence, heading, facts, added and removed, the candidates figure) and the
    support after it; and where the answer was found when the path went past it."""
    from app.models import Run
    from app.web.charts.kinds import kind_key
    from app.web.charts.player import answer_found
    from app.web.views import teach_step
    from engine.trace import Event, supports_in_order

    client = site.client
    assert client.post("/teach/lessons/figure2", follow_redirects=False).status_code == 303
    lesson_runs = [
        r for r in client.get("/api/runs").json() if r["dataset_id"] == _lesson_dataset(client)
    ]
    assert {r["algorithm"] for r in lesson_runs} == {"forward-obj", "foba-obj"}
    for listed in lesson_runs:
        stored = wait_for(client, listed["id"])
        ds = client.get(f"/api/datasets/{stored['dataset_id']}").json()
        names = ds["feature_names"]
        raw = client.get(f"/api/runs/{stored['id']}/trace?limit=5000").json()["events"]
        events = [Event.from_dict(e) for e in raw]
        run = Run(
            dataset_id=stored["dataset_id"],
            algorithm=stored["algorithm"],
            objective=stored["objective"],
            k=stored["k"],
            params=stored["params"],
            record_candidates=stored["record_candidates"],
        )
        answer = [f["name"] for f in stored["result"]["support"]]
        best = answer_found(events, run.k)
        data = frames_of(html_of(client, f"/teach/{stored['id']}?step=0"))
        assert len(data["frames"]) == len(events)
        supports = supports_in_order(events)
        for i, (frame, event) in enumerate(zip(data["frames"], events, strict=True)):
            told = teach_step.explain(run, names, events, i, best_step=best, answer=answer)
            t = frame["teach"]
            assert frame["step"] == event.step and frame["kind"] == kind_key(event)
            assert t["sentence"] == told.sentence
            assert t["label"] == told.kind_label
            assert t["facts"] == [list(f) for f in told.facts]
            assert (t["added"], t["removed"]) == (told.added, told.removed)
            assert t["score_help"] == told.score_help
            assert t["figure"] == json.loads(json.dumps(told.figure))
            # The player lists a support by column (the narration by order of entry).
            support = [names[j] for j in data["supports"][frame["support"]]]
            assert support == [names[j] for j in sorted(supports[i])]
            assert sorted(support) == sorted(told.support_after)
        if stored["algorithm"] == "foba-obj":  # FoBa went past k = 2 and came back
            assert best is not None
            assert data["answer"]["step"] == best and data["answer"]["k"] == 2
            assert data["answer"]["text"].startswith(f"The answer was found at step {best};")
            # Its stop says so (the swap certificate's checks follow the stop in the trace).
            stop = next(f for f in data["frames"] if f["kind"] == "stop")
            assert f"found at step {best}" in stop["teach"]["sentence"]
        else:
            assert data["answer"] is None


def _lesson_dataset(client) -> int:
    """The data set of the figure2 lesson (named after the lesson)."""
    from app.services.lessons import LESSONS

    title = LESSONS["figure2"].title
    return next(d["id"] for d in client.get("/api/datasets").json() if title in d["name"])


def test_teach_page_of_a_queued_run_waits(idle):
    ds = generate(idle, "gaussian_regression", n=40, d=8)
    run = submit(idle, ds["id"], algorithm="foba-obj", k=2, record_candidates=True)
    page = html_of(idle, f"/teach/{run['id']}")
    assert "No step recorded yet" in page and 'hx-trigger="every 1s"' in page


def test_api_docs_are_served_from_vendored_files(site):
    page = html_of(site.client, "/docs")
    assert "/static/vendor/swagger-ui/swagger-ui-bundle.js" in page and "cdn" not in page.lower()
    assert 'data-openapi="/openapi.json"' in page and "<script>" not in page  # no inline script
    for path in ("swagger-ui/swagger-ui-bundle.js", "swagger-ui/swagger-ui.css", "plotly.min.js"):
        response = site.client.get(f"/static/vendor/{path}")
        assert response.status_code == 200, path
        assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert response.headers["content-encoding"] == "gzip"
    assert site.client.get("/static/js/api.js").headers["cache-control"] == "no-cache"
    assert site.client.get("/redoc").status_code == 404


def test_unknown_urls_are_html_pages_for_people_and_json_for_programs(site):
    page = html_of(site.client, "/no/such/page", 404, headers={"Accept": "text/html"})
    assert "There is no page at /no/such/page" in page
    api = site.client.get("/api/nothing", headers={"Accept": "text/html"})
    assert api.status_code == 404 and api.json() == {"detail": "Not Found"}
    assert site.client.get("/no/such/page").json() == {"detail": "Not Found"}  # no Accept: html


def test_teaching_mode_recomputes_a_small_run_at_once_with_another_k_or_nu(site):
    run = site.foba  # gaussian regression with 12 features: small enough
    base = html_of(site.client, f"/teach/{run['id']}?step=0")
    assert 'name="k"' in base and 'name="nu"' in base and "What if" not in base
    page = html_of(site.client, f"/teach/{run['id']}?step=0&k=2&nu=0.3")
    assert "What if</strong> k = 2, \u03bd = 0.3:" in page and "not stored" in page
    assert 'data-query="&amp;k=2&amp;nu=0.3"' in page  # the timeline's links keep it
    what_if = frames_of(page)
    assert what_if["frames"] != frames_of(base)["frames"]  # new frames, the what-if's path
    assert what_if["lesson"] == []
    answer = re.search(r"Its answer: ([^.]*)\.", page).group(1).split(", ")
    assert len(answer) == 2
    # Nothing was stored: the run and the list of runs are as they were.
    assert site.client.get(f"/api/runs/{run['id']}").json()["k"] == run["k"]
    refused = site.client.get(f"/teach/{run['id']}?step=0&k=99")
    assert refused.status_code == 422 and "k must be between 1 and 12" in refused.text
    assert site.client.get(f"/teach/{run['id']}?step=0&nu=abc").status_code == 422


def test_instant_reruns_say_why_they_are_not_offered_on_large_data(site):
    ds = generate(site.client, "gaussian_regression", n=40, d=60)
    run = wait_for(site.client, submit(site.client, ds["id"], algorithm="omp", k=3)["id"])
    page = html_of(site.client, f"/teach/{run['id']}?step=0")
    assert "instant reruns are for data sets of at most 50 features" in page
    assert 'name="k"' not in page


def test_a_what_if_saved_as_a_run_keeps_the_stored_runs_configuration(site):
    """ "Save it as a run" on the teaching page: the server builds the new run from the stored
    one with the changes, so standardize=false, the split and the seed are kept."""
    ds = site.dataset
    run = wait_for(
        site.client,
        submit(
            site.client,
            ds["id"],
            algorithm="foba-obj",
            k=3,
            standardize=False,
            test_fraction=0.25,
            seed=7,
        )["id"],
    )
    assert run["standardize"] is False
    page = html_of(site.client, f"/teach/{run['id']}?step=0&k=2&nu=0.3")
    assert f'data-rerun="/api/runs/{run["id"]}/rerun"' in page
    changes = json.loads(re.search(r'data-changes="([^"]*)"', page).group(1).replace("&#34;", '"'))
    assert changes == {"k": 2, "nu": 0.3}
    response = site.client.post(f"/api/runs/{run['id']}/rerun", json=changes)
    assert response.status_code == 202, response.text
    saved = wait_for(site.client, response.json()["id"])
    assert saved["standardize"] is False
    assert (saved["k"], saved["params"]["nu"], saved["record_candidates"]) == (2, 0.3, True)
    assert (saved["test_fraction"], saved["seed"]) == (0.25, 7)
    # Without changes: the same run again, recording the candidate scores.
    again = site.client.post(f"/api/runs/{site.forward['id']}/rerun", json={}).json()
    assert (again["k"], again["record_candidates"], again["standardize"]) == (3, True, True)
    assert site.client.post("/api/runs/999999/rerun", json={}).status_code == 404
    assert site.client.post(f"/api/runs/{run['id']}/rerun", json={"k": 0}).status_code == 422


def test_a_finished_run_page_decodes_its_trace_and_computes_its_roc_once(site, monkeypatch):
    from app.services import runs as run_service
    from app.web.charts import recovery
    from app.web.views import traces

    calls = {"trace": 0, "roc": 0}
    read, roc_of = run_service.trace_events, recovery.roc_of

    def counted_read(*args, **kwargs):
        calls["trace"] += 1
        return read(*args, **kwargs)

    def counted_roc(*args, **kwargs):
        calls["roc"] += 1
        return roc_of(*args, **kwargs)

    monkeypatch.setattr(run_service, "trace_events", counted_read)
    monkeypatch.setattr(recovery, "roc_of", counted_roc)
    traces.forget()
    run_id = site.foba["id"]  # on data with a known true support: the page shows the AUC
    assert "ROC AUC" in html_of(site.client, f"/runs/{run_id}")
    assert "roc" in site.client.get(f"/runs/{run_id}/figures").json()["figures"]
    for step in range(3):  # the teaching mode's steps read the same decoded trace
        html_of(site.client, f"/teach/{run_id}?step={step}")
    assert calls == {"trace": 1, "roc": 1}


def test_a_what_if_is_computed_once_per_set_of_changes(site, monkeypatch):
    from app.services import what_if

    calls = []
    select_run = what_if.select_run
    monkeypatch.setattr(
        what_if, "select_run", lambda *a, **kw: calls.append(1) or select_run(*a, **kw)
    )
    run_id = site.foba["id"]
    for step in range(4):  # the arrow keys through a what-if
        html_of(site.client, f"/teach/{run_id}?step={step}&k=2&nu=0.35")
    assert len(calls) == 1
    html_of(site.client, f"/teach/{run_id}?step=0&k=2&nu=0.45")  # another set: computed
    assert len(calls) == 2


def test_event_kinds_are_named_in_one_place(site):
    """charts/kinds.py names the kinds; the player's frames, the chart legends and the teaching
    page's timeline and badge all take their words from it, and no script keeps its own."""
    from app.web.charts.kinds import EVENT_KINDS
    from app.web.charts.style import ADD, CHECK, REMOVE

    run_id = site.foba["id"]
    payload = site.client.get(f"/runs/{run_id}/figures").json()
    assert payload["frames"]["kinds"] == {k: v.name for k, v in EVENT_KINDS.items()}
    assert (ADD["label"], REMOVE["label"]) == ("addition", "deletion")
    assert CHECK["label"].startswith(EVENT_KINDS["check"].name)
    legend = {t.get("name") for t in payload["figures"]["path"]["data"]}
    assert {"addition"} <= legend
    first = frames_of(html_of(site.client, f"/teach/{run_id}?step=0"))["frames"][0]
    assert first["teach"]["label"] == EVENT_KINDS["add"].heading
    assert first["teach"]["title"].startswith("step 0: addition ")
    assert first["teach"]["tick"].startswith(EVENT_KINDS["add"].glyph)
    for path in ROOT.joinpath("static", "js").glob("*.js"):
        text = path.read_text()
        assert '"addition"' not in text and '"backward check"' not in text, path
