"""The folds together: the curve (mean and standard error per k), the chosen k, and
``cross_validate_k``, which runs every fold in this process."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ..api import _check_data
from ..registry import REGISTRY
from .folds import Callback, FoldResult, fold_errors, kfold
from .plan import RULES, CVPlan, plan_cv


@dataclass(frozen=True)
class CVSummary:
    """The cross-validation curve and the chosen k.

    Attributes
    ----------
    k : ndarray of int, shape (k_max,)
        1..k_max.
    mean, se : ndarray, shape (k_max,)
        Mean held-out error over the folds, and its standard error (standard deviation over
        the folds / sqrt(n_folds); 0 with a single fold).
    k_min : int
        The k of smallest mean error (smallest k on ties).
    k_1se : int
        The smallest k whose mean error is within one standard error of the minimum's.
    k_best : int
        ``k_min`` or ``k_1se``, as ``rule`` says.
    rule, metric : str
    n_folds : int
    """

    k: np.ndarray
    mean: np.ndarray
    se: np.ndarray
    k_min: int
    k_1se: int
    k_best: int
    rule: str
    metric: str | None
    n_folds: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": [int(k) for k in self.k],
            "mean": [float(m) for m in self.mean],
            "se": [float(s) for s in self.se],
            "k_min": self.k_min,
            "k_1se": self.k_1se,
            "k_best": self.k_best,
            "rule": self.rule,
            "metric": self.metric,
            "n_folds": self.n_folds,
        }


def choose_k(mean, se, rule: str = "min") -> int:
    """The chosen k (1-based) from a curve: ``min`` or ``1se`` (see ``RULES``)."""
    mean, se = np.asarray(mean, dtype=float), np.asarray(se, dtype=float)
    _check_rule(rule)
    if mean.ndim != 1 or mean.size == 0 or se.shape != mean.shape:
        raise ValueError("mean and se must be 1-D arrays of the same length (one entry per k)")
    if not np.all(np.isfinite(mean)):
        raise ValueError("the cross-validation curve holds NaN or infinite errors")
    best = int(np.argmin(mean))
    if rule == "min":
        return best + 1
    bound = mean[best] + se[best]
    return int(np.flatnonzero(mean <= bound)[0]) + 1


def _check_rule(rule: str) -> None:
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(map(repr, RULES))}, got {rule!r}")


def summarise(
    folds: Sequence[FoldResult] | Sequence[Sequence[float]] | np.ndarray, rule: str = "min"
) -> CVSummary:
    """The curve (mean and standard error per k) and the chosen k from the folds done.

    Parameters
    ----------
    folds : sequence of FoldResult, or array of shape (n_folds, k_max)
        Any number of folds (a service may summarise the folds done so far).
    rule : {"min", "1se"}
    """
    _check_rule(rule)
    metric = None
    if len(folds) and isinstance(folds[0], FoldResult):
        results = cast(Sequence[FoldResult], folds)  # the first fold's type is every fold's
        metrics = {f.metric for f in results}
        if len(metrics) > 1:
            raise ValueError(f"the folds were scored with different metrics: {sorted(metrics)}")
        metric = metrics.pop()
        errors = np.array([f.errors for f in results])
    else:
        errors = np.asarray(folds, dtype=float)
    if errors.ndim != 2 or errors.shape[0] == 0 or errors.shape[1] == 0:
        raise ValueError("need the errors of at least one fold, one row per fold")
    n_folds = errors.shape[0]
    mean = errors.mean(axis=0)
    se = errors.std(axis=0, ddof=1) / math.sqrt(n_folds) if n_folds > 1 else np.zeros_like(mean)
    k_min, k_1se = choose_k(mean, se, "min"), choose_k(mean, se, "1se")
    return CVSummary(
        k=np.arange(1, errors.shape[1] + 1),
        mean=mean,
        se=se,
        k_min=k_min,
        k_1se=k_1se,
        k_best=k_min if rule == "min" else k_1se,
        rule=rule,
        metric=metric,
        n_folds=n_folds,
    )


@dataclass
class CVResult:
    """All folds, the plan and the summary of :func:`cross_validate_k`."""

    plan: CVPlan
    folds: list[FoldResult]
    summary: CVSummary

    @property
    def k_best(self) -> int:
        return self.summary.k_best

    def to_dict(self) -> dict[str, Any]:
        return {
            "plan": self.plan.to_dict(),
            "folds": [f.to_dict() for f in self.folds],
            "summary": self.summary.to_dict(),
        }


def cross_validate_k(
    X,
    y,
    *,
    algorithm: str,
    objective: str = "least_squares",
    k_max: int,
    params: Mapping[str, Any] | None = None,
    n_folds: int = 5,
    rule: str = "min",
    metric: str | None = None,
    standardize: bool = True,
    groups=None,
    random_state: int | None = 0,
    folds: Sequence[tuple[np.ndarray, np.ndarray]] | None = None,
    callback: Callback | None = None,
    on_fold: Callable[[int, FoldResult], None] | None = None,
) -> CVResult:
    """Choose k in 1..k_max by K-fold cross-validation, the folds one after another.

    ``folds`` overrides the split (``kfold(n, n_folds, y=labels, random_state=...)`` by
    default, stratified for classification). ``on_fold(i, result)`` is called as each fold
    ends. The other parameters are those of :func:`fold_errors` and :func:`summarise`.
    """
    _check_rule(rule)
    X, y = _check_data(X, y)
    task = REGISTRY.objective(objective).task
    plan = plan_cv(
        algorithm,
        objective,
        k_max=k_max,
        params=params,
        metric=metric,
        n_features=X.shape[1],
        has_groups=groups is not None,
    )
    if folds is None:
        folds = kfold(
            X.shape[0],
            n_folds,
            y=y if task == "classification" else None,
            random_state=random_state,
        )
    results = []
    for i, (train, test) in enumerate(folds):
        result = fold_errors(
            X,
            y,
            train,
            test,
            algorithm=algorithm,
            objective=objective,
            k_max=k_max,
            params=params,
            metric=plan.metric,
            standardize=standardize,
            groups=groups,
            random_state=random_state,
            callback=callback,
        )
        results.append(result)
        if on_fold is not None:
            on_fold(i, result)
    return CVResult(plan, results, summarise(results, rule))
