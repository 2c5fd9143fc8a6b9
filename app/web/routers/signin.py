"""Sign-in and sign-out pages (only when the server has an API_KEY; see ``app.web.auth``)."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Form, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse

from app.web.auth import COOKIE, SIGN_IN, client_of, new_session_id, too_many_keys
from app.web.rendering import render

router = APIRouter(include_in_schema=False, default_response_class=HTMLResponse)

# A wrong key costs the guesser this long (the event loop stays free meanwhile).
WRONG_KEY_DELAY_SECONDS = 0.5


def _safe_next(target: str | None) -> str:
    """Only a path of this site: never another host (``//host``, ``/\\host``, a scheme)."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return "/"
    return target


@router.get(SIGN_IN)
def sign_in_page(request: Request, next: str | None = None) -> Response:
    if request.app.state.settings.api_key is None:
        return RedirectResponse("/", status_code=303)
    return render(request, "signin.html", {"next": _safe_next(next), "error": None})


@router.post(SIGN_IN)
async def sign_in(
    request: Request,
    key: Annotated[str, Form(max_length=4096)] = "",
    next: Annotated[str, Form(max_length=4096)] = "/",
) -> Response:
    keys = getattr(request.state, "session_keys", None)
    if keys is None:
        return RedirectResponse("/", status_code=303)
    throttle, client = request.state.throttle, client_of(request.scope)
    if wait := throttle.wait_seconds(client):
        return too_many_keys(wait)
    if not keys.key_matches(key):
        throttle.failed(client)
        await asyncio.sleep(WRONG_KEY_DELAY_SECONDS)
        context = {"next": _safe_next(next), "error": "That is not this server's key."}
        return render(request, "signin.html", context, status_code=401)
    sid = new_session_id()
    await run_in_threadpool(request.state.sessions.add, request.app.state.db, sid)
    response = RedirectResponse(_safe_next(next), status_code=303)
    response.set_cookie(
        COOKIE,
        keys.issue(sid),
        max_age=int(keys.max_age),
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


@router.post("/signout")
def sign_out(request: Request) -> Response:
    """End the session on the server and in this browser (the guard checked its CSRF token):
    a copy of the cookie no longer works either."""
    sid = getattr(request.state, "session_id", None)
    if sid is not None:
        request.state.sessions.revoke(request.app.state.db, sid)
    response = RedirectResponse(SIGN_IN, status_code=303)
    response.delete_cookie(
        COOKIE, path="/", httponly=True, samesite="strict", secure=request.url.scheme == "https"
    )
    return response
