"""Runs: what clients send to start one (a configuration, a split), the table, what clients
get back, what they send to rename or tag one, and a finished run's result.

``RunBase`` holds the columns a client may read; the table ``Run`` adds the worker's
bookkeeping (the claim token) and ``RunPublic`` adds what is computed for the answer (urls,
durations), so a new column is declared once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import field_validator
from sqlalchemy import JSON, ColumnElement, and_
from sqlmodel import Field, SQLModel, col

from app.models.common import NO_ID_REUSE, RunStatus, utcnow
from app.models.fields import (
    FORBIDDEN_CHARACTERS,
    ID_TYPE,
    MAX_ID,
    MAX_K,
    MAX_SEED,
    OMITTED_SCHEMA,
    SEED_TYPE,
    STRICT,
    Fraction,
    Omitted,
    Request,
)

MAX_TAGS = 20
MAX_TAG_CHARS = 40


# A tag the validator keeps: not blank, no comma or double quote, nothing unstorable.
_TAG_OUT = ',"' + "".join(FORBIDDEN_CHARACTERS)
TAG_PATTERN = f"^[^{_TAG_OUT}]*[^\\s{_TAG_OUT}][^{_TAG_OUT}]*$"


def _tag_words(schema: dict[str, Any]) -> None:
    """The schema's words for what the tag validator refuses (which says it better)."""
    schema.pop("default", None)
    schema["items"] = {"type": "string", "pattern": TAG_PATTERN, "maxLength": MAX_TAG_CHARS}


class RunUpdate(Request):
    """Fields left out stay as they are."""

    model_config = STRICT

    name: Annotated[str, Field(max_length=200)] | Omitted = Field(
        default=None, schema_extra=OMITTED_SCHEMA, description="Blank: no name."
    )
    notes: Annotated[str, Field(max_length=5000)] | Omitted = Field(
        default=None, schema_extra=OMITTED_SCHEMA
    )
    tags: Annotated[list[str], Field(max_length=MAX_TAGS)] | Omitted = Field(
        default=None,
        schema_extra={"json_schema_extra": _tag_words},
        description=f"Short labels, at most {MAX_TAGS} of at most {MAX_TAG_CHARS} characters, "
        "without commas or double quotes; repeats are kept once.",
    )

    @field_validator("name", "notes")
    @classmethod
    def _strip(cls, value: str | None) -> str | None:
        return None if value is None else value.strip()

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: list[str] | None) -> list[str] | None:
        if tags is None:
            return None
        out: list[str] = []
        for raw in tags:
            tag = raw.strip()
            if not tag:
                raise ValueError("a tag is empty; leave it out")
            if len(tag) > MAX_TAG_CHARS:
                raise ValueError(f"tag {tag[:20]!r}… is longer than {MAX_TAG_CHARS} characters")
            if "," in tag or '"' in tag:
                raise ValueError(f"tag {tag!r} holds a comma or a double quote; split or drop it")
            if tag not in out:
                out.append(tag)
        return out


# The judging options of a run (engine.judge), declared once: the form, the API schema and the
# CLI read their defaults and help from here, and RunBase stores them as columns.
CERTIFY = Field(
    True,
    description="After the selection, price every exchange of one selected feature for one "
    "other (refitted): the answer is a local optimum under swaps, or the certificate names the "
    "best improving exchanges. Computed by the worker and stored with the result; skipped, "
    "saying so, when the problem is too large for it (rows x features x k).",
)
EXACT = Field(
    False,
    description="Also search for the best support of the answer's size by branch and bound "
    "(at most 10 s, in the worker) and report the answer's gap to it: 'optimal' or 'x% above "
    "the best size-k support'; 'not affordable' when the search does not finish in time.",
)


class RunConfig(Request):
    """One algorithm configuration: the part of a run a comparison varies."""

    model_config = STRICT

    algorithm: str = Field(description="A name from GET /api/algorithms.")
    objective: str | None = Field(
        None,
        description="A name from GET /api/objectives. None (the default): the data set's task "
        "decides, least_squares for regression and logistic for classification; the stored run "
        "records the objective used.",
    )
    k: int | None = Field(
        None,
        ge=1,
        le=MAX_K,
        description="Number of features to select. None (the default): the size of the data "
        "set's known true support, or else 5 (engine.default_k), unless the algorithm ends its "
        "path by its own rule (a stopping threshold among its parameters, or no k at all); the "
        "stored run records the k used.",
    )
    params: dict[str, Any] = Field(
        default_factory=dict, description="Algorithm and objective parameters, by name."
    )
    record_candidates: bool = Field(
        False,
        description="Keep the candidate scores behind each decision (teaching mode); off by "
        "default, as in engine.select, since they grow with the number of features.",
    )
    standardize: bool = Field(
        True,
        description="Select on columns scaled to unit variance, so that the columns' units do "
        "not decide; coefficients are reported on the original scale.",
    )
    certify: bool = CERTIFY
    exact: bool = EXACT


