"""scikit-learn estimators over the engine: thin layers over ``engine.select`` and ``engine.cv``.

``SparseRegressor`` and ``SparseClassifier`` fit a sparse linear model with any registered
algorithm (``algorithm=``, default FoBa-obj); ``SparseSelector`` is the same selection as a
transformer for pipelines; ``SparseRegressorCV`` and ``SparseClassifierCV`` choose k by K-fold
cross-validation from one path per fold (``engine.cv``), then fit on all the data at that k.

The algorithm's and the objective's parameters are keyword arguments (``nu=0.3``,
``lam=0.01``, ``max_steps=40``...): ``get_params`` and ``set_params`` see them, so ``clone``
and ``GridSearchCV`` work on them like on any parameter, and ``fit`` validates them through the
registry (``engine.check_config``), with the same errors as ``engine.select``.

Importing this module imports scikit-learn and joblib; ``import engine`` does neither.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.feature_selection import SelectorMixin
from sklearn.model_selection import check_cv
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from . import cv as _cv
from .api import SelectionResult, select
from .config import ConfigError, check_config
from .registry import REGISTRY

__all__ = [
    "SparseClassifier",
    "SparseClassifierCV",
    "SparseRegressor",
    "SparseRegressorCV",
    "SparseSelector",
]

_ACCEPT_SPARSE = ("csr", "csc")
_FIT_CHECKS = {"accept_sparse": _ACCEPT_SPARSE, "dtype": np.float64, "ensure_min_samples": 2}
# k_max when none is given: every size up to this many features (or all of them).
DEFAULT_K_MAX = 20


class _EngineParams:
    """What every estimator here shares: the engine's parameters as keyword arguments.

    They are kept in ``_params`` (not as attributes: they are not in ``__init__``'s signature)
    and added to ``get_params``; ``set_params`` takes any name and ``fit`` checks it.
    """

    _params: dict[str, Any]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        params = super().get_params(deep=deep)  # type: ignore[misc]
        params.update(self._params)
        return params

    def set_params(self, **params: Any) -> Any:
        # Names outside the signature go to the engine; ``fit`` checks them against the
        # algorithm chosen (which may change in this same call), as scikit-learn validates
        # parameters in ``fit``.
        own = set(self._get_param_names())  # type: ignore[attr-defined]
        extra = {n: v for n, v in params.items() if n not in own and "__" not in n}
        super().set_params(**{n: v for n, v in params.items() if n not in extra})  # type: ignore[misc]
        if extra:
            self._params = {**self._params, **extra}
        return self

    def _select(self, X, y, k: int | None) -> SelectionResult:
        return select(
            X,
            y,
            algorithm=self.algorithm,  # type: ignore[attr-defined]
            objective=self.objective,  # type: ignore[attr-defined]
            k=k,
            groups=self.groups,  # type: ignore[attr-defined]
            random_state=self.random_state,  # type: ignore[attr-defined]
            standardize=self.standardize,  # type: ignore[attr-defined]
            **self._params,
        )

    def _check_task(self, task: str) -> None:
        spec = REGISTRY.objective(self.objective)  # type: ignore[attr-defined]
        if spec.task != task:
            fitting = [n for n, s in REGISTRY.objectives.items() if s.task == task]
            raise ValueError(
                f"{type(self).__name__} needs a {task} objective ({', '.join(fitting)}); "
                f"objective {spec.name!r} is for {spec.task}"
            )

    def _store(self, result: SelectionResult) -> None:
        self.coef_ = result.coef
        self.intercept_ = result.intercept
        self.support_ = result.support
        self.objective_ = result.objective
        self.trace_ = result.trace
        self.stop_reason_ = result.stop_reason


def _default_k(estimator: Any, n_features: int) -> int | None:
    """k when none is given: the algorithm's own stopping rule when its parameters give one
    (or it takes no k), otherwise 10% of the features (at least 1), as scikit-learn's
    ``OrthogonalMatchingPursuit``."""
    spec = REGISTRY.algorithms.get(estimator.algorithm)
    if spec is not None and spec.k == "unused":
        return None
    try:
        check_config(
            estimator.algorithm,
            estimator.objective,
            k=None,
            params=estimator._params,
            n_features=n_features,
        )
    except ConfigError:
        return max(int(0.1 * n_features), 1)
    return None


def _tags(tags: Any) -> Any:
    tags.input_tags.sparse = True
    return tags


class _SparseLinear(_EngineParams):
    """A fitted sparse linear model: coef_, intercept_, support_, trace_."""

    def _decision(self, X) -> np.ndarray:
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_


# --------------------------------------------------------------------------- fixed k


class SparseRegressor(RegressorMixin, _SparseLinear, BaseEstimator):
    """Sparse linear regression: at most k features, chosen by a registered algorithm.

    Parameters
    ----------
    algorithm : str, default "foba-obj"
        A name in ``engine.ALGORITHMS``.
    k : int, optional
        Number of features. None: the algorithm's own stopping rule when its parameters give
        one (``delta``, ``epsilon``...), otherwise 10% of the features (at least 1).
    objective : str, default "least_squares"
        A regression objective in ``engine.OBJECTIVES`` (``least_squares``,
        ``smoothed_absolute``).
    standardize : bool, default False
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
        standardize: bool = False,
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


class _Binary:
    """Two classes: ``classes_[1]`` is the positive class, predicted when the decision
    function is positive (the engine's classification objectives read labels that way)."""

    def _encode(self, y) -> np.ndarray:
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(
                f"Only binary classification is supported by {type(self).__name__}: y must hold "
                f"exactly 2 classes, found {len(self.classes_)} class(es): "
                f"{self.classes_[:5].tolist()}"
            )
        return (y == self.classes_[1]).astype(np.float64)

    def decision_function(self, X) -> np.ndarray:
        """Signed score of the positive class ``classes_[1]``, shape (n_samples,)."""
        return self._decision(X)  # type: ignore[attr-defined]

    def predict(self, X) -> np.ndarray:
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(np.intp)]

    def _has_proba(self) -> bool:
        return self.objective == "logistic"  # type: ignore[attr-defined]

    @available_if(_has_proba)
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities of the logistic model (``objective="logistic"`` only)."""
        p = 1.0 / (1.0 + np.exp(-self.decision_function(X)))
        return np.column_stack([1.0 - p, p])

    @available_if(_has_proba)
    def predict_log_proba(self, X) -> np.ndarray:
        d = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0.0, d), -np.logaddexp(0.0, -d)])


def _classifier_tags(tags: Any) -> Any:
    tags = _tags(tags)
    tags.classifier_tags.multi_class = False
    return tags


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
        standardize: bool = False,
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

    Parameters are those of :class:`SparseRegressor`; ``objective`` may be a regression or a
    classification objective (``logistic`` for class labels).

    Attributes
    ----------
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
        objective: str = "least_squares",
        standardize: bool = False,
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

    def fit(self, X, y) -> SparseSelector:
        X, y = validate_data(self, X, y, **_FIT_CHECKS)
        task = REGISTRY.objective(self.objective).task
        if task == "classification":
            check_classification_targets(y)
        else:
            self._check_task("regression")
            y = np.asarray(y, dtype=np.float64)
        k = self.k if self.k is not None else _default_k(self, X.shape[1])
        self._store(self._select(X, y, k))
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


# --------------------------------------------------------------------------- k by cross-validation


class _SparseCV(_SparseLinear):
    """Choose k in 1..k_max by cross-validation (``engine.cv``), then fit at that k."""

    _task: str

    def _fit_cv(self, X, y) -> None:
        n_features = X.shape[1]
        k_max = self.k_max if self.k_max is not None else DEFAULT_K_MAX
        if isinstance(k_max, int | np.integer) and not isinstance(k_max, bool):
            k_max = min(k_max, n_features)  # a bound on the search: no k beyond the features
        plan = _cv.plan_cv(
            self.algorithm,
            self.objective,
            k_max=k_max,
            params=self._params,
            metric=self.metric,
            n_features=n_features,
            has_groups=self.groups is not None,
            task=self._task,
        )
        splitter = check_cv(self.cv, y, classifier=is_classifier(self))
        folds = Parallel(n_jobs=self.n_jobs)(
            delayed(_cv.fold_errors)(
                X,
                y,
                train,
                test,
                algorithm=self.algorithm,
                objective=self.objective,
                k_max=plan.k_max,
                params=self._params,
                metric=plan.metric,
                standardize=self.standardize,
                groups=self.groups,
                random_state=self.random_state,
            )
            for train, test in splitter.split(X, y)
        )
        summary = _cv.summarise(folds, self.rule)
        results: dict[str, np.ndarray] = {
            "k": summary.k,
            "mean_error": summary.mean,
            "se_error": summary.se,
        }
        for i, fold in enumerate(folds):
            results[f"split{i}_error"] = fold.errors
        self.cv_results_ = results
        self.cv_folds_ = folds
        self.cv_mode_ = plan.mode
        self.metric_ = plan.metric
        self.k_min_ = summary.k_min
        self.k_1se_ = summary.k_1se
        self.k_ = summary.k_best
        self._store(self._select(X, y, self.k_))


class SparseRegressorCV(RegressorMixin, _SparseCV, BaseEstimator):
    """Sparse linear regression with k chosen by cross-validation.

    k is chosen in 1..k_max by K-fold cross-validation: each fold runs the algorithm once on
    its training part and scores every k from that one path (the best size-k support along a
    FoBa path, the k-th prefix of a forward path...: ``engine.cv``), refitted on the training
    part and evaluated on the held-out part. Algorithms whose sizes along the path are not
    answers (Frank-Wolfe, the Lasso, hard thresholding, replacement steps, group-aware paths)
    run once per k instead (``cv_mode_ == "per-k"``). The model is then fitted on all the
    data at the chosen k, exactly as ``engine.select(k=k_)``.

    Parameters
    ----------
    algorithm, objective, standardize, groups, random_state, **params
        As in the estimator without CV.
    k_max : int, optional
        Largest k tried (default 20), at most n_features.
    cv : int, cross-validation splitter or iterable, default 5
        As in scikit-learn: an int means ``KFold`` (regression) or ``StratifiedKFold``
        (classification), without shuffling.
    rule : {"min", "1se"}, default "min"
        The k of smallest mean error, or the smallest k whose mean error is within one
        standard error of that minimum.
    metric : str, optional
        The held-out error (``engine.cv.METRICS``): ``mse`` (default) or ``mae`` for
        regression, ``log_loss`` (default) or ``error`` (misclassification rate) for
        classification.
    n_jobs : int, optional
        Folds run in parallel with joblib.

    Attributes
    ----------
    k_ : int
        The chosen k; ``k_min_`` and ``k_1se_`` are those of both rules.
    cv_results_ : dict of ndarray
        ``k``, ``mean_error``, ``se_error`` (standard error over the folds) and
        ``split{i}_error`` for every fold, one entry per k.
    cv_folds_ : list of engine.cv.FoldResult
        Each fold's errors, the supports it scored and its time.
    cv_mode_ : {"path", "per-k"}
    metric_ : str
    coef_, intercept_, support_, objective_, trace_, stop_reason_, n_features_in_,
    feature_names_in_
        Of the final fit at ``k_``.
    """

    _task = "regression"

    def __init__(
        self,
        algorithm: str = "foba-obj",
        k_max: int | None = None,
        *,
        objective: str = "least_squares",
        cv=5,
        rule: str = "min",
        metric: str | None = None,
        standardize: bool = False,
        groups=None,
        random_state: int | None = None,
        n_jobs: int | None = None,
        **params: Any,
    ) -> None:
        self.algorithm = algorithm
        self.k_max = k_max
        self.objective = objective
        self.cv = cv
        self.rule = rule
        self.metric = metric
        self.standardize = standardize
        self.groups = groups
        self.random_state = random_state
        self.n_jobs = n_jobs
        self._params = params

    def fit(self, X, y) -> SparseRegressorCV:
        X, y = validate_data(self, X, y, y_numeric=True, **_FIT_CHECKS)
        self._check_task("regression")
        self._fit_cv(X, y)
        return self

    def predict(self, X) -> np.ndarray:
        return self._decision(X)

    def __sklearn_tags__(self):
        return _tags(super().__sklearn_tags__())


class SparseClassifierCV(_Binary, ClassifierMixin, _SparseCV, BaseEstimator):
    """Sparse linear binary classification with k chosen by cross-validation.

    ``classes_``, ``decision_function`` and ``predict_proba`` are those of
    :class:`SparseClassifier`.

    k is chosen in 1..k_max by K-fold cross-validation: each fold runs the algorithm once on
    its training part and scores every k from that one path (the best size-k support along a
    FoBa path, the k-th prefix of a forward path...: ``engine.cv``), refitted on the training
    part and evaluated on the held-out part. Algorithms whose sizes along the path are not
    answers (Frank-Wolfe, the Lasso, hard thresholding, replacement steps, group-aware paths)
    run once per k instead (``cv_mode_ == "per-k"``). The model is then fitted on all the
    data at the chosen k, exactly as ``engine.select(k=k_)``.

    Parameters
    ----------
    algorithm, objective, standardize, groups, random_state, **params
        As in the estimator without CV.
    k_max : int, optional
        Largest k tried (default 20), at most n_features.
    cv : int, cross-validation splitter or iterable, default 5
        As in scikit-learn: an int means ``KFold`` (regression) or ``StratifiedKFold``
        (classification), without shuffling.
    rule : {"min", "1se"}, default "min"
        The k of smallest mean error, or the smallest k whose mean error is within one
        standard error of that minimum.
    metric : str, optional
        The held-out error (``engine.cv.METRICS``): ``mse`` (default) or ``mae`` for
        regression, ``log_loss`` (default) or ``error`` (misclassification rate) for
        classification.
    n_jobs : int, optional
        Folds run in parallel with joblib.

    Attributes
    ----------
    k_ : int
        The chosen k; ``k_min_`` and ``k_1se_`` are those of both rules.
    cv_results_ : dict of ndarray
        ``k``, ``mean_error``, ``se_error`` (standard error over the folds) and
        ``split{i}_error`` for every fold, one entry per k.
    cv_folds_ : list of engine.cv.FoldResult
        Each fold's errors, the supports it scored and its time.
    cv_mode_ : {"path", "per-k"}
    metric_ : str
    coef_, intercept_, support_, objective_, trace_, stop_reason_, n_features_in_,
    feature_names_in_
        Of the final fit at ``k_``.
    """

    _task = "classification"

    def __init__(
        self,
        algorithm: str = "foba-obj",
        k_max: int | None = None,
        *,
        objective: str = "logistic",
        cv=5,
        rule: str = "min",
        metric: str | None = None,
        standardize: bool = False,
        groups=None,
        random_state: int | None = None,
        n_jobs: int | None = None,
        **params: Any,
    ) -> None:
        self.algorithm = algorithm
        self.k_max = k_max
        self.objective = objective
        self.cv = cv
        self.rule = rule
        self.metric = metric
        self.standardize = standardize
        self.groups = groups
        self.random_state = random_state
        self.n_jobs = n_jobs
        self._params = params

    def fit(self, X, y) -> SparseClassifierCV:
        X, y = validate_data(self, X, y, **_FIT_CHECKS)
        t = self._encode(y)
        self._check_task("classification")
        self._fit_cv(X, t)
        return self

    def __sklearn_tags__(self):
        return _classifier_tags(super().__sklearn_tags__())
