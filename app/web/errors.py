"""How errors become answers: the handlers that turn the services' errors (``app.errors``),
FastAPI's validation errors and transient database errors into JSON, and the outermost
middleware that answers every exception nothing else handled (507 for a full disk, otherwise a
500 naming the request id) and puts a request id on every response."""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any

from fastapi import FastAPI, Request, UploadFile
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.db.transient import RETRY_AFTER_SECONDS, causes, is_disk_full, is_transient
from app.errors import AppError, Busy, json_safe
from app.ingest.words import EMPTY, LABELS, Words
from app.web.middleware import set_headers

log = logging.getLogger("app.errors")

REQUEST_ID = "X-Request-ID"
_CLIENT_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")  # a caller's own id, if it is a tame one


TOO_BIG = "a number in the request is too large: ids, offsets and counts are at most 2^63 - 1"


def _in_chain(exc: BaseException, kind: type[BaseException]) -> bool:
    return any(isinstance(cause, kind) for cause in causes(exc))


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
                set_headers(message, {REQUEST_ID: request_id})
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


async def _handle(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AppError)
    body = json_safe(exc.body())
    return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    empty = await _sent_empty(request)
    words = Words(form=request.headers.get("X-Wording") == "form")
    errors = [_short(error, empty, words) for error in exc.errors()[:MAX_ERRORS]]
    body = {"detail": json_safe(jsonable_encoder(errors))}
    return JSONResponse(body, status_code=422)


async def _sent_empty(request: Request) -> set[str]:
    """The form fields sent with an empty value (FastAPI reports them missing). The form was
    read before validation and Starlette keeps it on the request: nothing is read again."""
    content_type = request.headers.get("content-type", "")
    if not content_type.startswith(("multipart/form-data", "application/x-www-form-urlencoded")):
        return set()
    try:
        form = await request.form()
    except Exception:  # a body that did not parse: nothing was sent empty
        return set()
    return {name for name, value in form.multi_items() if value == "" or _no_file(value)}


def _no_file(value: Any) -> bool:
    """A file input with nothing chosen: browsers send no name and no bytes."""
    return isinstance(value, UploadFile) and not value.filename and not value.size


# A 422 says what is wrong; it does not send the request back (a file sent as a form field
# came back whole: up to the upload limit).
MAX_ERRORS = 20
MAX_ECHO_CHARS = 200


def _short(error: Any, empty: set[str], words: Words) -> Any:
    error = dict(error)
    if error.get("type") == "missing":
        # The input of a missing field is what holds it: the whole form, an upload's insides.
        error.pop("input", None)
        loc = list(error.get("loc") or ())
        if len(loc) == 2 and loc[0] == "body" and loc[1] in empty:
            error["type"] = "value_error"
            error["msg"] = _empty_message(str(loc[1]), words)
    if "input" in error:
        text = repr(error["input"])
        if len(text) > MAX_ECHO_CHARS:
            error["input"] = f"{text[:MAX_ECHO_CHARS]}... ({len(text)} characters)"
    error.pop("url", None)  # pydantic's documentation link: not ours to send
    return error


def _empty_message(name: str, words: Words) -> str:
    if name not in LABELS:  # a field of another form than the upload's
        return f"{name!r} is empty"
    said = EMPTY.get(name, f"{words.field(name)} is empty")
    if name == "target":
        said += "; name the column to predict (one of the file's columns)"
    return words.lead(name) + said


async def _database_busy(request: Request, exc: Exception) -> JSONResponse:
    if is_disk_full(exc) or not is_transient(exc):
        raise exc  # a full disk (507) or a bug or a broken database (500): see Errors
    busy = Busy(
        "the database is busy or briefly unreachable; nothing was changed, send the request "
        f"again in {RETRY_AFTER_SECONDS} seconds",
        retry_after=RETRY_AFTER_SECONDS,
    )
    return await _handle(request, busy)


def install_handlers(app: FastAPI) -> None:
    app.add_exception_handler(AppError, _handle)
    app.add_exception_handler(DBAPIError, _database_busy)
    app.add_exception_handler(PoolTimeout, _database_busy)
    app.add_exception_handler(RequestValidationError, _invalid_request)
