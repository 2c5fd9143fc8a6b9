"""Choosing k by cross-validation, from one path per fold.

A grid search over k refits a whole path for every k. One path holds more than that: FoBa's
path holds the best support of every size it visited (Zhang 2008, Section 4), a forward path
holds every prefix, and backward elimination visits every size once. So each fold runs the
algorithm once on its training part and scores every k = 1..k_max from that one trace: the
size-k answer read off the path, refitted on the training part, is evaluated on the held-out
part. The answers read off the path are exactly those that ``engine.select(k=k)`` would give
on the fold (the tests check it), so the curve is that of the method itself, not of an
approximation:

* ``best-k``: the path's decisions do not depend on k, only where it stops (``max_steps``,
  Zhang's 5k by default), so the run at k is the first ``path_length(k)`` support changes of
  the run at k_max; the size-k answer is the best size-k support along those steps
  (``engine.trace.best_along_path``).
* ``prefix``: the support after the k-th addition.
* ``backward``: the run goes down to one feature; the support when it passed size k.
* ``final`` (Frank-Wolfe, the Lasso, hard thresholding, and forward methods with replacement
  steps), and group-aware paths (whose sizes inside a group are not answers): the sizes along
  the path are not answers, so the fold runs the algorithm once per k. Correct, and k_max
  times slower; ``CVPlan.mode`` says which way a fold goes.

The pieces are separate so that a service can run each fold as its own job:
:func:`plan_cv` checks a request once (a :class:`~engine.config.ConfigError` naming the field at
fault), :func:`fold_errors` scores one fold, :func:`summarise` turns the folds into the curve
(mean and standard error per k) and the chosen k (minimum, or the one-standard-error rule).
:func:`kfold` makes the folds and :func:`cross_validate_k` runs them all in this process.
Pure numpy: the scikit-learn estimators (``engine.sklearn``) sit on top of these functions.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .api import _check_data, _check_target, select
from .config import Config, ConfigError, check_config
from .registry import REGISTRY
from .scaling import scale_columns
from .trace import SUPPORT_CHANGING, Event, StopRequested, best_along_path, replay

MODES = {
    "path": "one run per fold; every k is read off its path",
    "per-k": "one run per k per fold (the sizes along this algorithm's path are not answers)",
}
METRICS = {
    "mse": "mean squared error of the predictions",
    "mae": "mean absolute error of the predictions",
    "log_loss": "mean log-loss of sigmoid(decision function) (the logistic model's own loss)",
    "error": "misclassification rate (the sign of the decision function)",
}
METRICS_FOR_TASK = {"regression": ("mse", "mae"), "classification": ("log_loss", "error")}
DEFAULT_METRIC = {"regression": "mse", "classification": "log_loss"}
RULES = {
    "min": "the k of smallest mean error (the smallest such k on ties)",
    "1se": "the smallest k whose mean error is within one standard error of the minimum",
}

Callback = Callable[[Event], "bool | None"]


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class CVPlan:
    """How one fold is computed; :func:`plan_cv` builds it and checks the request.

    Attributes
    ----------
    k_max : int
        Every k in 1..k_max is scored.
    mode : {"path", "per-k"}
        One run per fold, or one run per k (see ``MODES``).
    path : str
        What the sizes along the algorithm's path mean with these parameters
        (``engine.registry.PATHS``).
    metric : str
        A key of ``METRICS``.
    runs : list of Config
        The checked engine runs one fold makes, in order (one in ``path`` mode).
    path_lengths : dict of int to int or None
        ``best-k`` paths: the support changes ``engine.select(k=k)`` would take.
    reason : str
        Why the fold runs this way, in words for a page.
    """

    k_max: int
    mode: str
    path: str
    metric: str
    runs: list[Config]
    path_lengths: dict[int, int | None] = field(default_factory=dict)
    reason: str = ""

    @property
    def algorithm(self) -> str:
        return self.runs[0].algorithm.name

    @property
    def objective(self) -> str:
        return self.runs[0].objective.name

    @property
    def params(self) -> dict[str, Any]:
        return self.runs[0].params

    def to_dict(self) -> dict[str, Any]:
        return {
            "k_max": self.k_max,
            "mode": self.mode,
            "path": self.path,
            "metric": self.metric,
            "runs": [c.k for c in self.runs],
            "reason": self.reason,
        }


def plan_cv(
    algorithm: str,
    objective: str = "least_squares",
    *,
    k_max: Any,
    params: Mapping[str, Any] | None = None,
    metric: str | None = None,
    n_samples: int | None = None,
    n_features: int | None = None,
    has_groups: bool | None = None,
    task: str | None = None,
) -> CVPlan:
    """Check a cross-validation request and say how each fold will be computed.

    Parameters
    ----------
    algorithm, objective, params, n_samples, n_features, has_groups, task
        As in :func:`engine.check_config` (``n_samples``: of a training part).
    k_max : int
        Largest k scored, from 1 to n_features.
    metric : str, optional
        A key of ``METRICS`` fitting the objective's task; default ``mse`` for regression and
        ``log_loss`` for classification.

    Raises
    ------
    ConfigError
        Naming the field at fault (``algorithm``, ``objective``, ``k`` for k_max, ``params``,
        ``groups`` or ``metric``) and what is allowed.
    """
    spec = REGISTRY.algorithms.get(algorithm) if isinstance(algorithm, str) else None
    if spec is not None and spec.k == "unused":
        raise ConfigError(
            f"algorithm {algorithm!r} does not take k (its budget is a parameter), so "
            "cross-validation over k cannot tune it; choose an algorithm that takes k",
            "algorithm",
        )
    top = check_config(
        algorithm,
        objective,
        k=k_max,
        params=params,
        n_samples=n_samples,
        n_features=n_features,
        has_groups=has_groups,
        task=task,
    )
    obj = top.objective
    if obj.task not in METRICS_FOR_TASK or obj.check_input is not None:
        raise ConfigError(
            f"objective {obj.name!r} takes {obj.task} data, not a table of features; "
            "cross-validation over k needs a regression or classification objective",
            "objective",
        )
    metric = _check_metric(metric, obj.task)
    k_max = int(top.k)  # type: ignore[arg-type]  (check_config has checked it is an int)
    path = top.path

    def at(k: int) -> Config:
        return check_config(
            algorithm,
            objective,
            k=k,
            params=params,
            n_samples=n_samples,
            n_features=n_features,
            has_groups=has_groups,
        )

    if path in ("best-k", "prefix") and not top.algorithm.uses_groups:
        lengths = {k: at(k).path_length for k in range(1, k_max + 1)} if path == "best-k" else {}
        how = (
            "the best size-k support along the first steps the run at k would take"
            if path == "best-k"
            else "the support after the k-th addition"
        )
        return CVPlan(k_max, "path", path, metric, [top], lengths, f"one path to k_max; {how}")
    if path == "backward":
        return CVPlan(
            k_max, "path", path, metric, [at(1)], {}, "one backward path down to 1 feature"
        )
    why = (
        "a group-aware path adds whole groups, so sizes inside a group are not answers"
        if top.algorithm.uses_groups and path != "final"
        else f"the answer of {algorithm!r} at k is where its run ends (path {path!r})"
    )
    runs = [at(k) for k in range(1, k_max + 1)]
    return CVPlan(k_max, "per-k", path, metric, runs, {}, f"one run per k: {why}")


def _check_metric(metric: str | None, task: str) -> str:
    allowed = METRICS_FOR_TASK[task]
    if metric is None:
        return DEFAULT_METRIC[task]
    if metric not in allowed:
        raise ConfigError(
            f"metric must be one of {', '.join(allowed)} for a {task} objective, got {metric!r}",
            "metric",
        )
    return metric


# --------------------------------------------------------------------------- reading the path


def supports_by_k(events: Sequence[Event], plan: CVPlan) -> list[tuple[int, ...]]:
    """The size-k answer of every k = 1..k_max read off one path's trace (``path`` mode).

    When the path never reached size k (a threshold stopped it), the answer is that of the
    largest size below k it reached, as ``engine.select`` returns then.
    """
    if plan.mode != "path":
        raise ValueError(f"a {plan.mode!r} plan reads no path")
    if plan.path == "best-k":
        total = sum(e.kind in SUPPORT_CHANGING for e in events)
        best: dict[int, dict[int, tuple[frozenset[int], float, int]]] = {}  # by length read
        out = []
        for k in range(1, plan.k_max + 1):
            length = min(plan.path_lengths.get(k) or total, total)
            if length not in best:
                best[length] = best_along_path(_first_changes(events, length))
            sizes = [s for s in best[length] if s <= k]
            out.append(tuple(sorted(best[length][max(sizes)][0])) if sizes else ())
        return out
    last: dict[int, frozenset[int]] = {0: frozenset()}
    for e, support in zip(events, replay(events), strict=True):
        if e.kind in SUPPORT_CHANGING:
            last[len(support)] = support  # backward: the later visit is the backward one
    return [tuple(sorted(last[max(s for s in last if s <= k)])) for k in range(1, plan.k_max + 1)]


def _first_changes(events: Sequence[Event], n: int) -> Sequence[Event]:
    """The events up to the n-th support change."""
    seen = 0
    for i, e in enumerate(events):
        if e.kind in SUPPORT_CHANGING:
            seen += 1
            if seen == n:
                return events[: i + 1]
    return events


# --------------------------------------------------------------------------- one fold


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
    standardize: bool = False,
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

    def run(k: int):
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
        result = run(plan.runs[0].k)  # type: ignore[arg-type]
        supports = supports_by_k(result.trace, plan)
        refit = _Refit(X_train, y_train, plan.runs[0], result.scale)
        for support in supports:
            coef, intercept = refit(support)
            errors.append(score(plan.metric, y_test, _decision(X_test, coef, intercept), labels))
    else:
        for config in plan.runs:
            result = run(config.k)  # type: ignore[arg-type]
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


# --------------------------------------------------------------------------- the folds together


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
        metrics = {f.metric for f in folds}  # type: ignore[union-attr]
        if len(metrics) > 1:
            raise ValueError(f"the folds were scored with different metrics: {sorted(metrics)}")
        metric = metrics.pop()
        errors = np.array([f.errors for f in folds])  # type: ignore[union-attr]
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
    standardize: bool = False,
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
