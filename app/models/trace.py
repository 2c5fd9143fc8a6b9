"""A run's trace: one row per engine event, and the page of events clients read."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON
from sqlmodel import Field, SQLModel

from app.models.common import RunStatus
from app.models.fields import ID_TYPE
from engine.trace import EVENT_JSON_SCHEMA


class TraceEvent(SQLModel, table=True):
    """One engine event; (run_id, step) is unique, so a rerun cannot duplicate steps."""

    __tablename__ = "trace_events"

    run_id: int = Field(
        foreign_key="runs.id", ondelete="CASCADE", sa_type=ID_TYPE, primary_key=True
    )
    step: int = Field(primary_key=True, sa_type=ID_TYPE)
    kind: str
    data: dict[str, Any] = Field(sa_type=JSON)  # engine.Event.to_dict()


class TracePage(SQLModel):
    run_id: int
    status: RunStatus
    attempt: int = Field(
        description="Changes when a dead worker's run is rerun; the trace then restarts at step "
        "0 (a rerun with the same seed repeats the same events)."
    )
    progress: float = Field(description="Fraction done, 0 to 1 (1 once the result is stored).")
    cancel_requested: bool
    events: list[dict[str, Any]] = Field(
        description="Events in step order, each ``engine.Event.to_dict()``.",
        schema_extra={"json_schema_extra": {"items": EVENT_JSON_SCHEMA}},
    )
    next_after: int = Field(description="Pass as ?after= to get the events that follow.")
    complete: bool = Field(description="The run has finished and no event follows this page.")
