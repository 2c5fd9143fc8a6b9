"""Data-set routes: parse, call the service, return."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Form, Header, Query, Response, UploadFile
from pydantic import Field

from ..deps import SessionDep, SettingsDep, UploadGateDep
from ..edits import DatasetPatch
from ..models import (
    DatasetGenerate,
    DatasetPreview,
    DatasetPublic,
    DatasetSummary,
    Message,
    UploadOptions,
)
from ..services import datasets
from ..services.upload_words import Words

router = APIRouter(prefix="/datasets", tags=["datasets"])

Offset = Annotated[int, Query(ge=0)]
Limit = Annotated[int, Query(ge=1, le=1000)]


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
    dataset = datasets.create_from_upload(
        session, settings, file.file, file.filename, form, gate, words
    )
    response.headers["Location"] = f"/api/datasets/{dataset.id}"
    return datasets.describe(settings.data_dir, dataset)


@router.post(
    "/generate",
    status_code=201,
    response_model=DatasetPublic,
    responses={422: {"description": "Invalid parameters, or more cells than MAX_CELLS."}},
)
def generate_dataset(
    session: SessionDep, settings: SettingsDep, body: DatasetGenerate, response: Response
):
    """Generate a data set with one of the engine's generators (see GET /api/generators)."""
    dataset = datasets.create_generated(session, settings.data_dir, body, settings.max_cells)
    response.headers["Location"] = f"/api/datasets/{dataset.id}"
    return datasets.describe(settings.data_dir, dataset)


@router.get("/{dataset_id}", response_model=DatasetPublic, responses={404: {"model": Message}})
def get_dataset(session: SessionDep, settings: SettingsDep, dataset_id: int):
    return datasets.describe(settings.data_dir, datasets.get_dataset(session, dataset_id))


@router.get(
    "/{dataset_id}/preview", response_model=DatasetPreview, responses={404: {"model": Message}}
)
def preview_dataset(
    session: SessionDep,
    settings: SettingsDep,
    dataset_id: int,
    offset: Offset = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
):
    dataset = datasets.get_dataset(session, dataset_id)
    return datasets.preview(settings.data_dir, dataset, offset, limit)


@router.patch("/{dataset_id}", response_model=DatasetPublic, responses={404: {"model": Message}})
def update_dataset(session: SessionDep, settings: SettingsDep, dataset_id: int, body: DatasetPatch):
    """Rename a data set or change its description."""
    dataset = datasets.update_dataset(session, dataset_id, body)
    return datasets.describe(settings.data_dir, dataset)


@router.delete(
    "/{dataset_id}",
    status_code=204,
    responses={404: {"model": Message}, 409: {"model": Message}},
)
def delete_dataset(session: SessionDep, settings: SettingsDep, dataset_id: int) -> None:
    """Delete a data set with its finished runs; refused while a run uses it."""
    datasets.delete_dataset(session, settings.data_dir, dataset_id)
