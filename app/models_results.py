"""A finished run's result (``Run.result`` holds ``RunResult.model_dump()``): the selection,
its fit on the training and test rows, and its recovery of a known true support."""

from __future__ import annotations

from sqlmodel import Field, SQLModel


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
