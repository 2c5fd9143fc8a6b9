"""Saved-lesson pages: make a lesson from a run (/lessons/new?run=ID), a lesson's page with its
permanent link (/lessons/{id}), and the import form's target. Built-in lesson recipes stay on
/teach/lessons/{key} (``pages.py``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, Query, Request, Response, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse

from app.models.fields import MAX_ID
from app.services import lesson_files, saved_lessons
from app.web.deps import BackendDep, Id, SessionDep, StoreDep
from app.web.rendering import PageRoute, is_htmx, render
from app.web.views import saved_lessons as view

router = APIRouter(
    route_class=PageRoute, include_in_schema=False, default_response_class=HTMLResponse
)


@router.get("/lessons/new")
def new_lesson_page(
    request: Request, session: SessionDep, run: Annotated[int, Query(ge=1, le=MAX_ID)]
) -> Response:
    return render(request, "lessons_new.html", view.new_form(session, run))


@router.post("/lessons")
def save_lesson_form(
    request: Request,
    session: SessionDep,
    run: Annotated[int, Form(ge=1, le=MAX_ID)],
    title: Annotated[str, Form(max_length=200)] = "",
    story: Annotated[str, Form(max_length=300)] = "",
    steps: Annotated[list[int] | None, Form()] = None,  # each checked against the trace
    hidden: Annotated[list[str] | None, Form()] = None,
) -> Response:
    """Saves the lesson and shows its page; a refusal shows the form again, saying why."""
    lesson_id, refused = view.save(session, run, view.form_values(title, story, steps, hidden))
    if refused is not None:
        return render(request, "lessons_new.html", refused, status_code=422)
    return RedirectResponse(f"/lessons/{lesson_id}", status_code=303)


@router.get("/lessons/{lesson_id}")
def saved_lesson_page(request: Request, session: SessionDep, lesson_id: Id) -> Response:
    context = view.lesson_page(request, session, lesson_id)
    response = render(
        request, "saved_lesson.html", context, fragment="partials/saved_lesson_questions.html"
    )
    if is_htmx(request) and not context["live"]:
        response.headers["HX-Refresh"] = "true"  # the run has ended: the whole page again
    return response


@router.post("/lessons/{lesson_id}/delete")
def delete_lesson_form(session: SessionDep, lesson_id: Id) -> Response:
    saved_lessons.delete(session, lesson_id)
    return RedirectResponse("/teach#saved-lessons", status_code=303)


@router.post("/lessons/import")
def import_lesson_form(
    session: SessionDep,
    backend: BackendDep,
    store: StoreDep,
    file: Annotated[UploadFile, File()],
) -> Response:
    """The import form without JavaScript (static/js/lessons.js posts to the API instead)."""
    data = lesson_files.read_upload(file.file)
    lesson, _ = lesson_files.import_file(session, backend, store, data)
    return RedirectResponse(f"/lessons/{lesson.id}", status_code=303)
