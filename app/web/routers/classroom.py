"""The classroom: a lecturer's class session (/class/...) and its students' phone pages
(/join, /c/{code}...). Students need no account: joining sets a cookie bound to that session;
with API_KEY set these student routes are the only pages open to them (``app.web.auth``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Query, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

from app.models.fields import MAX_ID
from app.services import classroom
from app.web.auth import STUDENT_COOKIE
from app.web.deps import Id, SessionDep
from app.web.rendering import PageRoute, is_htmx, render
from app.web.views import classroom as view

router = APIRouter(
    route_class=PageRoute, include_in_schema=False, default_response_class=HTMLResponse
)
Steps = Annotated[list[int] | None, Form()]


# --------------------------------------------------------------------------- the lecturer


@router.get("/class")
def class_index(request: Request, session: SessionDep) -> Response:
    return render(request, "classroom_index.html", view.index(session))


@router.get("/class/new")
def new_session(
    request: Request, session: SessionDep, run: Annotated[int, Query(ge=1, le=MAX_ID)]
) -> Response:
    return render(request, "classroom_new.html", view.new_session_form(session, run))


@router.post("/class")
def create_session(
    session: SessionDep,
    run: Annotated[int, Form(ge=1, le=MAX_ID)],
    steps: Steps = None,  # each checked against the trace; none reaches SQL
    title: Annotated[str, Form(max_length=200)] = "",
    story: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    cls = classroom.create_session(session, run, steps=steps, title=title, story=story)
    return RedirectResponse(f"/class/{cls.id}", status_code=303)


@router.get("/class/{session_id}")
def lecturer(
    request: Request, session: SessionDep, session_id: Id, present: bool = False
) -> Response:
    context = view.lecturer_page(request, session, session_id, present)
    return render(request, "classroom_session.html", context)


@router.get("/class/{session_id}/live")
def live(request: Request, session: SessionDep, session_id: Id, present: bool = False) -> Response:
    context = view.live(session, session_id, present)
    return render(request, "partials/classroom_live.html", context)


@router.post("/class/{session_id}/{action}")
def control(
    session: SessionDep, session_id: Id, action: str, present: Annotated[str, Form()] = ""
) -> Response:
    cls = classroom.get_session(session, session_id)
    steps = {"next": classroom.advance, "reveal": classroom.reveal, "again": classroom.vote_again}
    if action == "restart":
        classroom.advance(session, cls, to=-1)
    elif action in steps:
        steps[action](session, cls)
    else:
        return JSONResponse({"detail": f"no action {action!r}"}, status_code=404)
    back = f"/class/{session_id}" + ("?present=true" if present else "")
    return RedirectResponse(back, status_code=303)


# --------------------------------------------------------------------------- the students


@router.get("/join")
def join(request: Request, code: str = "") -> Response:
    if code.strip():
        return RedirectResponse(f"/c/{code.strip().upper()[:12]}", status_code=303)
    return render(request, "classroom_join.html", {})


@router.get("/c/{code}")
def student_page(request: Request, session: SessionDep, code: str) -> Response:
    token = view.student_token(request, code)
    cookie = None
    if token is None:
        cookie, token = view.passes(request).issue(classroom.by_code(session, code).code)
    response = render(
        request, "classroom_student.html", view.student(request, session, code, token)
    )
    if cookie is not None:
        response.set_cookie(
            STUDENT_COOKIE, cookie, max_age=12 * 3600, httponly=True, samesite="lax"
        )
    return response


@router.get("/c/{code}/question")
def student_question(request: Request, session: SessionDep, code: str, v: str = "") -> Response:
    token = view.require_student(request, code)
    if v and is_htmx(request) and v == view.student_state(session, code):
        return Response(status_code=204)  # nothing changed (one query): HTMX swaps nothing
    context = view.student(request, session, code, token)
    return render(request, "partials/classroom_question.html", context)


@router.post("/c/{code}/vote")
def student_vote(
    request: Request,
    session: SessionDep,
    code: str,
    position: Annotated[int, Form(ge=0, le=10_000)],
    choice: Annotated[str, Form(max_length=200)],
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    token = view.require_student(request, code)
    refused = view.vote_refusal(request, token, csrf_token)
    if refused is not None:
        return refused
    classroom.vote(session, classroom.by_code(session, code), token, position, choice)
    context = view.student(request, session, code, token)
    return render(request, "partials/classroom_question.html", context)


# --------------------------------------------------------------------------- predict alone


@router.get("/predict/{run_id}")
def predict(request: Request, session: SessionDep, run_id: Id) -> Response:
    """The whole view is in the query: steps, q, pick, right, answered, story, hide."""
    context = view.predict_page(session, run_id, **view.predict_query(request.query_params))
    return render(request, "classroom_predict.html", context)
