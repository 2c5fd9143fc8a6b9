"""``engine.select``: the one entry point the app, the benchmarks and the tests call."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .algorithms.common import Solution
from .config import Config, check_config
from .judge.polish import HoldStop, polish_solution
from .objectives.base import Objective
from .registry import REGISTRY
from .scaling import column_scale, scale_columns
from .threads import small_products
from .trace import (
    SUPPORT_CHANGING,
    Event,
    Recorder,
    RecorderCallback,
    StopRequested,
    best_along_path,
    final_support,
)


@dataclass
class SelectionResult:
    """Outcome of one run.

    Attributes
    ----------
    support : ndarray of int, sorted
    coef : ndarray, shape (n_features,), zero off the support
    intercept : float
    objective : float
        Objective value of (coef, intercept).
    trace : list of Event
    n_steps : int
        Support-changing steps (add, remove, swap) in the trace.
    stop_reason : str
    dense_params : dict of ndarray, or None
        Parameters fitted on every support but never selected, beyond the intercept (the CRF's
        label biases and transitions); None for the other objectives.
    scale : ndarray of shape (n_features,), or None
        The column scales the selection ran on (``standardize=True``), or None. ``coef`` is
        on the original scale either way; the trace's scores and gains are those of the
        scaled problem.
    """

    support: np.ndarray
    coef: np.ndarray
    intercept: float
    objective: float
    trace: list[Event]
    n_steps: int
    stop_reason: str
    algorithm: str
    objective_name: str
    k: int | None
    params: dict[str, Any] = field(default_factory=dict)
    elapsed: float = 0.0
    cancelled: bool = False
    dense_params: dict[str, np.ndarray] | None = None
    scale: np.ndarray | None = None

    def best_along_path(self) -> dict[int, tuple[frozenset[int], float, int]]:
        """Zhang's best size-k support along the path, for every size the path visited."""
        return best_along_path(self.trace)


def select(
    X,
    y,
    *,
    algorithm: str,
    objective: str = "least_squares",
    k: int | None = None,
    groups=None,
    recorder: Recorder | RecorderCallback | None = None,
    random_state: int | None = None,
    record_candidates: bool = False,
    max_candidates: int = 50,
    standardize: bool = True,
    **params: Any,
) -> SelectionResult:
    """Select features of X for predicting y.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n_samples, n_features)
        For ``objective="crf"``: discrete observations, one (T, D) array per chain (a list of
        them, or one array for a single chain); the features are then the CRF's indicators
        (``engine.objectives.chains``).
    y : array-like, shape (n_samples,)
        For ``crf``: the label sequences, one 1-D array per chain.
    algorithm : str
        A name in ``engine.ALGORITHMS``.
    objective : str
        A name in ``engine.OBJECTIVES``.
    k : int, optional
        Target number of features.
    groups : array-like, shape (n_features,), optional
        Group label of every feature (integers or names), for the group-aware algorithms;
        the others ignore it.
    recorder : Recorder or callable, optional
        Receives every event as it happens; returning False (or a string saying why) stops
        the run, which then ends with the support reached so far, refitted.
    random_state : int, optional
        Seed for randomised algorithms.
    record_candidates : bool
        Attach the candidate scores behind each decision (teaching mode).
    max_candidates : int
        Keep the best this many candidate scores per decision (0 keeps all).
    standardize : bool, default True
        Select on columns scaled to unit variance (unit root mean square without an
        intercept), as glmnet and abess do, so that the choice does not depend on the
        columns' units; ``coef`` and ``intercept`` come back on the original scale. Least
        squares then fits exactly the same models; with a ridge term (``lam``) the penalty
        applies to the scaled coefficients. Ignored by objectives that build their own
        features (the CRF's indicators have no units).
    **params
        Parameters of the algorithm and of the objective (by name; see the registries).

    Raises
    ------
    ValueError
        Naming the parameter, the input or the name at fault and what is allowed.
    """
    obj_spec = REGISTRY.objective(objective)
    if obj_spec.check_input is not None:
        X, y = obj_spec.check_input(X, y)
    else:
        X, y = _check_data(X, y)
        _check_target(y, obj_spec.task)
    n_samples, n_features = X.shape
    config = check_config(
        algorithm,
        objective,
        k=k,
        params=params,
        n_samples=n_samples,
        n_features=n_features,
        has_groups=groups is not None,
    )
    extra = {"groups": _check_groups(groups, n_features)} if config.algorithm.uses_groups else {}
    scale = None
    fold = False  # the objective folds the scaling into its products: no scaled copy of X
    if standardize and "linear" in obj_spec.capabilities:
        fold = bool(getattr(obj_spec.factory, "folds_scaling", False))
        if not fold:
            centered = bool(config.objective_params.get("fit_intercept", True))
            scale = column_scale(X, centered=centered)
            X = scale_columns(X, scale)

    if isinstance(recorder, Recorder):
        rec = recorder
    else:
        rec = Recorder(recorder, record_candidates=record_candidates, max_candidates=max_candidates)
    if fold:
        loss = obj_spec.factory(X, y, **config.objective_params, standardize=True)
        scale = loss.design.scale
    else:
        loss = obj_spec.factory(X, y, **config.objective_params)
    return run_selection(
        loss, config, rec, extra=extra, scale=scale, random_state=random_state, name=objective
    )


