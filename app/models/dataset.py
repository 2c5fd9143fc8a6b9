"""Data sets: the table, what an upload or a generator request sends, what clients get back,
and what they send to rename or describe one."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import field_validator
from sqlalchemy import JSON
from sqlmodel import Field, SQLModel
from sqlmodel._compat import SQLModelConfig

from app.models.common import NO_ID_REUSE, Task, utcnow
from app.models.fields import (
    ID_TYPE,
    MAX_SEED,
    OMITTED_SCHEMA,
    STORABLE_NOT_BLANK,
    STRICT,
    Omitted,
    Request,
)


class Dataset(SQLModel, table=True):
    __tablename__ = "datasets"
    __table_args__ = NO_ID_REUSE

    id: int | None = Field(default=None, primary_key=True, sa_type=ID_TYPE)
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


class UploadOptions(Request):
    """Form fields sent with a CSV upload (the file itself travels in the field ``file``)."""

    model_config = SQLModelConfig(extra="forbid")

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
        "(impute; a one-hot encoded column's cells get a level instead, never a fraction; "
        "rows missing the target are dropped).",
    )
    na_values: str | None = Field(
        None,
        max_length=2000,
        description="Cell values that mean missing, compared without regard to case: "
        "comma-separated or a JSON list; an empty cell is always missing. Default NA, N/A, "
        "NaN, null, None; [] leaves only empty cells missing (to keep None as a category, "
        "list the others without it).",
    )
    categorical_missing: Literal["most_frequent", "level"] = Field(
        "most_frequent",
        description="With missing=impute, the missing cells of a one-hot encoded column: its "
        "most frequent level (most_frequent), or a level of their own, column=(missing) "
        "(level). Indicators stay 0 or 1.",
    )
    reference_level: str = Field(
        "none",
        max_length=2000,
        description="One-hot encoded columns: an indicator for every level (none), or one "
        "level left out of the model as the reference the others are compared with: each "
        "column's most frequent level (most_frequent), or a JSON object {column: level} "
        "(columns not named: their most frequent). The indicators stay one feature group.",
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


_UPLOAD = UploadOptions.model_fields


class ReferenceCreate(Request):
    """A table on a path the server and its workers can read (REFERENCE_DIRS), or in object
    storage under an allowed prefix (REFERENCE_URIS), registered without uploading it: a CSV
    or Parquet file, or a directory (prefix) of files of one format. The options are those of
    ``app.ingest.chunked.scan_table``."""

    model_config = STRICT

    path: str = Field(
        max_length=4096,
        description="The file or directory, absolute or relative to the first REFERENCE_DIRS "
        "entry; it must lie (symlinks resolved) inside one of REFERENCE_DIRS. Or an object or "
        "prefix in S3, s3://bucket/key, under one of REFERENCE_URIS.",
    )
    target: str = Field(max_length=1000, description="The numeric column to predict.")
    features: list[Annotated[str, Field(max_length=1000)]] | None = Field(
        None, max_length=100_000, description="Feature columns; default all but the target."
    )
    categorical: list[Annotated[str, Field(max_length=1000)]] | None = Field(
        None,
        max_length=100_000,
        description="Columns to one-hot encode besides those of text type (one group each).",
    )
    # The reader's options, as the upload's (the same names, defaults and words).
    delimiter: str | None = Field(
        _UPLOAD["delimiter"].default, max_length=10, description=_UPLOAD["delimiter"].description
    )
    decimal: Literal[".", ","] = Field(
        _UPLOAD["decimal"].default, description=_UPLOAD["decimal"].description
    )
    encoding: str = Field(
        _UPLOAD["encoding"].default,
        max_length=100,
        description=f"{_UPLOAD['encoding'].description} One that writes ASCII as ASCII: the "
        "table is read in byte ranges cut at newlines (not UTF-16 or UTF-32).",
    )
    na_values: str | None = Field(
        _UPLOAD["na_values"].default,
        max_length=2000,
        description=_UPLOAD["na_values"].description,
    )
    missing: Literal["error", "drop", "impute"] = Field(
        "error",
        description="A row with a missing or infinite cell: fails the pass naming it (error), "
        "is left out (drop), or its feature cells are filled (impute) with the column mean "
        "over the non-missing cells of the whole table, a one-hot encoded column's with a "
        "level (categorical_missing); rows missing the target are dropped. The means and "
        "levels are found by a scan at registration, so every range fills the same values.",
    )
    categorical_missing: Literal["most_frequent", "level"] = Field(
        _UPLOAD["categorical_missing"].default,
        description=_UPLOAD["categorical_missing"].description,
    )
    n_parts: int | None = Field(
        None,
        ge=1,
        le=10_000,
        description="Row ranges of the statistics pass, one job each (default: about "
        "REFERENCE_PART_MB each; a Parquet range is whole row groups).",
    )
    name: str | None = Field(None, max_length=200)
    description: str = Field("", max_length=2000)


class DatasetGenerate(Request):
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


def _not_blank(schema: dict[str, Any]) -> None:
    """The schema's word for the validator's "the name is blank" (which says it better)."""
    schema.pop("default", None)
    schema["pattern"] = STORABLE_NOT_BLANK


class DatasetUpdate(Request):
    """Fields left out stay as they are."""

    model_config = STRICT

    name: Annotated[str, Field(max_length=200)] | Omitted = Field(
        default=None,
        description="Not blank.",
        schema_extra={"json_schema_extra": _not_blank},
    )
    description: Annotated[str, Field(max_length=2000)] | Omitted = Field(
        default=None, schema_extra=OMITTED_SCHEMA
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("the name is blank; give the data set a name")
        return None if value is None else value.strip()
