"""What GET /api/datasets/{id}/estimate answers: a run's predicted time (engine.estimate)."""

from __future__ import annotations

from typing import Any

from sqlmodel import Field, SQLModel


class FasterSetting(SQLModel):
    settings: dict[str, Any] = Field(
        description='What to change, e.g. {"path_end": "sparsity"} or {"algorithm": "foba-obj"}.'
    )
    seconds: float = Field(description="The predicted time with that change.")
    changes: str = Field(description="What the change does to the answer.")


class RunEstimate(SQLModel):
    seconds: float = Field(description="Predicted seconds of the selection (engine.select).")
    steps: int = Field(description="Path steps or iterations the prediction counts.")
    long: bool = Field(description="Whether the run form warns before it starts.")
    long_seconds: float = Field(description="The prediction past which a run counts as long.")
    sentence: str | None = Field(description="The form's warning, when the run is long.")
    faster: list[FasterSetting] = Field(description="Faster settings (only for a long run).")


class EstimatePublic(SQLModel):
    estimate: RunEstimate
