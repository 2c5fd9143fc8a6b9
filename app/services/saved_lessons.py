"""Saved lessons: a lecturer's lesson made from any run (their own data included): the steps
asked, a title, a line of story and the controls hidden. Stored, listed, read and deleted
here; written to and read from a file in ``app.services.lesson_files``.

The built-in lesson recipes (``app.services.lessons``) are another thing: fixed data sets and
runs created on demand. A saved lesson names a run that exists.

The steps asked are checked against the run's trace: each one must be a step
``classroom.question_at`` can ask, so the lesson's link never names a step that asks nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlmodel import Session, col, select

from app.errors import Conflict, InvalidInput, NotFound
from app.models import LessonQuestion, Run, RunStatus, SavedLesson, SavedLessonCreate, stored_id
from app.models.saved_lesson import HIDABLE
from app.services import classroom
from app.services import datasets as dataset_service
from app.services import runs as run_service

MAX_LISTED = 200


def askable(session: Session, run: Run) -> list[classroom.QuestionSpec]:
    """Every question the run's trace can ask."""
    names = dataset_service.get_dataset(session, run.dataset_id).feature_names
    events = run_service.trace_events(session, stored_id(run))
    return [q for i in range(len(events)) if (q := classroom.question_at(events, names, i))]


def default_steps(session: Session, run: Run) -> list[int]:
    """The classroom's default choice of steps (``classroom.questions_of`` without steps)."""
    names = dataset_service.get_dataset(session, run.dataset_id).feature_names
    events = run_service.trace_events(session, stored_id(run))
    return [q.step for q in classroom.questions_of(events, names)]


def finished_run(session: Session, run_id: int, loc: tuple[str, ...] = ("body", "run_id")) -> Run:
    """A finished run whose trace can make a lesson; 4xx saying why not."""
    run = run_service.get_selection_run(session, run_id)
    if run.status != RunStatus.done:
        raise Conflict(
            f"run {run_id} is {run.status}: a lesson is made from a finished run (status done)"
        )
    if not run.record_candidates:
        raise InvalidInput(
            f"run {run_id} did not record candidate scores, so its steps ask nothing: run it "
            "again with record_candidates (POST /api/runs/{id}/rerun does)",
            loc=loc,
        )
    return run


def questions(session: Session, run_id: int) -> list[LessonQuestion]:
    """Every question a finished run can ask, the classroom's default choice marked."""
    run = finished_run(session, run_id, ("query", "run_id"))
    chosen = set(default_steps(session, run))
    return [
        LessonQuestion(
            step=q.step,
            kind=q.kind,
            prompt=q.prompt,
            choices=q.choices,
            answer=q.answer,
            default=q.step in chosen,
        )
        for q in askable(session, run)
    ]


def checked_steps(asked: Sequence[int], possible: Sequence[int]) -> list[int]:
    """The steps asked, ascending and once each, or InvalidInput naming the ones that ask
    nothing and the ones that would."""
    steps = sorted(set(asked))
    if not steps:
        raise InvalidInput("no step is chosen: tick at least one step", loc=("body", "steps"))
    wrong = [s for s in steps if s not in set(possible)]
    if wrong:
        shown = ", ".join(str(s) for s in possible[:40]) + (" ..." if len(possible) > 40 else "")
        raise InvalidInput(
            f"step{'s' if len(wrong) > 1 else ''} {', '.join(str(s) for s in wrong[:10])} "
            f"make{'' if len(wrong) > 1 else 's'} no question in this run's trace; the steps "
            f"that do: {shown}",
            loc=("body", "steps"),
            steps=wrong[:10],
        )
    if len(steps) > classroom.MAX_QUESTIONS:
        raise InvalidInput(
            f"{len(steps)} steps are chosen; a lesson asks at most {classroom.MAX_QUESTIONS}",
            loc=("body", "steps"),
        )
    return steps


def create(session: Session, body: SavedLessonCreate) -> SavedLesson:
    run = finished_run(session, body.run_id)
    possible = [q.step for q in askable(session, run)]
    if not possible:
        raise InvalidInput(
            f"run {body.run_id}'s trace has no step to ask about (a greedy method such as "
            "FoBa, with candidate scores recorded, has)",
            loc=("body", "run_id"),
        )
    asked = body.steps if body.steps is not None else default_steps(session, run)
    lesson = SavedLesson(
        title=body.title,
        story=body.story,
        run_id=stored_id(run),
        steps=checked_steps(asked, possible),
        hidden=[h for h in HIDABLE if h in body.hidden],
    )
    session.add(lesson)
    session.commit()
    return lesson


def list_lessons(session: Session, offset: int = 0, limit: int = MAX_LISTED) -> list[SavedLesson]:
    query = select(SavedLesson).order_by(col(SavedLesson.id).desc()).offset(offset).limit(limit)
    return list(session.exec(query))


def get(session: Session, lesson_id: int) -> SavedLesson:
    lesson = session.get(SavedLesson, lesson_id)
    if lesson is None:
        raise NotFound(f"there is no saved lesson {lesson_id}")
    return lesson


def delete(session: Session, lesson_id: int) -> None:
    """The lesson only: its run and data set stay (other lessons and pages may use them)."""
    session.delete(get(session, lesson_id))
    session.commit()
