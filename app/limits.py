"""Request-body limits enforced while the body streams in.

FastAPI's multipart parser would otherwise receive a whole upload before any handler could
look at its size; this middleware counts bytes as they arrive and refuses with 413 as soon as
the count passes the limit (or at once, when Content-Length already says so).
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Multipart framing and the form fields travel with the file.
FORM_OVERHEAD_BYTES = 64 * 1024


class BodyLimit:
    def __init__(
        self, app: ASGIApp, *, upload_path: str, upload_bytes: int, other_bytes: int
    ) -> None:
        self.app = app
        self.upload_path = upload_path
        self.upload_bytes = upload_bytes
        self.other_bytes = other_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] == self.upload_path:
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
            event = await receive()
            received += len(event.get("body", b""))
            if received > limit:
                # Raised inside the app: FastAPI passes HTTPExceptions from body reading on
                # to its exception handler, which answers 413.
                raise HTTPException(413, message)
            return event

        await self.app(scope, counting_receive, send)


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:g} MB" if n >= 1024 * 1024 else f"{n / 1024:g} KB"
