"""``engine.cv``: k by cross-validation from one path per fold.

The curve read off one path must be the curve of the method itself: for every k, the support
scored equals what ``engine.select(k=k)`` returns on the fold, and its error equals the error of
refitting that support on the fold's training part, computed here independently.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from engine_problems import make_classification, make_regression

import engine
from engine.cv import (
    CVPlan,
    FoldResult,
    choose_k,
    cross_validate_k,
    fold_errors,
    kfold,
    plan_cv,
    summarise,
    supports_by_k,
)
from engine.datasets import generate
from engine.trace import StopRequested, best_along_path

K_MAX = 8


def brute_force_errors(X, y, train, test, algorithm, k_max, objective="least_squares", **kw):
    """Each k on its own: engine.select(k) on the training part, its support refitted there
    by least squares with numpy (logistic: the engine's own answer), error on the test part."""
    supports, errors = [], []
    for k in range(1, k_max + 1):
        r = engine.select(X[train], y[train], algorithm=algorithm, objective=objective, k=k, **kw)
        supports.append(tuple(int(j) for j in r.support))
        if objective == "least_squares":
            A = np.column_stack([np.ones(len(train)), X[train][:, r.support]])
            w = np.linalg.lstsq(A, y[train], rcond=None)[0]
            pred = w[0] + X[test][:, r.support] @ w[1:]
            errors.append(float(np.mean((y[test] - pred) ** 2)))
        else:
            d = X[test] @ r.coef + r.intercept
            t = (y[test] == np.unique(y[train])[1]).astype(float)
            errors.append(float(np.mean(np.logaddexp(0.0, d) - t * d)))
    return supports, np.array(errors)


@pytest.mark.parametrize(
    ("algorithm", "params", "path"),
    [
        ("foba-obj", {}, "best-k"),
        ("foba-gdt", {"backward": "conservative"}, "best-k"),
        ("fb-threshold", {"eps_back": 0.5}, "best-k"),
        ("foba-obj", {"max_steps": 9}, "best-k"),
        ("forward-obj", {}, "prefix"),
        ("omp", {}, "prefix"),
        ("stepwise", {}, "prefix"),
        ("oblivious", {}, "prefix"),
        ("backward", {}, "backward"),
    ],
)
def test_one_path_scores_every_k_as_the_method_at_that_k(algorithm, params, path) -> None:
    p = generate("zhang2008", random_state=2, n=60, d=40, k_true=6)
    X, y = np.asarray(p.X), np.asarray(p.y)
    train, test = kfold(len(y), 4, random_state=1)[0]
    fold = fold_errors(X, y, train, test, algorithm=algorithm, k_max=K_MAX, params=params)
    supports, errors = brute_force_errors(X, y, train, test, algorithm, K_MAX, **params)
    assert fold.mode == "path" and fold.n_runs == 1
    assert plan_cv(algorithm, k_max=K_MAX, params=params, n_features=40).path == path
    assert fold.supports == supports
    np.testing.assert_allclose(fold.errors, errors, rtol=1e-9)
    assert list(fold.sizes) == [len(s) for s in supports]


def test_the_best_k_support_is_taken_within_the_steps_the_run_at_k_would_take() -> None:
    # On this problem the best size-3 support along the whole k_max = 10 path is not the one
    # FoBa returns at k = 3 (its path, 15 steps, ends before the better one is found): reading
    # best_along_path over the whole path would score another method.
    p = generate("zhang2008", random_state=2, n=60, d=40, k_true=6)
    r = engine.select(p.X, p.y, algorithm="foba-obj", k=10)
    plan = plan_cv("foba-obj", k_max=10, n_features=40)
    ours = supports_by_k(r.trace, plan)
    whole = best_along_path(r.trace)
    at3 = engine.select(p.X, p.y, algorithm="foba-obj", k=3)
    assert tuple(sorted(whole[3][0])) != tuple(at3.support)
    assert ours[2] == tuple(at3.support)
    assert plan.path_lengths[3] == 15


@pytest.mark.parametrize("path_end", ["auto", "sparsity", "zhang"])
def test_the_run_at_k_is_read_up_to_where_its_path_end_stops_it(path_end) -> None:
    # The run at k stops at its own size cap (k + max(5, ceil(k/10)) for auto, k for
    # sparsity), before the run at k_max does: the read-off stops there too.
    p = generate("zhang2008", random_state=0, n=60, d=40, k_true=6, correlation=0.95)
    r = engine.select(p.X, p.y, algorithm="foba-obj", k=10, path_end=path_end)
    plan = plan_cv("foba-obj", k_max=10, n_features=40, params={"path_end": path_end})
    ours = supports_by_k(r.trace, plan)
    for k in range(1, 11):
        at_k = engine.select(p.X, p.y, algorithm="foba-obj", k=k, path_end=path_end)
        assert ours[k - 1] == tuple(at_k.support), k


def test_logistic_folds_match_the_method_at_each_k() -> None:
    X, y = make_classification(3, n=120, d=20, k_true=4)
    train, test = kfold(len(y), 4, y=y, random_state=0)[1]
    for algorithm in ("foba-obj", "omp"):
        fold = fold_errors(X, y, train, test, algorithm=algorithm, objective="logistic", k_max=6)
        supports, errors = brute_force_errors(X, y, train, test, algorithm, 6, "logistic")
        assert fold.metric == "log_loss" and fold.supports == supports
        np.testing.assert_allclose(fold.errors, errors, rtol=1e-5)  # refits to Newton's tol


@pytest.mark.parametrize(
    ("algorithm", "params"),
    [("lasso", {}), ("frank-wolfe", {"B1": 20.0}), ("omp", {"replacement": "full"})],
)
def test_final_path_algorithms_run_once_per_k(algorithm, params) -> None:
    X, y = make_regression(1, n=60, d=15, k_true=3)
    train, test = kfold(len(y), 3, random_state=0)[0]
    plan = plan_cv(algorithm, k_max=4, params=params, n_features=15)
    assert plan.mode == "per-k" and [c.k for c in plan.runs] == [1, 2, 3, 4]
    fold = fold_errors(X, y, train, test, algorithm=algorithm, k_max=4, params=params)
    assert fold.n_runs == 4
    for k in range(1, 5):  # the method's own answer at k, not a refit of its support
        r = engine.select(X[train], y[train], algorithm=algorithm, k=k, **params)
        pred = X[test] @ r.coef + r.intercept
        assert fold.errors[k - 1] == pytest.approx(np.mean((y[test] - pred) ** 2), rel=1e-12)


def test_group_paths_run_once_per_k() -> None:
    plan = plan_cv("group-omp", k_max=3, n_features=9, has_groups=True)
    assert plan.mode == "per-k" and "group" in plan.reason


def test_requests_cv_cannot_serve_are_refused_naming_the_field() -> None:
    with pytest.raises(engine.ConfigError, match="does not take k") as exc:
        plan_cv("ght", k_max=3, params={"s2": 1}, has_groups=True)
    assert exc.value.field == "algorithm"
    with pytest.raises(engine.ConfigError) as exc:
        plan_cv("foba-obj", "crf", k_max=3)
    assert exc.value.field == "objective"
    with pytest.raises(engine.ConfigError, match="log_loss, error") as exc:
        plan_cv("foba-obj", "logistic", k_max=3, metric="mse")
    assert exc.value.field == "metric"
    with pytest.raises(engine.ConfigError, match="between 1 and 5") as exc:
        plan_cv("foba-obj", k_max=6, n_features=5)
    assert exc.value.field == "k"
    with pytest.raises(engine.ConfigError, match="needs k_max") as exc:
        plan_cv("foba-obj", k_max=None, params={"max_steps": 5})  # a valid run, no k to try
    assert exc.value.field == "k"
    with pytest.raises(engine.ConfigError, match="more samples than features"):
        X, y = make_regression(0, n=30, d=20)
        fold_errors(X, y, np.arange(15), np.arange(15, 30), algorithm="backward", k_max=3)


def test_a_path_that_stops_early_scores_its_largest_support_for_larger_k() -> None:
    X, y = make_regression(0, n=50, d=12, k_true=3, noise=0.01)
    train, test = kfold(50, 5, random_state=0)[0]
    fold = fold_errors(X, y, train, test, algorithm="foba-obj", k_max=8, params={"delta": 1e-3})
    r = engine.select(X[train], y[train], algorithm="foba-obj", k=8, delta=1e-3)
    assert fold.sizes.max() < 8 and list(fold.sizes[-3:]) == [fold.sizes.max()] * 3
    assert fold.supports[-1] == tuple(r.support)


def test_sparse_and_standardized_folds_agree_with_dense() -> None:
    X, y = make_regression(4, n=60, d=20, k_true=3, density=0.3)
    train, test = kfold(60, 3, random_state=2)[2]
    dense = fold_errors(X, y, train, test, algorithm="foba-obj", k_max=5, standardize=True)
    sparse = fold_errors(
        sp.csr_matrix(X), y, train, test, algorithm="foba-obj", k_max=5, standardize=True
    )
    assert dense.supports == sparse.supports
    np.testing.assert_allclose(dense.errors, sparse.errors, rtol=1e-9)


def test_summary_mean_standard_error_and_rules() -> None:
    errors = np.array([[5.0, 1.9, 1.9, 2.5], [6.0, 2.0, 2.1, 2.4], [7.0, 2.0, 1.0, 2.6]])
    s = summarise(errors, rule="1se")
    np.testing.assert_allclose(s.mean, errors.mean(axis=0))
    np.testing.assert_allclose(s.se, errors.std(axis=0, ddof=1) / np.sqrt(3))
    assert s.k_min == 3  # mean 1.67, standard error 0.32
    assert s.mean[1] <= s.mean[2] + s.se[2]  # k = 2 is within one SE of the minimum...
    assert s.k_1se == s.k_best == 2  # ... and is the smallest such k
    assert summarise(errors).k_best == 3
    assert choose_k([3.0, 1.0, 1.0], [0.0, 0.0, 0.0]) == 2  # ties: the smallest k
    assert choose_k([3.0, 1.2, 1.0], [0.0, 0.0, 0.3], "1se") == 2
    assert choose_k([3.0, 1.2, 1.0], [0.0, 0.0, 0.1], "1se") == 3
    one = summarise(errors[:1])
    assert one.n_folds == 1 and np.all(one.se == 0)
    with pytest.raises(ValueError, match="rule"):
        summarise(errors, rule="max")


def test_fold_results_round_trip_through_json_and_summarise_alike() -> None:
    X, y = make_regression(2, n=40, d=10)
    folds = [fold_errors(X, y, tr, te, algorithm="omp", k_max=4) for tr, te in kfold(40, 4)]
    again = [FoldResult.from_dict(f.to_dict()) for f in folds]
    assert summarise(again).to_dict() == summarise(folds).to_dict()


def test_kfold_partitions_the_rows_and_stratifies() -> None:
    y = np.array([0] * 30 + [1] * 10)
    folds = kfold(40, 5, y=y, random_state=3)
    tests = np.concatenate([te for _, te in folds])
    assert sorted(tests) == list(range(40))
    for train, test in folds:
        assert len(test) == 8 and not set(train) & set(test)
        assert np.sum(y[test] == 1) == 2
    assert [t.tolist() for _, t in kfold(40, 5, random_state=3)] == [
        t.tolist() for _, t in kfold(40, 5, random_state=3)
    ]
    with pytest.raises(ValueError, match="n_folds"):
        kfold(4, 5)


def test_a_callback_can_stop_a_fold() -> None:
    X, y = make_regression(0, n=40, d=10)
    with pytest.raises(StopRequested):
        fold_errors(
            X,
            y,
            np.arange(30),
            np.arange(30, 40),
            algorithm="foba-obj",
            k_max=4,
            callback=lambda e: e.step < 2,
        )


def test_replacement_steps_make_a_forward_path_final() -> None:
    spec = engine.ALGORITHMS["omp"]
    assert spec.traits.path_for({"replacement": "none"}) == "prefix"
    assert spec.traits.path_for({"replacement": "simple"}) == "final"
    assert engine.check_config("replacement", k=3).path == "final"
    assert engine.check_config("foba-obj", k=3).path == "best-k"


@pytest.mark.parametrize("algorithm", ["foba-obj", "forward-obj"])
def test_cv_finds_the_true_k_in_most_seeds(algorithm: str) -> None:
    # gaussian_regression, n = 100, d = 50, 5 true features, SNR 5: measured 17/20 seeds with
    # the minimum rule and 20/20 with the one-standard-error rule, for both methods.
    hits = {"min": 0, "1se": 0}
    for seed in range(20):
        p = generate("gaussian_regression", random_state=seed, n=100, d=50, k_true=5)
        r = cross_validate_k(p.X, p.y, algorithm=algorithm, k_max=12, random_state=seed)
        hits["min"] += r.summary.k_min == 5
        hits["1se"] += r.summary.k_1se == 5
    assert hits["min"] >= 14 and hits["1se"] >= 16, hits


def test_cross_validate_k_reports_plan_folds_and_summary() -> None:
    X, y = make_regression(5, n=60, d=12, k_true=3)
    seen = []
    r = cross_validate_k(
        X,
        y,
        algorithm="foba-obj",
        k_max=6,
        n_folds=3,
        rule="1se",
        on_fold=lambda i, f: seen.append(i),
    )
    assert seen == [0, 1, 2] and isinstance(r.plan, CVPlan)
    assert r.k_best == r.summary.k_1se and len(r.folds) == 3
    assert r.to_dict()["summary"]["k_best"] == r.k_best


def test_reading_a_best_k_path_needs_the_path_lengths() -> None:
    X, y = make_regression(0, n=40, d=10)
    r = engine.select(X, y, algorithm="foba-obj", k=4)
    with pytest.raises(ValueError, match="n_features"):
        supports_by_k(r.trace, plan_cv("foba-obj", k_max=4))
    assert len(supports_by_k(r.trace, plan_cv("foba-obj", k_max=4, n_features=10))) == 4
