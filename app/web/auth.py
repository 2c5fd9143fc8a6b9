"""Who may ask what, checked in one place for every request.

Always: the Host header must name this server (``ALLOWED_HOSTS``), so that a web page cannot
reach it through DNS rebinding; a write that a browser sends from another site (``Origin`` or
``Sec-Fetch-Site`` say so) is refused, key or no key, so no page the user visits can plant a
data set; and a client that sends wrong API keys is slowed to ``FAILED_KEYS_PER_MINUTE``.


With ``API_KEY`` set, a request gets through when it carries the key (``Authorization: Bearer
<key>``) or a session cookie the sign-in page gave out. A cookie travels with every request the
browser makes, so a write on a cookie also needs the session's CSRF token (header
``X-CSRF-Token``, or the form field ``csrf_token``). Only the sign-in page, the static files and
/healthz are open: routes added later are guarded without knowing it. Without ``API_KEY``
nothing is checked (one user on localhost).

The cookie is ``<payload>.<signature>``: the payload (session id and issue time) signed with
HMAC-SHA256 under a secret derived from the key and a random server secret kept in the data
directory, so changing the key ends every session and a cookie reveals nothing about the key.
A session also lives on the server (``app.models.WebSession``): signing out deletes it, so a
copied cookie stops working at once. Answers to authenticated requests are not cached.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import anyio.to_thread
from sqlalchemy import Engine, delete
from sqlmodel import Session, col
from starlette.datastructures import MutableHeaders
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import Settings
from app.models import WebSession, utcnow

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
CROSS_SITE = (
    "a write from another site's page is refused: send it from this server's own pages, or "
    "from a script (no Origin header) with the API key"
)
SESSION_CACHE_SECONDS = 2.0  # how long another process may still accept a signed-out cookie
TRACKED_CLIENTS = 10_000  # the failed-key counter forgets the quietest clients beyond this


# --------------------------------------------------------------------------- signed sessions


@dataclass(frozen=True)
class SessionKeys:
    """Issues and checks session cookies and their CSRF tokens."""

    api_key: bytes
    secret: bytes
    max_age: float

    def key_matches(self, given: str) -> bool:
        return hmac.compare_digest(given.encode(), self.api_key)

    def issue(self, sid: str) -> str:
        """The cookie of session ``sid`` (``new_session_id()``; registered by the caller)."""
        payload = json.dumps({"sid": sid, "iat": int(time.time())})
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


def new_session_id() -> str:
    return secrets.token_urlsafe(16)


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


@dataclass
class SessionRegistry:
    """Sessions the server gave out, in the database; a short in-process cache spares a query
    per request (another process sees a sign-out within ``SESSION_CACHE_SECONDS``)."""

    max_age: float
    _recent: dict[str, float] = field(default_factory=dict)

    def add(self, db: Engine, sid: str) -> None:
        oldest = utcnow() - timedelta(seconds=self.max_age)
        with Session(db) as session:
            session.execute(delete(WebSession).where(col(WebSession.issued_at) < oldest))
            session.add(WebSession(sid=sid))
            session.commit()

    def revoke(self, db: Engine, sid: str) -> None:
        self._recent.pop(sid, None)
        with Session(db) as session:
            session.execute(delete(WebSession).where(col(WebSession.sid) == sid))
            session.commit()

    async def alive(self, db: Engine, sid: str) -> bool:
        now = time.monotonic()
        if self._recent.get(sid, 0.0) > now:
            return True
        found = await anyio.to_thread.run_sync(self._lookup, db, sid)
        if found:
            if len(self._recent) > TRACKED_CLIENTS:
                self._recent.clear()
            self._recent[sid] = now + SESSION_CACHE_SECONDS
        return found

    @staticmethod
    def _lookup(db: Engine, sid: str) -> bool:
        with Session(db) as session:
            return session.get(WebSession, sid) is not None


@dataclass
class KeyThrottle:
    """Wrong keys per client in the last minute; past the limit a client is told to wait."""

    per_minute: int
    _failures: OrderedDict[str, deque[float]] = field(default_factory=OrderedDict)

    def wait_seconds(self, client: str) -> float:
        """0 when the client may try a key now, else how long until it may."""
        times = self._recent(client)
        if len(times) < self.per_minute:
            return 0.0
        return max(0.0, times[0] + 60.0 - time.monotonic())

    def failed(self, client: str) -> None:
        self._recent(client).append(time.monotonic())
        self._failures.move_to_end(client)
        while len(self._failures) > TRACKED_CLIENTS:
            self._failures.popitem(last=False)

    def _recent(self, client: str) -> deque[float]:
        times = self._failures.setdefault(client, deque())
        while times and times[0] < time.monotonic() - 60.0:
            times.popleft()
        return times


def client_of(scope: Scope) -> str:
    client = scope.get("client")
    return client[0] if client else "unknown"


def too_many_keys(wait: float) -> JSONResponse:
    seconds = max(1, round(wait))
    return JSONResponse(
        {"detail": f"too many wrong keys from this client; try again in {seconds} seconds"},
        status_code=429,
        headers={"Retry-After": str(seconds)},
    )


def _host_refused(scope: Scope, headers: dict[str, str], names: frozenset[str] | None) -> bool:
    if names is None:
        return False
    host = headers.get("host", "")
    try:
        name = urlsplit(f"//{host}").hostname or ""
    except ValueError:  # "[::1" (an unclosed IPv6 literal): no name at all, refused
        return True
    return name.lower() not in names


def _cross_site(scope: Scope, headers: dict[str, str]) -> bool:
    """A browser says this write comes from another site's page."""
    if scope["method"] in SAFE_METHODS:
        return False
    if headers.get("sec-fetch-site") in ("cross-site", "same-site"):
        return True
    origin = headers.get("origin")
    if origin is None:
        return False  # not a browser's cross-origin request (browsers send Origin on those)
    try:
        netloc = urlsplit(origin).netloc
    except ValueError:  # an unparsable Origin ("http://[::1") is no page of this site
        return True
    return origin == "null" or netloc.lower() != headers.get("host", "").lower()