def run_selection(
    loss: Objective,
    config: Config,
    rec: Recorder,
    *,
    extra: dict[str, Any],
    scale: np.ndarray | None,
    random_state: int | None,
    name: str,
) -> SelectionResult:
    """Run a checked configuration on an objective already built (from rows, or from
    sufficient statistics: ``engine.select_from_statistics``), polish included, and report
    the result on the original scale of the columns (``scale``: the standardisation)."""
    rng = np.random.default_rng(random_state)
    start = time.perf_counter()
    cancelled = False
    algorithm_params = dict(config.algorithm_params)
    polish = bool(algorithm_params.pop("polish", False))  # a post-step, not the algorithm's
    try:
        # BLAS threads only where they pay: the run's many small products single-threaded,
        # its large X.T @ r with the caller's threads (engine.threads).
        with small_products():
            if polish:
                held = HoldStop(rec)
                sol = config.algorithm.func(
                    loss, held, k=config.k, rng=rng, **extra, **algorithm_params
                )
                sol = polish_solution(loss, rec, sol)
            else:
                sol = config.algorithm.func(
                    loss, rec, k=config.k, rng=rng, **extra, **algorithm_params
                )
    except StopRequested as stop:
        cancelled = True
        sol = Solution.of(loss.fit_support(final_support(rec.events)), str(stop))
        rec.stopped(sol.stop_reason, objective=sol.objective, support_size=len(sol.support))
    elapsed = time.perf_counter() - start
    return SelectionResult(
        support=sol.support,
        coef=sol.coef / scale if scale is not None else sol.coef,
        intercept=float(sol.intercept),
        objective=float(sol.objective),
        trace=list(rec.events),
        n_steps=sum(e.kind in SUPPORT_CHANGING for e in rec.events),
        stop_reason=sol.stop_reason,
        algorithm=config.algorithm.name,
        objective_name=name,
        k=config.k,
        params=config.params,
        elapsed=elapsed,
        cancelled=cancelled,
        dense_params=sol.dense,
        scale=scale,
    )


def _check_data(X, y):
    if sp.issparse(X):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
        # Every format (LIL, DOK, ...) becomes CSC, the layout the objectives work in.
        X = sp.csc_matrix(X)
        if not np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.complexfloating):
            raise ValueError(f"X must hold real numbers, got dtype {X.dtype}")
        if not np.all(np.isfinite(X.data)):
            raise ValueError("X contains NaN or infinite values")
    else:
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
        if not np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.complexfloating):
            raise ValueError(f"X must hold real numbers, got dtype {X.dtype}")
        bad = ~np.isfinite(X)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ValueError(
                f"X contains {int(bad.sum())} NaN or infinite values (first at row {i}, column {j})"
            )
    n, d = X.shape
    if n < 2 or d < 1:
        raise ValueError(f"need at least 2 samples and 1 feature, got X of shape {X.shape}")
    y = np.asarray(y).ravel()
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")
    if np.issubdtype(y.dtype, np.number) and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinite values")
    return X, y


def _check_target(y: np.ndarray, task: str) -> None:
    """A regression target must be numeric; classification labels may be anything."""
    if task != "regression" or np.issubdtype(y.dtype, np.number) or y.dtype == bool:
        return
    try:
        y.astype(np.float64)
    except (TypeError, ValueError):
        first = next((v for v in y if not _is_number(v)), y[0])
        raise ValueError(
            f"y must be numeric for objective with a {task} task; found {first!r}. "
            "Use a classification objective (logistic) for labels."
        ) from None


def _is_number(v: Any) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _check_groups(groups: Any, n_features: int) -> np.ndarray | None:
    """Group labels as integer codes 0..G-1 (in order of first appearance), or None."""
    if groups is None:
        return None
    labels = np.asarray(groups).ravel()
    if labels.shape[0] != n_features:
        raise ValueError(
            f"groups must give one label per feature: got {labels.shape[0]} labels for "
            f"{n_features} features"
        )
    _, first, codes = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))  # renumber groups by first appearance
    return order[codes].astype(np.intp)
