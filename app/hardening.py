"""Middleware every response passes: security headers, a request id, unexpected errors turned
into JSON answers (the connection stays usable), a full disk into 507, and OPTIONS answered
with the methods a resource allows."""

from __future__ import annotations

import errno
import logging
import re
import uuid
from collections.abc import Iterator

import fastapi.routing
from starlette.datastructures import MutableHeaders
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("app.errors")

# Only our own origin. Plotly and Swagger UI set inline styles (style attributes and <style>
# elements they create), hence 'unsafe-inline' for styles only; images include data: URIs
# (the favicon, Swagger UI's icons) and blob: (Plotly's "download plot" image).
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}
REQUEST_ID = "X-Request-ID"
_CLIENT_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")  # a caller's own id, if it is a tame one
DISK_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}


def _set_headers(message: Message, extra: dict[str, str]) -> None:
    headers = MutableHeaders(scope=message)
    for name, value in extra.items():
        headers.setdefault(name, value)


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                _set_headers(message, SECURITY_HEADERS)
            await send(message)

        await self.app(scope, receive, send_with_headers)


TOO_BIG = "a number in the request is too large: ids, offsets and counts are at most 2^63 - 1"


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, then what it wraps (a DBAPI error's ``orig``) or was raised from, in turn."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = getattr(current, "orig", None) or current.__cause__ or current.__context__


def _in_chain(exc: BaseException, kind: type[BaseException]) -> bool:
    return any(isinstance(cause, kind) for cause in _causes(exc))


def _says_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
        return True
    text = str(exc).lower()
    return (
        "database or disk is full" in text
        or "no space left on device" in text
        or type(exc).__name__ == "DiskFull"  # psycopg's SQLSTATE 53100
    )


def is_disk_full(exc: BaseException) -> bool:
    """The disk (or the database's) is full, wherever in the chain of causes it was said."""
    return any(_says_disk_full(cause) for cause in _causes(exc))


class Errors:
    """A request id on every response (the caller's X-Request-ID, if tame, else a new one),
    and an answer to every exception nothing else handled: 507 for a full disk, otherwise a
    JSON 500 naming the request id, which the log names too. The exception is not passed on:
    the server would drop the keep-alive connection."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(REQUEST_ID.lower().encode(), b"").decode("latin-1")
        request_id = given if _CLIENT_ID.fullmatch(given) else uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = request_id
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                _set_headers(message, {REQUEST_ID: request_id})
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:
            if started:  # part of an answer went out: nothing sensible can follow it
                log.exception("request %s failed while answering", request_id)
                raise
            response = self._answer(scope, exc, request_id)
            await response(scope, receive, send_with_id)

    @staticmethod
    def _answer(scope: Scope, exc: Exception, request_id: str) -> Response:
        where = f"{scope['method']} {scope['path']}"
        if _in_chain(exc, OverflowError):
            # A number no database column holds reached a query: a route that does not bound
            # its integers yet (the routes here do, see deps.Id); still the client's mistake.
            log.warning("request %s (%s): an unbounded integer reached a query", request_id, where)
            problem = {"type": "value_error", "loc": ["request"], "msg": TOO_BIG}
            return JSONResponse({"detail": [problem]}, status_code=422)
        if is_disk_full(exc):
            log.error("request %s (%s): disk full: %s", request_id, where, exc)
            detail = (
                "the server's disk is full: nothing was stored; try again once space is freed "
                f"(request id {request_id})"
            )
            return JSONResponse({"detail": detail, "request_id": request_id}, status_code=507)
        log.exception("request %s (%s): unexpected error", request_id, where)
        detail = f"unexpected server error; its request id is {request_id} (also in the log)"
        return JSONResponse({"detail": detail, "request_id": request_id}, status_code=500)


class Options:
    """OPTIONS on a route's path answers 204 with ``Allow``: every method its routes take. A
    405 names them all too (the router's own names only the first route that matched)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        methods = allowed_methods(scope)
        method = scope["method"]
        if methods and (method == "OPTIONS" or method not in methods | {"HEAD"}):
            # OPTIONS, or a method no route at this very path takes (GET on POST-only
            # /api/datasets/generate would otherwise reach GET /api/datasets/{dataset_id}).
            allow = ", ".join(sorted(methods))
            status = 204 if method == "OPTIONS" else 405
            body = None if status == 204 else {"detail": f"{method} is not allowed here"}
            response = Response(status_code=204) if body is None else JSONResponse(body, 405)
            response.headers["Allow"] = allow
            await response(scope, receive, send)
            return

        async def send_allow(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 405 and methods:
                MutableHeaders(scope=message)["Allow"] = ", ".join(sorted(methods))
            await send(message)

        await self.app(scope, receive, send_allow)


def _routes(app: object) -> list[object]:
    """Every route with its full path, methods and path_regex (FastAPI >= 0.120 keeps
    included routers whole; older versions list their routes flat)."""
    flatten = getattr(fastapi.routing, "iter_route_contexts", None)
    routes = getattr(app, "routes", [])
    return list(flatten(routes)) if flatten else list(routes)


def allowed_methods(scope: Scope) -> set[str]:
    """The methods the routes at this path take (static files aside). A route whose path is
    this very path hides those that only match it through a parameter (POST
    /api/datasets/generate, not GET /api/datasets/{dataset_id})."""
    path = scope["path"]
    matched = [
        (route.methods, "{" not in route.path)
        for route in _routes(scope.get("app"))
        if getattr(route, "methods", None) and route.path_regex.match(path)
    ]
    literal = any(exact for _, exact in matched)
    methods = {m for found, exact in matched if exact or not literal for m in found}
    return methods | {"OPTIONS"} if methods else methods
