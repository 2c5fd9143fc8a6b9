"""Typed dependencies: what a route needs, taken from the app's state."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlmodel import Session

from .config import Settings
from .jobs.backend import JobBackend
from .services.datasets import UploadGate
from .storage import ArrayStore


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


SettingsDep = Annotated[Settings, Depends(get_settings)]
SessionDep = Annotated[Session, Depends(get_session)]
BackendDep = Annotated[JobBackend, Depends(get_backend)]
StoreDep = Annotated[ArrayStore, Depends(get_store)]
UploadGateDep = Annotated[UploadGate, Depends(get_upload_gate)]

_bearer = HTTPBearer(auto_error=False, description="The server's API_KEY, when it has one.")


def require_api_key(
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    if settings.api_key is None:
        return
    expected = settings.api_key.get_secret_value().encode()
    given = credentials.credentials.encode() if credentials else b""
    if not secrets.compare_digest(given, expected):
        raise HTTPException(
            status_code=401,
            detail="this server requires its API key: send 'Authorization: Bearer <API_KEY>'",
            headers={"WWW-Authenticate": "Bearer"},
        )
