"""The teaching page's "Predict first" questions in its frames, its "why not this feature?"
and presentation controls, the swap certificate's own label, and the class session's Present
button: through the test client (the behaviour in a browser: test_browser_teach.py)."""

from __future__ import annotations

import re

from test_pages import frames_of, html_of

from app.services.classroom import NONE, question_at
from engine.trace import Event, supports_in_order


def trace_of(site, run_id: int) -> list[Event]:
    raw = site.client.get(f"/api/runs/{run_id}/trace?limit=5000").json()["events"]
    return [Event.from_dict(e) for e in raw]


def test_the_frames_ask_the_classrooms_questions_with_their_answers_from_the_trace(site):
    run = site.foba
    names = site.dataset["feature_names"]
    events = trace_of(site, run["id"])
    data = frames_of(html_of(site.client, f"/teach/{run['id']}?step=0"))
    asked = {f["step"]: f["question"] for f in data["frames"] if "question" in f}
    # The supports computed once give the questions replayed one by one.
    supports = supports_in_order(events)
    for i in range(len(events)):
        assert question_at(events, names, i, supports) == question_at(events, names, i)
    enters = [e for e in events if e.kind == "add"]
    tests = [e for e in events if e.kind in ("remove", "check") and e.feature_out is None]
    # FoBa with candidate scores: every forward step and every backward test is asked.
    assert {e.step for e in enters + tests} == set(asked), (sorted(asked), len(events))
    for e in enters:
        q = asked[e.step]
        assert q["prompt"] == "Which feature enters next?"
        values = [c for c, _ in q["choices"]]
        assert q["answer"] == names[e.feature] == values[0]
        # The answer is the best score among the choices, read from the trace itself.
        assert e.candidates is not None
        scores = dict(zip(e.candidates.features, e.candidates.scores, strict=True))
        assert max(values, key=lambda n: scores[names.index(n)]) == q["answer"]
        assert q["rule"].startswith(f"The largest score enters: {q['answer']}")
        assert [r["choice"] for r in q["rows"] if r["right"]] == [q["answer"]]
        wrong = values[1]
        assert q["lost"][wrong].startswith(f"Your pick, {wrong}, scored")
        assert q["answer"] not in q["lost"]
    for e in tests:
        q = asked[e.step]
        assert q["choices"][0] == [NONE, "None: keep them all"]
        assert q["answer"] == (names[e.feature] if e.kind == "remove" else NONE)
        # nu x delta: the bar the cheapest deletion is compared with.
        bar = f"{e.threshold:.3g}"
        assert f"\u03bd \u00d7 \u03b4 = {bar}" in q["rule"], q["rule"]
        verdict = "below" if e.kind == "remove" else "not below"
        assert f"{verdict} the bar" in q["rule"]
        for choice, lost in q["lost"].items():
            assert lost and choice != q["answer"]


def test_the_swap_certificates_checks_after_the_stop_have_their_own_label(site):
    run = site.foba
    events = trace_of(site, run["id"])
    stop = next(i for i, e in enumerate(events) if e.kind == "stop")
    certificate = [i for i, e in enumerate(events) if e.kind == "check" and e.feature_out]
    assert certificate and min(certificate) > stop  # certify is on by default
    data = frames_of(html_of(site.client, f"/teach/{run['id']}?step=0"))
    assert data["kinds"]["certificate"] == "swap certificate"
    assert data["kinds"]["check"] == "backward check"
    for i, frame in enumerate(data["frames"]):
        if i in certificate:
            assert frame["kind"] == "certificate"
            assert frame["teach"]["label"].startswith("Swap certificate")
            assert "question" not in frame  # nothing to predict after the run
        elif events[i].kind == "check":
            assert frame["kind"] == "check"
            assert frame["teach"]["label"] == "Backward check: nothing deleted"


def test_the_teach_page_has_predict_first_present_and_why_not(site):
    run_id = site.foba["id"]
    page = html_of(site.client, f"/teach/{run_id}?step=0&predict=1&present=1")
    assert 'id="predict-first"' in page and "Predict first" in page
    assert re.search(r'<button[^>]*data-present[^>]*aria-pressed="false"', page)
    assert 'class="predict-box" hidden' in page
    assert 'id="why-not-answer"' in page
    assert '<script type="module" src="/static/js/teach.js">' in page
    # The endpoint the chips ask answers in place, for a selected feature and another one.
    names = site.dataset["feature_names"]
    selected = {f["name"] for f in site.foba["result"]["support"]}
    for idx in (
        names.index(sorted(selected)[0]),
        next(i for i, n in enumerate(names) if n not in selected),
    ):
        answer = html_of(
            site.client, f"/runs/{run_id}/why-not?feature={idx}", headers={"HX-Request": "true"}
        )
        assert 'id="why-not-answer"' in answer
        assert names[idx] in answer
    # A what-if is not the stored run: no "why not?" (it judges the stored run's answer).
    what_if = html_of(site.client, f"/teach/{run_id}?step=0&k=2")
    assert "What if" in what_if and 'id="why-not-answer"' not in what_if


def test_the_class_session_has_a_present_button_and_posts_its_controls_in_place(site):
    client = site.client
    response = client.post("/class", data={"run": site.foba["id"]}, follow_redirects=False)
    assert response.status_code == 303, response.text
    session_url = response.headers["location"]
    page = html_of(client, session_url)
    assert re.search(r'<button[^>]*data-present[^>]*aria-pressed="false"', page)
    assert 'hx-post="/class/' in page and 'hx-select-oob="#class-live"' in page
    present = html_of(client, session_url + "?present=1")
    assert 'class="classroom present"' in present
    assert re.search(r'<button[^>]*data-present[^>]*aria-pressed="true"', present)
