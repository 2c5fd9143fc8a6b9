"""What can differ between SQLite and PostgreSQL answers alike on both: ids beyond 32 bits,
text no column should hold, and a lock held too long (a bounded wait, then 503)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from service_helpers import make_settings, serve
from sqlalchemy import create_engine, text

from app.db import normalise_url

BIG_IDS = (2**31, 2**40, 2**63 - 1)


def _generate(client) -> int:
    response = client.post(
        "/api/datasets/generate",
        json={"generator": "gaussian_regression", "params": {"n": 30, "d": 5}},
    )
    assert response.status_code == 201, response.text
    return response.json()["id"]


@pytest.mark.parametrize("big", BIG_IDS)
def test_ids_beyond_32_bits_are_not_found_not_server_errors(
    data_dir: Path, database_url: str, big: int
) -> None:
    with serve(make_settings(data_dir, database_url=database_url)) as client:
        dataset_id = _generate(client)
        for method, url, body in [
            ("GET", f"/api/runs/{big}", None),
            ("GET", f"/api/runs/{big}/trace", None),
            ("POST", f"/api/runs/{big}/cancel", None),
            ("PATCH", f"/api/runs/{big}", {"name": "x"}),
            ("DELETE", f"/api/runs/{big}", None),
            ("GET", f"/api/datasets/{big}", None),
            ("PATCH", f"/api/datasets/{big}", {"name": "x"}),
            ("DELETE", f"/api/datasets/{big}", None),
            ("GET", f"/api/comparisons/{big}", None),
            ("GET", f"/api/cv/{big}", None),
        ]:
            answer = client.request(method, url, json=body)
            assert answer.status_code == 404, (method, url, answer.status_code, answer.text)
        answer = client.post("/api/runs", json={"dataset_id": big, "algorithm": "omp", "k": 2})
        assert answer.status_code in (404, 422), answer.text
        assert client.get(f"/api/datasets/{dataset_id}").status_code == 200


def test_ids_above_32_bits_are_handed_out_and_read_back(data_dir: Path, database_url: str) -> None:
    start = 3_000_000_000
    with serve(make_settings(data_dir, database_url=database_url)) as client:
        _generate(client)
        engine = create_engine(normalise_url(database_url))
        with engine.begin() as conn:
            if conn.dialect.name == "sqlite":
                conn.execute(
                    text(f"UPDATE sqlite_sequence SET seq = {start} WHERE name = 'datasets'")
                )
            else:
                sequence = conn.execute(text("SELECT pg_get_serial_sequence('datasets', 'id')"))
                conn.execute(text(f"ALTER SEQUENCE {sequence.scalar()} RESTART WITH {start + 1}"))
        engine.dispose()
        dataset_id = _generate(client)
        assert dataset_id == start + 1
        assert client.get(f"/api/datasets/{dataset_id}").json()["id"] == dataset_id


@pytest.mark.parametrize(
    ("bad", "word"), [("a\x00b", "NUL"), ("safe\u202etxt.exe", "bidirectional")]
)
def test_text_no_column_should_hold_is_refused_and_nothing_stored(
    data_dir: Path, database_url: str, bad: str, word: str
) -> None:
    with serve(make_settings(data_dir, database_url=database_url)) as client:
        dataset_id = _generate(client)
        for url, body in [
            (f"/api/datasets/{dataset_id}", {"name": bad}),
            (f"/api/datasets/{dataset_id}", {"description": bad}),
        ]:
            answer = client.patch(url, json=body)
            assert answer.status_code == 422, answer.text
            assert word in answer.text
        comparison = {"dataset_id": dataset_id, "name": bad, "runs": [{"algorithm": "omp"}]}
        answer = client.post("/api/comparisons", json=comparison)
        assert answer.status_code == 422 and word in answer.text, answer.text
        assert client.get(f"/api/datasets/{dataset_id}").json()["name"] != bad
        assert client.get("/api/runs").json() == []


def test_a_postgresql_lock_held_too_long_is_a_bounded_503(
    data_dir: Path, postgres_url: str
) -> None:
    """A table lock held elsewhere makes requests wait at most the lock timeout, then 503 with
    Retry-After; other tables stay readable (no exhausted pool)."""
    settings = make_settings(data_dir, database_url=postgres_url, sqlite_busy_timeout_seconds=0.5)
    with serve(settings) as client:
        dataset_id = _generate(client)
        locked, release = threading.Event(), threading.Event()

        def hold_lock() -> None:
            engine = create_engine(normalise_url(postgres_url))
            with engine.begin() as conn:
                conn.execute(text("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE"))
                locked.set()
                release.wait(60)
            engine.dispose()

        holder = threading.Thread(target=hold_lock)
        holder.start()
        try:
            assert locked.wait(30)
            for _ in range(12):  # more requests than the pool has connections
                answer = client.get("/api/runs")
                assert answer.status_code == 503, answer.text
                assert answer.headers["Retry-After"]
            assert client.get(f"/api/datasets/{dataset_id}").status_code == 200
        finally:
            release.set()
            holder.join()
        time.sleep(0)  # the lock is gone: the same request answers again
        assert client.get("/api/runs").status_code == 200
