"""Rendering of the HTML pages: the templates, their filters, and the one render helper that
serves a whole page or, to an HTMX request, only its fragment. Errors on pages are pages."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from datetime import datetime
from pathlib import Path
from typing import Any

from fastapi import Request, Response
from fastapi.exception_handlers import http_exception_handler
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Scope

from app.errors import AppError
from app.models import ACTIVE
from app.web.charts.kinds import EVENT_KINDS, kind_of
from app.web.charts.style import DASH, fmt, num

ROOT = Path(__file__).resolve().parents[2]


def asset_dir(name: str) -> Path:
    """templates/ or static/ beside the app package (a source checkout or an editable
    install), else in the working directory (the container copies them next to it)."""
    beside = ROOT / name
    return beside if beside.is_dir() else Path.cwd() / name


templates = Jinja2Templates(directory=str(asset_dir("templates")))


# --------------------------------------------------------------------------- template helpers


def _num(x: Any, digits: int = 4) -> str:
    return fmt(x, digits)


def _plain(x: Any) -> str:
    """A bound as people write it: 100,000 rather than 1e+05."""
    value = num(x)
    if value is None:
        return DASH
    return f"{int(value):,}" if value.is_integer() and abs(value) < 1e15 else f"{value:g}"


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else DASH


def _seconds(value: float | None) -> str:
    if value is None:
        return DASH
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def _duration(value: float) -> str:
    """A time left, as a person says it: '40 s', '3 min', '2 h 5 min'."""
    seconds = round(value)
    if seconds < 90:
        return f"{max(seconds, 1)} s"
    minutes = round(value / 60)
    return f"{minutes} min" if minutes < 90 else f"{minutes // 60} h {minutes % 60} min"


templates.env.filters.update(
    num=_num, plain=_plain, when=_when, seconds=_seconds, duration=_duration
)
templates.env.globals.update(
    ACTIVE=[s.value for s in ACTIVE], EVENT_KINDS=EVENT_KINDS, kind_of=kind_of
)


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


def is_htmx(request: Request, target: str | None = None) -> bool:
    """An HTMX request (aimed at the element ``target``, when given)."""
    if request.headers.get("HX-Request") != "true":
        return False
    return target is None or request.headers.get("HX-Target") == target


def render(
    request: Request,
    page: str,
    context: dict[str, Any],
    *,
    fragment: str | None = None,
    target: str | None = None,
    status_code: int = 200,
) -> Response:
    """The whole ``page``, or its ``fragment`` template when HTMX asks for it (aimed at
    ``target``, when given): one route serves both."""
    name = fragment if fragment is not None and is_htmx(request, target) else page
    return templates.TemplateResponse(request, name, context, status_code=status_code)


class StaticAssets(StaticFiles):
    """static/: the vendored libraries (versioned files that never change in place) may be
    cached for a year; our own CSS and JS are revalidated (their ETag answers 304)."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        vendored = path.startswith("vendor/")
        response.headers["Cache-Control"] = (
            "public, max-age=31536000, immutable" if vendored else "no-cache"
        )
        return response


def static_files() -> StaticAssets:
    return StaticAssets(directory=asset_dir("static"))


# Machine paths answer errors in JSON; everything else is a page a person opened.
_MACHINE_PATHS = ("/api", "/static", "/healthz", "/openapi.json")


async def unknown_url(request: Request, exc: Exception) -> Response:
    """An unknown URL opened in a browser gets the HTML 404 page; the API keeps its JSON."""
    assert isinstance(exc, StarletteHTTPException)  # the exception class it is installed for
    wants_html = "text/html" in request.headers.get("accept", "")
    if exc.status_code == 404 and wants_html and not request.url.path.startswith(_MACHINE_PATHS):
        context = {"message": f"There is no page at {request.url.path}.", "status": 404}
        return templates.TemplateResponse(request, "error.html", context, status_code=404)
    return await http_exception_handler(request, exc)
