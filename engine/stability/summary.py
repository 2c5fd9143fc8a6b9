"""The subsamples together: selection frequencies at every k, stable sets with their error
bound, how stable the selection is, and ``stability_selection``, which runs every subsample
(in parallel with joblib when asked)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..api import _check_data
from .bounds import _check_threshold, error_bound, threshold_for
from .plan import DEFAULT_PAIRS, StabilityPlan, plan_stability, units_of
from .subsample import Callback, Selector, SubsampleResult, subsample_supports

DEFAULT_THRESHOLD = 0.6  # the lower end of Meinshausen & Buehlmann's 0.6-0.9


@dataclass(frozen=True)
class StabilitySummary:
    """Selection frequencies, stable sets and bounds from any number of subsamples.

    Units are features, or feature groups when the data has groups (a group is selected when
    any of its features is).

    Attributes
    ----------
    k : ndarray of int, shape (k_max,)
        1..k_max.
    frequency : ndarray, shape (k_max, n_units)
        ``frequency[k - 1, u]``: the fraction of subsamples whose support at k selects unit u.
    q : ndarray, shape (k_max,)
        Mean number of units selected at k (the q of the bound).
    threshold : float
        pi, in (0.5, 1].
    stable : list of list of int
        ``stable[k - 1]``: the units of frequency >= threshold at k, by decreasing frequency.
    bound : ndarray, shape (k_max,)
        Upper bound on the expected number of falsely selected units in ``stable[k - 1]``:
        q^2 / ((2 pi - 1) d) (``engine.stability.bounds``).
    frequency_max : ndarray, shape (n_units,)
        The largest frequency of every unit over k = 1..k_max.
    q_path : float
        Mean number of units a subsample selects at some k <= k_max (its union over k).
    stable_path : list of int
        Units of ``frequency_max`` >= threshold (the stable set over the whole path,
        Meinshausen & Buehlmann's max over the regularisation range), by decreasing frequency.
    bound_path : float
        Its bound, q_path^2 / ((2 pi - 1) d).
    max_false : float or None
        A target for E[V], if given.
    threshold_for_target : list of float or None
        The smallest pi whose bound at k meets ``max_false`` (None: none does).
    nogueira : ndarray, shape (k_max,)
        Nogueira, Sechidis & Brown's stability estimator at every k ("On the stability of
        feature selection algorithms", JMLR 18(174), 2018):
        1 - mean_u s_u^2 / ((q/d)(1 - q/d)), s_u^2 = M/(M-1) p_u (1 - p_u)
        the unbiased variance of unit u's selection indicator over the M subsamples. 1: every
        subsample selects the same set; about 0: no better than random sets of the same size.
        NaN when undefined (q = 0 or d, or one subsample).
    nogueira_se : ndarray, shape (k_max,)
        A standard error of ``nogueira``: the jackknife over pairs (each pair of halves left
        out in turn; the halves of a pair are dependent, the pairs are not). NaN with fewer
        than 3 pairs represented.
    jaccard : ndarray, shape (k_max,)
        Mean Jaccard similarity |A ∩ B| / |A ∪ B| over all pairs of subsamples at every k
        (two empty sets count 1; NaN with one subsample).
    n_subsamples, n_pairs : int
        Subsamples merged, and complete pairs among them (the complementary-pairs bound
        assumes all pairs complete).
    n_units : int
    unit_names : list of str
    """

    k: np.ndarray
    frequency: np.ndarray
    q: np.ndarray
    threshold: float
    stable: list[list[int]]
    bound: np.ndarray
    frequency_max: np.ndarray
    q_path: float
    stable_path: list[int]
    bound_path: float
    max_false: float | None
    threshold_for_target: list[float | None]
    nogueira: np.ndarray
    nogueira_se: np.ndarray
    jaccard: np.ndarray
    n_subsamples: int
    n_pairs: int
    n_units: int
    unit_names: list[str]

    @property
    def k_max(self) -> int:
        return len(self.k)

    def stable_at(self, k: int | None = None) -> list[int]:
        """The stable units at k, or over the whole path (k None)."""
        return list(self.stable_path) if k is None else list(self.stable[k - 1])

    def bound_at(self, k: int | None = None) -> float:
        return self.bound_path if k is None else float(self.bound[k - 1])

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": [int(k) for k in self.k],
            "frequency": [[_num(f) for f in row] for row in self.frequency],
            "q": [_num(x) for x in self.q],
            "threshold": self.threshold,
            "stable": [list(s) for s in self.stable],
            "bound": [_num(b) for b in self.bound],
            "frequency_max": [_num(f) for f in self.frequency_max],
            "q_path": _num(self.q_path),
            "stable_path": list(self.stable_path),
            "bound_path": _num(self.bound_path),
            "max_false": self.max_false,
            "threshold_for_target": list(self.threshold_for_target),
            "nogueira": [_num(x) for x in self.nogueira],
            "nogueira_se": [_num(x) for x in self.nogueira_se],
            "jaccard": [_num(x) for x in self.jaccard],
            "n_subsamples": self.n_subsamples,
            "n_pairs": self.n_pairs,
            "n_units": self.n_units,
            "unit_names": list(self.unit_names),
            "bound_statement": BOUND_STATEMENT,
        }


BOUND_STATEMENT = (
    "E[V] <= q^2 / ((2 pi - 1) d): Meinshausen & Buehlmann (2010), Theorem 1 (V = falsely "
    "selected units; assumes exchangeable noise units and a procedure not worse than random "
    "guessing), which Shah & Samworth (2013), Theorem 1, extends to complementary pairs "
    "without those assumptions for the units of selection probability at most q/d"
)


def _num(x: float) -> float | None:
    """A float for JSON (NaN as None)."""
    x = float(x)
    return x if math.isfinite(x) else None


def _indicators(
    partials: Sequence[SubsampleResult], unit_of: np.ndarray, n_units: int
) -> tuple[np.ndarray, np.ndarray]:
    """Indicators Z[m, k - 1, u] (subsample m selects unit u at k) and the path's union
    U[m, u] (subsample m selects u at some k)."""
    k_max = partials[0].k_max
    Z = np.zeros((len(partials), k_max, n_units), dtype=bool)
    for m, p in enumerate(partials):
        if p.k_max != k_max:
            raise ValueError(f"subsample {p.index} holds {p.k_max} sizes, others {k_max}")
        for i, units in enumerate(units_of(p.supports, unit_of)):
            Z[m, i, list(units)] = True
    return Z, np.asarray(Z.any(axis=1))


def nogueira_index(Z: np.ndarray) -> float:
    """Nogueira et al.'s stability index of M selections (rows of the boolean Z, M x d)."""
    M, d = Z.shape
    if M < 2:
        return math.nan
    p = Z.mean(axis=0)
    kbar = Z.sum(axis=1).mean()
    denom = (kbar / d) * (1.0 - kbar / d)
    if denom <= 0.0:
        return math.nan
    s2 = M / (M - 1) * p * (1.0 - p)
    return float(1.0 - s2.mean() / denom)


def nogueira_jackknife_se(Z: np.ndarray, pair: np.ndarray) -> float:
    """Jackknife standard error of :func:`nogueira_index` over the groups ``pair`` (the pair
    of every row of Z): sqrt((G - 1) / G * sum_g (phi_(-g) - mean)^2) over the G groups."""
    groups = np.unique(pair)
    G = len(groups)
    if G < 3:
        return math.nan
    loo = np.array([nogueira_index(Z[pair != g]) for g in groups])
    if not np.all(np.isfinite(loo)):
        return math.nan
    return float(math.sqrt((G - 1) / G * np.sum((loo - loo.mean()) ** 2)))


def mean_jaccard(Z: np.ndarray) -> float:
    """Mean Jaccard similarity over all pairs of rows of the boolean Z (M x d)."""
    M = Z.shape[0]
    if M < 2:
        return math.nan
    A = Z.astype(np.float64)
    inter = A @ A.T
    size = A.sum(axis=1)
    union = size[:, None] + size[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        J = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 1.0)
    iu = np.triu_indices(M, 1)
    return float(J[iu].mean())


def summarise(
    partials: Sequence[SubsampleResult] | Sequence[Mapping[str, Any]],
    plan: StabilityPlan,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    max_false: float | None = None,
) -> StabilitySummary:
    """Merge the subsamples done (any number of them, in any order) into frequencies, stable
    sets and their bounds.

    Parameters
    ----------
    partials : sequence of SubsampleResult (or their ``to_dict()`` forms)
    plan : StabilityPlan
        The plan they were run from (units and pairs).
    threshold : float
        pi in (0.5, 1]: a unit is stable at k when its frequency at k is at least pi.
    max_false : float, optional
        A target for E[V]; ``threshold_for_target`` then gives the pi that meets it at each k.
    """
    _check_threshold(threshold)
    results = [
        p if isinstance(p, SubsampleResult) else SubsampleResult.from_dict(p) for p in partials
    ]
    if not results:
        raise ValueError("need at least one subsample")
    results.sort(key=lambda r: r.index)  # the same figures whatever order the jobs ended in
    indices = [r.index for r in results]
    if len(set(indices)) != len(indices):
        raise ValueError("a subsample was given twice")
    d = plan.n_units
    Z, U = _indicators(results, plan.unit_of, d)
    M, k_max = Z.shape[0], Z.shape[1]
    frequency = Z.mean(axis=0)
    q = Z.sum(axis=2).mean(axis=0)
    bound = np.array([error_bound(float(x), d, threshold) for x in q])
    freq_max = frequency.max(axis=0)
    q_path = float(U.sum(axis=1).mean())

    def stable_units(f: np.ndarray) -> list[int]:
        chosen = np.flatnonzero(f >= threshold)
        return [int(u) for u in chosen[np.argsort(-f[chosen], kind="stable")]]

    done = set(indices)
    pair = np.array(indices) // 2
    return StabilitySummary(
        k=np.arange(1, k_max + 1),
        frequency=frequency,
        q=q,
        threshold=float(threshold),
        stable=[stable_units(frequency[i]) for i in range(k_max)],
        bound=bound,
        frequency_max=freq_max,
        q_path=q_path,
        stable_path=stable_units(freq_max),
        bound_path=error_bound(q_path, d, threshold),
        max_false=max_false,
        threshold_for_target=(
            [threshold_for(float(x), d, max_false) for x in q]
            if max_false is not None
            else [None] * k_max
        ),
        nogueira=np.array([nogueira_index(Z[:, i, :]) for i in range(k_max)]),
        nogueira_se=np.array([nogueira_jackknife_se(Z[:, i, :], pair) for i in range(k_max)]),
        jaccard=np.array([mean_jaccard(Z[:, i, :]) for i in range(k_max)]),
        n_subsamples=M,
        n_pairs=sum(1 for j in range(plan.n_pairs) if {2 * j, 2 * j + 1} <= done),
        n_units=d,
        unit_names=list(plan.unit_names),
    )


@dataclass
class StabilityResult:
    """The plan, every subsample and the summary of :func:`stability_selection`."""

    plan: StabilityPlan
    subsamples: list[SubsampleResult]
    summary: StabilitySummary

    @property
    def stable(self) -> list[int]:
        """The stable units over the whole path."""
        return self.summary.stable_path

    def features(self, units: Sequence[int]) -> np.ndarray:
        """The features (sorted) that make up the given units."""
        return np.flatnonzero(np.isin(self.plan.unit_of, np.asarray(list(units), dtype=np.intp)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "plan": self.plan.to_dict(),
            "subsamples": [s.to_dict() for s in self.subsamples],
            "summary": self.summary.to_dict(),
        }


def run_subsamples(
    X,
    y,
    plan: StabilityPlan,
    *,
    indices: Sequence[int] | None = None,
    n_jobs: int | None = 1,
    callback: Callback | None = None,
    selector: Selector | None = None,
    on_subsample: Callable[[SubsampleResult], None] | None = None,
) -> list[SubsampleResult]:
    """Run the plan's subsamples (all, or ``indices``), in this process (``n_jobs=1``) or in
    parallel with joblib (``n_jobs``: as joblib's, None or -1 meaning all cores). Results come
    back in the order of ``indices``; ``on_subsample`` sees each as it ends. A ``callback``
    (events) needs ``n_jobs=1``."""
    todo = list(range(plan.n_subsamples)) if indices is None else [int(i) for i in indices]
    if n_jobs == 1:
        out = []
        for i in todo:
            r = subsample_supports(X, y, plan, i, callback=callback, selector=selector)
            out.append(r)
            if on_subsample is not None:
                on_subsample(r)
        return out
    if callback is not None:
        raise ValueError("a callback receives the events of one process: use n_jobs=1")
    from joblib import Parallel, delayed  # lazily: joblib comes with scikit-learn

    results = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(subsample_supports)(X, y, plan, i, selector=selector) for i in todo
    )
    out = []
    for r in results:
        out.append(r)
        if on_subsample is not None:
            on_subsample(r)
    return out


def stability_selection(
    X,
    y,
    *,
    algorithm: str,
    objective: str = "least_squares",
    k_max: int,
    params: Mapping[str, Any] | None = None,
    n_pairs: int = DEFAULT_PAIRS,
    threshold: float = DEFAULT_THRESHOLD,
    max_false: float | None = None,
    standardize: bool = True,
    groups=None,
    random_state: int | None = 0,
    n_jobs: int | None = 1,
    callback: Callback | None = None,
    on_subsample: Callable[[SubsampleResult], None] | None = None,
) -> StabilityResult:
    """Complementary-pairs stability selection at every k = 1..k_max.

    The algorithm runs on 2B half samples (B = ``n_pairs`` complementary pairs, seeded by
    ``random_state``): once per subsample for path methods, every k read off that path, or
    once per k for the others (``engine.cv``'s plan decides). The summary gives every unit's
    selection frequency at every k, the stable set at ``threshold`` with its bound on the
    expected number of false selections, and the stability index of the selection.

    Parameters
    ----------
    X, y, algorithm, objective, params, standardize, groups
        As in :func:`engine.select`; with ``groups`` a group counts as one unit.
    k_max : int
    n_pairs : int
        B (default 50: 100 runs on half samples).
    threshold, max_false
        As in :func:`summarise`.
    random_state : int, optional
    n_jobs : int, optional
        Subsamples in parallel with joblib (1: in this process).
    callback, on_subsample
        As in :func:`run_subsamples`.

    Raises
    ------
    ConfigError
        As :func:`plan_stability`.
    """
    _check_threshold(threshold)
    X, y = _check_data(X, y)
    plan = plan_stability(
        algorithm,
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
    results = run_subsamples(
        X, y, plan, n_jobs=n_jobs, callback=callback, on_subsample=on_subsample
    )
    summary = summarise(results, plan, threshold=threshold, max_false=max_false)
    return StabilityResult(plan, results, summary)
