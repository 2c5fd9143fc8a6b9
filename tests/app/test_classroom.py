"""The classroom service against SQLite and PostgreSQL: questions and answers from a trace,
join codes, one vote per student per question and round (a repeat replaces), tallies."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session

import engine
from app.db import make_db
from app.errors import Conflict, Gone, InvalidInput, NotFound
from app.migrations import prepare_schema
from app.models import Run, RunStatus, TraceEvent, utcnow
from app.models.classroom import CODE_ALPHABET, CODE_LENGTH
from app.services import classroom
from app.services.datasets import create_from_problem
from app.services.lessons import figure2_problem
from app.storage import DirectoryStore


@pytest.fixture
def db(database_url: str) -> Engine:
    db = make_db(database_url)
    prepare_schema(db)
    yield db
    db.dispose()


def figure2_run(db: Engine, data_dir: Path) -> int:
    """Zhang's Figure 2 run by FoBa, its trace stored as a worker would."""
    problem = figure2_problem()
    result = engine.select(problem.X, problem.y, algorithm="foba-obj", k=2, record_candidates=True)
    with Session(db) as session:
        ds = create_from_problem(session, DirectoryStore(data_dir), problem, name="f2", source="t")
        run = Run(
            dataset_id=ds.id,
            algorithm="foba-obj",
            objective="squared",
            k=2,
            params=result.params,
            record_candidates=True,
            status=RunStatus.done,
        )
        session.add(run)
        session.flush()
        for e in result.trace:
            session.add(TraceEvent(run_id=run.id, step=e.step, kind=e.kind, data=e.to_dict()))
        session.commit()
        return run.id


def test_questions_come_from_the_trace(db: Engine, data_dir: Path) -> None:
    run_id = figure2_run(db, data_dir)
    with Session(db) as session:
        _, specs = classroom.run_questions(session, run_id)
    first = specs[0]
    assert (first.step, first.kind, first.answer) == (0, "enter", "f3")
    assert first.choices[0] == "f3" and "f1" in first.choices
    assert first.numbers["scores"]["f3"] > first.numbers["scores"]["f1"]
    deletion = next(q for q in specs if q.kind == "delete" and q.answer != "none")
    assert deletion.answer == "f3"  # FoBa deletes f3 once f1 and f2 are in
    assert deletion.choices[0] == "none" and set(deletion.choices[1:]) == {"f3", "f1", "f2"}
    assert deletion.numbers["cost"] < deletion.numbers["bar"]
    kept = next(q for q in specs if q.kind == "delete" and q.answer == "none")
    assert kept.numbers["cost"] >= kept.numbers["bar"]


def test_a_session_asks_reveals_and_counts_two_rounds(db: Engine, data_dir: Path) -> None:
    run_id = figure2_run(db, data_dir)
    with Session(db, expire_on_commit=False) as session:
        cls = classroom.create_session(session, run_id, steps=[0, 5], story="Watch f3.")
        assert len(cls.code) == CODE_LENGTH and set(cls.code) <= set(CODE_ALPHABET)
        assert classroom.by_code(session, cls.code.lower()).id == cls.id
        with pytest.raises(Conflict):
            classroom.vote(session, cls, "s1", 0, "f3")  # not started
        classroom.advance(session, cls)
        for i in range(30):
            classroom.vote(session, cls, f"s{i}", 0, "f1" if i < 10 else "f3")
        classroom.vote(session, cls, "s0", 0, "f3")  # a repeat replaces
        with pytest.raises(InvalidInput):
            classroom.vote(session, cls, "s0", 0, "nonsense")
        q = classroom.current_question(session, cls)
        assert classroom.tally(session, q.id, 1) == {"f1": 9, "f3": 21}
        classroom.reveal(session, cls)
        with pytest.raises(Conflict):
            classroom.vote(session, cls, "s40", 0, "f3")
        classroom.vote_again(session, cls)
        classroom.vote(session, cls, "s1", 0, "f3")
        assert classroom.tallies(session, q.id) == {1: {"f1": 9, "f3": 21}, 2: {"f3": 1}}
        classroom.reveal(session, cls)
        assert classroom.student_score(session, cls, "s1") == (1, 1)
        assert classroom.student_score(session, cls, "s2") == (0, 1)
        classroom.advance(session, cls)
        q2 = classroom.current_question(session, cls)
        assert (q2.step, q2.kind, q2.answer) == (5, "delete", "f3")
        with pytest.raises(Conflict):
            classroom.vote(session, cls, "s1", 0, "f3")  # an old question's form


