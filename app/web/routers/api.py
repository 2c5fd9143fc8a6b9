"""The JSON API under /api (its OpenAPI schema is the contract), and /healthz."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from app.config import Settings
from app.services import health
from app.web.deps import BackendDep, SessionDep, StoreDep, api_key_scheme
from app.web.routers import catalog, cv, datasets, lessons, runs, stability


def api_router(settings: Settings) -> APIRouter:
    # Declares the key in the schema (only when there is one); app.web.auth.Guard checks it.
    keyed = settings.api_key is not None
    router = APIRouter(prefix="/api", dependencies=[Depends(api_key_scheme)] if keyed else [])
    router.include_router(catalog.router)
    router.include_router(datasets.router)
    router.include_router(runs.router)
    router.include_router(cv.router)
    router.include_router(stability.router)
    router.include_router(lessons.router)
    return router


health_router = APIRouter(tags=["health"])


@health_router.get("/healthz", responses={503: {"description": "The database is unreachable."}})
def healthz(request: Request, session: SessionDep, backend: BackendDep, store: StoreDep) -> Any:
    """Liveness and readiness: the database answers, every data set's arrays are in storage
    (status "degraded" names the data sets whose arrays are lost), the data directory's disk
    has room (degraded when nearly full), and the job workers' state. Without the API key (on
    a server that has one) only the status: ok, degraded or unavailable."""
    data_dir = request.app.state.settings.data_dir
    body, status = health.report(session, backend, store, data_dir)
    if not request.state.authenticated:
        body = {"status": body["status"]}
    return JSONResponse(body, status_code=status)
