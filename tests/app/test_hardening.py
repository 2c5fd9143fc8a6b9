"""Hardening: security headers on every response, a CSP the pages keep (no inline script or
handler in templates/), owner-only files, bounded bodies, OPTIONS and 405 with Allow."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest
from app_helpers import regression_csv, upload_ok
from service_helpers import make_settings, serve

from app.web.middleware import CONTENT_SECURITY_POLICY
from app.web.rendering import asset_dir

HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
}


def test_csp_allows_only_our_own_origin() -> None:
    rules = dict(rule.split(" ", 1) for rule in CONTENT_SECURITY_POLICY.split("; "))
    assert rules["default-src"] == rules["script-src"] == "'self'"
    assert rules["frame-ancestors"] == "'none'" and rules["object-src"] == "'none'"
    assert "unsafe-eval" not in CONTENT_SECURITY_POLICY
    assert "'unsafe-inline'" not in rules["script-src"]  # styles only (Plotly, Swagger UI)


def test_every_response_carries_the_security_headers(client) -> None:
    ds = upload_ok(client, regression_csv(n=30, d=3, support=(0,)))
    responses = {
        "page": client.get("/", headers={"Accept": "text/html"}),
        "data set page": client.get(f"/datasets/{ds['id']}", headers={"Accept": "text/html"}),
        "api": client.get("/api/datasets"),
        "static": client.get("/static/js/api.js"),
        "404 page": client.get("/nowhere", headers={"Accept": "text/html"}),
        "422": client.get("/api/runs/x"),
        "405": client.put("/api/runs"),
        "health": client.get("/healthz"),
        "docs": client.get("/docs"),
    }
    for name, response in responses.items():
        for header, value in HEADERS.items():
            assert response.headers.get(header) == value, (name, header)
        assert response.headers["x-request-id"], name


def test_templates_hold_no_inline_script_or_handler() -> None:
    """The CSP refuses inline scripts: only <script src> and JSON data blocks remain."""
    for path in sorted(asset_dir("templates").rglob("*.html")):
        text = path.read_text()
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag or 'type="application/json"' in tag, (path.name, tag)
        assert not re.search(r"\son[a-z]+\s*=", text), path.name  # onclick=, onload=, ...
        assert "hx-on" not in text and "javascript:" not in text, path.name


def test_database_and_data_files_are_readable_by_the_owner_only(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with serve(make_settings(data_dir, api_key="k")) as client:
        auth = {"Authorization": "Bearer k"}
        response = client.post(
            "/api/datasets",
            files={"file": ("d.csv", regression_csv(n=30, d=3, support=(0,)).encode())},
            data={"target": "y"},
            headers=auth,
        )
        assert response.status_code == 201, response.text
        client.get("/", headers={"Accept": "text/html"})  # the session secret is made
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in data_dir.rglob("*")}
        modes["data"] = stat.S_IMODE(data_dir.stat().st_mode)
    assert {"foba-lab.db", "foba-lab.db-wal", "session-secret", "datasets"} <= set(modes)
    assert any(name.endswith(".npz") for name in modes)
    for name, mode in modes.items():
        assert mode & 0o077 == 0, f"{name} is {oct(mode)}"
    assert modes["data"] == modes["datasets"] == 0o700


def test_options_lists_the_methods_of_the_resource(client) -> None:
    expected = {
        "/api/datasets/1": "DELETE, GET, OPTIONS, PATCH",
        "/api/runs/1": "DELETE, GET, OPTIONS, PATCH",
        "/api/datasets": "GET, OPTIONS, POST",
        "/api/datasets/generate": "OPTIONS, POST",
        "/api/runs/1/cancel": "OPTIONS, POST",
        "/teach/lessons/forward": "GET, OPTIONS, POST",
    }
    for url, allow in expected.items():
        response = client.options(url)
        assert response.status_code == 204 and response.headers["allow"] == allow, url
    wrong = client.put("/api/datasets/1")
    assert wrong.status_code == 405 and wrong.headers["allow"] == "DELETE, GET, OPTIONS, PATCH"
    # a method no route at this very path takes: not GET /api/datasets/{dataset_id}
    assert client.get("/api/datasets/generate").status_code == 405


@pytest.mark.parametrize("path", ["/api/runs", "/teach/lessons/forward", "/signin"])
def test_json_and_form_bodies_are_bounded(tmp_path: Path, path: str) -> None:
    with serve(make_settings(tmp_path / "data", max_json_kb=4)) as client:
        big = b"x" * 5000
        declared = client.post(path, content=big, headers={"Content-Type": "application/json"})
        assert declared.status_code == 413, declared.text
        if path != "/api/runs":
            return  # routes that never read a body never hold one

        def chunks():  # no Content-Length: counted while it streams
            yield b'{"a": "'
            yield big
            yield b'"}'

        streamed = client.post(path, content=chunks(), headers={"Content-Type": "application/json"})
        assert streamed.status_code == 413, streamed.text


def test_the_guard_bounds_the_form_it_reads(tmp_path: Path) -> None:
    with serve(make_settings(tmp_path / "data", api_key="k")) as client:
        client.post("/signin", data={"key": "k"})

        def chunks():
            yield b"a=" + b"x" * 70_000

        response = client.post(
            "/teach/lessons/forward",
            content=chunks(),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert response.status_code == 413


def test_the_schema_documents_every_error_status(client) -> None:
    schema = client.get("/openapi.json").json()
    assert schema["components"]["schemas"]["ServerError"]["required"] == ["detail", "request_id"]
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            statuses = set(operation["responses"])
            if path.startswith("/api"):
                assert "503" in statuses, (method, path)
            if "{" in path:
                assert "404" in statuses, (method, path)
            if method in ("post", "delete"):
                assert {"413", "507"} <= statuses, (method, path)
            if "requestBody" in operation:
                assert "400" in statuses, (method, path)
    run_config = schema["components"]["schemas"]["RunConfig"]["properties"]
    assert "foba-obj" in run_config["algorithm"]["enum"]