def test_votes_from_many_threads_stay_one_per_student(db: Engine, data_dir: Path) -> None:
    run_id = figure2_run(db, data_dir)
    with Session(db, expire_on_commit=False) as session:
        cls = classroom.create_session(session, run_id, steps=[0])
        classroom.advance(session, cls)
        qid = classroom.current_question(session, cls).id
    errors: list[BaseException] = []

    def student(i: int) -> None:
        try:
            with Session(db) as s:
                for choice in ("f1", "f2", "f3"):
                    classroom.vote(s, s.get(type(cls), cls.id), f"t{i % 10}", 0, choice)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=student, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    with Session(db) as session:
        assert sum(classroom.tally(session, qid, 1).values()) == 10


def test_unknown_and_expired_codes(db: Engine, data_dir: Path) -> None:
    run_id = figure2_run(db, data_dir)
    with Session(db, expire_on_commit=False) as session:
        with pytest.raises(NotFound):
            classroom.by_code(session, "QQQQQ")
        cls = classroom.create_session(session, run_id)
        cls.expires_at = utcnow().replace(year=2000)
        session.add(cls)
        session.commit()
        with pytest.raises(Gone):
            classroom.by_code(session, cls.code)


# --------------------------------------------------------------------------- the pages


def _student(client, code: str):
    from fastapi.testclient import TestClient

    phone = TestClient(client.app)  # a browser of its own: its own cookies
    answer = phone.get(f"/c/{code}", headers={"accept": "text/html"})
    assert answer.status_code == 200, answer.text
    csrf = (
        answer.text.split('name="csrf_token" value="')[1].split('"')[0]
        if "csrf_token" in answer.text
        else ""
    )
    return phone, csrf


def _csrf(html: str) -> str:
    return html.split('name="csrf_token" value="')[1].split('"')[0]


def test_a_class_through_its_pages(data_dir: Path) -> None:
    from service_helpers import make_settings, serve

    with serve(make_settings(data_dir)) as client:
        run_id = figure2_run(client.app.state.db, data_dir)
        assert "Steps that become questions" in client.get(f"/class/new?run={run_id}").text
        made = client.post("/class", data={"run": run_id, "steps": [0, 5]}, follow_redirects=False)
        assert made.status_code == 303, made.text
        page = client.get(made.headers["location"]).text
        assert "<svg" in page and "join code" in page
        sid = int(made.headers["location"].rsplit("/", 1)[1])
        with Session(client.app.state.db) as s:
            code = classroom.get_session(s, sid).code
        phone, _ = _student(client, code)
        assert phone.cookies.get("foba_student")
        client.post(f"/class/{sid}/next", data={})
        fragment = phone.get(f"/c/{code}/question?v=-1.ask.1", headers={"HX-Request": "true"})
        assert "Which feature enters next?" in fragment.text
        state = fragment.text.split('data-state="')[1].split('"')[0]
        unchanged = phone.get(f"/c/{code}/question?v={state}", headers={"HX-Request": "true"})
        assert unchanged.status_code == 204
        csrf = _csrf(fragment.text)
        vote = {"position": 0, "choice": "f1"}
        assert phone.post(f"/c/{code}/vote", data=vote).status_code == 403  # no vote token
        voted = phone.post(f"/c/{code}/vote", data={**vote, "csrf_token": csrf})
        assert voted.status_code == 200 and "Your answer: <strong>f1</strong>" in voted.text
        live = client.get(f"/class/{sid}/live").text
        assert '<strong id="vote-total">1</strong>' in live
        client.post(f"/class/{sid}/reveal", data={})
        revealed = phone.get(f"/c/{code}/question").text
        assert "Answer: <strong>f3</strong>" in revealed and "Your pick, f1, scored" in revealed
        assert "Your score: <strong>0</strong> of 1" in revealed


def test_with_an_api_key_a_student_sees_the_session_and_nothing_else(data_dir: Path) -> None:
    from service_helpers import make_settings, serve

    with serve(make_settings(data_dir, api_key="k" * 32)) as client:
        run_id = figure2_run(client.app.state.db, data_dir)
        with Session(client.app.state.db, expire_on_commit=False) as s:
            cls = classroom.create_session(s, run_id, steps=[0])
            other = classroom.create_session(s, run_id, steps=[0])
            classroom.advance(s, cls)
        phone, _ = _student(client, cls.code)
        fragment = phone.get(f"/c/{cls.code}/question")
        assert fragment.status_code == 200
        voted = phone.post(
            f"/c/{cls.code}/vote",
            data={"position": 0, "choice": "f3", "csrf_token": _csrf(fragment.text)},
        )
        assert voted.status_code == 200, voted.text
        assert phone.get(f"/c/{other.code}/question").status_code == 404  # another session
        html = {"accept": "text/html"}
        for url in (f"/class/{cls.id}", f"/class/{cls.id}/live", "/class", "/teach", "/", "/runs"):
            answer = phone.get(url, headers=html, follow_redirects=False)
            assert answer.status_code in (303, 401), (url, answer.status_code)
        for url in ("/api/runs", f"/api/runs/{run_id}/trace", "/openapi.json"):
            assert phone.get(url).status_code == 401, url
        assert phone.post(f"/class/{cls.id}/reveal").status_code in (401, 403)


