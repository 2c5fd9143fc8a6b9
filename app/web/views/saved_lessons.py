"""The saved-lesson pages' view models: "make a lesson" from a run (/lessons/new), a saved
lesson's page (/lessons/{id}: its permanent link, a class session, export) and the list of
saved lessons on /teach."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from pydantic import ValidationError
from sqlmodel import Session

from app.errors import AppError, InvalidInput
from app.models import ACTIVE, SavedLessonCreate, stored_id
from app.models.saved_lesson import HIDABLE, MAX_STORY, MAX_TITLE, link
from app.services import datasets as dataset_service
from app.services import runs as run_service
from app.services import saved_lessons

# What each hidable control of the predict page is, in the form's words.
HIDE_LABELS = {
    "nav": "the breadcrumb links at the top",
    "story": "the story line",
    "score": "the running score",
    "links": "the note under the questions (how to hide parts, class session link)",
}


def new_form(
    session: Session,
    run_id: int,
    *,
    values: dict[str, Any] | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    """The form, or why this run makes no lesson (``problem``): not finished, no scores."""
    run = run_service.get_selection_run(session, run_id)
    dataset = dataset_service.get_dataset(session, run.dataset_id)
    context: dict[str, Any] = {
        "run": run,
        "dataset": dataset,
        "specs": [],
        "hide_labels": HIDE_LABELS,
        "max_title": MAX_TITLE,
        "max_story": MAX_STORY,
        "error": error,
        "problem": None,
    }
    try:
        saved_lessons.finished_run(session, run_id)
    except AppError as exc:
        context["problem"] = exc.message
        return context
    specs = saved_lessons.askable(session, run)
    chosen = set(saved_lessons.default_steps(session, run))
    given = values or {}
    context.update(
        specs=specs,
        chosen=set(given["steps"]) if "steps" in given else chosen,
        title=given.get("title", run.name or f"Run #{run.id}: {run.algorithm} on {dataset.name}"),
        story=given.get("story", ""),
        hidden=set(given.get("hidden", [])),
    )
    if not specs:
        context["problem"] = (
            "This run's trace has no step to ask about: a greedy method (FoBa, forward "
            "greedy, OMP) with candidate scores recorded has."
        )
    return context


def lesson_page(request: Request, session: Session, lesson_id: int) -> dict[str, Any]:
    lesson = saved_lessons.get(session, lesson_id)
    run = run_service.get_run(session, lesson.run_id)
    dataset = dataset_service.get_dataset(session, run.dataset_id)
    asked = set(lesson.steps)
    ready = run.status not in ACTIVE
    questions = [q for q in saved_lessons.askable(session, run) if q.step in asked] if ready else []
    permanent = link(lesson)
    return {
        "lesson": lesson,
        "run": run,
        "dataset": dataset,
        "live": not ready,
        "questions": questions,
        "missing": sorted(asked - {q.step for q in questions}) if ready else [],
        "link": permanent,
        "absolute_link": str(request.base_url).rstrip("/") + permanent,
        "hide_labels": HIDE_LABELS,
    }


def saved(session: Session) -> dict[str, Any]:
    """The saved lessons for /teach, newest first, with their runs."""
    lessons = saved_lessons.list_lessons(session)
    runs = {s.run_id: run_service.get_run(session, s.run_id) for s in lessons}
    return {"saved": [(s, runs[s.run_id], link(s)) for s in lessons], "hidable": HIDABLE}


def save(
    session: Session, run_id: int, values: dict[str, Any]
) -> tuple[int | None, dict[str, Any] | None]:
    """The new lesson's id, or the form again with the reason it was refused."""
    try:
        body = SavedLessonCreate.model_validate({**values, "run_id": run_id})
        return stored_id(saved_lessons.create(session, body)), None
    except InvalidInput as exc:
        return None, new_form(session, run_id, values=values, error=exc.message)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        error = f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
        return None, new_form(session, run_id, values=values, error=error)


def form_values(
    title: str, story: str, steps: list[int] | None, hidden: list[str] | None
) -> dict[str, Any]:
    """What the form sent, to show it again with the refusal."""
    return {"title": title, "story": story, "steps": steps or [], "hidden": hidden or []}
