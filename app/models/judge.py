"""What "why not this feature?" answers (GET /api/runs/{id}/why-not/{feature}): the engine's
``FeatureVerdict`` with the features named."""

from __future__ import annotations

from typing import Any

from sqlmodel import Field, SQLModel


class NamedExchange(SQLModel):
    """``feature_out`` leaves the answer, ``feature_in`` enters; ``objective`` is the refit
    after the exchange, ``gain`` the objective decrease (negative: the exchange costs)."""

    feature_out: int
    feature_out_name: str
    feature_in: int
    feature_in_name: str
    objective: float | None
    gain: float | None
    relative_gain: float | None


class WhyNot(SQLModel):
    run_id: int
    feature: int
    feature_name: str
    selected: bool = Field(description="True: the answer is why this feature, not why not.")
    objective: float | None = Field(description="The answer's objective (as the run judged it).")
    best: NamedExchange | None = Field(
        description="Unselected: the best exchange that brings the feature in. Selected: the "
        "best exchange that takes it out. None when no exchange exists."
    )
    cost: float | None = Field(
        description="best.objective - objective: what the best such exchange costs (negative: "
        "it improves the answer, which is then not a local optimum under swaps)."
    )
    relative_cost: float | None = Field(description="cost / |objective|.")
    alternatives: list[NamedExchange] = Field(
        description="Equally good alternatives: exchanges involving the feature within "
        "tie_tolerance x |objective| of the answer's objective, best first."
    )
    change_alone: float | None = Field(
        description="Selected: the objective increase of removing it alone. Unselected: the "
        "objective decrease of adding it alone (k + 1 features)."
    )
    explanation: str
    tie_tolerance: float
    judged_as: dict[str, Any] = Field(
        description="The problem judged: objective, standardize, objective parameters, on the "
        "run's training rows."
    )
    seconds: float = Field(description="How long the answer took when first computed.")
