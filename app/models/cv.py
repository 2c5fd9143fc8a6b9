"""Choosing k by cross-validation: the study table (its folds are runs, ``Run.cv_id``), what
clients send and what they get back."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from sqlalchemy import JSON
from sqlmodel import Field, SQLModel

from app.models.common import NO_ID_REUSE, RunStatus, utcnow
from app.models.fields import ID_TYPE, MAX_ID, MAX_K, MAX_SEED, SEED_TYPE, STRICT, Request


class CVStudy(SQLModel, table=True):
    """A choice of k by K-fold cross-validation; its folds are runs (``Run.cv_id``), one job
    each, and its status is theirs (see ``app.services.cv``)."""

    __tablename__ = "cv_studies"
    __table_args__ = NO_ID_REUSE

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    dataset_id: int = Field(
        foreign_key="datasets.id", ondelete="CASCADE", sa_type=ID_TYPE, index=True
    )
    algorithm: str
    objective: str
    k_max: int
    params: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)  # as Run.params
    standardize: bool = Field(default=True, sa_column_kwargs={"server_default": "1"})
    n_folds: int
    rule: str  # engine.cv.RULES
    metric: str  # engine.cv.METRICS
    seed: int = Field(default=0, sa_type=SEED_TYPE)
    plan: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)  # CVPlan.to_dict()
    # The run at the chosen k on all data; no foreign key (runs already point here).
    final_run_id: int | None = Field(default=None, sa_type=ID_TYPE)
    created_at: datetime = Field(default_factory=utcnow)


class CVCreate(Request):
    """Choose k in 1..k_max by K-fold cross-validation: each fold runs the algorithm on its
    training part (one job per fold) and scores every k on its held-out part."""

    model_config = STRICT

    dataset_id: int = Field(ge=1, le=MAX_ID)
    algorithm: str = Field(description="A name from GET /api/algorithms that takes k.")
    objective: str | None = Field(
        None,
        description="A name from GET /api/objectives. None (the default): the data set's task "
        "decides, least_squares for regression and logistic for classification, as for a run.",
    )
    params: dict[str, Any] = Field(
        default_factory=dict, description="Algorithm and objective parameters, by name."
    )
    k_max: int = Field(le=MAX_K, description="Score every k from 1 to k_max.")
    n_folds: int = Field(5, ge=2, le=20, description="K of K-fold: one job per fold.")
    rule: Literal["min", "1se"] = Field(
        "min",
        description="min: the k of smallest mean held-out error; 1se: the smallest k within "
        "one standard error of that minimum (the simpler model the data cannot tell apart).",
    )
    metric: str | None = Field(
        None,
        description="Held-out error: mse or mae (regression), log_loss or error "
        "(classification); default mse / log_loss.",
    )
    seed: int = Field(
        0, ge=0, le=MAX_SEED, description="Seeds the folds and randomised algorithms."
    )
    standardize: bool = Field(
        True, description="Select on unit-variance columns, as a run does (see POST /api/runs)."
    )


class CVFinalCreate(Request):
    model_config = STRICT

    k: int | None = Field(
        None,
        ge=1,
        le=MAX_K,
        description="Default: the k the study's rule chose. Must be in 1..k_max.",
    )
    record_candidates: bool = Field(
        False, description="Keep the candidate scores (the run then opens in the teaching mode)."
    )


class CVFold(SQLModel):
    fold: int
    run_id: int
    status: RunStatus
    progress: float
    n_train: int
    n_test: int
    seconds: float | None = Field(description="The fold's engine time, once done.")
    error: str | None


class CVCurve(SQLModel):
    """Mean held-out error per k over the folds, and its standard error (standard deviation
    over the folds / sqrt(n_folds)), from ``engine.cv.summarise``."""

    k: list[int]
    mean: list[float]
    se: list[float]
    k_min: int = Field(description="The k of smallest mean error (the smallest on ties).")
    k_1se: int = Field(description="The smallest k within one standard error of the minimum.")
    k_best: int = Field(description="k_min or k_1se, as the study's rule says.")


class CVPublic(SQLModel):
    id: int
    dataset_id: int
    algorithm: str
    objective: str
    k_max: int
    params: dict[str, Any]
    standardize: bool
    n_folds: int
    rule: str
    metric: str
    seed: int
    mode: str = Field(description="path: one run per fold; per-k: one run per k per fold.")
    mode_reason: str
    status: RunStatus = Field(
        description="queued or running until every fold is done; failed or cancelled when a "
        "fold is."
    )
    folds_done: int
    folds_total: int
    folds: list[CVFold]
    error: str | None = Field(description="Why the study failed (its first failed fold's error).")
    curve: CVCurve | None = Field(description="Once every fold is done.")
    final_run_id: int | None
    final_run_url: str | None
    created_at: datetime
    url: str
    page_url: str
