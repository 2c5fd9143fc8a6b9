"""The estimators at a given k: ``SparseRegressor``, ``SparseClassifier``, ``SparseSelector``."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..config import default_objective
from ..registry import REGISTRY
from .base import (
    _FIT_CHECKS,
    _Binary,
    _classifier_tags,
    _default_k,
    _EngineParams,
    _SparseLinear,
    _tags,
)


class SparseRegressor(RegressorMixin, _SparseLinear, BaseEstimator):
    """Sparse linear regression: at most k features, chosen by a registered algorithm.

    Parameters
    ----------
    algorithm : str, default "foba-obj"
        A name in ``engine.ALGORITHMS``.
    k : int, optional
        Number of features. None: the algorithm's own stopping rule when its parameters give
        one (``delta``, ``epsilon``...), otherwise 5 (``engine.default_k``, the app's and the
        command line's default too).
    objective : str, default "least_squares"
        A regression objective in ``engine.OBJECTIVES`` (``least_squares``,
        ``smoothed_absolute``).
    standardize : bool, default True
        Select on unit-variance columns; ``coef_`` is on the original scale
        (``engine.select``).
    groups : array-like of shape (n_features,), optional
        Group label of every feature, for the group-aware algorithms.
    random_state : int, optional
        Seed of the randomised algorithms.
    **params
        Parameters of the algorithm and of the objective (``nu``, ``max_steps``,
        ``fit_intercept``...), checked in ``fit``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Zero off the support.
    intercept_ : float
    support_ : ndarray of int
        The selected features, sorted (``get_support`` of ``SparseSelector`` gives the mask).
    objective_ : float
        The objective value of the fit (on the scaled problem with ``standardize``).
    trace_ : list of engine.Event
        Every decision of the run.
    stop_reason_ : str
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string column names (a pandas DataFrame).
    """

    def __init__(
        self,
        algorithm: str = "foba-obj",
        k: int | None = None,
        *,
        objective: str = "least_squares",
        standardize: bool = True,
        groups=None,
        random_state: int | None = None,
        **params: Any,
    ) -> None:
        self.algorithm = algorithm
        self.k = k
        self.objective = objective
        self.standardize = standardize
        self.groups = groups
        self.random_state = random_state
        self._params = params

    def fit(self, X, y) -> SparseRegressor:
        X, y = validate_data(self, X, y, y_numeric=True, **_FIT_CHECKS)
        self._check_task("regression")
        k = self.k if self.k is not None else _default_k(self, X.shape[1])
        self._store(self._select(X, y, k))
        return self

    def predict(self, X) -> np.ndarray:
        return self._decision(X)

    def __sklearn_tags__(self):
        return _tags(super().__sklearn_tags__())


class SparseClassifier(_Binary, ClassifierMixin, _SparseLinear, BaseEstimator):
    """Sparse linear binary classification: at most k features, chosen by a registered
    algorithm.

    Parameters are those of :class:`SparseRegressor`, with a classification ``objective``
    (default ``logistic``; ``smoothed_hinge``). Labels may be any two values; ``classes_[1]``
    (the larger) is the positive class.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_, intercept_, support_, objective_, trace_, stop_reason_, n_features_in_,
    feature_names_in_
        As in :class:`SparseRegressor`; the decision function is ``X @ coef_ + intercept_``.
    """

    def __init__(
        self,
        algorithm: str = "foba-obj",
        k: int | None = None,
        *,
        objective: str = "logistic",
        standardize: bool = True,
        groups=None,
        random_state: int | None = None,
        **params: Any,
    ) -> None:
        self.algorithm = algorithm
        self.k = k
        self.objective = objective
        self.standardize = standardize
        self.groups = groups
        self.random_state = random_state
        self._params = params

    def fit(self, X, y) -> SparseClassifier:
        X, y = validate_data(self, X, y, **_FIT_CHECKS)
        t = self._encode(y)
        self._check_task("classification")
        k = self.k if self.k is not None else _default_k(self, X.shape[1])
        self._store(self._select(X, t, k))
        return self

    def __sklearn_tags__(self):
        return _classifier_tags(super().__sklearn_tags__())


class SparseSelector(SelectorMixin, _EngineParams, BaseEstimator):
    """Feature selection by a registered algorithm, as a transformer (``SelectorMixin``).

    Parameters are those of :class:`SparseRegressor`, except ``objective``:

    objective : str or None, default None
        A regression or a classification objective (``logistic`` for class labels). None
        follows y, as the app, the API, the command line and the regressor/classifier do: a
        target with 2 distinct values is classification (``logistic``, the larger value the
        positive class), any other a regression (``least_squares``); see
        ``engine.default_objective``.

    Attributes
    ----------
    objective_name_ : str
        The objective the fit used: ``objective``, or the one y called for when it is None.
        (``objective_`` is the objective's value, as in the other estimators.)
    support_ : ndarray of int
        The selected features, sorted (``get_support()`` gives the boolean mask).
    coef_, intercept_, objective_, trace_, stop_reason_, n_features_in_, feature_names_in_
        Those of the fit that chose them.
    """

    def __init__(
        self,
        algorithm: str = "foba-obj",
        k: int | None = None,
        *,
        objective: str | None = None,
        standardize: bool = True,
        groups=None,
        random_state: int | None = None,
        **params: Any,
    ) -> None:
        self.algorithm = algorithm
        self.k = k
        self.objective = objective  # type: ignore[assignment]  # None: follow y (fit)
        self.standardize = standardize
        self.groups = groups
        self.random_state = random_state
        self._params = params

    def fit(self, X, y) -> SparseSelector:
        X, y = validate_data(self, X, y, **_FIT_CHECKS)
        objective: str | None = self.objective
        if objective is None:
            labels = np.unique(y)
            objective = default_objective("classification" if len(labels) == 2 else "regression")
            if len(labels) == 2:  # any two values: the larger is y = 1, as in SparseClassifier
                y = (y == labels[1]).astype(np.float64)
        self.objective_name_: str = objective
        if REGISTRY.objective(objective).task == "classification":
            check_classification_targets(y)
        else:
            self._check_task("regression", objective)
            y = np.asarray(y, dtype=np.float64)
        k = self.k if self.k is not None else _default_k(self, X.shape[1], objective)
        self._store(self._select(X, y, k, objective))
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
