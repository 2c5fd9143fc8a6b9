"""No input reaches a 500: integers beyond 64 bits, loose types, NaN, a full disk. And when
something unexpected does fail, the answer is still JSON with a request id the log names too,
and the client's keep-alive connection stays usable."""

from __future__ import annotations

import json
import logging
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest
from app_helpers import regression_csv, stored_files, upload
from service_helpers import STARTUP_SECONDS, free_port, make_settings, serve

from app.main import create_app

HUGE = 2**63  # one past SQLite's and PostgreSQL's largest integer
HUGER = 2**64 * 10**20


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("no500") / "data"
    with serve(make_settings(data_dir)) as client:
        generated = client.post(
            "/api/datasets/generate",
            json={"generator": "gaussian_regression", "params": {"n": 40, "d": 6}},
        )
        client.dataset_id = generated.json()["id"]
        yield client


def big_int_requests(dataset_id: int) -> list[tuple[str, str, dict]]:
    runs = {"dataset_id": dataset_id, "algorithm": "omp", "k": 2}
    requests = []
    for n in (HUGE, HUGER):
        requests += [
            ("GET", f"/api/runs/{n}", {}),
            ("GET", f"/api/runs/{n}/trace", {}),
            ("GET", f"/api/runs/{n}/export", {}),
            ("POST", f"/api/runs/{n}/cancel", {}),
            ("GET", f"/api/datasets/{n}", {}),
            ("GET", f"/api/datasets/{n}/preview", {}),
            ("DELETE", f"/api/datasets/{n}", {}),
            ("GET", f"/api/comparisons/{n}", {}),
            ("GET", f"/api/comparisons/{n}/export", {}),
            ("GET", "/api/datasets", {"params": {"offset": n}}),
            ("GET", f"/api/datasets/{dataset_id}/preview", {"params": {"offset": n}}),
            ("GET", "/api/runs", {"params": {"offset": n}}),
            ("GET", "/api/runs", {"params": {"dataset_id": n}}),
            ("GET", "/api/runs/1/trace", {"params": {"after": n}}),
            ("POST", "/api/runs", {"json": {**runs, "seed": n}}),
            ("POST", "/api/runs", {"json": {**runs, "dataset_id": n}}),
            ("POST", "/api/runs", {"json": {**runs, "k": n}}),
            ("POST", "/api/runs", {"json": {**runs, "params": {"max_steps": n}}}),
            (
                "POST",
                "/api/comparisons",
                {
                    "json": {
                        "dataset_id": dataset_id,
                        "seed": n,
                        "runs": [{"algorithm": "omp", "k": 2}],
                    }
                },
            ),
            (
                "POST",
                "/api/datasets/generate",
                {"json": {"generator": "zhang2008", "random_state": n}},
            ),
            (
                "POST",
                "/api/datasets/generate",
                {"json": {"generator": "zhang2008", "params": {"n": n}}},
            ),
            ("GET", f"/api/cv/{n}", {}),
            ("POST", f"/api/cv/{n}/final", {"json": {}}),
            ("POST", f"/api/cv/{n}/cancel", {}),
            ("POST", "/api/cv", {"json": {"dataset_id": n, "algorithm": "omp", "k_max": 2}}),
            (
                "POST",
                "/api/cv",
                {"json": {"dataset_id": dataset_id, "algorithm": "omp", "k_max": n}},
            ),
            (
                "POST",
                "/api/cv",
                {"json": {"dataset_id": dataset_id, "algorithm": "omp", "k_max": 2, "seed": n}},
            ),
            ("GET", f"/cv/{n}", {}),
            ("GET", f"/runs/{n}", {}),
            ("GET", f"/runs/{n}/figures", {}),
            ("GET", f"/datasets/{n}", {}),
            ("GET", f"/datasets/{n}/run-params", {}),
            ("GET", f"/teach/{n}", {}),
            ("GET", f"/comparisons/{n}", {}),
            ("GET", f"/comparisons/{n}/by-k", {}),
        ]
    return requests


def test_integers_beyond_64_bits_are_422_everywhere(api) -> None:
    for method, url, kwargs in big_int_requests(api.dataset_id):
        response = api.request(method, url, **kwargs)
        assert response.status_code == 422, (method, url, kwargs, response.text)
    assert api.get("/api/runs").json() == []


# (body changes on a valid run, the field the 422 names)
LOOSE = {
    "k true": ({"k": True}, "k"),
    "k string": ({"k": "5"}, "k"),
    "k 2.5": ({"k": 2.5}, "k"),  # (2.0 is an integer to JSON Schema, and accepted as 2)
    "k NaN": ({"k": float("nan")}, "k"),
    "test_fraction NaN": ({"test_fraction": float("nan")}, "test_fraction"),
    "test_fraction Infinity": ({"test_fraction": float("inf")}, "test_fraction"),
    "test_fraction string": ({"test_fraction": "0.3"}, "test_fraction"),
    "seed string": ({"seed": "1"}, "seed"),
    "seed true": ({"seed": True}, "seed"),
    "record_candidates string": ({"record_candidates": "yes"}, "record_candidates"),
    "max_steps 1e300": ({"params": {"max_steps": 1e300}}, "params"),
    "max_steps 5.0": ({"params": {"max_steps": 5.0}}, "params"),
    "max_steps true": ({"params": {"max_steps": True}}, "params"),
    "nu NaN": ({"algorithm": "foba-obj", "params": {"nu": float("nan")}}, "params"),
}


