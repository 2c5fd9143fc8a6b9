"""The classroom pages' view models: the lecturer's session (join code, QR code, question,
live histogram, reveal) and the student's phone page (question, vote, reveal, score).

The reveal reuses the teaching mode's narration (``teach_step.explain``) of the decision the
question stopped before, so a student reads the same sentence and numbers as on the teach
page."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import segno
from fastapi import Request, Response
from fastapi.responses import JSONResponse
from sqlmodel import Session

from app.errors import NotFound
from app.models import ClassQuestion, Run, stored_id
from app.services import classroom, lessons
from app.services import datasets as dataset_service
from app.services import runs as run_service
from app.web.auth import StudentPasses, student_cookie, student_passes
from app.web.views import teach_step, traces
from app.web.views.reveal import why

# --------------------------------------------------------------------------- narration, kept

_KEPT = 64
_narrations: OrderedDict[tuple[int, int], teach_step.TeachStep] = OrderedDict()
_lock = threading.Lock()


def narration(session: Session, run: Run, step: int) -> teach_step.TeachStep | None:
    """The teach page's explanation of the run's decision at ``step`` (kept for the last few:
    a class of 200 asks for the same one at once when the lecturer reveals)."""
    key = (stored_id(run), step)
    with _lock:
        if key in _narrations:
            _narrations.move_to_end(key)
            return _narrations[key]
    events = traces.trace_of(session, run).events
    index = next((i for i, e in enumerate(events) if e.step == step), None)
    if index is None:
        return None
    names = dataset_service.get_dataset(session, run.dataset_id).feature_names
    told = teach_step.explain(run, names, events, index)
    told.figure = None  # the phone page draws no chart
    with _lock:
        _narrations[key] = told
        while len(_narrations) > _KEPT:
            _narrations.popitem(last=False)
    return told


def passes(request: Request) -> StudentPasses:
    found = getattr(request.app.state, "student_passes", None)
    if found is None:
        found = request.app.state.student_passes = student_passes(request.app.state.settings)
    return found


# --------------------------------------------------------------------------- what a reveal says


def histogram(q: ClassQuestion, counts: dict[str, int]) -> dict[str, Any]:
    total = sum(counts.values())
    top = max(counts.values(), default=0)
    bars = [
        {
            "choice": c,
            "count": counts.get(c, 0),
            "width": round(100 * counts.get(c, 0) / top) if top else 0,
            "right": c == q.answer,
        }
        for c in q.choices
    ]
    return {"bars": bars, "total": total}


# --------------------------------------------------------------------------- the lecturer


def index(session: Session) -> dict[str, Any]:
    states = [lessons.state(session, lesson) for lesson in lessons.LESSONS.values()]
    return {
        "states": states,
        "recorded": [
            r for r in run_service.list_runs(session, None, None, 0, 100) if r.record_candidates
        ][:20],
    }


def new_session_form(session: Session, run_id: int) -> dict[str, Any]:
    run, specs = classroom.run_questions(session, run_id)
    chosen = {q.step for q in _default_specs(session, run_id)}
    return {"run": run, "specs": specs, "chosen": chosen}


def _default_specs(session: Session, run_id: int) -> list[classroom.QuestionSpec]:
    run = run_service.get_selection_run(session, run_id)
    names = dataset_service.get_dataset(session, run.dataset_id).feature_names
    return classroom.questions_of(traces.trace_of(session, run).events, names)


def join_url(request: Request, code: str) -> str:
    return str(request.base_url).rstrip("/") + f"/c/{code}"


def lecturer_page(
    request: Request, session: Session, session_id: int, present: bool
) -> dict[str, Any]:
    cls = classroom.get_session(session, session_id)
    url = join_url(request, cls.code)
    qr = segno.make(url, error="m").svg_inline(scale=6, dark="#12344d", border=2, omitsize=True)
    context = live(session, session_id, present)
    context.update(
        join_url=url,
        qr=qr,
        total=classroom.count_questions(session, cls),
        questions=classroom.questions(session, cls),
    )
    return context


def live(session: Session, session_id: int, present: bool = False) -> dict[str, Any]:
    """What the projector shows now: the question, the histogram of this round's votes (one
    aggregate query), and after the reveal the answer with its numbers and both rounds."""
    cls = classroom.get_session(session, session_id)
    q = classroom.current_question(session, cls)
    context: dict[str, Any] = {
        "cls": cls,
        "q": q,
        "state": classroom.state_key(cls),
        "present": present,
    }
    if q is None:
        context["total"] = classroom.count_questions(session, cls)
        return context
    counts = classroom.tallies(session, stored_id(q))
    context["rounds"] = {r: histogram(q, c) for r, c in counts.items() if r <= cls.round}
    context["hist"] = context["rounds"][cls.round]
    run = run_service.get_run(session, cls.run_id)
    told = narration(session, run, q.step)
    context["support_before"] = told.support_before if told else []
    if cls.phase == "reveal":
        context["why"] = why(q, None)
        context["values"] = {r["choice"]: r["value"] for r in context["why"]["rows"]}
        context["sentence"] = told.sentence if told else ""
    return context


# --------------------------------------------------------------------------- the student


def student(request: Request, session: Session, code: str, token: str | None) -> dict[str, Any]:
    cls = classroom.by_code(session, code)
    q = classroom.current_question(session, cls)
    context: dict[str, Any] = {
        "cls": cls,
        "q": q,
        "state": classroom.state_key(cls),
        "csrf": passes(request).csrf(token) if token else "",
        "total": classroom.count_questions(session, cls),
    }
    if token:
        context["score"] = classroom.student_score(session, cls, token)
    if q is None:
        return context
    run = run_service.get_run(session, cls.run_id)
    told = narration(session, run, q.step)
    context["support_before"] = told.support_before if told else []
    pick = classroom.my_vote(session, stored_id(q), cls.round, token) if token else None
    context["pick"] = pick
    if cls.phase == "reveal":
        context["why"] = why(q, pick)
        context["sentence"] = told.sentence if told else ""
    return context


def student_state(session: Session, code: str) -> str:
    """What the student's page shows now, in one query (the polls ask for nothing more while
    it is unchanged)."""
    return classroom.state_key(classroom.by_code(session, code))


def student_token(request: Request, code: str) -> str | None:
    cookie = student_cookie({"cookie": request.headers.get("cookie", "")})
    return passes(request).token(cookie, code.strip().upper())


def require_student(request: Request, code: str) -> str:
    token = student_token(request, code)
    if token is None:
        raise NotFound(f"join the class session first: open /c/{code.upper()[:12]}")
    return token


def vote_refusal(request: Request, token: str, given: str) -> Response | None:
    """403 without the page's vote token (CSRF), 429 past the student's vote rate."""
    found = passes(request)
    if not found.csrf_ok(token, given):
        detail = "missing or wrong vote token: reload the page and vote again"
        return JSONResponse({"detail": detail}, status_code=403)
    if not found.may_vote(token):
        detail = f"at most {found.votes_per_minute} votes a minute: wait a moment"
        return JSONResponse({"detail": detail}, status_code=429, headers={"Retry-After": "10"})
    return None


# --------------------------------------------------------------------------- predict alone


def _steps(text: str) -> list[int] | None:
    found = [int(s) for s in text.replace(" ", "").split(",") if s.isdigit()]
    return found or None


def predict_query(params: Mapping[str, str]) -> dict[str, Any]:
    """The predict page's query, bounded: numbers that are not small integers count as 0."""

    def small(name: str) -> int:
        text = params.get(name, "")
        return int(text) if text.isascii() and text.isdigit() and len(text) <= 4 else 0

    return {
        "steps": params.get("steps", "")[:400],
        "q": small("q"),
        "pick": params.get("pick", "")[:200],
        "right": small("right"),
        "answered": small("answered"),
        "story": params.get("story", "")[:300],
        "hide": params.get("hide", "")[:100],
    }


