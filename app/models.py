"""Tables and the API's model families (Create = what clients send, Public = what they get).

A data set row names its arrays by a key its array store chose (``app.storage``): a ``.npz``
file under the data directory, or the rows of ``array_chunks``. Timestamps are aware UTC
datetimes (SQLModel stores them as UTC). Tables whose ids appear in links never reuse an id
(AUTOINCREMENT on SQLite; PostgreSQL sequences never go back). A change to a table is a new
migration in ``app/migrations`` (see its docstring).
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import ConfigDict, field_validator
from sqlalchemy import JSON, LargeBinary
from sqlmodel import Field, SQLModel

from engine.trace import EVENT_JSON_SCHEMA

from . import run_options
from .bounds import MAX_ID, MAX_K, MAX_SEED, STRICT, Fraction

# Re-exported: the result models were defined here first.
from .models_results import (  # noqa: F401
    FitMetrics,
    RunResult,
    SelectedFeature,
    SupportRecovery,
)


def utcnow() -> datetime:
    return datetime.now(UTC)


# A deleted data set's, run's or comparison's id is never given to a new one: links stay true.
NO_ID_REUSE = {"sqlite_autoincrement": True}


class RunStatus(StrEnum):
    queued = "queued"
    running = "running"
    done = "done"
    failed = "failed"
    cancelled = "cancelled"


ACTIVE = (RunStatus.queued, RunStatus.running)


class Task(StrEnum):
    regression = "regression"
    classification = "classification"


class Message(SQLModel):
    """Body of every 4xx that is not a validation error (those use FastAPI's shape)."""

    detail: str


class ServerError(Message):
    """507 (disk full) and 500 (unexpected): the id the server's log names the failure by."""

    request_id: str


# --------------------------------------------------------------------------- data sets


class Dataset(SQLModel, table=True):
    __tablename__ = "datasets"
    __table_args__ = NO_ID_REUSE

    id: int | None = Field(default=None, primary_key=True)
    name: str
    description: str = ""
    source: str  # upload, generator or bundled
    task: str
    target: str
    n_samples: int
    n_features: int
    feature_names: list[str] = Field(sa_type=JSON)
    groups: list[str] | None = Field(default=None, sa_type=JSON)
    classes: list[str] | None = Field(default=None, sa_type=JSON)  # label of y == 0, y == 1
    true_support: list[int] | None = Field(default=None, sa_type=JSON)
    meta: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)
    file: str  # the array store's key (chosen by the server) of X, y and the column stats
    sample_key: str | None = Field(default=None, unique=True)  # makes seeding idempotent
    created_at: datetime = Field(default_factory=utcnow)


class UploadOptions(SQLModel):
    """Form fields sent with a CSV upload (the file itself travels in the field ``file``)."""

    model_config = ConfigDict(extra="forbid")

    target: str = Field(description="Name of the column to predict.")
    features: str | None = Field(
        None,
        description="Feature columns: comma-separated names or a JSON list; default all "
        "columns but the target (and but ID-like columns, see id_columns).",
    )
    delimiter: str | None = Field(
        None, description="One character, or 'tab'; detected from the file when omitted."
    )
    decimal: Literal[".", ","] = Field(
        ".", description="Decimal mark of the numbers: '.' (1.5) or ',' (1,5)."
    )
    encoding: str = Field("utf-8", description="Text encoding of the file (a text codec).")
    task: Task | None = Field(None, description="Inferred from the target when omitted.")
    positive_class: str | None = Field(
        None,
        max_length=200,
        description="Makes a classification target binary: this class (y = 1) against all "
        "the others (y = 0). Needed when the target has more than two classes.",
    )
    text_columns: Literal["error", "drop", "onehot"] = Field(
        "error",
        description="Feature columns holding text: refuse the file naming them all (error), "
        "leave them out (drop), or encode each as indicator columns named column=value that "
        "form one feature group (onehot).",
    )
    missing: Literal["error", "drop", "impute"] = Field(
        "error",
        description="Missing or infinite cells: refuse the file with counts per column "
        "(error), drop those rows (drop), or fill feature cells with the column mean "
        "(impute; rows missing the target are dropped).",
    )
    id_columns: Literal["drop", "keep"] = Field(
        "drop",
        description="ID-like columns (a unique integer or text per row, a row counter, or a "
        "name such as id): left out of the features (drop) or kept (keep). Columns named in "
        "'features' are always kept.",
    )
    groups: str | None = Field(
        None,
        description="Feature groups: a JSON object {column: group} (unmapped columns form "
        "groups of their own; a one-hot encoded column names all its indicators) or one label "
        "per feature (comma-separated or a JSON list).",
    )
    true_support: str | None = Field(
        None,
        description="Columns known to matter (comma-separated or a JSON list), for "
        "support-recovery metrics.",
    )
    name: str | None = Field(None, max_length=200)
    description: str = Field("", max_length=2000)

    @field_validator("missing", mode="before")
    @classmethod
    def _old_spelling(cls, value: Any) -> Any:
        return "error" if value == "reject" else value  # the name before 'error'


