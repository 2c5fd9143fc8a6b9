"""Cross-validation over k: parse, call the service, return."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Response

from app.models import Message, RunPublic
from app.models.cv import CVCreate, CVFinalCreate, CVPublic
from app.services import cv
from app.web import export
from app.web.deps import BackendDep, Id, SessionDep, StoreDep
from app.web.routers.runs import IdempotencyKey

router = APIRouter(tags=["cross-validation"])
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": Message}}


@router.post("/cv", status_code=202, response_model=CVPublic)
def submit_cv(
    session: SessionDep,
    backend: BackendDep,
    store: StoreDep,
    body: CVCreate,
    response: Response,
    idempotency_key: IdempotencyKey = None,
):
    """Choose k by K-fold cross-validation: one job per fold; poll the study's URL until its
    status is final, then read the curve and the chosen k."""
    study = cv.submit_cv(session, backend, store, body, idempotency_key)
    response.headers["Location"] = f"/api/cv/{study.id}"
    return cv.public(session, study)


@router.get("/cv/{cv_id}", response_model=CVPublic, responses=NOT_FOUND)
def get_cv(session: SessionDep, cv_id: Id):
    """Status, folds done of total and, once every fold is done, the mean and standard error
    of the held-out error per k and the k each rule chooses."""
    return cv.public(session, cv.get_study(session, cv_id))


@router.post(
    "/cv/{cv_id}/final",
    status_code=202,
    response_model=RunPublic,
    responses={
        **NOT_FOUND,
        409: {"model": Message, "description": "A fold is not done (yet)."},
    },
)
def submit_final(
    session: SessionDep, backend: BackendDep, cv_id: Id, body: CVFinalCreate, response: Response
):
    """Queue the run at the chosen k (or the k given) on all rows, with the study's
    algorithm, parameters and seed; repeating the request returns the same run."""
    run = cv.submit_final(session, backend, cv_id, body)
    response.headers["Location"] = f"/api/runs/{run.id}"
    return RunPublic.of(run)


@router.post("/cv/{cv_id}/cancel", response_model=CVPublic, responses=NOT_FOUND)
def cancel_cv(session: SessionDep, cv_id: Id):
    """Cancel the folds that have not finished."""
    return cv.public(session, cv.cancel_study(session, cv_id))


@router.get(
    "/cv/{cv_id}/export",
    responses={
        **NOT_FOUND,
        200: {"content": {"text/csv": {}, "application/json": {}, "application/zip": {}}},
        409: {"model": Message, "description": "A fold is not done (yet)."},
    },
)
def export_cv(session: SessionDep, cv_id: Id, format: Literal["csv", "json", "zip"] = "csv"):
    """The curve as a download. csv: the curve alone (k, mean_error, se_error, metric, k_min,
    k_1se, chosen); zip: curve.csv and folds.csv (fold, k, error: every held-out error the
    curve averages); json: both tables by name."""
    study = cv.public(session, cv.get_study(session, cv_id))
    fold_results = {r.cv_fold or 0: r.result for r in cv.fold_runs(session, cv_id)}
    tables = export.cv_tables(study, fold_results)
    return export.tables_response(tables, format, f"cv-{cv_id}", "curve")
