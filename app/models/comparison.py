"""Comparisons: several runs on one data set, made together or from runs already done."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from sqlmodel import Field, SQLModel

from app.models.common import NO_ID_REUSE, utcnow
from app.models.fields import ID_TYPE, MAX_ID, STRICT, Request
from app.models.run import RunConfig, RunPublic, SplitOptions


class Comparison(SQLModel, table=True):
    __tablename__ = "comparisons"
    __table_args__ = NO_ID_REUSE

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    dataset_id: int = Field(
        foreign_key="datasets.id", ondelete="CASCADE", sa_type=ID_TYPE, index=True
    )
    name: str = ""
    created_at: datetime = Field(default_factory=utcnow)


class ComparisonRun(SQLModel, table=True):
    """A run a comparison was made from after the fact (``POST /api/comparisons/from-runs``);
    a comparison's own runs point to it through ``Run.comparison_id`` instead. A run may be
    in several such comparisons; no id of its own (nothing links to a row)."""

    __tablename__ = "comparison_runs"

    comparison_id: int = Field(
        foreign_key="comparisons.id", ondelete="CASCADE", sa_type=ID_TYPE, primary_key=True
    )
    run_id: int = Field(
        foreign_key="runs.id", ondelete="CASCADE", sa_type=ID_TYPE, primary_key=True, index=True
    )


class ComparisonCreate(SplitOptions):
    model_config = STRICT

    dataset_id: int = Field(ge=1, le=MAX_ID)
    name: str = Field("", max_length=200)
    runs: list[RunConfig] = Field(min_length=1, max_length=20)


class ComparisonPublic(SQLModel):
    id: int
    dataset_id: int
    name: str
    created_at: datetime
    url: str
    runs: list[RunPublic]


class ComparisonFromRuns(Request):
    """A comparison of runs that exist already, all on one data set."""

    model_config = STRICT

    run_ids: list[Annotated[int, Field(ge=1, le=MAX_ID)]] = Field(
        min_length=2, max_length=20, description="At least two runs of one data set."
    )
    name: str = Field("", max_length=200)