class DatasetGenerate(SQLModel):
    model_config = STRICT

    generator: str = Field(description="A name from GET /api/generators.")
    params: dict[str, Any] = Field(default_factory=dict)
    random_state: int | None = Field(0, ge=0, le=MAX_SEED)
    name: str | None = Field(None, max_length=200)


class ColumnSummary(SQLModel):
    name: str
    role: Literal["feature", "target"]
    type: Literal["numeric", "categorical"]
    missing: int
    imputed: int = Field(0, description="Missing cells filled with the column mean.")
    id_like: bool = Field(False, description="Looks like a row identifier (kept on request).")
    source: str | None = Field(
        None, description="The text column a one-hot indicator column was made from."
    )
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    max: float | None = None


class DatasetSummary(SQLModel):
    id: int
    name: str
    description: str
    source: str
    task: Task
    target: str
    n_samples: int
    n_features: int
    has_true_support: bool
    created_at: datetime
    url: str

    @classmethod
    def of(cls, ds: Dataset) -> DatasetSummary:
        return cls.model_validate(_dataset_fields(ds))


class DatasetPublic(DatasetSummary):
    feature_names: list[str]
    groups: list[str] | None
    classes: list[str] | None
    true_support: list[str] | None
    columns: list[ColumnSummary]
    meta: dict[str, Any]

    @classmethod
    def with_columns(cls, ds: Dataset, columns: list[ColumnSummary]) -> DatasetPublic:
        names = ds.feature_names
        truth = [names[j] for j in ds.true_support] if ds.true_support is not None else None
        return cls.model_validate(
            {
                **_dataset_fields(ds),
                "feature_names": names,
                "groups": ds.groups,
                "classes": ds.classes,
                "true_support": truth,
                "columns": columns,
                "meta": ds.meta,
            }
        )


def _dataset_fields(ds: Dataset) -> dict[str, Any]:
    return {
        **ds.model_dump(include=set(DatasetSummary.model_fields) - {"url", "has_true_support"}),
        "has_true_support": ds.true_support is not None,
        "url": f"/api/datasets/{ds.id}",
    }


class DatasetPreview(SQLModel):
    dataset_id: int
    offset: int
    total: int
    columns: list[str]
    rows: list[list[float | str]]
    id_like: list[str] = Field(
        default_factory=list, description="Columns shown that look like row identifiers."
    )
    excluded: dict[str, str] = Field(
        default_factory=dict, description="Columns of the file left out, with the reason."
    )


# --------------------------------------------------------------------------- runs


class RunConfig(SQLModel):
    """One algorithm configuration: the part of a run a comparison varies."""

    model_config = STRICT

    algorithm: str = Field(description="A name from GET /api/algorithms.")
    objective: str = Field("least_squares", description="A name from GET /api/objectives.")
    k: int | None = Field(None, ge=1, le=MAX_K, description="Number of features to select.")
    params: dict[str, Any] = Field(
        default_factory=dict, description="Algorithm and objective parameters, by name."
    )
    record_candidates: bool = Field(
        False, description="Keep the candidate scores behind each decision (teaching mode)."
    )
    standardize: bool = Field(
        True,
        description="Select on columns scaled to unit variance, so that the columns' units do "
        "not decide; coefficients are reported on the original scale.",
    )


class SplitOptions(SQLModel):
    model_config = STRICT

    test_fraction: Fraction | None = Field(
        None, gt=0, lt=1, description="Hold out this fraction of rows to test on."
    )
    seed: int | None = Field(
        None,
        ge=0,
        le=MAX_SEED,
        description="Seeds the split and randomised algorithms (default 0).",
    )


class RunCreate(RunConfig, SplitOptions):
    dataset_id: int = Field(ge=1, le=MAX_ID)


class Comparison(SQLModel, table=True):
    __tablename__ = "comparisons"
    __table_args__ = NO_ID_REUSE

    id: int | None = Field(default=None, primary_key=True)
    dataset_id: int = Field(foreign_key="datasets.id", ondelete="CASCADE", index=True)
    name: str = ""
    created_at: datetime = Field(default_factory=utcnow)


