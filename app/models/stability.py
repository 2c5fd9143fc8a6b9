"""How stable is a selection: the stability study table (its subsamples are runs,
``Run.stability_id``), what clients send and what they get back."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON
from sqlmodel import Field, SQLModel

from app.models.common import NO_ID_REUSE, RunStatus, utcnow
from app.models.fields import ID_TYPE, MAX_ID, MAX_K, MAX_SEED, SEED_TYPE, STRICT, Fraction, Request

MAX_PAIRS = 500
MAX_METHODS = 6


class StabilityStudy(SQLModel, table=True):
    """Complementary-pairs stability selection at every k = 1..k_max, of one algorithm or of
    several on the same subsamples (``methods``); every (method, subsample) is a run
    (``Run.stability_id``, ``Run.stability_index``), one job each, and the study's status is
    theirs (see ``app.services.stability``)."""

    __tablename__ = "stability_studies"
    __table_args__ = NO_ID_REUSE

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    dataset_id: int = Field(
        foreign_key="datasets.id", ondelete="CASCADE", sa_type=ID_TYPE, index=True
    )
    # The run whose selection is asked about, if the study was started from a run; no
    # foreign key (a run may be deleted, the study stays).
    run_id: int | None = Field(default=None, sa_type=ID_TYPE)
    algorithm: str  # the first method; the others in ``methods``
    objective: str
    k_max: int
    # [{"algorithm": name, "params": {...} (defaults filled in)}, ...]: the first is
    # ``algorithm``; all run on the same subsamples.
    methods: list[dict[str, Any]] = Field(default_factory=list, sa_type=JSON)
    standardize: bool = Field(default=True, sa_column_kwargs={"server_default": "1"})
    n_pairs: int
    threshold: float
    max_false: float | None = None
    seed: int = Field(default=0, sa_type=SEED_TYPE)
    plan: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)  # StabilityPlan.to_dict()
    created_at: datetime = Field(default_factory=utcnow)


class StabilityCreate(Request):
    """How stable is a selection: B complementary pairs of half samples (2B runs of each
    method, one job each), every unit's selection frequency at every k = 1..k_max, the stable
    set at the threshold with its bound on the expected number of false selections."""

    model_config = STRICT

    dataset_id: int = Field(ge=1, le=MAX_ID)
    run_id: int | None = Field(
        None,
        ge=1,
        le=MAX_ID,
        description="The run whose selection is asked about (its data set, algorithm, "
        "objective, parameters, standardize and seed are taken as defaults; k_max defaults "
        "to its k).",
    )
    algorithm: str | None = Field(
        None, description="A name from GET /api/algorithms that takes k (default: the run's)."
    )
    objective: str | None = Field(
        None, description="Default: the run's, else the data set's task decides (as for a run)."
    )
    params: dict[str, Any] | None = Field(
        None, description="Algorithm and objective parameters, by name (default: the run's)."
    )
    compare_with: list[str] = Field(
        default_factory=list,
        max_length=MAX_METHODS - 1,
        description="Other algorithms (their default parameters) run on the same subsamples, "
        "compared by stability: e.g. omp, lasso, abess.",
    )
    k_max: int | None = Field(
        None, ge=1, le=MAX_K, description="Frequencies at every k from 1 to k_max."
    )
    n_pairs: int = Field(
        50, ge=1, le=MAX_PAIRS, description="B: complementary pairs, 2B runs of each method."
    )
    threshold: Fraction = Field(
        0.6, gt=0.5, le=1.0, description="pi: a unit is stable at k when its frequency >= pi."
    )
    max_false: Fraction | None = Field(
        None, gt=0, description="A target for E[V]: the threshold that meets it at every k."
    )
    seed: int | None = Field(
        None, ge=0, le=MAX_SEED, description="Seeds the pairs (default: the run's, else 0)."
    )
    standardize: bool | None = Field(None, description="Default: the run's, else true.")


class StabilityPart(SQLModel):
    """One (method, subsample) run."""

    method: str
    subsample: int = Field(description="Pair subsample // 2; 0 <= subsample < 2B.")
    run_id: int
    status: RunStatus
    progress: float
    seconds: float | None = Field(description="The subsample's engine time, once done.")
    error: str | None


class StabilityMethod(SQLModel):
    """One method's frequencies over the subsamples done (``engine.stability.summarise``):
    ``summary`` is ``StabilitySummary.to_dict()`` (frequency[k - 1][unit], stable sets,
    bounds, Nogueira's index and the mean Jaccard similarity at every k)."""

    algorithm: str
    params: dict[str, Any]
    subsamples_done: int
    summary: dict[str, Any] | None = Field(description="None until a subsample is done.")


class StabilityPublic(SQLModel):
    id: int
    dataset_id: int
    run_id: int | None
    algorithm: str
    objective: str
    k_max: int
    standardize: bool
    n_pairs: int
    threshold: float
    max_false: float | None
    seed: int
    mode: str = Field(description="path: one engine run per subsample; per-k: one per k.")
    mode_reason: str
    status: RunStatus = Field(
        description="queued or running until every subsample run is done; failed or "
        "cancelled when one is."
    )
    parts_done: int
    parts_total: int
    progress: float = Field(description="Fraction of the work done, over every part.")
    unit_names: list[str] = Field(description="A label per unit (feature, or group).")
    methods: list[StabilityMethod]
    steadiest: list[list[str]] | None = Field(
        description="With several methods, once all are done: at every k, the methods of "
        "highest stability index."
    )
    parts: list[StabilityPart]
    error: str | None
    created_at: datetime
    url: str
    page_url: str
    frequencies_url: str
