"""An ASGI app for tests/app/test_server_500.py: what escapes an app, served by a real uvicorn
with app.web.middleware.SecureH11Protocol. The app's own routes cannot be made to raise past
app.web.errors.Errors, so this one does it on purpose:

- ``/raise``: an exception escapes the app (uvicorn would answer its own 500);
- ``/silent``: the app returns without answering (uvicorn's 500 again);
- ``/starlette-raise``: a middleware inside Starlette raises; Starlette's outermost
  ServerErrorMiddleware answers its plain 500 itself, outside any middleware of the app's.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send


class Raising:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/starlette-raise":
            raise RuntimeError("a middleware failed")
        await self.app(scope, receive, send)


async def healthz(_request: object) -> PlainTextResponse:
    return PlainTextResponse("ok")


inner = Starlette(routes=[Route("/healthz", healthz)], middleware=[Middleware(Raising)])


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "http" and scope["path"] == "/raise":
        raise RuntimeError("an exception escaped the app")
    if scope["type"] == "http" and scope["path"] == "/silent":
        return
    await inner(scope, receive, send)
