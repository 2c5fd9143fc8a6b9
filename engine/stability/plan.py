"""The plan of a stability selection: the request checked once, the complementary pairs of
half samples (seeded), the seed of every subsample's run, and the units (features, or groups)
whose selection is counted. How a subsample reads every k off its run is ``engine.cv``'s
:class:`~engine.cv.CVPlan` (one path, or one run per k), reused as it is."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..api import _check_groups
from ..config import ConfigError
from ..cv.plan import CVPlan, plan_cv
from ..registry import REGISTRY

DEFAULT_PAIRS = 50  # Shah & Samworth's B


@dataclass(frozen=True)
class StabilityPlan:
    """Everything a subsample's job needs besides the data; :func:`plan_stability` builds it.

    Attributes
    ----------
    cv : CVPlan
        How a subsample reads every k = 1..k_max: one path (``mode == "path"``) or one run
        per k (``"per-k"``), exactly as a cross-validation fold does.
    algorithm, objective : str
    params : dict
        The algorithm's and objective's parameters as given.
    standardize : bool
    n_samples, n_features : int
        Of the whole data.
    n_pairs : int
        B: the plan holds 2B subsamples, pair j being subsamples 2j and 2j + 1.
    random_state : int or None
        Seed of the pairs (and of the per-subsample seeds).
    subsamples : list of ndarray of int
        The rows of every subsample (sorted), floor(n/2) each; the two of a pair are
        disjoint.
    seeds : list of int
        ``random_state`` of each subsample's run (randomised algorithms).
    groups : ndarray of int or None
        Group code of every feature (``engine.select``'s coding) or None.
    unit_of : ndarray of int, shape (n_features,)
        The unit each feature counts for: its group when the data has groups, else itself.
    unit_names : list of str
        A label per unit (the group label, or the feature index).
    """

    cv: CVPlan
    algorithm: str
    objective: str
    params: dict[str, Any]
    standardize: bool
    n_samples: int
    n_features: int
    n_pairs: int
    random_state: int | None
    subsamples: list[np.ndarray]
    seeds: list[int]
    groups: np.ndarray | None
    unit_of: np.ndarray
    unit_names: list[str] = field(default_factory=list)

    @property
    def k_max(self) -> int:
        return self.cv.k_max

    @property
    def mode(self) -> str:
        return self.cv.mode

    @property
    def n_subsamples(self) -> int:
        return len(self.subsamples)

    @property
    def n_units(self) -> int:
        return len(self.unit_names)

    def to_dict(self, rows: bool = False) -> dict[str, Any]:
        """JSON form; the subsamples' rows only with ``rows=True`` (n/2 integers each: a job
        can instead rebuild the plan from the same request, which is deterministic)."""
        out: dict[str, Any] = {
            "algorithm": self.algorithm,
            "objective": self.objective,
            "params": dict(self.params),
            "standardize": self.standardize,
            "k_max": self.k_max,
            "mode": self.mode,
            "path": self.cv.path,
            "reason": self.cv.reason,
            "runs_per_subsample": len(self.cv.runs),
            "n_samples": self.n_samples,
            "n_features": self.n_features,
            "n_pairs": self.n_pairs,
            "n_subsamples": self.n_subsamples,
            "subsample_size": len(self.subsamples[0]) if self.subsamples else 0,
            "random_state": self.random_state,
            "seeds": list(self.seeds),
            "has_groups": self.groups is not None,
            "n_units": self.n_units,
            "unit_names": list(self.unit_names),
        }
        if rows:
            out["subsamples"] = [[int(i) for i in s] for s in self.subsamples]
        return out


def complementary_pairs(
    n_samples: int,
    n_pairs: int = DEFAULT_PAIRS,
    *,
    y: Any = None,
    random_state: int | None = 0,
) -> list[np.ndarray]:
    """2B half samples in complementary pairs (Shah & Samworth 2013): for each pair, the rows
    are shuffled and dealt into two disjoint halves of floor(n/2) rows each (with n odd, one
    row sits the pair out). With ``y`` (class labels) each class is dealt evenly between the
    two halves, so that both hold every class.

    Returns the 2B row index arrays (sorted); pair j is entries 2j and 2j + 1. Seeded:
    the same arguments give the same subsamples.
    """
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, int | np.integer) or n_pairs < 1:
        raise ValueError(f"n_pairs must be a positive integer, got {n_pairs!r}")
    if n_samples < 2:
        raise ValueError(f"need at least 2 samples to halve, got {n_samples}")
    labels = None if y is None else np.asarray(y).ravel()
    if labels is not None and labels.shape[0] != n_samples:
        raise ValueError(f"y has {labels.shape[0]} entries for {n_samples} rows")
    rng = np.random.default_rng(random_state)
    half = n_samples // 2
    out: list[np.ndarray] = []
    for _ in range(n_pairs):
        order = rng.permutation(n_samples)
        if labels is not None:
            order = order[np.argsort(labels[order], kind="stable")]  # classes in turn
            first, second = order[0::2], order[1::2]
            if len(first) > half:  # n odd: the extra row of the first half sits out
                drop = rng.integers(len(first))
                first = np.delete(first, drop)
        else:
            first, second = order[:half], order[half : 2 * half]
        out += [np.sort(first), np.sort(second)]
    return out


def plan_stability(
    algorithm: str,
    objective: str = "least_squares",
    *,
    k_max: Any,
    n_samples: int,
    n_features: int,
    params: Mapping[str, Any] | None = None,
    n_pairs: int = DEFAULT_PAIRS,
    groups: Any = None,
    y: Any = None,
    standardize: bool = True,
    random_state: int | None = 0,
    task: str | None = None,
) -> StabilityPlan:
    """Check a stability-selection request and lay out its subsamples.

    Parameters
    ----------
    algorithm, objective, params, standardize
        As in :func:`engine.select`.
    k_max : int
        Selection frequencies are computed for every k = 1..k_max.
    n_samples, n_features : int
        The data's shape.
    n_pairs : int
        B, the number of complementary pairs (2B runs of the algorithm on half samples).
    groups : array-like, shape (n_features,), optional
        Group label of every feature: a group then counts as one unit (selected when any of
        its features is), and the group-aware algorithms receive the labels.
    y : array-like, optional
        Class labels, for a classification objective: each half then holds every class in
        (nearly) the same proportion.
    random_state : int, optional
        Seeds the pairs and every subsample's run; None draws a seed, kept in the plan.
    task : str, optional
        The data's task, checked against the objective (as ``engine.check_config``).

    Raises
    ------
    ConfigError
        Naming the field at fault, as :func:`engine.cv.plan_cv` (``k`` for k_max).
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, int | np.integer):
        raise ValueError(f"n_samples must be an integer, got {n_samples!r}")
    if n_samples < 4:
        raise ValueError(f"stability selection halves the rows; {n_samples} rows are too few")
    if random_state is None:  # drawn once and kept, so that the plan can be rebuilt
        random_state = int(np.random.default_rng().integers(2**31 - 1))
    try:
        cv = plan_cv(
            algorithm,
            objective,
            k_max=k_max,
            params=params,
            n_samples=n_samples // 2,
            n_features=n_features,
            has_groups=groups is not None,
            task=task,
        )
    except ConfigError as exc:  # the same refusal, in the words of this request
        message = str(exc).replace("cross-validation over k", "stability selection over k")
        raise ConfigError(message, exc.field) from None
    codes = _check_groups(groups, n_features)
    if codes is None:
        unit_of = np.arange(n_features, dtype=np.intp)
        names = [str(j) for j in range(n_features)]
    else:
        unit_of = codes
        labels = np.asarray(groups).ravel()
        first = [int(np.flatnonzero(codes == g)[0]) for g in range(int(codes.max()) + 1)]
        names = [str(labels[j]) for j in first]
    stratify = None
    if y is not None and REGISTRY.objective(objective).task == "classification":
        stratify = y
    subsamples = complementary_pairs(n_samples, n_pairs, y=stratify, random_state=random_state)
    seed_rng = np.random.default_rng([random_state, 1])
    seeds = [int(s) for s in seed_rng.integers(0, 2**31 - 1, size=len(subsamples))]
    return StabilityPlan(
        cv=cv,
        algorithm=algorithm,
        objective=objective,
        params=dict(params or {}),
        standardize=bool(standardize),
        n_samples=int(n_samples),
        n_features=int(n_features),
        n_pairs=int(n_pairs),
        random_state=random_state,
        subsamples=subsamples,
        seeds=seeds,
        groups=codes,
        unit_of=unit_of,
        unit_names=names,
    )


def units_of(supports: Sequence[Sequence[int]], unit_of: np.ndarray) -> list[tuple[int, ...]]:
    """The units (sorted) each support selects: a unit is selected when any feature is."""
    return [tuple(sorted({int(unit_of[j]) for j in s})) for s in supports]