class Run(SQLModel, table=True):
    __tablename__ = "runs"
    __table_args__ = NO_ID_REUSE

    id: int | None = Field(default=None, primary_key=True)
    dataset_id: int = Field(foreign_key="datasets.id", ondelete="CASCADE", index=True)
    comparison_id: int | None = Field(
        default=None, foreign_key="comparisons.id", ondelete="CASCADE", index=True
    )
    algorithm: str
    objective: str
    k: int | None = None
    params: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)  # validated, defaults in
    record_candidates: bool = False
    test_fraction: float | None = None
    seed: int = 0
    status: str = Field(default=RunStatus.queued, index=True)
    cancel_requested: bool = False
    progress: float = 0.0
    attempt: int = 0  # claims so far; above 1 means a worker died holding it
    claim_token: str | None = None
    worker: str | None = None
    heartbeat_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    error: str | None = None
    result: dict[str, Any] | None = Field(default=None, sa_type=JSON)
    # A fold of a cross-validation over k (its result is engine.cv.FoldResult.to_dict()), not
    # a run of its own: kept out of the run lists, executed by run_job like any run.
    cv_id: int | None = Field(
        default=None, foreign_key="cv_studies.id", ondelete="CASCADE", index=True
    )
    cv_fold: int | None = None
    # Set by people after the run (PATCH /api/runs/{id}); tags is a list of short labels.
    name: str = Field(default="", sa_column_kwargs={"server_default": ""})
    notes: str = Field(default="", sa_column_kwargs={"server_default": ""})
    tags: list[str] = Field(
        default_factory=list, sa_type=JSON, sa_column_kwargs={"server_default": "[]"}
    )


class ComparisonRun(SQLModel, table=True):
    """A run a comparison was made from after the fact (``POST /api/comparisons/from-runs``);
    a comparison's own runs point to it through ``Run.comparison_id`` instead. A run may be
    in several such comparisons; no id of its own (nothing links to a row)."""

    __tablename__ = "comparison_runs"

    comparison_id: int = Field(foreign_key="comparisons.id", ondelete="CASCADE", primary_key=True)
    run_id: int = Field(foreign_key="runs.id", ondelete="CASCADE", primary_key=True, index=True)


class CVStudy(SQLModel, table=True):
    """A choice of k by K-fold cross-validation; its folds are runs (``Run.cv_id``), one job
    each, and its status is theirs (see ``app.services.cv``)."""

    __tablename__ = "cv_studies"
    __table_args__ = NO_ID_REUSE

    id: int | None = Field(default=None, primary_key=True)
    dataset_id: int = Field(foreign_key="datasets.id", ondelete="CASCADE", index=True)
    algorithm: str
    objective: str
    k_max: int
    params: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)  # as Run.params
    n_folds: int
    rule: str  # engine.cv.RULES
    metric: str  # engine.cv.METRICS
    seed: int = 0
    plan: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)  # CVPlan.to_dict()
    # The run at the chosen k on all data; no foreign key (runs already point here).
    final_run_id: int | None = None
    created_at: datetime = Field(default_factory=utcnow)


class RunPublic(SQLModel):
    id: int
    dataset_id: int
    comparison_id: int | None
    name: str
    notes: str
    tags: list[str]
    algorithm: str
    objective: str
    k: int | None
    params: dict[str, Any]
    record_candidates: bool
    standardize: bool
    test_fraction: float | None
    seed: int
    status: RunStatus
    cancel_requested: bool
    progress: float
    attempt: int
    worker: str | None
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None
    queued_seconds: float | None = Field(description="From submission to the last claim.")
    run_seconds: float | None = Field(description="From the last claim to the end.")
    result: RunResult | None = Field(description="None for a fold (see its cross-validation).")
    cv_id: int | None = Field(None, description="The cross-validation this run is a fold of.")
    cv_fold: int | None = None
    url: str
    trace_url: str

    @classmethod
    def of(cls, run: Run) -> RunPublic:
        return cls.model_validate(
            {
                **run.model_dump(exclude={"claim_token"}),
                "params": run_options.engine_params(run.params),
                "standardize": run_options.standardize(run.params),
                "result": run.result if run.cv_id is None else None,
                "queued_seconds": _seconds(run.created_at, run.started_at),
                "run_seconds": _seconds(run.started_at, run.finished_at),
                "url": f"/api/runs/{run.id}",
                "trace_url": f"/api/runs/{run.id}/trace",
            }
        )


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return (end - start).total_seconds() if start and end else None


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


# --------------------------------------------------------------------------- traces


class TraceEvent(SQLModel, table=True):
    """One engine event; (run_id, step) is unique, so a rerun cannot duplicate steps."""

    __tablename__ = "trace_events"

    run_id: int = Field(foreign_key="runs.id", ondelete="CASCADE", primary_key=True)
    step: int = Field(primary_key=True)
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


class IdempotencyKey(SQLModel, table=True):
    """An Idempotency-Key header seen before, and what its request created."""

    __tablename__ = "idempotency_keys"

    key: str = Field(primary_key=True, max_length=255)
    request_hash: str
    run_id: int | None = Field(default=None, foreign_key="runs.id", ondelete="CASCADE")
    comparison_id: int | None = Field(
        default=None, foreign_key="comparisons.id", ondelete="CASCADE"
    )
    cv_id: int | None = Field(default=None, foreign_key="cv_studies.id", ondelete="CASCADE")
    created_at: datetime = Field(default_factory=utcnow)


class ArrayChunk(SQLModel, table=True):
    """One piece of a data set's ``.npz`` archive, for ``STORAGE=database``."""

    __tablename__ = "array_chunks"

    key: str = Field(primary_key=True, max_length=64)
    seq: int = Field(primary_key=True)
    data: bytes = Field(sa_type=LargeBinary)
