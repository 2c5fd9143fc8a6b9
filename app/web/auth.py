"""The API key guards every route, in one place.

With ``API_KEY`` set, a request gets through when it carries the key (``Authorization: Bearer
<key>``) or a session cookie the sign-in page gave out. A cookie travels with every request the
browser makes, so a write on a cookie also needs the session's CSRF token (header
``X-CSRF-Token``, or the form field ``csrf_token``). Only the sign-in page, the static files and
/healthz are open: routes added later are guarded without knowing it. Without ``API_KEY``
nothing is checked (one user on localhost).

The cookie is ``<payload>.<signature>``: the payload (session id and issue time) signed with
HMAC-SHA256 under a secret derived from the key and a random server secret kept in the data
directory, so changing the key ends every session and a cookie reveals nothing about the key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, quote

from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import Settings

COOKIE = "foba_session"
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf_token"
SIGN_IN = "/signin"
# Open without credentials: the sign-in page, static files, and health (which then says less).
OPEN_PATHS = (SIGN_IN, "/healthz")
OPEN_PREFIXES = ("/static/",)
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
SECRET_FILE = "session-secret"
FORM_LIMIT_BYTES = 64 * 1024  # a form a page posts (a CSRF token, a key) is far smaller
UNAUTHORIZED = "this server requires its API key: send 'Authorization: Bearer <API_KEY>'"


# --------------------------------------------------------------------------- signed sessions


@dataclass(frozen=True)
class SessionKeys:
    """Issues and checks session cookies and their CSRF tokens."""

    api_key: bytes
    secret: bytes
    max_age: float

    def key_matches(self, given: str) -> bool:
        return hmac.compare_digest(given.encode(), self.api_key)

    def issue(self) -> str:
        payload = json.dumps({"sid": secrets.token_urlsafe(16), "iat": int(time.time())})
        body = base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")
        return f"{body}.{self._sign(body)}"

    def session_id(self, cookie: str) -> str | None:
        """The session a cookie names, if its signature holds and it has not expired."""
        body, _, signature = cookie.partition(".")
        if not body or not hmac.compare_digest(signature, self._sign(body)):
            return None
        try:
            payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
            sid, issued = str(payload["sid"]), float(payload["iat"])
        except (ValueError, KeyError, TypeError):
            return None
        return sid if 0 <= time.time() - issued <= self.max_age else None

    def csrf_token(self, sid: str) -> str:
        return self._sign("csrf:" + sid)

    def _sign(self, text: str) -> str:
        return hmac.new(self.secret, text.encode(), hashlib.sha256).hexdigest()


def server_secret(settings: Settings) -> bytes:
    """SESSION_SECRET, else a random secret kept (owner-only) in the data directory, created
    once and shared by every process that serves the same data."""
    if settings.session_secret is not None:
        return settings.session_secret.get_secret_value().encode()
    path = settings.data_dir / SECRET_FILE
    if not path.exists():
        _create_secret(path)
    return path.read_bytes()


def _create_secret(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(secrets.token_hex(32))
    try:
        os.link(partial, path)  # atomic; another process may have won the race
    except FileExistsError:
        pass
    finally:
        partial.unlink()


def session_keys(settings: Settings) -> SessionKeys | None:
    if settings.api_key is None:
        return None
    key = settings.api_key.get_secret_value().encode()
    secret = hmac.new(server_secret(settings), key, hashlib.sha256).digest()
    return SessionKeys(key, secret, settings.session_hours * 3600)


# --------------------------------------------------------------------------- the guard


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}


def _cookie(headers: dict[str, str]) -> str:
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return value
    return ""


def _bearer(headers: dict[str, str]) -> str | None:
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def _wants_page(scope: Scope, headers: dict[str, str]) -> bool:
    """A person's browser opening a page (rather than a script or HTMX asking for data)."""
    path = scope["path"]
    machine = path.startswith("/api") or path == "/openapi.json" or "hx-request" in headers
    return not machine and "text/html" in headers.get("accept", "")


class Guard:
    """ASGI middleware: the one check every request passes. It records on the request's
    state whether it was authenticated (``authenticated``) and the CSRF token pages embed
    (``csrf_token``, empty without a key)."""

    def __init__(self, app: ASGIApp, *, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self._keys: SessionKeys | None = None

    @property
    def keys(self) -> SessionKeys | None:
        # Built at the first request: the data directory exists by then (lifespan).
        if self._keys is None and self.settings.api_key is not None:
            self._keys = session_keys(self.settings)
        return self._keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        keys = self.keys
        if keys is None:
            state.update(authenticated=True, csrf_token="", signed_in=False)
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        bearer = _bearer(headers)
        sid = keys.session_id(_cookie(headers))
        by_key = bearer is not None and keys.key_matches(bearer)
        state.update(
            authenticated=by_key or sid is not None,
            csrf_token=keys.csrf_token(sid) if sid else "",
            signed_in=sid is not None,
            session_keys=keys,
        )
        path = scope["path"]
        if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            await self.app(scope, receive, send)
            return
        if not (by_key or sid):
            await self._refuse(scope, headers)(scope, receive, send)
            return
        if by_key or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        # A write on the cookie alone: it must prove it came from one of our pages.
        assert sid is not None  # a request with neither key nor session was refused above
        expected = keys.csrf_token(sid)
        given = headers.get(CSRF_HEADER)
        replay = None
        if given is None and _is_form(headers):
            try:
                given, replay = await _form_token(receive)
            except _FormTooLarge:
                message = f"forms are limited to {FORM_LIMIT_BYTES // 1024} KB"
                await JSONResponse({"detail": message}, status_code=413)(scope, receive, send)
                return
        if given is None or not hmac.compare_digest(given, expected):
            await JSONResponse(
                {"detail": "missing or wrong CSRF token: reload the page and try again"},
                status_code=403,
            )(scope, receive, send)
            return
        await self.app(scope, replay or receive, send)

    def _refuse(self, scope: Scope, headers: dict[str, str]) -> Response:
        query = scope["query_string"].decode("latin-1")
        target = scope["path"] + (f"?{query}" if query else "")
        sign_in = f"{SIGN_IN}?next={quote(target, safe='')}"
        if _wants_page(scope, headers):
            return RedirectResponse(sign_in, status_code=303)
        extra = {"HX-Redirect": sign_in} if "hx-request" in headers else {}
        return JSONResponse(
            {"detail": UNAUTHORIZED},
            status_code=401,
            headers={"WWW-Authenticate": "Bearer", **extra},
        )


def _is_form(headers: dict[str, str]) -> bool:
    return headers.get("content-type", "").startswith("application/x-www-form-urlencoded")


class _FormTooLarge(Exception):
    pass


async def _form_token(receive: Receive) -> tuple[str | None, Receive]:
    """The form's csrf_token, and a ``receive`` that hands the read body on to the route.
    Forms posted by pages are a few bytes; the guard reads before BodyLimit, so it bounds
    what it reads itself."""
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > FORM_LIMIT_BYTES:
            raise _FormTooLarge
        more = message.get("more_body", False)
    body = b"".join(chunks)
    values = parse_qs(body.decode("latin-1")).get(CSRF_FIELD)
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return (values[0] if values else None), replay
