"""The ASGI middleware every request passes, outermost last: security headers on every answer,
OPTIONS answered with the methods a resource allows, and request bodies bounded before they
are read; and the server's own answers, which never pass the app's middleware (a 400 to a
malformed request, a 500 to an exception escaping the app), carry the security headers too
(``SecureH11Protocol``, ``ServerErrors``). (Unexpected errors and the request
id: ``app.web.errors``.)"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import fastapi.routing
import h11
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

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


def set_headers(message: Message, extra: dict[str, str]) -> None:
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
                set_headers(message, SECURITY_HEADERS)
            await send(message)

        await self.app(scope, receive, send_with_headers)


class ServerErrors:
    """Around the whole ASGI app, in the server: an exception that escapes it (Starlette's
    outermost ServerErrorMiddleware re-raises what it answered; a middleware outside
    ``app.web.errors.Errors`` may raise) or an app that returns without answering would get
    uvicorn's own 500, which has none of SECURITY_HEADERS. Here that 500 is sent with them,
    and every answer that passes gets them (Starlette's plain 500 included)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = disconnected = False

        async def receive_noting() -> Message:
            nonlocal disconnected
            message = await receive()
            disconnected = disconnected or message["type"] == "http.disconnect"
            return message

        async def send_secure(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                set_headers(message, SECURITY_HEADERS)
            await send(message)

        try:
            await self.app(scope, receive_noting, send_secure)
        except Exception:
            if not started:
                await _server_error(send_secure)
            raise  # uvicorn logs it ("Exception in ASGI application") and closes the connection
        if not started and not disconnected:
            log.error("%s %s: the app returned without answering", scope["method"], scope["path"])
            await _server_error(send_secure)


SERVER_ERROR = b'{"detail":"unexpected server error (its traceback is in the server\'s log)"}'


async def _server_error(send: Send) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(SERVER_ERROR)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 500, "headers": headers})
    await send({"type": "http.response.body", "body": SERVER_ERROR})


class SecureH11Protocol(H11Protocol):
    """uvicorn's h11 protocol whose own answers carry SECURITY_HEADERS like every answer of
    the app: its 400 (a request h11 cannot parse: a bad request line, header or chunk), and
    its 500 (``ServerErrors``, around the app). Serve with ``uvicorn.run(...,
    http=SecureH11Protocol)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.app = ServerErrors(self.app)

    def send_400_response(self, msg: str) -> None:
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"connection", b"close"),
            *((name.lower().encode(), value.encode()) for name, value in SECURITY_HEADERS.items()),
        ]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=msg.encode("ascii")),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()


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


def _routes(app: object) -> list[Any]:
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


# --------------------------------------------------------------------------- body limit
# Request bodies are refused with 413 while they stream in: FastAPI's multipart parser would
# otherwise receive a whole upload before any handler could look at its size.

# Multipart framing and the form fields travel with the file.
FORM_OVERHEAD_BYTES = 64 * 1024


BODY_IDLE_SECONDS = 30.0
STALLED = (
    "the request body stopped arriving for {seconds:g} seconds; send it again (a slow "
    "connection is fine as long as the bytes keep coming)"
)


class BodyLimit:
    """413 for a body past its limit, as it streams in; 408 for a body that stops arriving
    for ``idle_seconds`` (a half-sent request)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        upload_paths: tuple[str, ...],
        upload_bytes: int,
        other_bytes: int,
        idle_seconds: float = BODY_IDLE_SECONDS,
    ) -> None:
        self.app = app
        self.upload_paths = upload_paths
        self.upload_bytes = upload_bytes
        self.other_bytes = other_bytes
        self.idle_seconds = idle_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] in self.upload_paths:
            limit = self.upload_bytes + FORM_OVERHEAD_BYTES
            message = f"uploads are limited to {_size(self.upload_bytes)} (MAX_UPLOAD_MB)"
        else:
            limit = self.other_bytes
            message = f"request bodies are limited to {_size(limit)} (MAX_JSON_KB)"
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await JSONResponse({"detail": message}, status_code=413)(scope, receive, send)
            return
        received = 0

        async def counting_receive() -> Message:
            nonlocal received
            with anyio.move_on_after(self.idle_seconds) as wait:
                event = await receive()
            if wait.cancelled_caught:
                # A client that stops sending half-way would hold the connection for good.
                raise HTTPException(408, STALLED.format(seconds=self.idle_seconds))
            received += len(event.get("body", b""))
            if received > limit:
                # Raised inside the app: FastAPI passes HTTPExceptions from body reading on
                # to its exception handler, which answers 413.
                raise HTTPException(413, message)
            return event

        await self.app(scope, counting_receive, send)


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:g} MB" if n >= 1024 * 1024 else f"{n / 1024:g} KB"