# --------------------------------------------------------------------------- class students
# Students of a class session join on their phones without an account. Exactly these routes
# are open to them when API_KEY is set (read the question, vote); each checks the student's
# cookie, which is bound to one session's code, so it opens nothing else. A vote also needs
# the token the page embeds (CSRF), and votes are rate-limited per student.

STUDENT_COOKIE = "foba_student"
STUDENT_PATHS = re.compile(r"^/join$|^/c/[A-Za-z0-9]{1,12}(/question|/vote)?$")
VOTES_PER_MINUTE = 30


@dataclass
class StudentPasses:
    """Signs and checks students' cookies (``<code>.<token>.<signature>``) and vote tokens,
    under the server secret (no API key needed: the default set-up has none)."""

    secret: bytes
    votes_per_minute: int = VOTES_PER_MINUTE
    _votes: OrderedDict[str, deque[float]] = field(default_factory=OrderedDict)

    def issue(self, code: str) -> tuple[str, str]:
        """A new student's (cookie, token) for the session ``code``."""
        token = secrets.token_urlsafe(12)
        return f"{code}.{token}.{self._sign('student:' + code + ':' + token)}", token

    def token(self, cookie: str, code: str) -> str | None:
        """The student's token when the cookie was given out for the session ``code``."""
        parts = cookie.split(".")
        if len(parts) != 3 or parts[0] != code:
            return None
        expected = self._sign("student:" + code + ":" + parts[1])
        return parts[1] if hmac.compare_digest(parts[2], expected) else None

    def csrf(self, token: str) -> str:
        return self._sign("vote:" + token)

    def csrf_ok(self, token: str, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given, self.csrf(token))

    def may_vote(self, token: str) -> bool:
        """False past ``votes_per_minute`` votes of this student in the last minute."""
        now = time.monotonic()
        times = self._votes.setdefault(token, deque())
        self._votes.move_to_end(token)
        while times and times[0] < now - 60.0:
            times.popleft()
        if len(times) >= self.votes_per_minute:
            return False
        times.append(now)
        while len(self._votes) > TRACKED_CLIENTS:
            self._votes.popitem(last=False)
        return True

    def _sign(self, text: str) -> str:
        return hmac.new(self.secret, text.encode(), hashlib.sha256).hexdigest()[:32]


def student_passes(settings: Settings) -> StudentPasses:
    return StudentPasses(hmac.new(server_secret(settings), b"students", hashlib.sha256).digest())


def student_cookie(headers: dict[str, str]) -> str:
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == STUDENT_COOKIE:
            return value
    return ""


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
        self.hosts = settings.host_names()
        self.sessions = SessionRegistry(settings.session_hours * 3600)
        self.throttle = KeyThrottle(settings.failed_keys_per_minute)
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
        headers = _headers(scope)
        if _host_refused(scope, headers, self.hosts):
            host = headers.get("host", "")[:100]
            message = (
                f"this server does not answer to the host {host!r}; open it by one of its "
                "names (ALLOWED_HOSTS)"
            )
            await JSONResponse({"detail": message}, status_code=400)(scope, receive, send)
            return
        keys = self.keys
        bearer = _bearer(headers) if keys is not None else None
        by_key = bearer is not None and keys is not None and keys.key_matches(bearer)
        if _cross_site(scope, headers) and not by_key:
            await JSONResponse({"detail": CROSS_SITE}, status_code=403)(scope, receive, send)
            return
        if keys is None:
            state.update(authenticated=True, csrf_token="", signed_in=False)
            await self.app(scope, receive, send)
            return
        client = client_of(scope)
        if bearer is not None and not by_key:
            if wait := self.throttle.wait_seconds(client):
                await too_many_keys(wait)(scope, receive, send)
                return
            self.throttle.failed(client)
        sid = keys.session_id(_cookie(headers))
        if sid is not None and not await self.sessions.alive(scope["app"].state.db, sid):
            sid = None  # signed out (or never given out by this server's database)
        state.update(
            authenticated=by_key or sid is not None,
            csrf_token=keys.csrf_token(sid) if sid else "",
            signed_in=sid is not None,
            session_id=sid,
            session_keys=keys,
            sessions=self.sessions,
            throttle=self.throttle,
        )
        path = scope["path"]
        if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            await self.app(scope, receive, send)
            return
        if STUDENT_PATHS.match(path) and not (by_key or sid):
            # A class's student: these routes check the student's cookie and vote token.
            await self.app(scope, receive, _not_cached(send))
            return
        if not (by_key or sid):
            await self._refuse(scope, headers)(scope, receive, send)
            return
        send = _not_cached(send)
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


def _not_cached(send: Send) -> Send:
    """Answers to authenticated requests stay out of shared and browser caches."""

    async def send_no_store(message: Message) -> None:
        if message["type"] == "http.response.start":
            MutableHeaders(scope=message)["Cache-Control"] = "no-store"
        await send(message)

    return send_no_store


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
