"""Saved-lesson pages through the test client: "make a lesson" from a run (its default ticks,
a refusal shown in the form), the lesson's page (permanent link, class session, export),
/teach listing saved lessons with the import form, and the import form's fallback."""

from __future__ import annotations

import html
import json
import re

from page_helpers import generate
from service_helpers import submit

from app.services import lesson_files


def page(client, url: str, status: int = 200, **kwargs) -> str:
    response = client.get(url, **kwargs)
    assert response.status_code == status, (url, response.status_code, response.text[:500])
    return response.text


def test_make_a_lesson_from_a_run_and_open_its_link(site) -> None:
    client, run = site.client, site.foba
    run_page = page(client, f"/runs/{run['id']}")
    assert f'href="/lessons/new?run={run["id"]}"' in run_page
    assert f'href="/lessons/new?run={run["id"]}"' in page(client, f"/teach/{run['id']}?step=0")
    form = page(client, f"/lessons/new?run={run['id']}")
    questions = client.get("/api/lessons/questions", params={"run_id": run["id"]}).json()
    ticked = [int(s) for s in re.findall(r'name="steps" value="(\d+)" id="s\d+" checked', form)]
    assert ticked == [q["step"] for q in questions if q["default"]] and ticked
    steps = [q["step"] for q in questions][:2]
    sent = {
        "run": run["id"],
        "title": "Pick the next feature",
        "story": "Correlated columns & a decoy.",
        "steps": steps,
        "hidden": ["links", "score"],
    }
    answer = client.post("/lessons", data=sent, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    lesson_url = answer.headers["location"]
    lesson_id = int(lesson_url.rsplit("/", 1)[1])
    shown = page(client, lesson_url)
    lesson = client.get(f"/api/lessons/{lesson_id}").json()
    assert html.escape(lesson["link"]) in shown and lesson["link"].startswith("/predict/")
    assert "hide=score%2Clinks" in lesson["link"] or "hide=score,links" in lesson["link"]
    assert "Correlated columns &amp; a decoy." in shown
    assert f'href="/api/lessons/{lesson_id}/export"' in shown
    for s in steps:
        assert f'name="steps" value="{s}"' in shown  # the class session asks these
    predict = page(client, lesson["link"])
    assert "Your score" not in predict and "Ask a whole class instead" not in predict
    assert "Correlated columns &amp; a decoy." in predict
    session = client.post(
        "/class",
        data={"run": run["id"], "steps": steps, "title": lesson["title"]},
        follow_redirects=False,
    )
    assert session.status_code == 303
    teach = page(client, "/teach")
    assert f'href="/lessons/{lesson_id}"' in teach and 'id="lesson-import"' in teach
    assert "Built-in lessons" in teach
    assert client.post(f"/lessons/{lesson_id}/delete", follow_redirects=False).status_code == 303
    assert client.get(f"/api/lessons/{lesson_id}").status_code == 404


def test_a_refused_lesson_shows_the_form_again_saying_why(site) -> None:
    client, run = site.client, site.foba
    answer = client.post("/lessons", data={"run": run["id"], "title": "Kept title"})
    assert answer.status_code == 422
    assert "tick at least one step" in answer.text and 'value="Kept title"' in answer.text
    wrong = client.post("/lessons", data={"run": run["id"], "title": "t", "steps": [999_999]})
    assert wrong.status_code == 422 and "make" in wrong.text and "no question" in wrong.text
    assert client.get("/api/lessons").json() == []


def test_a_run_without_scores_or_unfinished_says_so(site, idle) -> None:
    form = page(site.client, f"/lessons/new?run={site.forward['id']}")
    assert "did not record candidate scores" in form and 'id="lesson-form"' not in form
    ds = generate(idle, "gaussian_regression", n=20, d=6, k_true=2)
    queued = submit(idle, ds["id"], algorithm="foba-obj", k=2, record_candidates=True)
    assert "finished run" in page(idle, f"/lessons/new?run={queued['id']}")
    assert page(idle, "/lessons/new?run=99999", status=404)


def test_the_import_form_stores_the_lesson_and_its_page_waits_for_the_run(idle) -> None:
    X = [[float(i % 5), float((i * 3) % 7), float(i % 2)] for i in range(14)]
    file = {
        "format": lesson_files.FORMAT,
        "version": lesson_files.VERSION,
        "lesson": {"title": "From a file", "story": "", "steps": [0], "hidden": []},
        "run": {"algorithm": "foba-obj", "objective": "least_squares", "k": 2},
        "dataset": {
            "name": "imported",
            "task": "regression",
            "feature_names": ["a", "b", "c"],
            "X": X,
            "y": [r[0] - r[1] for r in X],
        },
        "trace": {"length": 4, "questions": [{"step": 0, "kind": "enter", "answer": "a"}]},
    }
    body = json.dumps(file).encode()
    answer = idle.post("/lessons/import", files={"file": ("l.json", body)}, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    shown = page(idle, answer.headers["location"])
    assert "its questions appear when it finishes" in shown and 'hx-trigger="every 1s"' in shown
    assert "imported from a file" in shown
    refused = idle.post("/lessons/import", files={"file": ("l.json", b"not json")})
    assert refused.status_code == 422 and "not JSON" in refused.text
