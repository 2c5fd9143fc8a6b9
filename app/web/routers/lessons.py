"""Saved-lesson routes (a lecturer's lesson from any run): parse, call the service, return."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Query, Response, UploadFile
from fastapi.responses import JSONResponse

from app.models import MAX_ID, LessonQuestion, Message, SavedLessonCreate, SavedLessonPublic
from app.services import lesson_files, saved_lessons
from app.web.deps import BackendDep, Id, Offset, SessionDep, StoreDep

router = APIRouter(prefix="/lessons", tags=["lessons"])

NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": Message}}
FROM_RUN: dict[int | str, dict[str, Any]] = {
    404: {"model": Message},
    409: {
        "model": Message,
        "description": "The run has not finished, or is a part of a study (a fold).",
    },
}


@router.get("/questions", response_model=list[LessonQuestion], responses=FROM_RUN)
def lesson_questions(session: SessionDep, run_id: Annotated[int, Query(ge=1, le=MAX_ID)]):
    """Every step of a finished run's trace that can be asked, with the classroom's default
    choice marked: the steps a lesson may ask."""
    return saved_lessons.questions(session, run_id)


@router.post("", status_code=201, response_model=SavedLessonPublic, responses=FROM_RUN)
def create_lesson(session: SessionDep, body: SavedLessonCreate, response: Response):
    """Save a lesson from a finished run with candidate scores recorded: the steps asked
    (checked against its trace; none: the classroom's default choice), a title, a line of
    story and the controls its page hides. ``link`` is its permanent link."""
    lesson = saved_lessons.create(session, body)
    response.headers["Location"] = f"/api/lessons/{lesson.id}"
    return SavedLessonPublic.of(lesson)


@router.get("", response_model=list[SavedLessonPublic])
def list_lessons(
    session: SessionDep, offset: Offset = 0, limit: Annotated[int, Query(ge=1, le=200)] = 100
):
    """Newest first."""
    return [SavedLessonPublic.of(s) for s in saved_lessons.list_lessons(session, offset, limit)]


@router.get("/{lesson_id}", response_model=SavedLessonPublic, responses=NOT_FOUND)
def get_lesson(session: SessionDep, lesson_id: Id):
    return SavedLessonPublic.of(saved_lessons.get(session, lesson_id))


@router.delete("/{lesson_id}", status_code=204, responses=NOT_FOUND)
def delete_lesson(session: SessionDep, lesson_id: Id) -> None:
    """Delete the lesson; its run and data set stay."""
    saved_lessons.delete(session, lesson_id)


@router.get(
    "/{lesson_id}/export",
    responses={
        **NOT_FOUND,
        200: {"content": {"application/json": {}}, "description": "The lesson file."},
        409: {"model": Message, "description": "The lesson's run has not finished."},
        413: {
            "model": Message,
            "description": f"The data set has more than {lesson_files.MAX_CELLS:,} cells.",
        },
    },
)
def export_lesson(session: SessionDep, store: StoreDep, lesson_id: Id) -> Response:
    """The lesson as a file (JSON, format "foba-lab-lesson" version 1): the lesson, its run's
    configuration and its data set's prepared arrays, so it imports on another install.
    Refused (413) when the data set has more than 500,000 cells (rows x (features + 1))."""
    body = lesson_files.export(session, store, lesson_id)
    name = lesson_files.file_name(saved_lessons.get(session, lesson_id))
    return JSONResponse(body, headers={"Content-Disposition": f'attachment; filename="{name}"'})


@router.post(
    "/import",
    status_code=201,
    response_model=SavedLessonPublic,
    responses={
        200: {"model": SavedLessonPublic, "description": "This file was imported before."},
        413: {"model": Message, "description": "More than 16 MB or 500,000 cells."},
    },
)
def import_lesson(
    session: SessionDep,
    backend: BackendDep,
    store: StoreDep,
    file: Annotated[UploadFile, File(description="A lesson file (from export_lesson).")],
    response: Response,
):
    """Import a lesson file (multipart field ``file``): creates its data set, its run (queued,
    candidate scores recorded) and the lesson, in one transaction; a refused file stores
    nothing and the 422 says what to fix. The same file again returns the same lesson (200)."""
    lesson, created = lesson_files.import_file(
        session, backend, store, lesson_files.read_upload(file.file)
    )
    response.status_code = 201 if created else 200
    response.headers["Location"] = f"/api/lessons/{lesson.id}"
    return SavedLessonPublic.of(lesson)
