"""Data-set routes: parse, call the service, return."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Form, Header, Query, Request, Response, UploadFile
from pydantic import Field

from app.ingest.words import Words
from app.models import (
    DatasetGenerate,
    DatasetPreview,
    DatasetPublic,
    DatasetSummary,
    DatasetUpdate,
    Message,
    ReferenceCreate,
    UploadOptions,
)
from app.models.estimate import EstimatePublic
from app.models.fields import MAX_K
from app.services import datasets, estimates, reference_tables
from app.web import export
from app.web.deps import (
    BackendDep,
    Id,
    Offset,
    SessionDep,
    SettingsDep,
    StoreDep,
    UploadGateDep,
)

router = APIRouter(prefix="/datasets", tags=["datasets"])

Limit = Annotated[int, Query(ge=1, le=1000)]
Standardize = Annotated[
    bool,
    Query(
        description="Scale each feature column to mean 0 and unit variance, as runs with "
        "standardize=true select on them."
    ),
]
ExportFormat = Literal["csv", "json", "zip"]
READ: dict[int | str, dict[str, Any]] = {
    404: {"model": Message},
    410: {
        "model": Message,
        "description": "The data set's stored arrays are lost; upload it again.",
    },
}


class UploadForm(UploadOptions):
    file: UploadFile = Field(description="The CSV file.")


@router.get("", response_model=list[DatasetSummary])
def list_datasets(session: SessionDep, offset: Offset = 0, limit: Limit = 100):
    return [DatasetSummary.of(ds) for ds in datasets.list_datasets(session, offset, limit)]


@router.post(
    "",
    status_code=201,
    response_model=DatasetPublic,
    responses={
        413: {
            "model": Message,
            "description": "Too many bytes, columns, cells or a too long line.",
        },
        503: {
            "model": Message,
            "description": "MAX_PARALLEL_UPLOADS are being read; see Retry-After.",
        },
    },
)
def upload_dataset(
    session: SessionDep,
    store: StoreDep,
    settings: SettingsDep,
    gate: UploadGateDep,
    form: Annotated[UploadForm, Form(media_type="multipart/form-data")],
    response: Response,
    wording: Annotated[Literal["api", "form"], Header(alias="X-Wording")] = "api",
):
    """Upload a CSV file (field ``file``) with the form fields described below. Every problem
    the options can fix is reported at once (one ``detail`` entry each); with ``X-Wording:
    form`` the messages name the upload form's controls instead of the fields."""
    words = Words(form=wording == "form")
    file = form.file
    created = datasets.create_from_upload(
        session, store, settings, file.file, file.filename, form, gate, words
    )
    response.headers["Location"] = created.url
    return created


@router.post(
    "/generate",
    status_code=201,
    response_model=DatasetPublic,
    responses={422: {"description": "Invalid parameters, or more cells than MAX_CELLS."}},
)
def generate_dataset(
    session: SessionDep,
    store: StoreDep,
    settings: SettingsDep,
    body: DatasetGenerate,
    response: Response,
):
    """Generate a data set with one of the engine's generators (see GET /api/generators)."""
    dataset = datasets.create_generated(session, store, body, settings.max_cells)
    response.headers["Location"] = f"/api/datasets/{dataset.id}"
    return datasets.describe(store, dataset)


@router.post(
    "/reference",
    status_code=201,
    response_model=DatasetPublic,
    responses={
        422: {
            "description": "The feature is off, the path is outside REFERENCE_DIRS (an "
            "s3:// URI outside REFERENCE_URIS), or the table cannot be read as asked (no such "
            "file, key or bucket, refused credentials, a wrong option)."
        }
    },
)
def register_reference(
    session: SessionDep,
    backend: BackendDep,
    store: StoreDep,
    settings: SettingsDep,
    body: ReferenceCreate,
    response: Response,
):
    """Register a CSV or Parquet table on a path the server and its workers can read (inside
    REFERENCE_DIRS), or in object storage (an s3:// URI under REFERENCE_URIS), without
    uploading it. Its statistics pass runs as jobs, one per row range;
    ``meta.reference.status`` follows it, and runs (least squares) start once it is done."""
    dataset = reference_tables.register(session, backend, settings, body)
    response.headers["Location"] = f"/api/datasets/{dataset.id}"
    return datasets.describe(store, dataset)


