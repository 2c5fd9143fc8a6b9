"""The estimators that choose k by cross-validation: ``SparseRegressorCV``,
``SparseClassifierCV`` (``engine.cv`` under joblib)."""

from __future__ import annotations

from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.model_selection import check_cv
from sklearn.utils.validation import validate_data

from .. import cv as _cv
from .base import _FIT_CHECKS, _Binary, _classifier_tags, _SparseLinear, _tags

# k_max when none is given: every size up to this many features (or all of them).
DEFAULT_K_MAX = 20


class _SparseCV(_SparseLinear):
    """Choose k in 1..k_max by cross-validation (``engine.cv``), then fit at that k."""

    _task: str
    # Set by the estimators' __init__, beside those of _EngineParams.
    k_max: int | None
    cv: Any
    rule: str
    metric: str | None
    n_jobs: int | None

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


# The docstring both estimators share after their first paragraph.
_CV_DOC = """\
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


class SparseRegressorCV(RegressorMixin, _SparseCV, BaseEstimator):
    __doc__ = "Sparse linear regression with k chosen by cross-validation.\n\n" + _CV_DOC

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
        standardize: bool = True,
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
    __doc__ = (
        "Sparse linear binary classification with k chosen by cross-validation.\n\n"
        "    ``classes_``, ``decision_function`` and ``predict_proba`` are those of\n"
        "    :class:`SparseClassifier`.\n\n" + _CV_DOC
    )

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
        standardize: bool = True,
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
