"""Typed dependencies: what a route needs, taken from the app's state."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Path, Query, Request
from fastapi.security import HTTPBearer
from pydantic import BeforeValidator
from sqlmodel import Session

from app.config import Settings
from app.jobs.backend import JobBackend
from app.models.fields import MAX_ID
from app.services.datasets import UploadGate
from app.storage import ArrayStore


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_session(request: Request) -> Iterator[Session]:
    # Objects stay readable after commit: routes return them without another query.
    with Session(request.app.state.db, expire_on_commit=False) as session:
        yield session


def get_backend(request: Request) -> JobBackend:
    return request.app.state.backend


def get_store(request: Request) -> ArrayStore:
    return request.app.state.store


def get_upload_gate(request: Request) -> UploadGate:
    return request.app.state.upload_gate


def _plain_digits(value: object) -> object:
    """An integer in a URL is written in plain digits: '+1', '1.0' and '1_0' name no row (an
    int() would read them as 1, 1 and 10, so one resource answered to many URLs)."""
    if isinstance(value, str) and not (value.isascii() and value.isdigit()):
        raise ValueError("write the number in plain digits (0-9), without sign, point or '_'")
    return value


# Every id in a path and every offset is bounded: the databases hold 64-bit integers. Path()
# and Query() come first: after a validator their bounds reached the OpenAPI schema as "ge"
# and "le", words JSON Schema does not know, so clients read -1 as a valid offset.
Id = Annotated[int, Path(ge=1, le=MAX_ID), BeforeValidator(_plain_digits)]
Offset = Annotated[int, Query(ge=0, le=MAX_ID), BeforeValidator(_plain_digits)]

SettingsDep = Annotated[Settings, Depends(get_settings)]
SessionDep = Annotated[Session, Depends(get_session)]
BackendDep = Annotated[JobBackend, Depends(get_backend)]
StoreDep = Annotated[ArrayStore, Depends(get_store)]
UploadGateDep = Annotated[UploadGate, Depends(get_upload_gate)]

# The key itself is checked by ``app.web.auth.Guard`` for every route; this only declares it in
# the OpenAPI schema (added to /api when the server has a key).
api_key_scheme = HTTPBearer(auto_error=False, description="The server's API_KEY.")
