"""Who may ask what, beyond the key: the Host header must name this server (no DNS
rebinding), a browser's write from another site is refused with or without a key, a signed-out
session is over on the server, wrong keys are throttled per client, and authenticated answers
are not cached."""

from __future__ import annotations

import pytest
from service_helpers import make_settings, serve

from app.web.auth import COOKIE

KEY = "trust-key"
BEARER = {"Authorization": f"Bearer {KEY}"}
GENERATE = {"generator": "gaussian_regression", "params": {"n": 30, "d": 6}}


@pytest.fixture(scope="module")
def open_server(tmp_path_factory):
    with serve(make_settings(tmp_path_factory.mktemp("open") / "data")) as client:
        yield client


@pytest.fixture
def keyed(tmp_path):
    with serve(make_settings(tmp_path / "data", api_key=KEY, failed_keys_per_minute=3)) as client:
        yield client


# "[::1": an unclosed IPv6 literal (urlsplit raised: a 500).
@pytest.mark.parametrize("host", ["evil.example", "attacker.test:8000", "10.0.0.1", "[::1"])
def test_an_unknown_host_is_refused_naming_the_setting(open_server, host: str) -> None:
    answer = open_server.get("/api/datasets", headers={"Host": host})
    assert answer.status_code == 400
    assert "ALLOWED_HOSTS" in answer.json()["detail"]


@pytest.mark.parametrize("host", ["localhost:8000", "127.0.0.1:8000", "[::1]:8000", "LOCALHOST"])
def test_the_local_names_are_answered(open_server, host: str) -> None:
    assert open_server.get("/api/datasets", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Origin": "http://testserver:9999"},
        {"Origin": "http://[::1"},  # no origin urlsplit can read (it raised: a 500)
    ],
)
def test_a_cross_site_write_is_refused_without_a_key(open_server, headers) -> None:
    before = len(open_server.get("/api/datasets").json())
    answer = open_server.post("/api/datasets/generate", json=GENERATE, headers=headers)
    assert answer.status_code == 403, answer.text
    assert "another site" in answer.json()["detail"]
    assert len(open_server.get("/api/datasets").json()) == before  # nothing planted


def test_same_origin_and_scripted_writes_go_through(open_server) -> None:
    same = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
    assert (
        open_server.post("/api/datasets/generate", json=GENERATE, headers=same).status_code == 201
    )
    assert open_server.post("/api/datasets/generate", json=GENERATE).status_code == 201


def test_a_cross_site_read_is_still_a_read(open_server) -> None:
    answer = open_server.get("/api/datasets", headers={"Sec-Fetch-Site": "cross-site"})
    assert answer.status_code == 200  # reads are guarded by the Host check and CORS


def test_signing_out_ends_the_session_for_every_copy_of_the_cookie(keyed) -> None:
    answer = keyed.post("/signin", data={"key": KEY, "next": "/"}, follow_redirects=False)
    assert answer.status_code == 303
    cookie = keyed.cookies[COOKIE]
    page = keyed.get("/", headers={"Accept": "text/html"})
    token = page.text.split('name="csrf-token" content="')[1].split('"')[0]
    assert keyed.get("/api/datasets").status_code == 200
    out = keyed.post("/signout", data={"csrf_token": token}, follow_redirects=False)
    assert out.status_code == 303
    keyed.cookies.clear()
    keyed.cookies.set(COOKIE, cookie)
    copied = keyed.get("/api/datasets")
    assert copied.status_code == 401


def test_wrong_keys_are_throttled_per_client(keyed) -> None:
    wrong = {"Authorization": "Bearer guess"}
    codes = [keyed.get("/api/datasets", headers=wrong).status_code for _ in range(5)]
    assert codes[:3] == [401, 401, 401]
    assert codes[3:] == [429, 429]
    answer = keyed.get("/api/datasets", headers=wrong)
    assert int(answer.headers["Retry-After"]) >= 1
    signin = keyed.post("/signin", data={"key": "guess"}, follow_redirects=False)
    assert signin.status_code == 429
    # The right key still works for a client that is not guessing.
    assert keyed.get("/api/datasets", headers=BEARER).status_code == 200


def test_authenticated_answers_are_not_cached(keyed) -> None:
    answer = keyed.get("/api/datasets", headers=BEARER)
    assert answer.headers["Cache-Control"] == "no-store"
