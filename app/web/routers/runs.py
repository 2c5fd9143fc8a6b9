"""Run and comparison routes: parse, call the service, return."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Path, Query, Response
from fastapi.responses import JSONResponse, PlainTextResponse

from app.models import (
    MAX_ID,
    ComparisonCreate,
    ComparisonFromRuns,
    ComparisonPublic,
    Message,
    RunCreate,
    RunPublic,
    RunStatus,
    RunUpdate,
    TracePage,
    WhyNot,
)
from app.services import datasets, judging, run_edits, runs, what_if
from app.web import export
from app.web.deps import BackendDep, Id, Offset, SessionDep, StoreDep
from app.web.export import download

router = APIRouter(tags=["runs"])

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=255,
        description="Repeating a submit with the same key returns the first submit's result.",
    ),
]
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": Message}}
SUBMIT: dict[int | str, dict[str, Any]] = {
    410: {
        "model": Message,
        "description": "The data set's stored arrays are lost (a test split reads them).",
    }
}


@router.post("/runs", status_code=202, response_model=RunPublic, responses=SUBMIT)
def submit_run(
    session: SessionDep,
    backend: BackendDep,
    store: StoreDep,
    body: RunCreate,
    response: Response,
    idempotency_key: IdempotencyKey = None,
):
    """Queue a run; poll its URL (or its trace) until the status is final."""
    run = runs.submit_run(session, backend, store, body, idempotency_key)
    response.headers["Location"] = f"/api/runs/{run.id}"
    return RunPublic.of(run)


@router.post(
    "/runs/{run_id}/rerun",
    status_code=202,
    response_model=RunPublic,
    responses={**NOT_FOUND, **SUBMIT},
)
def rerun(
    session: SessionDep,
    backend: BackendDep,
    store: StoreDep,
    run_id: Id,
    body: what_if.RerunChanges,
    response: Response,
):
    """Queue a new run with the stored run's configuration (standardize, split and seed
    included) and the changes in the body: a teaching mode's what-if saved as a run."""
    run = what_if.rerun(session, backend, store, run_id, body)
    response.headers["Location"] = f"/api/runs/{run.id}"
    return RunPublic.of(run)


@router.get("/runs", response_model=list[RunPublic])
def list_runs(
    session: SessionDep,
    dataset_id: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
    status: RunStatus | None = None,
    offset: Offset = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
):
    """Newest first."""
    return [RunPublic.of(r) for r in runs.list_runs(session, dataset_id, status, offset, limit)]


@router.get("/runs/{run_id}", response_model=RunPublic, responses=NOT_FOUND)
def get_run(session: SessionDep, run_id: Id):
    return RunPublic.of(runs.get_run(session, run_id))


@router.patch(
    "/runs/{run_id}",
    response_model=RunPublic,
    responses={
        **NOT_FOUND,
        409: {"model": Message, "description": "A fold of a cross-validation."},
    },
)
def update_run(session: SessionDep, run_id: Id, body: RunUpdate):
    """Rename a run, or set its notes or tags; fields left out stay as they are."""
    return RunPublic.of(run_edits.update_run(session, run_id, body))


@router.delete(
    "/runs/{run_id}",
    status_code=204,
    responses={
        **NOT_FOUND,
        409: {
            "model": Message,
            "description": "The run is queued or running (cancel it first), or is a fold.",
        },
    },
)
def delete_run(session: SessionDep, run_id: Id) -> None:
    """Delete a finished (done, failed or cancelled) run with its trace. A queued or running
    run is refused with 409: cancel it first (POST /api/runs/{id}/cancel), then delete it once
    its status is final, so a worker never writes to a deleted run. The run leaves the
    comparisons it was in; a comparison left without runs is deleted too."""
    run_edits.delete_run(session, run_id)


@router.get("/runs/{run_id}/trace", response_model=TracePage, responses=NOT_FOUND)
def get_trace(
    session: SessionDep,
    run_id: Id,
    after: Annotated[
        int, Query(ge=-1, le=MAX_ID, description="Return the events with step > after.")
    ] = -1,
    limit: Annotated[int, Query(ge=1, le=5000)] = 1000,
):
    return runs.read_trace(session, run_id, after, limit)


