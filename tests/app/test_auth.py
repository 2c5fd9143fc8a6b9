"""With API_KEY set the key protects everything: every route but sign-in, static files and
/healthz needs the key (Bearer) or a signed session cookie, and a write on the cookie needs the
session's CSRF token. Without API_KEY nothing changes."""

from __future__ import annotations

import re

import pytest
from app_helpers import regression_csv
from service_helpers import make_settings, serve

from app.web.auth import COOKIE, new_session_id, session_keys

KEY = "s3cret-key"
BEARER = {"Authorization": f"Bearer {KEY}"}
PAGE = {"Accept": "text/html"}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("keyed") / "data"
    with serve(make_settings(data_dir, api_key=KEY)) as client:
        generated = client.post(
            "/api/datasets/generate", json={"generator": "zhang2008"}, headers=BEARER
        )
        assert generated.status_code == 201, generated.text
        client.dataset_id = generated.json()["id"]
        yield client


def sign_in(client) -> str:
    """Sign in through the page; the CSRF token the pages then carry."""
    response = client.post("/signin", data={"key": KEY, "next": "/"}, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/"
    page = client.get("/", headers=PAGE)
    return re.search(r'<meta name="csrf-token" content="([0-9a-f]+)">', page.text).group(1)


@pytest.fixture
def signed_in(keyed):
    token = sign_in(keyed)
    yield keyed, token
    keyed.cookies.clear()


def user_data_urls(dataset_id: int) -> list[str]:
    """Pages, previews, results, traces, exports, figures, docs and the schema."""
    return [
        "/",
        f"/datasets/{dataset_id}",
        f"/datasets/{dataset_id}/run-params",
        "/runs/1",
        "/runs/1/figures",
        "/teach",
        "/teach/1",
        "/teach/lessons/forward",
        "/comparisons/1",
        "/docs",
        "/openapi.json",
        "/api/datasets",
        f"/api/datasets/{dataset_id}/preview",
        "/api/runs/1/trace",
        "/api/runs/1/export",
        "/no-such-page",  # even what does not exist: routes added later are covered
    ]


def test_nothing_is_open_without_the_key(keyed) -> None:
    for url in user_data_urls(keyed.dataset_id):
        response = keyed.get(url, follow_redirects=False)
        assert response.status_code == 401, url
        assert response.headers["www-authenticate"] == "Bearer"
        assert "API key" in response.json()["detail"]
        assert str(keyed.dataset_id) not in response.text or "preview" in url


def test_a_page_without_a_session_redirects_to_sign_in(keyed) -> None:
    response = keyed.get(f"/datasets/{keyed.dataset_id}?x=1", headers=PAGE, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == f"/signin?next=%2Fdatasets%2F{keyed.dataset_id}%3Fx%3D1"
    htmx = keyed.get("/teach", headers={**PAGE, "HX-Request": "true"}, follow_redirects=False)
    assert htmx.status_code == 401 and htmx.headers["hx-redirect"].startswith("/signin")


def test_writes_without_the_key_change_nothing(keyed) -> None:
    before = keyed.get("/api/datasets", headers=BEARER).json()
    files = {"file": ("d.csv", regression_csv().encode(), "text/csv")}
    writes = [
        keyed.post("/api/datasets", files=files, data={"target": "y"}),
        keyed.post("/api/datasets/generate", json={"generator": "zhang2008"}),
        keyed.post("/api/runs", json={"dataset_id": keyed.dataset_id, "algorithm": "omp"}),
        keyed.post("/teach/lessons/forward", data={"csrf_token": "x"}),
        keyed.delete(f"/api/datasets/{keyed.dataset_id}"),
    ]
    assert [w.status_code for w in writes] == [401] * len(writes)
    assert keyed.get("/api/datasets", headers=BEARER).json() == before


def test_the_key_opens_every_route(keyed) -> None:
    for url in ("/", "/docs", "/openapi.json", f"/api/datasets/{keyed.dataset_id}/preview"):
        assert keyed.get(url, headers=BEARER).status_code == 200, url
    for wrong in ("Bearer nope", f"Basic {KEY}", KEY, f"Bearer {KEY}x"):
        assert keyed.get("/api/datasets", headers={"Authorization": wrong}).status_code == 401


def test_sign_in_page_is_open_and_a_wrong_key_is_refused(keyed) -> None:
    page = keyed.get("/signin?next=/teach")
    assert page.status_code == 200 and 'type="password"' in page.text
    assert 'name="next" value="/teach"' in page.text
    assert 'href="/runs"' not in page.text  # no links to pages that would send it back here
    wrong = keyed.post("/signin", data={"key": "guess", "next": "/"}, follow_redirects=False)
    assert wrong.status_code == 401 and "not this server" in wrong.text
    assert COOKIE not in wrong.headers.get("set-cookie", "")


@pytest.mark.parametrize("target", ["//evil.example/x", "https://evil.example", "/\\evil", ""])
def test_sign_in_never_sends_the_browser_elsewhere(keyed, target) -> None:
    response = keyed.post("/signin", data={"key": KEY, "next": target}, follow_redirects=False)
    assert response.headers["location"] == "/"
    keyed.cookies.clear()


def test_session_cookie_is_signed_httponly_strict(keyed) -> None:
    response = keyed.post("/signin", data={"key": KEY}, follow_redirects=False)
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # plain http here; https requests get Secure
    value = keyed.cookies[COOKIE]
    assert KEY not in value
    keyed.cookies.clear()
    body, _, signature = value.partition(".")
    forged = f"{body}.{'0' * len(signature)}"
    keyed.cookies.set(COOKIE, forged)
    assert keyed.get("/api/datasets").status_code == 401
    keyed.cookies.clear()


def test_secure_cookie_over_https(keyed) -> None:
    response = keyed.post("https://testserver/signin", data={"key": KEY}, follow_redirects=False)
    assert "Secure" in response.headers["set-cookie"]
    keyed.cookies.clear()


def test_expired_or_rekeyed_sessions_are_refused(tmp_path) -> None:
    settings = make_settings(tmp_path / "data", api_key=KEY, session_hours=1)
    keys = session_keys(settings)
    cookie = keys.issue(new_session_id())
    assert keys.session_id(cookie) is not None
    assert (tmp_path / "data" / "session-secret").stat().st_mode & 0o777 == 0o600
    other = session_keys(make_settings(tmp_path / "data", api_key="another key"))
    assert other.session_id(cookie) is None  # a new key ends every session
    old = type(keys)(keys.api_key, keys.secret, max_age=-1)
    assert old.session_id(cookie) is None
    assert keys.session_id("garbage") is None and keys.session_id("a.b") is None


def test_session_reads_but_writes_need_the_csrf_token(signed_in) -> None:
    client, token = signed_in
    assert client.get(f"/api/datasets/{client.dataset_id}").status_code == 200
    assert client.get(f"/datasets/{client.dataset_id}", headers=PAGE).status_code == 200
    body = {"generator": "zhang2008"}
    no_token = client.post("/api/datasets/generate", json=body)
    assert no_token.status_code == 403 and "CSRF" in no_token.json()["detail"]
    wrong = client.post("/api/datasets/generate", json=body, headers={"X-CSRF-Token": "0" * 64})
    assert wrong.status_code == 403
    ok = client.post("/api/datasets/generate", json=body, headers={"X-CSRF-Token": token})
    assert ok.status_code == 201
    client.delete(ok.json()["url"], headers={"X-CSRF-Token": token})


def test_html_forms_carry_the_token(signed_in) -> None:
    client, token = signed_in
    page = client.get("/teach", headers=PAGE).text
    assert f'name="csrf_token" value="{token}"' in page  # lesson buttons and sign-out
    assert f'hx-headers=\'{{"X-CSRF-Token": "{token}"}}\'' in page
    refused = client.post("/teach/lessons/forward", data={"csrf_token": "bad"})
    assert refused.status_code == 403


def test_sign_out_ends_the_session_in_this_browser(signed_in) -> None:
    client, token = signed_in
    assert client.post("/signout", follow_redirects=False).status_code == 403  # CSRF
    out = client.post("/signout", data={"csrf_token": token}, follow_redirects=False)
    assert out.status_code == 303 and out.headers["location"] == "/signin"
    assert "Max-Age=0" in out.headers["set-cookie"]
    assert client.get("/", headers=PAGE, follow_redirects=False).status_code == 303


def test_healthz_says_only_ok_without_credentials(keyed) -> None:
    assert keyed.get("/healthz").json() == {"status": "ok"}
    detailed = keyed.get("/healthz", headers=BEARER).json()
    assert detailed["database"] == "ok" and "pids" in detailed["jobs"]


def test_schema_declares_security_only_with_a_key(keyed, client) -> None:
    keyed_schema = keyed.get("/openapi.json", headers=BEARER).json()
    assert keyed_schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    listing = keyed_schema["paths"]["/api/datasets"]["get"]
    assert listing["security"] == [{"HTTPBearer": []}] and "401" in listing["responses"]
    open_schema = client.get("/openapi.json").json()
    assert "securitySchemes" not in open_schema.get("components", {})
    assert "401" not in open_schema["paths"]["/api/datasets"]["get"]["responses"]


def test_without_a_key_nothing_changes(client) -> None:
    assert client.get("/", headers=PAGE).status_code == 200
    page = client.get("/teach", headers=PAGE).text
    assert "csrf-token" not in page and "Sign out" not in page
    assert client.post("/api/datasets/generate", json={"generator": "zhang2008"}).status_code == 201
    assert client.get("/signin", follow_redirects=False).headers["location"] == "/"
    assert "pids" in client.get("/healthz").json()["jobs"]
