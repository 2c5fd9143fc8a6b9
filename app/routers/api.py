"""The JSON API under /api (its OpenAPI schema is the contract), and /healthz."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from ..deps import BackendDep, SessionDep, StoreDep, require_api_key
from ..services import health
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
def healthz(session: SessionDep, backend: BackendDep, store: StoreDep) -> Any:
    """Liveness and readiness: the database answers, every data set's arrays are in storage
    (status "degraded" names the data sets whose arrays are lost), and the job workers'
    state."""
    body, status = health.report(session, backend, store)
    return JSONResponse(body, status_code=status)
