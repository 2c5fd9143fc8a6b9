"""HTML pages (Jinja2 + HTMX): home, data set, run, comparison and the teaching mode.

Routes stay thin: each asks ``services.views`` for its page's view model and renders it.
HTMX requests (``HX-Request``) get fragments. Forms post to the JSON API (/api/...) from the
browser; the pages only read (the lesson button aside, which starts a lesson's runs).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from datetime import datetime
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates

from ..deps import BackendDep, SessionDep, SettingsDep
from ..errors import AppError
from ..models import ACTIVE
from ..services import charts, lessons, views
from ..services import datasets as dataset_service
from ..services.charts import DASH

ROOT = Path(__file__).resolve().parents[2]


def asset_dir(name: str) -> Path:
    """templates/ or static/ beside the app package (a source checkout or an editable
    install), else in the working directory (the container copies them next to it)."""
    beside = ROOT / name
    return beside if beside.is_dir() else Path.cwd() / name


templates = Jinja2Templates(directory=str(asset_dir("templates")))


# --------------------------------------------------------------------------- template helpers


def _num(x: Any, digits: int = 4) -> str:
    return charts.fmt(x, digits)


def _plain(x: Any) -> str:
    """A bound as people write it: 100,000 rather than 1e+05."""
    value = charts.num(x)
    if value is None:
        return DASH
    return f"{int(value):,}" if value.is_integer() and abs(value) < 1e15 else f"{value:g}"


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else DASH


def _seconds(value: float | None) -> str:
    if value is None:
        return DASH
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


templates.env.filters.update(num=_num, plain=_plain, when=_when, seconds=_seconds)
templates.env.globals.update(ACTIVE=[s.value for s in ACTIVE])


class PageRoute(APIRoute):
    """Errors on pages are pages: a missing run or data set answers an HTML 404."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                return await handler(request)
            except AppError as exc:
                return templates.TemplateResponse(
                    request,
                    "error.html",
                    {"message": exc.message, "status": exc.status_code},
                    status_code=exc.status_code,
                )

        return route


router = APIRouter(
    route_class=PageRoute, include_in_schema=False, default_response_class=HTMLResponse
)


def is_htmx(request: Request) -> bool:
    return request.headers.get("HX-Request") == "true"


def render(request: Request, name: str, status_code: int = 200, **context: Any) -> Response:
    return templates.TemplateResponse(request, name, context, status_code=status_code)


# --------------------------------------------------------------------------- home, data sets


@router.get("/")
def home(request: Request, session: SessionDep, generator: str | None = None) -> Response:
    return render(request, "home.html", **views.home(session, generator))


@router.get("/partials/generator")
def generator_params(request: Request, generator: str) -> Response:
    return render(request, "partials/generator_params.html", **views.generator_form(generator))


@router.get("/datasets/{dataset_id}")
def dataset_page(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    dataset_id: int,
    algorithm: str | None = None,
    objective: str | None = None,
) -> Response:
    context = views.dataset_page(session, settings.data_dir, dataset_id, algorithm, objective)
    return render(request, "dataset.html", **context)


@router.get("/datasets/{dataset_id}/run-params")
def run_params(
    request: Request,
    session: SessionDep,
    dataset_id: int,
    algorithm: str | None = None,
    objective: str | None = None,
    k: str | None = None,
) -> Response:
    dataset = dataset_service.get_dataset(session, dataset_id)
    context = views.run_form(dataset, algorithm, objective, k)
    return render(request, "partials/run_params.html", **context)


# --------------------------------------------------------------------------- runs


@router.get("/runs/{run_id}")
def run_page(request: Request, session: SessionDep, settings: SettingsDep, run_id: int) -> Response:
    return render(request, "run.html", **views.run_page(session, settings.data_dir, run_id))


@router.get("/runs/{run_id}/live")
def run_live(request: Request, session: SessionDep, settings: SettingsDep, run_id: int) -> Response:
    """The polled fragment: status, progress and the charts so far; once the run has ended,
    HX-Refresh makes the browser load the full results page."""
    context = views.run_page(session, settings.data_dir, run_id)
    response = render(request, "partials/run_live.html", **context)
    if not context["live"]:
        response.headers["HX-Refresh"] = "true"
    return response


# --------------------------------------------------------------------------- comparisons


@router.get("/comparisons/{comparison_id}")
def comparison_page(request: Request, session: SessionDep, comparison_id: int) -> Response:
    return render(request, "comparison.html", **views.comparison_page(session, comparison_id))


@router.get("/comparisons/{comparison_id}/live")
def comparison_live(request: Request, session: SessionDep, comparison_id: int) -> Response:
    context = views.comparison_page(session, comparison_id)
    response = render(request, "partials/comparison_runs.html", **context)
    if not context["live"]:
        response.headers["HX-Refresh"] = "true"
    return response


@router.get("/comparisons/{comparison_id}/by-k")
def comparison_by_k(
    request: Request, session: SessionDep, settings: SettingsDep, comparison_id: int
) -> Response:
    """Loaded after the page: objective and test error against k."""
    context = views.comparison_by_k(session, settings.data_dir, comparison_id)
    return render(request, "partials/comparison_by_k.html", **context)


# --------------------------------------------------------------------------- teaching


@router.get("/teach")
def teach_index(request: Request, session: SessionDep) -> Response:
    return render(request, "teach_index.html", **views.teach_index(session))


@router.post("/teach/lessons/{key}")
def start_lesson(
    session: SessionDep, backend: BackendDep, settings: SettingsDep, key: str
) -> Response:
    lessons.start(session, backend, settings.data_dir, views.lesson(key))
    return RedirectResponse(f"/teach/lessons/{key}", status_code=303)


@router.get("/teach/lessons/{key}")
def lesson_page(request: Request, session: SessionDep, key: str) -> Response:
    name = "partials/lesson_runs.html" if is_htmx(request) else "lesson.html"
    return render(request, name, **views.lesson_page(session, key))


@router.get("/teach/{run_id}")
def teach_page(
    request: Request,
    session: SessionDep,
    run_id: int,
    step: str = "0",
    play: bool = False,
) -> Response:
    """One decision of a run (``step`` is the event's step number)."""
    context = views.teach_page(session, run_id, step, play)
    if is_htmx(request) and request.headers.get("HX-Target") == "teach-panel":
        return render(request, "partials/teach_panel.html", **context)
    return render(request, "teach.html", **context)


__all__ = ["asset_dir", "router"]
