"""``/healthz``: the service's state, one section per part it depends on.

``report`` is the one place that decides: each part adds its section and may lower the
overall status (ok, then degraded: some content is lost but the service works, then
unavailable: 503). Extend it by adding a section there.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from app.db import ping
from app.jobs.backend import JobBackend
from app.models import Dataset
from app.storage import ArrayStore

RANK = {"ok": 0, "degraded": 1, "unavailable": 2}


def report(session: Session, backend: JobBackend, store: ArrayStore) -> tuple[dict[str, Any], int]:
    """The health document and its HTTP status."""
    try:
        ping(session)
    except Exception as exc:  # any failure means not ready; say which
        return {"status": "unavailable", "database": str(exc)}, 503
    body: dict[str, Any] = {"status": "ok", "database": "ok"}
    body["storage"] = storage_section(session, store)
    body["jobs"] = backend.describe()
    body["status"] = max((body["status"], body["storage"]["status"]), key=RANK.__getitem__)
    return body, 503 if body["status"] == "unavailable" else 200


def storage_section(session: Session, store: ArrayStore) -> dict[str, Any]:
    """Degraded when data sets name arrays the store no longer holds (by data set id: the
    keys and paths stay inside)."""
    rows = session.exec(select(Dataset.id, Dataset.file))
    owners = {file: dataset_id for dataset_id, file in rows if dataset_id is not None}
    lost = sorted(owners[key] for key in store.missing(owners))
    return {
        "kind": store.kind,
        "status": "degraded" if lost else "ok",
        "datasets": len(owners),
        "missing_datasets": lost,
    }
