"""``engine.sklearn``: the estimators follow scikit-learn's conventions and are thin layers over
``engine.select`` and ``engine.cv``."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from engine_problems import make_classification, make_regression
from sklearn.base import clone
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

import engine
from engine.cv import fold_errors, summarise
from engine.sklearn import (
    SparseClassifier,
    SparseClassifierCV,
    SparseRegressor,
    SparseRegressorCV,
    SparseSelector,
)

ROOT = Path(__file__).resolve().parents[2]
ESTIMATORS = [
    SparseRegressor(),
    SparseClassifier(),
    SparseSelector(),
    SparseRegressorCV(),
    SparseClassifierCV(),
    SparseRegressor("omp", 2, standardize=True),
    SparseClassifier(objective="smoothed_hinge", k=2),
    SparseRegressorCV("lasso", 3, rule="1se"),  # a "final" path: one run per k
]
# Every check runs; the one scikit-learn skips here, check_array_api_input, only runs with
# SCIPY_ARRAY_API=1 set before scipy is imported, so it runs in a subprocess below.
SKIPPED_HERE = {"check_array_api_input"}


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_check_estimator_passes(estimator) -> None:
    outcomes: list[tuple[str, str, str]] = []

    def record(*, check_name, status, exception, **_):
        outcomes.append((check_name, status, repr(exception)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(estimator, on_fail=None, on_skip=None, callback=record)
    failed = [o for o in outcomes if o[1] == "failed"]
    skipped = {o[0] for o in outcomes if o[1] == "skipped"}
    assert not failed, failed
    assert skipped <= SKIPPED_HERE, skipped
    assert len(outcomes) > 45


def test_array_api_check_passes_with_array_api_dispatch() -> None:
    code = """
import warnings
from sklearn.utils.estimator_checks import check_array_api_input
from engine.sklearn import *
for est in (SparseRegressor(), SparseClassifier(), SparseSelector(), SparseRegressorCV(),
            SparseClassifierCV()):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_array_api_input(type(est).__name__, est, array_namespace="numpy",
                              expect_only_array_outputs=False)
