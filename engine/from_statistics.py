"""Selection from sufficient statistics: ``engine.select`` for tables larger than memory.

:func:`select_from_statistics` runs any least-squares algorithm that needs no rows (FoBa in all
its forms, forward, OMP, stepwise, replacement, backward, oblivious) on
:class:`~engine.objectives.gram.GramLeastSquares`, with the same validation, standardisation,
trace and :class:`~engine.api.SelectionResult` as ``engine.select`` on the rows the statistics
came from: the same supports and objectives to rounding.

:func:`fold_errors_from_statistics` scores every k = 1..k_max on one fold from its training
and held-out statistics (``engine.statistics.fold_statistics``), as ``engine.cv.fold_errors``
does from rows, with the mean squared error computed from the held-out statistics.

:func:`certify_from_statistics` is ``engine.certify`` (the swap certificate) on the same
objective: the judge's ``certify_state`` on a :class:`GramLeastSquares` fit, no new pricing.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from .api import SelectionResult, _check_groups, run_selection
from .config import Config, ConfigError, check_config
from .cv.folds import Callback, FoldResult
from .cv.plan import plan_cv, supports_by_k
from .judge import TOOLS, Certificate
from .judge.problem import check_support, fit
from .judge.swaps import DEFAULT_MAX_LISTED, DEFAULT_TIE_TOL, certify_state
from .objectives.gram import GramLeastSquares
from .registry import CAPABILITIES, REGISTRY
from .stability.plan import StabilityPlan
from .stability.subsample import SubsampleResult, read_supports
from .statistics import SufficientStatistics, statistics_scale
from .trace import Recorder, RecorderCallback, StopRequested

__all__ = [
    "certify_from_statistics",
    "check_statistics_config",
    "fold_errors_from_statistics",
    "heldout_mse",
    "select_from_statistics",
    "subsample_supports_from_statistics",
]

OBJECTIVE = "least_squares"


def check_statistics_config(
    algorithm: str,
    *,
    k: Any = None,
    params: Mapping[str, Any] | None = None,
    n_samples: int | None = None,
    n_features: int | None = None,
    has_groups: bool | None = None,
) -> Config:
    """``engine.check_config`` for least squares from statistics: also refuses the algorithms
    that need what statistics cannot give (the rows), with a ConfigError naming the field."""
    spec = REGISTRY.algorithms.get(algorithm) if isinstance(algorithm, str) else None
    if spec is not None:  # an unknown name is check_config's error
        _refuse_missing(spec.name, set(spec.requires.capabilities))
    config = check_config(
        algorithm,
        OBJECTIVE,
        k=k,
        params=params,
        n_samples=n_samples,
        n_features=n_features,
        has_groups=has_groups,
    )
    needed: set[str] = set()
    for name, by_value in config.algorithm.requires.when.items():
        needed.update(by_value.get(config.algorithm_params.get(name), ()))
    _refuse_missing(config.algorithm.name, needed)
    return config


def _refuse_missing(algorithm: str, needed: set[str]) -> None:
    if missing := needed - GramLeastSquares.capabilities:
        what = "; ".join(f"{c} ({CAPABILITIES[c]})" for c in sorted(missing))
        raise ConfigError(
            f"algorithm {algorithm!r} needs {what}, which least squares from sufficient "
            f"statistics does not offer (it has no rows); it works with "
            f"{', '.join(statistics_algorithms())}",
            "algorithm",
        )


def statistics_algorithms() -> list[str]:
    """Algorithms whose (parameter-free) requirements the statistics objective meets."""
    return [
        name
        for name, spec in REGISTRY.algorithms.items()
        if spec.requires.capabilities <= GramLeastSquares.capabilities
    ]


def select_from_statistics(
    stats: SufficientStatistics,
    *,
    algorithm: str,
    k: int | None = None,
    groups: Any = None,
    recorder: Recorder | RecorderCallback | None = None,
    random_state: int | None = None,
    record_candidates: bool = False,
    max_candidates: int = 50,
    standardize: bool = True,
    **params: Any,
) -> SelectionResult:
    """``engine.select(X, y, objective="least_squares", ...)`` from the statistics of (X, y).

    Parameters are those of :func:`engine.select`; ``fit_intercept`` (default True) is the
    objective's one parameter. ``coef`` and ``intercept`` come back on the original scale.

    Raises
    ------
    ConfigError
        As ``engine.check_config``, and for algorithms that need rows.
    """
    if not isinstance(stats, SufficientStatistics):
        raise TypeError(f"stats must be SufficientStatistics, got {type(stats).__name__}")
    n, d = stats.n, stats.n_features
    if n < 2 or d < 1:
        raise ValueError(f"need at least 2 samples and 1 feature, got n = {n}, d = {d}")
    if not (np.all(np.isfinite(stats.xx)) and np.all(np.isfinite(stats.xy))):
        raise ValueError("the statistics contain NaN or infinite values")
    config = check_statistics_config(
        algorithm, k=k, params=params, n_samples=n, n_features=d, has_groups=groups is not None
    )
    extra = {"groups": _check_groups(groups, d)} if config.algorithm.uses_groups else {}
    fit_intercept = bool(config.objective_params.get("fit_intercept", True))
    scale = statistics_scale(stats, centered=fit_intercept) if standardize else None
    if isinstance(recorder, Recorder):
        rec = recorder
    else:
        rec = Recorder(recorder, record_candidates=record_candidates, max_candidates=max_candidates)
    loss = GramLeastSquares(stats, fit_intercept=fit_intercept, scale=scale)
    return run_selection(
        loss, config, rec, extra=extra, scale=scale, random_state=random_state, name=OBJECTIVE
    )


def heldout_mse(stats: SufficientStatistics, coef: np.ndarray, intercept: float) -> float:
    """mean((y - X coef - intercept)^2) over the rows of ``stats``, from the statistics."""
    w = np.asarray(coef, dtype=float)
    centred = stats.yy - 2 * float(stats.xy @ w) + float(w @ stats.xx @ w)
    shift = stats.y_mean - float(stats.mean @ w) - intercept
    return max(centred, 0.0) / stats.n + shift * shift


def fold_errors_from_statistics(
    train: SufficientStatistics,
    test: SufficientStatistics,
    *,
    algorithm: str,
    k_max: int,
    params: Mapping[str, Any] | None = None,
    standardize: bool = True,
    groups: Any = None,
    random_state: int | None = None,
    callback: Callback | None = None,
) -> FoldResult:
    """``engine.cv.fold_errors`` from statistics: fit on ``train``, the MSE on ``test``.

    One path per fold when the algorithm's path holds every size (``plan_cv``), one run per k
    otherwise; the size-k answer is refitted on the training statistics.
    """
    start = time.perf_counter()
    plan = plan_cv(
        algorithm,
        OBJECTIVE,
        k_max=k_max,
        params=params,
        metric="mse",
        n_samples=train.n,
        n_features=train.n_features,
        has_groups=groups is not None,
    )

    def run(k: int) -> SelectionResult:
        result = select_from_statistics(
            train,
            algorithm=algorithm,
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

    errors: list[float] = []
    supports: list[tuple[int, ...]] = []
    if plan.mode == "path":
        result = run(plan.runs[0].k)  # type: ignore[arg-type]
        supports = supports_by_k(result.trace, plan)
        fit_intercept = bool(plan.runs[0].objective_params.get("fit_intercept", True))
        state = GramLeastSquares(train, fit_intercept=fit_intercept, scale=result.scale).start()
        for support in supports:
            target = set(support)
            for j in [j for j in state.support if j not in target]:
                state.remove(j)
            for j in support:
                if j not in state.support:
                    state.add(int(j))
            coef = state.coef / result.scale if result.scale is not None else state.coef
            errors.append(heldout_mse(test, coef, state.intercept))
    else:
        for config in plan.runs:
            result = run(config.k)  # type: ignore[arg-type]
            supports.append(tuple(int(j) for j in result.support))
            errors.append(heldout_mse(test, result.coef, result.intercept))
    return FoldResult(
        errors=np.asarray(errors, dtype=float),
        sizes=np.array([len(s) for s in supports], dtype=np.intp),
        supports=supports,
        mode=plan.mode,
        metric=plan.metric,
        n_train=train.n,
        n_test=test.n,
        n_runs=len(plan.runs),
        elapsed=time.perf_counter() - start,
    )


def certify_from_statistics(
    stats: SufficientStatistics,
    support: Any,
    *,
    standardize: bool = True,
    fit_intercept: bool = True,
    tie_tolerance: float = DEFAULT_TIE_TOL,
    max_listed: int = DEFAULT_MAX_LISTED,
) -> Certificate:
    """``engine.certify(X, y, support, standardize=..., fit_intercept=...)`` from the statistics
    of (X, y): every exchange priced by a refit on the Gram objective (k x (d - k) refits, each
    costing d x k, independent of the rows)."""
    opts = TOOLS["certify"].check({"tie_tolerance": tie_tolerance, "max_listed": max_listed})
    scale = statistics_scale(stats, centered=fit_intercept) if standardize else None
    loss = GramLeastSquares(stats, fit_intercept=fit_intercept, scale=scale)
    S = check_support(support, stats.n_features)
    start = time.perf_counter()
    cert = certify_state(fit(loss, S), **opts)
    return replace(cert, elapsed=time.perf_counter() - start, support=tuple(S))


def subsample_supports_from_statistics(
    half: SufficientStatistics,
    plan: StabilityPlan,
    index: int,
    *,
    callback: Callback | None = None,
) -> SubsampleResult:
    """``engine.stability.subsample_supports`` from the statistics of subsample ``index``'s
    rows (``half``: the merge of its chunks, see ``engine.statistics.block_pairs``): the
    support at every k, read off one path or one run per k as the plan says, with the plan's
    seed, parameters and standardisation."""
    start = time.perf_counter()
    if not 0 <= index < plan.n_subsamples:
        raise ValueError(f"index must be between 0 and {plan.n_subsamples - 1}, got {index}")

    def select_at(k: int | None) -> SelectionResult:
        return select_from_statistics(
            half,
            algorithm=plan.algorithm,
            k=k,
            groups=plan.groups,
            recorder=callback,
            random_state=plan.seeds[index],
            standardize=plan.standardize,
            **plan.params,
        )

    return read_supports(plan, index, half.n, start, select_at)
