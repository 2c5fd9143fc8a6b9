"""``StabilitySelector``: the stable set of complementary-pairs stability selection
(``engine.stability``) as a scikit-learn transformer."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import stability as _stability
from ..registry import REGISTRY
from .base import _FIT_CHECKS, _EngineParams, _tags
from .cv import DEFAULT_K_MAX


class StabilitySelector(SelectorMixin, _EngineParams, BaseEstimator):
    """Select the features whose selection is stable over complementary pairs of half samples.

    The algorithm runs on 2 ``n_pairs`` half samples (Shah & Samworth's complementary pairs,
    seeded by ``random_state``), once per half sample for path methods, every k = 1..k_max
    read off that path (``engine.stability``). A feature is kept when its selection frequency
    reaches ``threshold`` at ``k`` or, with ``k=None``, at some k <= k_max. With ``groups``, a
    group of features (a one-hot categorical) is kept or dropped whole.

    The expected number of falsely kept units is at most q^2 / ((2 threshold - 1) d)
    (``error_bound_``; Meinshausen & Buehlmann 2010, Theorem 1, and Shah & Samworth 2013,
    Theorem 1; assumptions in ``engine.stability.bounds``), q being the mean number of units a
    half sample selects. ``max_false`` instead sets the threshold that meets that target.

    Parameters
    ----------
    algorithm, objective, standardize, groups, **params
        As in :class:`SparseSelector`.
    k_max : int, optional
        Largest k per half sample (default ``k`` if given, else 20), at most n_features.
    k : int, optional
        Keep the stable set at this k; None: over every k <= k_max.
    n_pairs : int, default 50
    threshold : float, default 0.6
        In (0.5, 1].
    max_false : float, optional
        Target bound on the expected number of false selections: overrides ``threshold``
        with the smallest one meeting it (none when even 1 does not: nothing is kept, with a
        warning; lower k).
    random_state : int, default 0
        Seeds the pairs (and randomised algorithms).
    n_jobs : int, optional
        Half samples in parallel with joblib.

    Attributes
    ----------
    support_ : ndarray of int
        The kept features, sorted (``get_support()`` gives the mask).
    stable_units_ : list of int
        The kept units (features, or groups) by decreasing frequency.
    threshold_ : float or None
        The threshold used (None when no threshold meets ``max_false``).
    error_bound_ : float
        The bound on the expected number of falsely kept units (0 when none is kept for want
        of a threshold).
    frequencies_ : ndarray, shape (k_max, n_units)
        Selection frequency of every unit at every k.
    stability_index_ : ndarray, shape (k_max,)
        Nogueira et al.'s stability index at every k.
    stability_ : engine.stability.StabilityResult
        Plan, half samples and summary.
    n_features_in_, feature_names_in_
    """

    def __init__(
        self,
        algorithm: str = "foba-obj",
        k_max: int | None = None,
        *,
        k: int | None = None,
        objective: str = "least_squares",
        n_pairs: int = _stability.DEFAULT_PAIRS,
        threshold: float = _stability.DEFAULT_THRESHOLD,
        max_false: float | None = None,
        standardize: bool = True,
        groups=None,
        random_state: int | None = 0,
        n_jobs: int | None = None,
        **params: Any,
    ) -> None:
        self.algorithm = algorithm
        self.k_max = k_max
        self.k = k
        self.objective = objective
        self.n_pairs = n_pairs
        self.threshold = threshold
        self.max_false = max_false
        self.standardize = standardize
        self.groups = groups
        self.random_state = random_state
        self.n_jobs = n_jobs
        self._params = params

    def fit(self, X, y) -> StabilitySelector:
        X, y = validate_data(self, X, y, **_FIT_CHECKS)
        if REGISTRY.objective(self.objective).task == "classification":
            check_classification_targets(y)
        else:
            self._check_task("regression")
            y = np.asarray(y, dtype=np.float64)
        k_max = self.k_max if self.k_max is not None else (self.k or DEFAULT_K_MAX)
        if isinstance(k_max, int | np.integer) and not isinstance(k_max, bool):
            k_max = min(int(k_max), X.shape[1])
        if self.k is not None and not (isinstance(self.k, int | np.integer) and 1 <= self.k):
            raise ValueError(f"k must be a positive integer or None, got {self.k!r}")
        if self.k is not None and self.k > k_max:
            raise ValueError(f"k = {self.k} is above k_max = {k_max}")
        result = _stability.stability_selection(
            X,
            y,
            algorithm=self.algorithm,
            objective=self.objective,
            k_max=k_max,
            params=self._params,
            n_pairs=self.n_pairs,
            threshold=self.threshold,
            max_false=self.max_false,
            standardize=self.standardize,
            groups=self.groups,
            random_state=self.random_state,
            n_jobs=self.n_jobs if self.n_jobs is not None else 1,
        )
        summary = result.summary
        k = None if self.k is None else int(self.k)
        threshold: float | None = self.threshold
        if self.max_false is not None:
            q = summary.q_path if k is None else float(summary.q[k - 1])
            threshold = _stability.threshold_for(q, summary.n_units, self.max_false)
            if threshold is None:
                warnings.warn(
                    f"no threshold bounds the expected false selections by {self.max_false} "
                    f"(q = {q:.3g} units of {summary.n_units}): nothing is kept; lower k",
                    UserWarning,
                    stacklevel=2,
                )
            else:
                summary = _stability.summarise(
                    result.subsamples, result.plan, threshold=threshold, max_false=self.max_false
                )
                result = _stability.StabilityResult(result.plan, result.subsamples, summary)
        units = summary.stable_at(k) if threshold is not None else []
        self.stability_ = result
        self.threshold_ = threshold
        self.error_bound_ = summary.bound_at(k) if threshold is not None else 0.0
        self.stable_units_ = units
        self.support_ = result.features(units)
        self.frequencies_ = summary.frequency
        self.stability_index_ = summary.nogueira
        return self

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "support_")
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.support_] = True
        return mask

    def __sklearn_tags__(self):
        tags = _tags(super().__sklearn_tags__())
        tags.target_tags.required = True
        return tags
