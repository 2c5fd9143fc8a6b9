"""A full disk: /healthz says so before writes fail, workers wait it out (a transient error,
so an accepted run is not failed for good), and requests still get 507."""

from __future__ import annotations

import errno
import sqlite3

from service_helpers import make_settings, serve
from sqlalchemy.exc import OperationalError

from app.db.transient import is_disk_full, is_transient
from app.services import health


def _sqlite_full() -> OperationalError:
    return OperationalError("INSERT ...", {}, sqlite3.OperationalError("database or disk is full"))


def test_a_full_disk_is_waited_out_by_workers() -> None:
    for exc in (_sqlite_full(), OSError(errno.ENOSPC, "No space left on device")):
        assert is_disk_full(exc) and is_transient(exc)
    assert not is_disk_full(ValueError("disk is fine"))


def test_healthz_is_degraded_when_the_disk_is_nearly_full(tmp_path, monkeypatch) -> None:
    with serve(make_settings(tmp_path / "data")) as client:
        fine = client.get("/healthz").json()
        assert fine["disk"]["status"] == "ok" and fine["disk"]["free_bytes"] > 0
        # More than any disk here has free: the same check, on a disk that is "nearly full".
        monkeypatch.setattr(health, "LOW_DISK_BYTES", 2**62)
        answer = client.get("/healthz")
        assert answer.status_code == 200
        body = answer.json()
        assert body["status"] == "degraded" and body["disk"]["status"] == "degraded"
        assert "nearly full" in body["disk"]["detail"]
