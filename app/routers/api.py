"""The JSON API under /api (its OpenAPI schema is the contract), and /healthz."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from ..db import ping
from ..deps import BackendDep, SessionDep, require_api_key
from . import catalog, cv, datasets, runs


def api_router() -> APIRouter:
    router = APIRouter(prefix="/api", dependencies=[Depends(require_api_key)])
    router.include_router(catalog.router)
    router.include_router(datasets.router)
    router.include_router(runs.router)
    router.include_router(cv.router)
    return router


health_router = APIRouter(tags=["health"])


@health_router.get("/healthz", responses={503: {"description": "The database is unreachable."}})
def healthz(session: SessionDep, backend: BackendDep) -> Any:
    """Liveness and readiness: the database answers, and the job workers' state."""
    try:
        ping(session)
    except Exception as exc:  # any failure means not ready; say which
        return JSONResponse({"status": "unavailable", "database": str(exc)}, status_code=503)
    return {"status": "ok", "database": "ok", "jobs": backend.describe()}
