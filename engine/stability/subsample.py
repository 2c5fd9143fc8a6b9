"""One subsample: the support of every k = 1..k_max from one run on half of the rows (or one
run per k), as a small JSON-able partial result a job can store."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..api import _check_data, _check_target, select
from ..cv.folds import Callback
from ..cv.plan import supports_by_k
from ..registry import REGISTRY
from ..trace import StopRequested
from .plan import StabilityPlan

# A selector outside the engine (a peer such as abess, for comparisons): (X, y, k) -> the
# selected feature indices (any iterable of int, an ndarray say). It runs once per k.
Selector = Callable[[Any, np.ndarray, int], Iterable[int]]


@dataclass
class SubsampleResult:
    """The supports one subsample selected at every k.

    Attributes
    ----------
    index : int
        The subsample's position in the plan (pair ``index // 2``).
    supports : list of tuple of int
        ``supports[k - 1]``: the features selected at k (fewer than k when the path stopped
        before k), sorted.
    mode : str
        ``path`` (one run read at every k) or ``per-k``.
    n_rows : int
    n_runs : int
        Runs of the algorithm this subsample made.
    elapsed : float
        Seconds.
    """

    index: int
    supports: list[tuple[int, ...]]
    mode: str
    n_rows: int
    n_runs: int
    elapsed: float

    @property
    def k_max(self) -> int:
        return len(self.supports)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "supports": [list(s) for s in self.supports],
            "mode": self.mode,
            "n_rows": self.n_rows,
            "n_runs": self.n_runs,
            "elapsed": self.elapsed,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SubsampleResult:
        return cls(
            index=int(d["index"]),
            supports=[tuple(int(j) for j in s) for s in d["supports"]],
            mode=str(d["mode"]),
            n_rows=int(d["n_rows"]),
            n_runs=int(d["n_runs"]),
            elapsed=float(d["elapsed"]),
        )


def subsample_supports(
    X,
    y,
    plan: StabilityPlan,
    index: int,
    *,
    callback: Callback | None = None,
    selector: Selector | None = None,
) -> SubsampleResult:
    """Run the plan's algorithm on subsample ``index`` and read its support at every k.

    Path methods run once and every k is read off the path (``engine.cv.supports_by_k``: the
    best size-k support along a FoBa path, the k-th prefix of a forward path, a backward
    path's visit of size k); the others run once per k. The answers are those
    ``engine.select(X[rows], y[rows], k=k)`` gives.

    Parameters
    ----------
    X, y
        The whole data (the plan's shape); the subsample's rows are taken here.
    plan : StabilityPlan
    index : int
        Which subsample, 0 <= index < plan.n_subsamples.
    callback : callable, optional
        Receives every event of the runs; returning False stops the subsample.
    selector : callable, optional
        ``(X_rows, y_rows, k) -> feature indices``: a method outside the engine, run once per
        k instead of the plan's algorithm (comparisons with a peer, such as abess).

    Raises
    ------
    StopRequested
        When the callback stopped the run (no partial result is returned).
    """
    start = time.perf_counter()
    if not 0 <= index < plan.n_subsamples:
        raise ValueError(f"index must be between 0 and {plan.n_subsamples - 1}, got {index}")
    X, y = _check_data(X, y)
    _check_target(y, REGISTRY.objective(plan.objective).task)
    if X.shape != (plan.n_samples, plan.n_features):
        raise ValueError(
            f"X has shape {X.shape}, the plan was made for {(plan.n_samples, plan.n_features)}"
        )
    rows = plan.subsamples[index]
    X_rows, y_rows = X[rows], y[rows]

    if selector is not None:
        supports = [
            tuple(sorted(int(j) for j in selector(X_rows, y_rows, k)))
            for k in range(1, plan.k_max + 1)
        ]
        return SubsampleResult(
            index, supports, "per-k", len(rows), plan.k_max, time.perf_counter() - start
        )

    def select_at(k: int | None) -> Any:
        return select(
            X_rows,
            y_rows,
            algorithm=plan.algorithm,
            objective=plan.objective,
            k=k,
            groups=plan.groups,
            recorder=callback,
            random_state=plan.seeds[index],
            standardize=plan.standardize,
            **plan.params,
        )

    return read_supports(plan, index, len(rows), start, select_at)


def read_supports(
    plan: StabilityPlan,
    index: int,
    n_rows: int,
    start: float,
    select_at: Callable[[int | None], Any],
) -> SubsampleResult:
    """Every k's support of one subsample, from ``select_at(k)`` (a run on its rows, or on
    its statistics): one path read off at every k, or one run per k, as the plan says."""

    def run(k: int | None) -> Any:
        result = select_at(k)
        if result.cancelled:
            raise StopRequested("the callback stopped the subsample")
        return result

    if plan.mode == "path":
        supports = supports_by_k(run(plan.cv.runs[0].k).trace, plan.cv)
    else:
        supports = [tuple(int(j) for j in run(c.k).support) for c in plan.cv.runs]
    return SubsampleResult(
        index, supports, plan.mode, n_rows, len(plan.cv.runs), time.perf_counter() - start
    )