@pytest.mark.parametrize("case", LOOSE)
def test_loose_types_and_non_finite_numbers_are_refused(api, case) -> None:
    change, field = LOOSE[case]
    body = {"dataset_id": api.dataset_id, "algorithm": "omp", "k": 2, **change}
    # json.dumps writes NaN and Infinity as JavaScript does (httpx's json= refuses them)
    raw = json.dumps(body)
    response = api.post("/api/runs", content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert field in response.json()["detail"][0]["loc"]
    assert api.get("/api/runs").json() == []


def test_generator_parameters_are_strict_too(api) -> None:
    for params in ({"n": 50.0}, {"n": True}, {"n": "50"}, {"n": 1e300}):
        body = {"generator": "gaussian_regression", "params": params}
        assert api.post("/api/datasets/generate", json=body).status_code == 422, params
    for seed in (True, "1", 1.5, -1):  # (1.0 is an integer to JSON Schema, and accepted)
        body = {"generator": "gaussian_regression", "random_state": seed}
        assert api.post("/api/datasets/generate", json=body).status_code == 422, seed


# --------------------------------------------------------------------------- disk full


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A 64 KB tmpfs: the data directory of a server whose disk fills at the first upload."""
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=False)


def test_full_disk_is_507_and_leaves_nothing(tmp_path: Path, tiny_disk: Path) -> None:
    database = f"sqlite:///{tmp_path / 'db.sqlite'}"
    with serve(make_settings(tiny_disk, database_url=database)) as client:
        response = upload(client, regression_csv(n=3000, d=8))  # ~200 KB of arrays
        assert response.status_code == 507, response.text
        body = response.json()
        assert "disk is full" in body["detail"] and body["request_id"]
        assert response.headers["x-request-id"] == body["request_id"]
        assert client.get("/api/datasets").json() == []
        assert stored_files(tiny_disk) == []
        assert [p.name for p in (tiny_disk / "datasets").iterdir()] == []  # no partial file
        small = upload(client, regression_csv(n=20, d=3, support=(0,)))  # space for a small one
        assert small.status_code == 201, small.text


# --------------------------------------------------------------------------- unexpected errors


@pytest.fixture
def live_server(tmp_path: Path):
    """The real app under uvicorn, with one route a test adds that fails unexpectedly."""
    import uvicorn

    app = create_app(make_settings(tmp_path / "data"))

    def fail() -> None:
        raise RuntimeError("induced failure for the test")

    app.add_api_route("/test-only/fail", fail, include_in_schema=False)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_SECONDS  # a bound, not a speed check
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=15)


def test_unexpected_error_is_json_with_a_logged_id_and_keeps_the_connection(
    live_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="app.errors")
    with httpx.Client(base_url=live_server, timeout=10) as client:
        first = client.get("/healthz")
        failed = client.get("/test-only/fail", headers={"X-Request-ID": "probe-42"})
        after = client.get("/api/algorithms")
    assert failed.status_code == 500
    body = failed.json()
    assert body["request_id"] == "probe-42" == failed.headers["x-request-id"]
    assert "probe-42" in body["detail"] and "induced" not in body["detail"]
    assert "connection" not in failed.headers or failed.headers["connection"] != "close"
    assert first.status_code == after.status_code == 200
    logged = [r for r in caplog.records if "probe-42" in r.getMessage()]
    assert logged and logged[0].exc_info is not None  # the traceback is in the log
    assert failed.headers["x-content-type-options"] == "nosniff"


def test_a_caller_request_id_is_only_taken_when_tame(api) -> None:
    assert api.get("/healthz", headers={"X-Request-ID": "abc-1"}).headers["x-request-id"] == "abc-1"
    wild = api.get("/healthz", headers={"X-Request-ID": "a b\tc" * 30}).headers["x-request-id"]
    assert len(wild) == 16 and wild.isalnum()


def test_a_wide_data_set_previews_fewer_rows(api) -> None:
    """Found by schemathesis: 416 rows of a 50,000-column corpus made an 84 MB answer that
    took longer than a client waits."""
    body = {"generator": "sparse_design", "params": {"n": 50, "d": 20_000, "k_true": 10}}
    wide = api.post("/api/datasets/generate", json=body)
    assert wide.status_code == 201, wide.text
    page = api.get(f"{wide.json()['url']}/preview", params={"limit": 500}).json()
    assert len(page["rows"]) == 200_000 // 20_001 and len(page["rows"][0]) == 20_001
    api.delete(wide.json()["url"])


def test_a_route_that_forgets_to_bound_an_integer_still_answers_422(tmp_path: Path) -> None:
    """The safety net for routes added later: a number no column holds is the client's 422."""
    from fastapi.testclient import TestClient
    from sqlmodel import Session

    from app.models import Run

    app = create_app(make_settings(tmp_path / "data"))

    def lookup(n: int) -> dict:
        with Session(app.state.db) as session:
            return {"found": session.get(Run, n) is not None}

    app.add_api_route("/test-only/lookup/{n}", lookup)
    with TestClient(app) as client:
        assert client.get("/test-only/lookup/5").json() == {"found": False}
        response = client.get(f"/test-only/lookup/{HUGE}")
    assert response.status_code == 422, response.text
    assert "too large" in response.json()["detail"][0]["msg"]
