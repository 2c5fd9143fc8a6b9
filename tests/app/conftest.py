"""Fixtures for the app tests: the real app on a fresh SQLite file per test (tmp_path), with
or without worker processes, and database URLs for the storage tests (SQLite, and PostgreSQL
at 127.0.0.1:5432/test when it is reachable)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from service_helpers import find_postgres_user, make_settings, serve

if TYPE_CHECKING:
    from fastapi.testclient import TestClient

PG_BASE = "postgresql://{user}@127.0.0.1:5432/test"


def pytest_configure(config: pytest.Config) -> None:
    # Starlette's test client announces a future switch of HTTP library; not ours to act on.
    config.addinivalue_line("filterwarnings", "ignore:.*httpx2")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def client(data_dir: Path) -> Iterator[TestClient]:
    """The API without workers: runs stay queued."""
    with serve(make_settings(data_dir)) as c:
        yield c


@pytest.fixture(scope="module")
def shared_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One API (no workers) for a module of tests that each must leave nothing behind: they
    check the data set and run lists and the data directory are still empty, so sharing the
    database costs no isolation and saves an app start per case."""
    data_dir = tmp_path_factory.mktemp("shared") / "data"
    with serve(make_settings(data_dir)) as c:
        yield c


@pytest.fixture
def worker_client(data_dir: Path) -> Iterator[TestClient]:
    """The API with one worker process."""
    with serve(make_settings(data_dir, workers=1)) as c:
        yield c


@pytest.fixture(scope="session")
def postgres_user() -> str:
    user, reason = find_postgres_user()
    if user is None:
        pytest.skip(reason)
    return user


@pytest.fixture
def postgres_url(postgres_user: str) -> Iterator[str]:
    """A fresh PostgreSQL schema, dropped afterwards."""
    import psycopg

    base = PG_BASE.format(user=postgres_user)
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{base}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, data_dir: Path) -> str:
    """A private database: a SQLite file, or a PostgreSQL schema (skipped when unreachable)."""
    if request.param == "postgresql":
        return request.getfixturevalue("postgres_url")
    data_dir.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{data_dir / 'test.db'}"