def predict_page(
    session: Session,
    run_id: int,
    *,
    steps: str = "",
    q: int = 0,
    pick: str = "",
    right: int = 0,
    answered: int = 0,
    story: str = "",
    hide: str = "",
) -> dict[str, Any]:
    """Predict before you see, alone: the whole view is in the URL (the run, the steps asked,
    the question, the pick, the running score, the story, the hidden controls), so one link
    per lesson can be posted. A pick reveals the answer with the numbers that decide it."""
    run = run_service.get_selection_run(session, run_id)
    names = dataset_service.get_dataset(session, run.dataset_id).feature_names
    events = traces.trace_of(session, run).events
    specs = classroom.questions_of(events, names, _steps(steps))
    context: dict[str, Any] = {
        "run": run,
        "total": len(specs),
        "steps": steps or ",".join(str(s.step) for s in specs),
        "story": story[:300],
        "hide": set(hide.split(",")) - {""},
        "right": max(0, right),
        "answered": max(0, answered),
        "index": q,
    }
    if not 0 <= q < len(specs):
        context["spec"] = None
        return context
    spec = specs[q]
    told = narration(session, run, spec.step)
    pick = pick if pick in spec.choices else ""
    context.update(
        spec=spec,
        pick=pick,
        support_before=told.support_before if told else [],
        why=why(spec, pick) if pick else None,
        sentence=told.sentence if told and pick else "",
    )
    if pick:  # the score after this answer, carried to the next question's URL
        context["right"] += int(pick == spec.answer)
        context["answered"] += 1
    return context
