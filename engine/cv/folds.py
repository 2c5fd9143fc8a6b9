"""One fold: the held-out error of every k from one run (or one run per k), and the folds."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..api import _check_data, _check_target, select
from ..config import Config, ConfigError
from ..registry import REGISTRY
from ..scaling import scale_columns
from ..trace import Event, StopRequested
from .plan import METRICS, plan_cv, supports_by_k

Callback = Callable[[Event], "bool | None"]


@dataclass
class FoldResult:
    """The held-out error of every k = 1..k_max on one fold.

    Attributes
    ----------
    errors : ndarray, shape (k_max,)
        ``errors[k - 1]``: the metric on the held-out part of the size-k answer fitted on the
        training part.
    sizes : ndarray of int, shape (k_max,)
        The size of the support scored at k (below k when the path stopped before k).
    supports : list of tuple of int
        The support scored at each k.
    mode, metric : str
    n_train, n_test : int
    n_runs : int
        Engine runs the fold made.
    elapsed : float
        Seconds.
    """

    errors: np.ndarray
    sizes: np.ndarray
    supports: list[tuple[int, ...]]
    mode: str
    metric: str
    n_train: int
    n_test: int
    n_runs: int
    elapsed: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "errors": [float(e) for e in self.errors],
            "sizes": [int(s) for s in self.sizes],
            "supports": [list(s) for s in self.supports],
            "mode": self.mode,
            "metric": self.metric,
            "n_train": self.n_train,
            "n_test": self.n_test,
            "n_runs": self.n_runs,
            "elapsed": self.elapsed,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FoldResult:
        return cls(
            errors=np.asarray(d["errors"], dtype=float),
            sizes=np.asarray(d["sizes"], dtype=np.intp),
            supports=[tuple(int(j) for j in s) for s in d["supports"]],
            mode=str(d["mode"]),
            metric=str(d["metric"]),
            n_train=int(d["n_train"]),
            n_test=int(d["n_test"]),
            n_runs=int(d["n_runs"]),
            elapsed=float(d["elapsed"]),
        )


def fold_errors(
    X,
    y,
    train,
    test,
    *,
    algorithm: str,
    objective: str = "least_squares",
    k_max: int,
    params: Mapping[str, Any] | None = None,
    metric: str | None = None,
    standardize: bool = True,
    groups=None,
    random_state: int | None = None,
    callback: Callback | None = None,
) -> FoldResult:
    """Score every k = 1..k_max on one fold: fit on ``X[train]``, evaluate on ``X[test]``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n_samples, n_features)
    y : array-like, shape (n_samples,)
    train, test : array of int or bool mask
        The fold's training and held-out rows.
    algorithm, objective, params, standardize, groups, random_state
        As in :func:`engine.select` (``params``: the algorithm's and objective's parameters).
    k_max : int
        Score k = 1..k_max.
    metric : str, optional
        A key of ``METRICS`` (default: ``mse`` for regression, ``log_loss`` for
        classification).
    callback : callable, optional
        Receives every event of the fold's runs; returning False stops the fold.

    Returns
    -------
    FoldResult

    Raises
    ------
    ConfigError
        As :func:`plan_cv`.
    StopRequested
        When the callback stopped the fold (no partial errors are returned).
    """
    start = time.perf_counter()
    X, y, train, test = _split(X, y, train, test, objective)
    X_train, y_train, X_test, y_test = X[train], y[train], X[test], y[test]
    plan = plan_cv(
        algorithm,
        objective,
        k_max=k_max,
        params=params,
        metric=metric,
        n_samples=len(train),
        n_features=X.shape[1],
        has_groups=groups is not None,
    )
    labels = np.unique(y_train) if plan.runs[0].objective.task == "classification" else None

    def run(k: int | None):
        result = select(
            X_train,
            y_train,
            algorithm=algorithm,
            objective=objective,
            k=k,
            groups=groups,
            recorder=callback,
            random_state=random_state,
            standardize=standardize,
            **dict(params or {}),
        )
        if result.cancelled:
            raise StopRequested("the callback stopped the fold")
        return result

    errors, supports = [], []
    if plan.mode == "path":
        result = run(plan.runs[0].k)
        supports = supports_by_k(result.trace, plan)
        refit = _Refit(X_train, y_train, plan.runs[0], result.scale)
        for support in supports:
            coef, intercept = refit(support)
            errors.append(score(plan.metric, y_test, _decision(X_test, coef, intercept), labels))
    else:
        for config in plan.runs:
            result = run(config.k)
            supports.append(tuple(int(j) for j in result.support))
            decision = _decision(X_test, result.coef, result.intercept)
            errors.append(score(plan.metric, y_test, decision, labels))
    return FoldResult(
        errors=np.asarray(errors, dtype=float),
        sizes=np.array([len(s) for s in supports], dtype=np.intp),
        supports=supports,
        mode=plan.mode,
        metric=plan.metric,
        n_train=len(train),
        n_test=len(test),
        n_runs=len(plan.runs),
        elapsed=time.perf_counter() - start,
    )


def _split(X, y, train, test, objective: str):
    obj = REGISTRY.objective(objective)
    if obj.check_input is not None:
        raise ConfigError(
            f"objective {objective!r} takes {obj.task} data, not a table of features; "
            "cross-validation over k needs a regression or classification objective",
            "objective",
        )
    X, y = _check_data(X, y)
    _check_target(y, obj.task)
    n = X.shape[0]
    return X, y, _rows(train, n, "train"), _rows(test, n, "test")


def _rows(index, n: int, name: str) -> np.ndarray:
    index = np.asarray(index)
    if index.dtype == bool:
        if index.shape != (n,):
            raise ValueError(f"{name} mask has {index.shape[0]} entries for {n} rows")
        index = np.flatnonzero(index)
    if index.ndim != 1 or not np.issubdtype(index.dtype, np.integer):
        raise ValueError(f"{name} must be row indices (integers) or a boolean mask")
    if index.size == 0:
        raise ValueError(f"{name} selects no rows")
    if index.min() < -n or index.max() >= n:
        raise ValueError(f"{name} indices must be between 0 and {n - 1}")
    return index.astype(np.intp)


class _Refit:
    """The objective on a training part (scaled as the run was), refitted on one support after
    another. The supports of successive k differ by a feature or two, so the model moves from
    one to the next (removing, then adding; each move refits) instead of starting afresh:
    the same optimum, for k_max moves in all instead of k_max^2 / 2."""

    def __init__(self, X, y, config: Config, scale: np.ndarray | None) -> None:
        self.scale = scale
        Xs = scale_columns(X, scale) if scale is not None else X
        self.state = config.objective.factory(Xs, y, **config.objective_params).start()

    def __call__(self, support: Sequence[int]) -> tuple[np.ndarray, float]:
        target = set(support)
        for j in [j for j in self.state.support if j not in target]:
            self.state.remove(j)
        held = set(self.state.support)
        for j in support:
            if j not in held:
                self.state.add(int(j))
        coef = self.state.coef
        return (coef / self.scale if self.scale is not None else coef), float(self.state.intercept)


def _decision(X, coef: np.ndarray, intercept: float) -> np.ndarray:
    return np.asarray(X @ coef).ravel() + intercept


def score(metric: str, y, decision: np.ndarray, labels: np.ndarray | None = None) -> float:
    """The metric of a decision function (predictions for regression) against y.

    For classification, ``labels`` are the two training labels; the larger is the positive
    class (as the engine's classification objectives read them), predicted when the decision
    function is positive.
    """
    y = np.asarray(y).ravel()
    if metric == "mse":
        return float(np.mean((y - decision) ** 2))
    if metric == "mae":
        return float(np.mean(np.abs(y - decision)))
    if labels is None or len(labels) != 2:
        raise ValueError("a classification metric needs the two class labels")
    positive = y == labels[1]
    if metric == "log_loss":
        return float(np.mean(np.logaddexp(0.0, decision) - positive * decision))
    if metric == "error":
        known = (y == labels[0]) | positive
        return float(np.mean(~known | ((decision > 0) != positive)))
    raise ValueError(f"unknown metric {metric!r}; allowed: {', '.join(METRICS)}")


def kfold(
    n_samples: int,
    n_folds: int = 5,
    *,
    y=None,
    shuffle: bool = True,
    random_state: int | None = 0,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """K-fold (train, test) row indices; stratified by ``y`` when it is given (classes).

    Parameters
    ----------
    n_samples : int
    n_folds : int
        At least 2 and at most n_samples.
    y : array-like, optional
        Class labels: every fold then holds each class in (nearly) the same proportion.
    shuffle : bool
        Shuffle the rows first (seeded by ``random_state``); otherwise folds are contiguous.
    random_state : int, optional
    """
    if isinstance(n_folds, bool) or not isinstance(n_folds, int | np.integer):
        raise ValueError(f"n_folds must be an integer, got {n_folds!r}")
    if not 2 <= n_folds <= n_samples:
        raise ValueError(f"n_folds must be between 2 and n_samples = {n_samples}, got {n_folds}")
    rng = np.random.default_rng(random_state)
    order = rng.permutation(n_samples) if shuffle else np.arange(n_samples)
    fold_of = np.empty(n_samples, dtype=np.intp)
    if y is None:
        fold_of[order] = np.arange(n_samples) % n_folds
    else:
        y = np.asarray(y).ravel()
        if y.shape[0] != n_samples:
            raise ValueError(f"y has {y.shape[0]} entries for {n_samples} rows")
        # Deal each class's rows round-robin, continuing where the previous class stopped.
        ranked = order[np.argsort(y[order], kind="stable")]
        fold_of[ranked] = np.arange(n_samples) % n_folds
    rows = np.arange(n_samples)
    return [(rows[fold_of != f], rows[fold_of == f]) for f in range(n_folds)]