class SplitOptions(Request):
    model_config = STRICT

    test_fraction: Fraction | None = Field(
        None,
        gt=0,
        lt=1,
        description="Hold out this fraction of rows to test on. None (the default): train on "
        "every row, as the CLI and engine.sklearn do.",
    )
    seed: int | None = Field(
        None,
        ge=0,
        le=MAX_SEED,
        description="Seeds the split and randomised algorithms (default 0).",
    )


class RunCreate(RunConfig, SplitOptions):
    dataset_id: int = Field(ge=1, le=MAX_ID)


class RunBase(SQLModel):
    """The columns of a run that clients read."""

    dataset_id: int = Field(
        foreign_key="datasets.id", ondelete="CASCADE", sa_type=ID_TYPE, index=True
    )
    comparison_id: int | None = Field(
        default=None, foreign_key="comparisons.id", ondelete="CASCADE", sa_type=ID_TYPE, index=True
    )
    algorithm: str
    objective: str
    k: int | None = None
    params: dict[str, Any] = Field(
        default_factory=dict, sa_type=JSON, description="Engine parameters, defaults filled in."
    )
    record_candidates: bool = False
    standardize: bool = Field(default=True, sa_column_kwargs={"server_default": "1"})
    certify: bool = Field(
        default=True,
        sa_column_kwargs={"server_default": "1"},
        description=CERTIFY.description,
    )
    exact: bool = Field(
        default=False,
        sa_column_kwargs={"server_default": "0"},
        description=EXACT.description,
    )
    test_fraction: float | None = None
    seed: int = Field(default=0, sa_type=SEED_TYPE)
    status: str = Field(default=RunStatus.queued, index=True)
    cancel_requested: bool = False
    progress: float = 0.0
    attempt: int = 0  # claims so far; above 1 means a worker died holding it
    worker: str | None = None
    heartbeat_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    error: str | None = None
    # A fold of a cross-validation over k (its result is engine.cv.FoldResult.to_dict()), not
    # a run of its own: kept out of the run lists, executed by run_job like any run.
    cv_id: int | None = Field(
        default=None, foreign_key="cv_studies.id", ondelete="CASCADE", sa_type=ID_TYPE, index=True
    )
    cv_fold: int | None = None
    # A subsample of a stability study (its result is
    # engine.stability.SubsampleResult.to_dict()): a part of a study like a fold.
    stability_id: int | None = Field(
        default=None,
        foreign_key="stability_studies.id",
        ondelete="CASCADE",
        sa_type=ID_TYPE,
        index=True,
    )
    stability_index: int | None = None
    # A row range of the statistics pass over a table registered by reference (its index in
    # the data set's meta["reference"]["parts"]; its result the range's partial statistics'
    # key and counts, app.jobs.table_pass): a part like a fold, of the data set itself.
    table_part: int | None = None
    # Set by people after the run (PATCH /api/runs/{id}); tags is a list of short labels.
    name: str = Field(default="", sa_column_kwargs={"server_default": ""})
    notes: str = Field(default="", sa_column_kwargs={"server_default": ""})
    tags: list[str] = Field(
        default_factory=list, sa_type=JSON, sa_column_kwargs={"server_default": "[]"}
    )


class Run(RunBase, table=True):
    __tablename__ = "runs"
    __table_args__ = NO_ID_REUSE

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
    claim_token: str | None = None
    result: dict[str, Any] | None = Field(default=None, sa_type=JSON)


class RunPublic(RunBase):
    id: int
    status: RunStatus
    queued_seconds: float | None = Field(description="From submission to the last claim.")
    run_seconds: float | None = Field(description="From the last claim to the end.")
    seconds_left: float | None = Field(
        None,
        description="A running run's time left, estimated from its progress so far (the path's "
        "real end, see engine.path_budget) and the time it took; None before its first step.",
    )
    result: RunResult | None = Field(description="None for a fold (see its cross-validation).")
    cv_id: int | None = Field(None, description="The cross-validation this run is a fold of.")
    stability_id: int | None = Field(
        None, description="The stability study this run is a subsample of."
    )
    url: str
    trace_url: str

    @classmethod
    def of(cls, run: Run) -> RunPublic:
        return cls.model_validate(
            {
                **run.model_dump(exclude={"claim_token"}),
                "result": run.result if part_of(run) is None else None,
                "queued_seconds": _seconds(run.created_at, run.started_at),
                "run_seconds": _seconds(run.started_at, run.finished_at),
                "seconds_left": seconds_left(run),
                "url": f"/api/runs/{run.id}",
                "trace_url": f"/api/runs/{run.id}/trace",
            }
        )


