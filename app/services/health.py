"""``/healthz``: the service's state, one section per part it depends on.

``report`` is the one place that decides: each part adds its section and may lower the
overall status (ok, then degraded: some content is lost but the service works, then
unavailable: 503). Extend it by adding a section there.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sqlmodel import Session, select

from app.db import ping
from app.jobs.backend import JobBackend
from app.models import Dataset
from app.storage import ArrayStore

RANK = {"ok": 0, "degraded": 1, "unavailable": 2}
# Below this much free space an upload or a run's trace may not fit: say so before writes fail.
LOW_DISK_BYTES = 256 * 1024 * 1024


def report(
    session: Session, backend: JobBackend, store: ArrayStore, data_dir: Path
) -> tuple[dict[str, Any], int]:
    """The health document and its HTTP status."""
    try:
        ping(session)
    except Exception as exc:  # any failure means not ready; say which
        return {"status": "unavailable", "database": _short(exc)}, 503
    body: dict[str, Any] = {"status": "ok", "database": "ok"}
    body["storage"] = storage_section(session, store)
    body["disk"] = disk_section(data_dir)
    body["jobs"] = backend.describe()
    parts = (body["status"], body["storage"]["status"], body["disk"]["status"])
    body["status"] = max(parts, key=RANK.__getitem__)
    return body, 503 if body["status"] == "unavailable" else 200


def _short(exc: Exception) -> str:
    """What failed, without the driver's or the pool's inner workings."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"unreachable: {first[:200]}"


def disk_section(data_dir: Path) -> dict[str, Any]:
    """Degraded when the data directory's disk is nearly full (writes would soon fail with
    507): free and total bytes, so an operator sees how close it is."""
    try:
        usage = shutil.disk_usage(data_dir)
    except OSError as exc:
        return {"status": "degraded", "error": exc.strerror or "cannot read the disk's usage"}
    low = usage.free < LOW_DISK_BYTES
    section: dict[str, Any] = {
        "status": "degraded" if low else "ok",
        "free_bytes": usage.free,
        "total_bytes": usage.total,
    }
    if low:
        section["detail"] = (
            "the data directory's disk is nearly full: free space before writes fail"
        )
    return section


def storage_section(session: Session, store: ArrayStore) -> dict[str, Any]:
    """Degraded when data sets name arrays the store no longer holds (by data set id: the
    keys and paths stay inside)."""
    rows = session.exec(select(Dataset.id, Dataset.file))
    # A table registered by reference has no file until its statistics pass is done.
    owners = {file: dataset_id for dataset_id, file in rows if dataset_id is not None and file}
    lost = sorted(owners[key] for key in store.missing(owners))
    return {
        "kind": store.kind,
        "status": "degraded" if lost else "ok",
        "datasets": len(owners),
        "missing_datasets": lost,
    }
