"""The JSON API under /api (its OpenAPI schema is the contract), and /healthz."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from ..config import Settings
from ..db import ping
from ..deps import BackendDep, SessionDep, api_key_scheme
from . import catalog, datasets, runs


def api_router(settings: Settings) -> APIRouter:
    # Declares the key in the schema (only when there is one); app.auth.Guard checks it.
    keyed = settings.api_key is not None
    router = APIRouter(prefix="/api", dependencies=[Depends(api_key_scheme)] if keyed else [])
    router.include_router(catalog.router)
    router.include_router(datasets.router)
    router.include_router(runs.router)
    return router


health_router = APIRouter(tags=["health"])


@health_router.get("/healthz", responses={503: {"description": "The database is unreachable."}})
def healthz(request: Request, session: SessionDep, backend: BackendDep) -> Any:
    """Liveness and readiness: ``status`` is ok, or unavailable when the database does not
    answer. With the API key (or when the server has none) the details too: the database's
    error and the job workers' state."""
    details = request.state.authenticated
    try:
        ping(session)
    except Exception as exc:  # any failure means not ready; say which, to those allowed
        body = {"status": "unavailable"}
        if details:
            body["database"] = str(exc)
        return JSONResponse(body, status_code=503)
    return (
        {"status": "ok", "database": "ok", "jobs": backend.describe()}
        if details
        else {"status": "ok"}
    )
