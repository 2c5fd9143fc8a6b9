"""Which method's selection is steadiest on this data: several algorithms (and, optionally,
selectors outside the engine such as abess) on the *same* complementary pairs, compared by
Nogueira et al.'s stability index and the mean pairwise Jaccard similarity at every k."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..api import _check_data
from .bounds import _check_threshold
from .plan import DEFAULT_PAIRS, StabilityPlan, plan_stability
from .subsample import Selector, SubsampleResult, subsample_supports
from .summary import DEFAULT_THRESHOLD, StabilityResult, summarise


@dataclass
class StabilityComparison:
    """Every method's stability selection on the same subsamples.

    Attributes
    ----------
    results : dict of str to StabilityResult
        By method name, in the order given.
    k : ndarray of int, shape (k_max,)
    nogueira, nogueira_se, jaccard : dict of str to ndarray, shape (k_max,)
        Each method's stability index, its jackknife standard error and the mean pairwise
        Jaccard similarity at every k (``StabilitySummary``).
    steadiest : list of list of str
        At every k, the methods of highest stability index (several on a tie, in the order
        given; none when no index is defined).
    """

    results: dict[str, StabilityResult]
    k: np.ndarray
    nogueira: dict[str, np.ndarray]
    nogueira_se: dict[str, np.ndarray]
    jaccard: dict[str, np.ndarray]
    steadiest: list[list[str]]

    def to_dict(self) -> dict[str, Any]:
        def nums(a: np.ndarray) -> list[float | None]:
            return [float(x) if math.isfinite(x) else None for x in a]

        return {
            "methods": list(self.results),
            "k": [int(k) for k in self.k],
            "nogueira": {m: nums(v) for m, v in self.nogueira.items()},
            "nogueira_se": {m: nums(v) for m, v in self.nogueira_se.items()},
            "jaccard": {m: nums(v) for m, v in self.jaccard.items()},
            "steadiest": [list(s) for s in self.steadiest],
            "summaries": {m: r.summary.to_dict() for m, r in self.results.items()},
            "plan": next(iter(self.results.values())).plan.to_dict(),
        }


def compare(
    summaries: Mapping[str, StabilityResult],
) -> StabilityComparison:
    """The comparison table from methods' results on the same subsamples (the merge step of
    a service that ran each method's subsamples as separate jobs)."""
    if not summaries:
        raise ValueError("need at least one method")
    results = dict(summaries)
    first = next(iter(results.values()))
    for name, r in results.items():
        same = len(r.plan.subsamples) == len(first.plan.subsamples) and all(
            np.array_equal(a, b)
            for a, b in zip(r.plan.subsamples, first.plan.subsamples, strict=True)
        )
        if not same or r.summary.k_max != first.summary.k_max:
            raise ValueError(f"method {name!r} ran on other subsamples or another k_max")
    nog = {m: r.summary.nogueira for m, r in results.items()}
    se = {m: r.summary.nogueira_se for m, r in results.items()}
    jac = {m: r.summary.jaccard for m, r in results.items()}
    steadiest: list[list[str]] = []
    for i in range(first.summary.k_max):
        scores = {m: float(v[i]) for m, v in nog.items() if math.isfinite(v[i])}
        top = max(scores.values(), default=math.nan)
        steadiest.append([m for m, s in scores.items() if s >= top - 1e-12])
    return StabilityComparison(results, first.summary.k.copy(), nog, se, jac, steadiest)


def compare_stability(
    X,
    y,
    *,
    algorithms: Sequence[str] | Mapping[str, Mapping[str, Any]] = ("foba-obj", "omp", "lasso"),
    k_max: int,
    objective: str = "least_squares",
    selectors: Mapping[str, Selector] | None = None,
    n_pairs: int = DEFAULT_PAIRS,
    threshold: float = DEFAULT_THRESHOLD,
    max_false: float | None = None,
    standardize: bool = True,
    groups=None,
    random_state: int | None = 0,
    n_jobs: int | None = 1,
) -> StabilityComparison:
    """Stability selection of several methods on the same complementary pairs.

    Parameters
    ----------
    algorithms : sequence of str, or mapping of str to params
        Engine algorithms (names, or names to their parameters).
    selectors : mapping of str to callable, optional
        Methods outside the engine, ``(X_rows, y_rows, k) -> feature indices``, run once per k
        on the same subsamples (an abess wrapper, say: the engine does not import abess).
    k_max, objective, n_pairs, threshold, max_false, standardize, groups, random_state
        As in :func:`engine.stability.stability_selection`, shared by every method.
    n_jobs : int, optional
        Every (method, subsample) run in parallel with joblib (1: in this process).
    """
    _check_threshold(threshold)
    X, y = _check_data(X, y)
    if isinstance(algorithms, str):
        algorithms = [algorithms]
    specs = dict(algorithms) if isinstance(algorithms, Mapping) else {a: {} for a in algorithms}
    if not specs:
        raise ValueError("name at least one engine algorithm (it also plans the subsamples)")
    plans: dict[str, StabilityPlan] = {}
    for name, params in specs.items():
        plans[name] = plan_stability(
            name,
            objective,
            k_max=k_max,
            n_samples=X.shape[0],
            n_features=X.shape[1],
            params=params,
            n_pairs=n_pairs,
            groups=groups,
            y=y,
            standardize=standardize,
            random_state=random_state,
        )
    base = next(iter(plans.values()))
    peers = dict(selectors or {})
    for name in peers:
        if name in plans:
            raise ValueError(f"method {name!r} named twice")
        plans[name] = dataclasses.replace(base, algorithm=name, params={})
    tasks = [(name, i) for name in plans for i in range(base.n_subsamples)]
    if n_jobs == 1:
        done = [subsample_supports(X, y, plans[m], i, selector=peers.get(m)) for m, i in tasks]
    else:
        from joblib import Parallel, delayed  # lazily: joblib comes with scikit-learn

        done = Parallel(n_jobs=n_jobs)(
            delayed(subsample_supports)(X, y, plans[m], i, selector=peers.get(m)) for m, i in tasks
        )
    by_method: dict[str, list[SubsampleResult]] = {m: [] for m in plans}
    for (m, _), r in zip(tasks, done, strict=True):
        by_method[m].append(r)
    results = {
        m: StabilityResult(
            plans[m], runs, summarise(runs, plans[m], threshold=threshold, max_false=max_false)
        )
        for m, runs in by_method.items()
    }
    return compare(results)