@router.get(
    "/runs/{run_id}/why-not/{feature}",
    response_model=WhyNot,
    responses={
        **NOT_FOUND,
        409: {"model": Message, "description": "The run has no answer yet, or is a fold."},
        422: {"description": "No such feature, or the problem is too large to answer here."},
    },
)
def why_not(
    session: SessionDep,
    store: StoreDep,
    run_id: Id,
    feature: Annotated[int, Path(ge=0, le=MAX_ID, description="A column index of the data.")],
):
    """Why this feature is not in the run's answer: the best exchange that brings it in, what
    it costs, and the equally good alternatives (for a selected feature: its best
    replacement). Answered for problems up to about a second's work (rows x features x k);
    larger ones get a 422 pointing at the run's swap certificate."""
    return judging.why_not(session, store, run_id, feature)


@router.post(
    "/runs/{run_id}/cancel",
    response_model=RunPublic,
    responses={
        **NOT_FOUND,
        202: {"model": RunPublic, "description": "Running: it stops at its next event."},
        409: {"model": Message, "description": "The run already finished."},
    },
)
def cancel_run(session: SessionDep, run_id: Id, response: Response):
    run = runs.cancel_run(session, run_id)
    if run.status == RunStatus.running:
        response.status_code = 202
    return RunPublic.of(run)


@router.get(
    "/runs/{run_id}/export",
    responses={
        **NOT_FOUND,
        200: {"content": {"text/csv": {}, "application/json": {}, "application/zip": {}}},
        409: {
            "model": Message,
            "description": "The run has no result yet, or is a fold of a cross-validation.",
        },
    },
)
def export_run(
    session: SessionDep, run_id: Id, format: Literal["csv", "json", "zip"] = "csv"
) -> Response:
    """The run as a download. csv: the selected features alone, one table (feature, index,
    coefficient); zip: features.csv and run.csv (name, value: the setting, intercept and
    metrics); json: the setting, metrics, intercept and features in one document."""
    run = runs.get_selection_run(session, run_id)
    dataset = datasets.get_dataset(session, run.dataset_id)
    if format == "json":
        return JSONResponse(export.as_json(run, dataset), headers=download(f"run-{run_id}.json"))
    return export.tables_response(
        export.run_tables(run, dataset), format, f"run-{run_id}", "features"
    )


@router.post("/comparisons", status_code=202, response_model=ComparisonPublic, responses=SUBMIT)
def submit_comparison(
    session: SessionDep,
    backend: BackendDep,
    store: StoreDep,
    body: ComparisonCreate,
    response: Response,
    idempotency_key: IdempotencyKey = None,
):
    """Queue several algorithm configurations on one data set, as one comparison."""
    comparison = runs.submit_comparison(session, backend, store, body, idempotency_key)
    response.headers["Location"] = comparison.url
    return comparison


@router.post("/comparisons/from-runs", status_code=201, response_model=ComparisonPublic)
def compare_runs(session: SessionDep, body: ComparisonFromRuns, response: Response):
    """A comparison of runs that exist already (two or more, all on one data set); nothing is
    queued. A run may be in several comparisons."""
    comparison = run_edits.comparison_from_runs(session, body)
    response.headers["Location"] = comparison.url
    return comparison


@router.get("/comparisons/{comparison_id}", response_model=ComparisonPublic, responses=NOT_FOUND)
def get_comparison(session: SessionDep, comparison_id: Id):
    return runs.get_comparison(session, comparison_id)


@router.get(
    "/comparisons/{comparison_id}/export",
    responses={**NOT_FOUND, 200: {"content": {"text/csv": {}, "application/json": {}}}},
)
def export_comparison(
    session: SessionDep, comparison_id: Id, format: Literal["csv", "json"] = "csv"
) -> Response:
    """Every run of the comparison, one row each: setting, metrics, selected features."""
    comparison = runs.get_comparison(session, comparison_id)
    dataset = datasets.get_dataset(session, comparison.dataset_id)
    headers = download(f"comparison-{comparison_id}.{format}")
    if format == "json":
        return JSONResponse(export.comparison_rows(comparison, dataset), headers=headers)
    body = export.comparison_csv(comparison, dataset)
    return PlainTextResponse(body, media_type="text/csv", headers=headers)