@router.post(
    "/{dataset_id}/pass/cancel",
    response_model=DatasetPublic,
    responses={
        404: {"model": Message},
        422: {"description": "The data set is not a table registered by reference."},
    },
)
def cancel_pass(session: SessionDep, store: StoreDep, dataset_id: Id):
    """Cancel the statistics pass of a table registered by reference (queued ranges at once,
    running ones at their next batch), e.g. to delete it."""
    dataset = datasets.get_dataset(session, dataset_id)
    return datasets.describe(store, reference_tables.cancel_pass(session, store, dataset))


@router.get("/{dataset_id}", response_model=DatasetPublic, responses=READ)
def get_dataset(session: SessionDep, store: StoreDep, dataset_id: Id):
    dataset = datasets.get_dataset(session, dataset_id)
    return datasets.describe(store, reference_tables.refresh(session, store, dataset))


@router.get(
    "/{dataset_id}/export",
    responses={
        **READ,
        200: {"content": {"text/csv": {}, "application/json": {}, "application/zip": {}}},
    },
)
def export_dataset(
    session: SessionDep,
    store: StoreDep,
    dataset_id: Id,
    format: ExportFormat = "zip",
    standardize: Standardize = False,
) -> Response:
    """The data set as runs read it (one-hot, imputed, labels as 0/1). zip: data.csv and
    columns.csv (index, column, source, kind, role, mean, std, imputed); csv: data.csv."""
    dataset = datasets.get_dataset(session, dataset_id)
    X, y = datasets.prepared_arrays(store, dataset)
    columns = datasets.describe(store, dataset).columns
    tables = export.prepared_tables(dataset, X, y, columns, standardize)
    stem = f"dataset-{dataset_id}-prepared{'-standardized' if standardize else ''}"
    return export.tables_response(tables, format, stem, "data")


@router.get("/{dataset_id}/preview", response_model=DatasetPreview, responses=READ)
def preview_dataset(
    session: SessionDep,
    store: StoreDep,
    dataset_id: Id,
    offset: Offset = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
):
    """``limit`` rows from ``offset``; fewer on a wide data set (at most 200,000 cells)."""
    dataset = datasets.get_dataset(session, dataset_id)
    return datasets.preview(store, dataset, offset, limit)


@router.get(
    "/{dataset_id}/estimate",
    response_model=EstimatePublic,
    responses={404: {"model": Message}},
)
def estimate_run(
    request: Request,
    session: SessionDep,
    dataset_id: Id,
    algorithm: str | None = None,
    objective: str | None = None,
    k: Annotated[int | None, Query(ge=1, le=MAX_K)] = None,
):
    """How long a run with these settings is predicted to take on this data set, before it
    starts (a cost model from its shape: docs/api.md). Other query keys are the algorithm's
    and objective's parameters (``path_end=sparsity``, ``max_steps=80``, ``lam=0.01``). A long
    run's ``sentence`` names faster settings and what they change."""
    dataset = datasets.get_dataset(session, dataset_id)
    query = request.query_params
    return {"estimate": estimates.for_dataset(dataset, algorithm, objective, k, query).to_dict()}


@router.patch("/{dataset_id}", response_model=DatasetPublic, responses=READ)
def update_dataset(session: SessionDep, store: StoreDep, dataset_id: Id, body: DatasetUpdate):
    """Rename a data set or change its description; fields left out stay as they are."""
    return datasets.describe(store, datasets.update_dataset(session, dataset_id, body))


@router.delete(
    "/{dataset_id}",
    status_code=204,
    responses={404: {"model": Message}, 409: {"model": Message}},
)
def delete_dataset(session: SessionDep, store: StoreDep, dataset_id: Id) -> None:
    """Delete a data set with its runs (and their traces), comparisons and cross-validations;
    refused (409) while a run on it is queued or running."""
    datasets.delete_dataset(session, store, dataset_id)