print("ok")
"""
    env = {**os.environ, "SCIPY_ARRAY_API": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_the_regressor_is_engine_select() -> None:
    X, y = make_regression(0, n=60, d=20, k_true=3)
    est = SparseRegressor("foba-obj", 3, nu=0.4, max_steps=12).fit(X, y)
    r = engine.select(X, y, algorithm="foba-obj", k=3, nu=0.4, max_steps=12)
    np.testing.assert_array_equal(est.support_, r.support)
    np.testing.assert_allclose(est.coef_, r.coef)
    assert est.intercept_ == r.intercept and est.trace_ == r.trace
    np.testing.assert_allclose(est.predict(X), X @ r.coef + r.intercept)
    assert est.n_features_in_ == 20 and not hasattr(est, "feature_names_in_")


def test_engine_parameters_are_estimator_parameters() -> None:
    est = SparseRegressor(k=3, nu=0.3)
    assert est.get_params()["nu"] == 0.3
    copy = clone(est)
    assert copy.get_params() == est.get_params()
    copy.set_params(nu=0.7, backward="conservative", k=2)
    assert copy.get_params()["nu"] == 0.7 and copy.k == 2 and est.get_params()["nu"] == 0.3
    assert "nu=0.7" in repr(copy)
    X, y = make_regression(1, n=40, d=10)
    with pytest.raises(ValueError, match="no parameter 'nuu'"):
        SparseRegressor(k=2, nuu=0.3).fit(X, y)
    with pytest.raises(engine.ConfigError, match="between 1 and 10"):
        SparseRegressor(k=11).fit(X, y)
    with pytest.raises(ValueError, match="needs a regression objective"):
        SparseRegressor(objective="logistic").fit(X, y)
    own = set(SparseRegressorCV._get_param_names())
    names = {p.name for s in engine.ALGORITHMS.values() for p in s.params}
    names |= {p.name for s in engine.OBJECTIVES.values() for p in s.params}
    clash = own & names - {"algorithm", "objective", "k"}
    assert not clash, f"estimator parameters hide engine parameters: {clash}"


def test_k_defaults_to_the_algorithms_own_stopping_rule_or_five() -> None:
    X, y = make_regression(2, n=80, d=40, k_true=3)
    assert len(SparseRegressor("omp").fit(X, y).support_) == 5
    by_delta = SparseRegressor("foba-obj", delta=0.05).fit(X, y)
    assert "delta" in by_delta.stop_reason_


def test_pipeline_with_a_scaler_and_grid_search() -> None:
    X, y = make_regression(3, n=80, d=15, k_true=3)
    X = X * np.geomspace(0.01, 100.0, 15)  # columns in very different units
    pipe = make_pipeline(StandardScaler(), SparseRegressor(k=3))
    pipe.fit(X, y)
    direct = SparseRegressor(k=3, standardize=True).fit(X, y)
    np.testing.assert_array_equal(pipe[-1].support_, direct.support_)
    np.testing.assert_allclose(pipe.predict(X), direct.predict(X), rtol=1e-8, atol=1e-8)
    grid = GridSearchCV(
        make_pipeline(StandardScaler(), SparseRegressor()),
        {"sparseregressor__k": [1, 3, 6], "sparseregressor__nu": [0.3, 0.9]},
        cv=3,
    ).fit(X, y)
    assert grid.best_params_["sparseregressor__k"] == 3
    assert grid.best_estimator_[-1].get_params()["nu"] in (0.3, 0.9)


def test_selector_feeds_a_linear_regression() -> None:
    X, y = make_regression(4, n=80, d=20, k_true=3)
    pipe = make_pipeline(SparseSelector(k=3), LinearRegression()).fit(X, y)
    selector = pipe[0]
    assert selector.transform(X).shape == (80, 3)
    np.testing.assert_array_equal(selector.get_support(indices=True), selector.support_)
    np.testing.assert_allclose(pipe[-1].coef_, selector.coef_[selector.support_], rtol=1e-8)
    assert cross_val_score(pipe, X, y, cv=3).mean() > 0.8


def test_pandas_input_gives_feature_names() -> None:
    X, y = make_regression(5, n=60, d=8, k_true=2)
    df = pd.DataFrame(X, columns=[f"gene_{j}" for j in range(8)])
    selector = SparseSelector(k=2).fit(df, y)
    names = [f"gene_{j}" for j in selector.support_]
    assert list(selector.feature_names_in_) == list(df.columns)
    assert list(selector.get_feature_names_out()) == names
    assert list(selector.set_output(transform="pandas").transform(df).columns) == names
    reg = SparseRegressorCV(k_max=4, cv=3).fit(df, y)
    assert list(reg.feature_names_in_) == list(df.columns)


def test_sparse_input_fits_as_dense() -> None:
    X, y = make_regression(6, n=60, d=20, k_true=3, density=0.3)
    for est in (SparseRegressor(k=3), SparseRegressorCV(k_max=5, cv=3)):
        dense = clone(est).fit(X, y)
        sparse = clone(est).fit(sp.csr_matrix(X), y)
        np.testing.assert_array_equal(dense.support_, sparse.support_)
        np.testing.assert_allclose(dense.predict(X), sparse.predict(sp.csc_matrix(X)))


def test_classifier_labels_and_probabilities() -> None:
    X, t = make_classification(7, n=120, d=15, k_true=3)
    y = np.where(t == 1, "spam", "ham")
    clf = SparseClassifier(k=3).fit(X, y)
    assert list(clf.classes_) == ["ham", "spam"]
    r = engine.select(X, t, algorithm="foba-obj", objective="logistic", k=3)
    np.testing.assert_allclose(clf.decision_function(X), X @ r.coef + r.intercept)
    assert set(clf.predict(X)) <= {"ham", "spam"} and clf.score(X, y) > 0.7
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
    assert not hasattr(SparseClassifier(objective="smoothed_hinge"), "predict_proba")
    with pytest.raises(ValueError, match="Only binary classification"):
        SparseClassifier().fit(X, np.arange(120) % 3)


def test_cv_estimator_is_engine_cv_on_the_same_folds() -> None:
    X, y = make_regression(8, n=90, d=25, k_true=4)
    cv = KFold(5, shuffle=True, random_state=0)
    est = SparseRegressorCV(k_max=8, cv=cv, rule="1se").fit(X, y)
    folds = [fold_errors(X, y, tr, te, algorithm="foba-obj", k_max=8) for tr, te in cv.split(X)]
    s = summarise(folds, "1se")
    np.testing.assert_allclose(est.cv_results_["mean_error"], s.mean)
    np.testing.assert_allclose(est.cv_results_["se_error"], s.se)
    np.testing.assert_allclose(est.cv_results_["split3_error"], folds[3].errors)
    assert (est.k_, est.k_min_, est.k_1se_) == (s.k_1se, s.k_min, s.k_1se)
    assert est.cv_mode_ == "path" and est.metric_ == "mse"
    final = SparseRegressor(k=est.k_).fit(X, y)  # the final fit is the method at k_
    np.testing.assert_array_equal(est.support_, final.support_)
    np.testing.assert_allclose(est.coef_, final.coef_)
    parallel = SparseRegressorCV(k_max=8, cv=cv, rule="1se", n_jobs=2).fit(X, y)
    np.testing.assert_allclose(parallel.cv_results_["mean_error"], s.mean)


def test_classifier_cv_chooses_k_with_the_log_loss() -> None:
    X, t = make_classification(9, n=200, d=20, k_true=3, flip=0.05)
    y = np.where(t == 1, "b", "a")
    est = SparseClassifierCV(k_max=8, cv=4).fit(X, y)
    assert est.metric_ == "log_loss" and 2 <= est.k_ <= 6
    assert len(est.support_) == est.k_ and list(est.classes_) == ["a", "b"]
    by_error = SparseClassifierCV(k_max=8, cv=4, metric="error").fit(X, y)
    assert np.all(by_error.cv_results_["mean_error"] <= 1.0)


def test_grid_search_over_k_agrees_with_the_cv_estimator() -> None:
    X, y = make_regression(10, n=80, d=20, k_true=3)
    cv = KFold(4, shuffle=True, random_state=1)
    grid = GridSearchCV(
        SparseRegressor(), {"k": range(1, 9)}, cv=cv, scoring="neg_mean_squared_error"
    ).fit(X, y)
    ours = SparseRegressorCV(k_max=8, cv=cv).fit(X, y)
    np.testing.assert_allclose(-grid.cv_results_["mean_test_score"], ours.cv_results_["mean_error"])
    assert grid.best_params_["k"] == ours.k_
    outer = GridSearchCV(
        make_pipeline(StandardScaler(), SparseRegressorCV(k_max=6, cv=3)),
        {"sparseregressorcv__rule": ["min", "1se"], "sparseregressorcv__nu": [0.5, 0.9]},
        cv=3,
    ).fit(X, y)
    assert outer.best_estimator_[-1].k_ in range(1, 7)


def test_import_engine_loads_no_scikit_learn() -> None:
    code = "import sys, engine, engine.cv; print(sorted({'sklearn', 'joblib'} & set(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


def test_the_selector_follows_y_like_the_classifier_and_the_regressor() -> None:
    """objective=None: a 0/1 (or any two-valued) target gets logistic, as the app, the API,
    the command line and SparseClassifier give it; a continuous one least squares."""
    X, y = make_classification(7, n=120, d=15, k_true=3)
    t = (y == y.max()).astype(float)  # 0/1
    selector = SparseSelector(k=3).fit(X, t)
    assert selector.objective is None
    assert selector.objective_name_ == engine.default_objective("classification") == "logistic"
    classifier = SparseClassifier(k=3).fit(X, t)
    np.testing.assert_array_equal(selector.support_, classifier.support_)
    np.testing.assert_allclose(selector.coef_, classifier.coef_, rtol=1e-12)
    labels = np.where(t == 1, "yes", "no")  # any two labels: the larger is y = 1
    named = SparseSelector(k=3).fit(X, labels)
    assert named.objective_name_ == "logistic"
    np.testing.assert_allclose(named.coef_, classifier.coef_, rtol=1e-12)
    # The objective named still wins: least squares on the 0/1 target, as before.
    ls = SparseSelector(k=3, objective="least_squares").fit(X, t)
    assert ls.objective_name_ == "least_squares"
    np.testing.assert_allclose(ls.coef_, SparseRegressor(k=3).fit(X, t).coef_, rtol=1e-12)

    Xr, yr = make_regression(8, n=80, d=15, k_true=3)
    regression = SparseSelector(k=3).fit(Xr, yr)
    assert regression.objective_name_ == engine.default_objective("regression")
    np.testing.assert_allclose(regression.coef_, SparseRegressor(k=3).fit(Xr, yr).coef_)
    three = SparseSelector(k=2).fit(Xr, np.round(yr) % 3)  # three values: a regression
    assert three.objective_name_ == "least_squares"
