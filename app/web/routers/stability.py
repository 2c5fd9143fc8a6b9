"""How stable is a selection: parse, call the service, return."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response
from fastapi.responses import JSONResponse, PlainTextResponse

from app.models import MAX_K, Message, StabilityCreate, StabilityPublic
from app.services import stability
from app.web import export
from app.web.deps import BackendDep, Id, SessionDep, StoreDep
from app.web.routers.runs import IdempotencyKey

router = APIRouter(tags=["stability"])
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": Message}}


@router.post(
    "/stability",
    status_code=202,
    response_model=StabilityPublic,
    responses={
        409: {
            "model": Message,
            "description": "The data set is a table registered by reference whose statistics "
            "pass is not done.",
        }
    },
)
def submit_stability(
    session: SessionDep,
    backend: BackendDep,
    store: StoreDep,
    body: StabilityCreate,
    response: Response,
    idempotency_key: IdempotencyKey = None,
):
    """How stable is a selection: 2B half samples in B complementary pairs, every method
    run on each (one job per method and subsample); poll the study's URL for its progress
    and frequencies."""
    study = stability.submit_stability(session, backend, store, body, idempotency_key)
    response.headers["Location"] = f"/api/stability/{study.id}"
    return stability.public(session, study)


@router.get("/stability/{study_id}", response_model=StabilityPublic, responses=NOT_FOUND)
def get_stability(session: SessionDep, study_id: Id):
    """Status, parts done of total, and every method's selection frequencies at every k over
    the subsamples done so far (final once the status is done), with the stable sets, their
    bound on the expected number of false selections and the stability index."""
    return stability.public(session, stability.get_study(session, study_id))


@router.post("/stability/{study_id}/cancel", response_model=StabilityPublic, responses=NOT_FOUND)
def cancel_stability(session: SessionDep, study_id: Id):
    """Cancel the subsamples that have not finished."""
    return stability.public(session, stability.cancel_study(session, study_id))


@router.get(
    "/stability/{study_id}/frequencies",
    responses={**NOT_FOUND, 200: {"content": {"text/csv": {}, "application/json": {}}}},
)
def export_frequencies(
    session: SessionDep, study_id: Id, format: Literal["csv", "json"] = "csv"
) -> Response:
    """Every method's selection frequency of every feature (or group) at every k, whether it
    is stable at k, and the bound at k, one row each, as a download."""
    rows = stability.frequency_rows(
        stability.public(session, stability.get_study(session, study_id))
    )
    headers = {"Content-Disposition": f'attachment; filename="stability-{study_id}.{format}"'}
    if format == "json":
        return JSONResponse(rows, headers=headers)
    return PlainTextResponse(export.stability_csv(rows), media_type="text/csv", headers=headers)


@router.get(
    "/stability/{study_id}/why-not",
    responses={**NOT_FOUND, 409: {"model": Message, "description": "Nothing to explain yet."}},
)
def stability_why_not(
    session: SessionDep,
    store: StoreDep,
    study_id: Id,
    feature: Annotated[int, Query(ge=0, le=MAX_K, description="A feature's column index.")],
    k: Annotated[int, Query(ge=1, le=MAX_K)],
    method: str | None = None,
) -> dict:
    """Why is (or is not) ``feature`` selected at k: ``engine.judge.why_not`` on all rows
    against the run the study came from (at its k), else against the k features the method
    selected most often at k; with the feature's frequency at k."""
    return stability.why_not(session, store, study_id, feature, k, method)
