"""The application factory: ``uvicorn --factory app.main:create_app``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.gzip import GZipMiddleware
from sqlalchemy import Engine
from sqlmodel import Session
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.config import Settings
from app.db import make_db
from app.jobs.factory import make_backend
from app.migrations import prepare_schema
from app.services.datasets import UploadGate, sweep_orphans
from app.services.samples import seed_samples
from app.storage import ArrayStore, make_store, owner_only_files
from app.web.auth import Guard
from app.web.contract import documented_openapi, operation_id
from app.web.errors import Errors, install_handlers
from app.web.middleware import BodyLimit, Options, SecurityHeaders
from app.web.rendering import static_files, unknown_url
from app.web.routers.api import api_router, health_router
from app.web.routers.classroom import router as classroom_router
from app.web.routers.lesson_pages import router as lesson_pages_router
from app.web.routers.pages import router as pages_router
from app.web.routers.signin import router as signin_router

log = logging.getLogger(__name__)

DESCRIPTION = """\
Upload or generate data sets, run sparse feature selection on them (FoBa and its relatives),
and follow each run's trace step by step.

**Errors.** Every invalid input is a 422 in FastAPI's validation shape,
`{"detail": [{"loc": [...], "msg": "...", "type": "...", "ctx": {...}}]}`, CSV content
included (`ctx` names the column, row and value at fault). 401, 404, 409, 410 and 413 carry
`{"detail": "<message>"}`: 410 means a data set's stored arrays are lost (upload it again);
507 (the server's disk is full) and 500 (unexpected; never on purpose) add `request_id`, also
in the server's log.
A 503 with Retry-After (the database briefly busy or unreachable, or every upload slot taken)
changed nothing: send the request again after that many seconds.

**Runs** are queued (202) and executed by workers; poll the run, or its trace with
`?after=<last step seen>`. An `Idempotency-Key` header makes a repeated submit return the
first one's result. When the server has an `API_KEY`, send `Authorization: Bearer <key>`
(browsers sign in once at /signin instead).

**Choosing k** (`POST /api/cv`): K-fold cross-validation over k = 1..k_max, each fold a run
of its own (so the folds spread over the workers); poll the study until its status is final,
then read the curve and the k of each rule, and `POST /api/cv/{id}/final` runs at that k.
"""


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Open the database (schema brought to head), build the array store, store the samples,
    start the job backend; undo on shutdown."""
    settings: Settings = app.state.settings
    owner_only_files()  # the database, data files and worker processes (they inherit it)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    db = make_db(
        settings.database_url,
        settings.sqlite_busy_timeout_seconds,
        settings.statement_timeout_seconds,
    )
    try:
        revision = prepare_schema(db, migrate=settings.migrate_on_start)
    except BaseException:
        db.dispose()
        raise
    log.info("database schema at revision %s", revision)
    store = make_store(settings.storage, settings.data_dir, db)
    _sweep(db, store)
    if settings.seed_samples:
        added = seed_samples(db, store)
        log.info("stored %d sample data sets", added)
    backend = make_backend(settings, db)
    backend.start()
    app.state.db, app.state.store, app.state.backend = db, store, backend
    try:
        yield
    finally:
        backend.stop()
        db.dispose()


def _sweep(db: Engine, store: ArrayStore) -> None:
    """Arrays a crash left without their data set go; a failure here must not stop the start."""
    try:
        with Session(db) as session:
            if removed := sweep_orphans(session, store):
                log.warning("removed %d stored arrays that no data set named", removed)
    except Exception:
        log.exception("looking for stored arrays without a data set failed")


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    app = FastAPI(
        title="FoBa Lab",
        summary="Explore sparse feature selection: FoBa and its relatives, traced step by step.",
        description=DESCRIPTION,
        version="0.1.0",
        lifespan=lifespan,
        generate_unique_id_function=operation_id,
        docs_url=None,  # served by the pages from vendored Swagger UI (no CDN: works offline)
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.upload_gate = UploadGate(settings.max_parallel_uploads, settings.upload_wait_seconds)
    install_handlers(app)
    app.add_exception_handler(StarletteHTTPException, unknown_url)
    # Added innermost first: a request passes SecurityHeaders, Errors, Guard, Options,
    # BodyLimit, GZip, then the routes.
    # Chart JSON, traces and plotly.js shrink 5-10 times; small answers are sent as they are.
    app.add_middleware(GZipMiddleware, minimum_size=1024)
    app.add_middleware(
        BodyLimit,
        # File uploads: data sets, and lesson files (through the API or the /teach form).
        upload_paths=("/api/datasets", "/api/lessons/import", "/lessons/import"),
        upload_bytes=settings.max_upload_bytes,
        other_bytes=settings.max_json_kb * 1024,
        idle_seconds=settings.body_idle_seconds,
    )
    app.add_middleware(Options)
    app.add_middleware(Guard, settings=settings)
    app.add_middleware(Errors)
    app.add_middleware(SecurityHeaders)
    app.include_router(api_router(settings))
    app.include_router(health_router)
    app.include_router(signin_router)
    app.include_router(pages_router)
    app.include_router(classroom_router)
    app.include_router(lesson_pages_router)
    app.mount("/static", static_files(), name="static")
    app.openapi = documented_openapi(app, keyed=settings.api_key is not None)  # type: ignore[method-assign]
    return app
