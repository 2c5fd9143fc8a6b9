"""The data set page's block for a table registered by reference: its statistics pass (ranges
done, rows read, workers, progress and the time left), polled by HTMX while it runs."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from app.models import ACTIVE, Dataset
from app.services import reference_tables
from app.storage import ArrayStore


def table_pass(session: Session, store: ArrayStore, dataset: Dataset) -> dict[str, Any] | None:
    """The block's view model, the data set refreshed first (merged once every range is
    done); None for a data set of another source."""
    if dataset.source != "reference":
        return None
    dataset = reference_tables.refresh(session, store, dataset)
    state = reference_tables.pass_status(session, dataset)
    ref = dataset.meta["reference"]
    return {
        **state,
        "dataset_id": dataset.id,
        "path": reference_tables.display_path(dataset),
        "live": state["status"] in ACTIVE,
        "rows": ref.get("rows", state["rows"]),
        "chunks": ref.get("chunks"),
        "seconds": ref.get("seconds"),
        "line": reference_tables.statistics_line(dataset),
    }


def seconds_text(seconds: float | None) -> str:
    if seconds is None:
        return "estimating…"
    if seconds < 60:
        return f"about {max(round(seconds), 1)} s left"
    return f"about {round(seconds / 60)} min left"
