"""Settings, the app factory, seeding, and ``python -m app``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from pydantic import ValidationError
from service_helpers import STARTUP_SECONDS, make_settings, serve

import app.main
from app.config import Settings
from engine import datasets

ENV_NAMES = (
    "DATABASE_URL",
    "DATA_DIR",
    "WORKERS",
    "MAX_UPLOAD_MB",
    "MAX_COLUMNS",
    "API_KEY",
    "PORT",
    "STORAGE",
    "SQLITE_BUSY_TIMEOUT_SECONDS",
    "MIGRATE_ON_START",
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_defaults(clean_env: Path) -> None:
    settings = Settings()
    assert settings.data_dir == clean_env / "data"
    assert settings.database_url == f"sqlite:///{clean_env / 'data' / 'foba-lab.db'}"
    assert settings.workers == max((os.cpu_count() or 1) - 1, 1)
    assert (settings.api_key, settings.port, settings.job_backend) == (None, 8000, "inprocess")


def test_environment_and_dotenv(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (clean_env / ".env").write_text("WORKERS=4\nMAX_COLUMNS=50\nAPI_KEY=from-file\n")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u@db/x")
    monkeypatch.setenv("API_KEY", "from-env")
    monkeypatch.setenv("MAX_UPLOAD_MB", "2.5")
    settings = Settings()
    assert (settings.workers, settings.max_columns) == (4, 50)
    assert settings.database_url == "postgresql://u@db/x"
    assert settings.api_key.get_secret_value() == "from-env"  # the environment wins
    assert settings.max_upload_bytes == int(2.5 * 1024 * 1024)


def test_storage_and_schema_settings(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    defaults = Settings()
    assert (defaults.storage, defaults.sqlite_busy_timeout_seconds) == ("directory", 10.0)
    assert defaults.migrate_on_start is True
    monkeypatch.setenv("STORAGE", "database")
    monkeypatch.setenv("SQLITE_BUSY_TIMEOUT_SECONDS", "0.5")
    monkeypatch.setenv("MIGRATE_ON_START", "false")
    settings = Settings()
    assert (settings.storage, settings.sqlite_busy_timeout_seconds) == ("database", 0.5)
    assert settings.migrate_on_start is False
    monkeypatch.setenv("STORAGE", "s3")
    with pytest.raises(ValidationError, match="directory"):
        Settings()


def test_inconsistent_heartbeat_settings_are_refused(clean_env: Path) -> None:
    with pytest.raises(ValidationError, match="stale_after_seconds"):
        Settings(heartbeat_seconds=5, stale_after_seconds=8)


def test_importing_creates_no_app() -> None:
    assert not [v for v in vars(app.main).values() if isinstance(v, FastAPI | Settings)]


def test_samples_are_stored_once(data_dir: Path) -> None:
    settings = make_settings(data_dir, seed_samples=True)
    with serve(settings) as client:
        first = client.get("/api/datasets").json()
    with serve(settings) as client:
        again = client.get("/api/datasets").json()
    assert first == again
    generated = [d for d in first if d["source"] == "generator"]
    assert {"gaussian_regression", "zhang2008", "liu2014_logistic"} <= {
        d["name"] for d in generated
    }
    assert all(d["has_true_support"] for d in generated)
    bundled = [d for d in first if d["source"] == "bundled"]
    assert len(bundled) == len(getattr(datasets, "list_bundled", list)())
    assert not any(d["has_true_support"] for d in bundled)  # real data: truth unknown


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_python_m_app_serves_with_samples(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "PORT": str(port), "DATA_DIR": str(tmp_path / "data"), "WORKERS": "0"}
    env["PYTHONPATH"] = str(Path(app.main.__file__).parents[1])  # this checkout's app
    env.pop("DATABASE_URL", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "app"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS  # a bound, not a speed check
        while True:
            try:
                datasets = httpx.get(f"http://127.0.0.1:{port}/api/datasets", timeout=1).json()
                break
            except httpx.TransportError:
                assert server.poll() is None, server.stderr.read().decode()
                assert time.monotonic() < deadline, "server did not come up"
                time.sleep(0.1)
        assert len(datasets) >= 3  # the samples are there on the first view
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=15) == 0