def test_student_passes_are_bound_to_a_session_and_rate_limited() -> None:
    from app.web.auth import StudentPasses

    passes = StudentPasses(b"s" * 32, votes_per_minute=3)
    cookie, token = passes.issue("ACDEF")
    assert passes.token(cookie, "ACDEF") == token
    assert passes.token(cookie, "ACDEG") is None  # another session's code
    assert passes.token(cookie.replace("ACDEF", "ACDEG", 1), "ACDEG") is None  # forged
    assert passes.csrf_ok(token, passes.csrf(token)) and not passes.csrf_ok(token, "x")
    assert [passes.may_vote(token) for _ in range(4)] == [True, True, True, False]


def test_predict_alone_keeps_the_whole_lesson_in_its_url(data_dir: Path) -> None:
    from service_helpers import make_settings, serve

    with serve(make_settings(data_dir)) as client:
        run_id = figure2_run(client.app.state.db, data_dir)
        url = f"/predict/{run_id}?steps=0,5&story=Watch+f3&hide=nav"
        first = client.get(url).text
        assert "Which feature enters next?" in first and "Watch f3" in first
        assert "Question 1 of 2" in first and 'class="crumbs"' not in first
        wrong = client.get(url + "&q=0&pick=f1").text
        assert "Your pick, f1, scored" in wrong and "Your score: <strong>0</strong> of 1" in wrong
        second = client.get(url + "&q=1&right=0&answered=1&pick=f3").text
        assert "Will FoBa delete" in second and "below the bar" in second
        assert "Your score: <strong>1</strong> of 2" in second
        done = client.get(url + "&q=2&right=1&answered=2").text
        assert "<strong>1</strong> of 2 right" in done


def lesson_run(db: Engine, data_dir: Path, problem, config: dict) -> int:
    """A built-in lesson's run, its trace stored as a worker would."""
    objective = config.get("objective", "least_squares")
    result = engine.select(
        problem.X,
        problem.y,
        algorithm=config["algorithm"],
        objective=objective,
        k=config["k"],
        record_candidates=True,
    )
    with Session(db) as session:
        ds = create_from_problem(session, DirectoryStore(data_dir), problem, name="l", source="t")
        run = Run(
            dataset_id=ds.id,
            algorithm=config["algorithm"],
            objective=objective,
            k=config["k"],
            params=result.params,
            record_candidates=True,
            status=RunStatus.done,
            finished_at=utcnow(),  # the trace cache's key: a run that ended
        )
        session.add(run)
        session.flush()
        for e in result.trace:
            session.add(TraceEvent(run_id=run.id, step=e.step, kind=e.kind, data=e.to_dict()))
        session.commit()
        return run.id


def test_a_url_reproduces_every_lesson_view_of_every_built_in_lesson(data_dir: Path) -> None:
    """Round trip over all built-in lessons, their runs and every step a question can ask: the
    predict page's URL alone (steps, question, pick, score, story, hidden parts) gives the same
    view every time, showing that step's question, and the pick's verdict."""
    from urllib.parse import quote

    from markupsafe import escape
    from service_helpers import make_settings, serve

    from app.services.lessons import LESSONS

    asked = 0
    with serve(make_settings(data_dir)) as client:
        db = client.app.state.db
        for lesson in LESSONS.values():
            problem = lesson.make()
            for lesson_step in lesson.runs:
                run_id = lesson_run(db, data_dir, problem, lesson_step.config)
                with Session(db) as session:
                    _, specs = classroom.run_questions(session, run_id)
                assert specs, (lesson.key, lesson_step.label)
                for start in range(0, len(specs), classroom.MAX_QUESTIONS):
                    chunk = specs[start : start + classroom.MAX_QUESTIONS]
                    steps = ",".join(str(q.step) for q in chunk)
                    url = f"/predict/{run_id}?steps={steps}&story=Watch+it&hide=nav,links"
                    for i, spec in enumerate(chunk):
                        view = f"{url}&q={i}&right=0&answered={i}"
                        page = client.get(view).text
                        assert page == client.get(view).text  # the URL is the whole state
                        head = f"Question {i + 1} of {len(chunk)} · step {spec.step}"
                        assert head in page and str(escape(spec.prompt)) in page, view
                        assert "Watch it" in page and 'class="crumbs"' not in page
                        right = client.get(f"{view}&pick={quote(spec.answer)}").text
                        assert "you were right" in right
                        assert f"Your score: <strong>1</strong> of {i + 1}" in right
                        asked += 1
    assert asked >= 3 * len(LESSONS), asked