@dataclass(frozen=True)
class StudyPart:
    """What a part of a study (a cross-validation fold, a stability subsample) belongs to."""

    label: str  # "fold 2 of cross-validation 5"
    study_id: int
    page_url: str
    api_url: str
    product: str  # what its result holds


def part_of(run: RunBase) -> StudyPart | None:
    """The study ``run`` is a part of, or None for a run of its own. The one place that knows
    the kinds of parts (with ``standalone``)."""
    if run.cv_id is not None:
        return StudyPart(
            f"fold {run.cv_fold} of cross-validation {run.cv_id}",
            run.cv_id,
            f"/cv/{run.cv_id}",
            f"/api/cv/{run.cv_id}",
            "the fold's held-out errors",
        )
    if run.stability_id is not None:
        return StudyPart(
            f"subsample {run.stability_index} of stability study {run.stability_id}",
            run.stability_id,
            f"/stability/{run.stability_id}",
            f"/api/stability/{run.stability_id}",
            "the subsample's supports at every k",
        )
    if run.table_part is not None:
        return StudyPart(
            f"range {run.table_part} of the statistics pass of data set {run.dataset_id}",
            run.dataset_id,
            f"/datasets/{run.dataset_id}",
            f"/api/datasets/{run.dataset_id}",
            "the range's partial sufficient statistics",
        )
    return None


def standalone() -> ColumnElement[bool]:
    """SQL: runs of their own, not parts of a study (folds, subsamples): what run lists,
    tags, counts and comparisons see."""
    return and_(
        col(Run.cv_id).is_(None), col(Run.stability_id).is_(None), col(Run.table_part).is_(None)
    )


def seconds_left(run: Run, now: datetime | None = None) -> float | None:
    """The time a running run still needs if it goes on at the pace of its progress so far."""
    if run.status != RunStatus.running or run.started_at is None or not 0 < run.progress < 1:
        return None
    elapsed = ((now or utcnow()) - _aware(run.started_at)).total_seconds()
    return max(elapsed, 0.0) * (1 - run.progress) / run.progress


def _aware(moment: datetime) -> datetime:
    """SQLite hands datetimes back without their (UTC) zone."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return (end - start).total_seconds() if start and end else None


# --------------------------------------------------------------------------- results
# ``Run.result`` holds ``RunResult.model_dump()``: the selection, its fit on the training and
# test rows, and its recovery of a known true support.


class SelectedFeature(SQLModel):
    index: int
    name: str
    coef: float


class FitMetrics(SQLModel):
    """MSE and R^2 for regression objectives; accuracy and log-loss for classification."""

    n_samples: int
    mse: float | None = None
    r2: float | None = None
    accuracy: float | None = None
    log_loss: float | None = None


class SupportRecovery(SQLModel):
    """The selected support S against the known true support S*."""

    true_support: list[str]
    true_positives: int
    false_positives: int
    false_negatives: int
    precision: float
    recall: float
    f_measure: float
    selection_error: int
    selection_error_definition: str = "|S \\ S*| + |S* \\ S| (size of the symmetric difference)"
    exact_recovery: bool
    auc: float | None = Field(
        None,
        description="Support-recovery ROC AUC, the features ranked by the order the path first "
        "admitted them; none when every feature is true (or none is), or for runs stored "
        "before it was recorded.",
    )


class RunResult(SQLModel):
    support: list[SelectedFeature]
    intercept: float
    objective: float | None
    n_steps: int
    stop_reason: str
    engine_seconds: float
    train: FitMetrics
    test: FitMetrics | None
    recovery: SupportRecovery | None
    # How good is the answer (engine.judge), computed by the worker after the selection; None
    # when the run did not ask for it (certify, exact) or was stored before it existed.
    judged_as: dict[str, Any] | None = Field(
        default=None,
        description="The problem the judging tools solve for this run, as engine.judge."
        "settings_of gives it: objective, standardize and the objective's parameters (on the "
        "run's training rows).",
    )
    certificate: dict[str, Any] | None = Field(
        default=None,
        description="The swap certificate (engine.certify(...).to_dict() without its events, "
        "which are in the trace), or {'skipped': reason} when the problem was too large.",
    )
    exact: dict[str, Any] | None = Field(
        default=None,
        description="The exact best support of the answer's size and the gap to it "
        "(engine.exact_best(...).to_dict()), or {'skipped': reason}.",
    )
    passes: dict[str, int] | None = Field(
        default=None,
        description="How a run on a table registered by reference read it (logistic): passes, "
        "full_passes (over every column), rows_read, n_samples and fit_passes (the fit "
        "measured after); None for the other runs.",
    )
