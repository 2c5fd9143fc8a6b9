"""The l1 baselines ``lasso`` and ``lasso-refit`` (Zhang 2008 Section 4; Elenberg et al. 2016).

The paths are recomputed here with scikit-learn's own calls (lars_path on the centred problem,
LogisticRegression with an l1 penalty along the same warm-started grid), the alpha scale is
checked against the optimality conditions of OUR objective written out by hand, and the refits
against numpy lstsq / scikit-learn's L2 logistic regression.
"""

from __future__ import annotations

import functools
import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from engine_problems import make_classification, make_regression
from engine_reference import labels01, logistic_refit, logistic_value, ls_refit, ls_value
from scipy.special import expit
from sklearn.linear_model import LogisticRegression, lars_path

import engine
import engine.algorithms.lasso as lasso_module  # (importing it registers lasso / lasso-refit)
from engine.datasets import generate
from engine.metrics import feature_selection_error
from engine.objectives import LeastSquares, Logistic
from engine.trace import best_along_path, from_json, replay, to_json

LAM = 1e-2
ZERO_TOL = 1e-12  # the documented convention: |w_j| <= 1e-12 max|w| is a zero


def nonzero(coef) -> frozenset[int]:
    coef = np.asarray(coef)
    big = np.max(np.abs(coef), initial=0.0)
    return frozenset(np.flatnonzero(np.abs(coef) > ZERO_TOL * big).tolist())


def by_point(trace) -> dict[int, list[int]]:
    """Path point -> indices of its events in the trace (the stop event excluded)."""
    out: dict[int, list[int]] = {}
    for i, e in enumerate(trace):
        if e.kind != "stop":
            out.setdefault(int(e.info["path_point"]), []).append(i)
    return out


@functools.cache
def zhang(seed: int):
    return generate("zhang2008", random_state=seed)


@functools.cache
def independent_lars(seed: int, max_iter: int):
    """lars_path on the centred problem: (alphas, coefs, intercepts, supports)."""
    p = zhang(seed)
    Xc = p.X - p.X.mean(axis=0)
    yc = p.y - p.y.mean()
    alphas, _, coefs = lars_path(Xc, yc, method="lasso", max_iter=max_iter)
    intercepts = p.y.mean() - p.X.mean(axis=0) @ coefs
    return alphas, coefs, intercepts, [nonzero(coefs[:, t]) for t in range(len(alphas))]


def independent_logistic_grid(X, y, alphas):
    """The logistic l1 path by an independent solver: scikit-learn's saga with an l1 penalty
    and an unpenalised intercept, warm-started along alphas, converged far tighter than the
    engine's own tolerance."""
    t = labels01(y)
    n = len(t)
    clf = LogisticRegression(
        C=1.0,
        l1_ratio=1.0,
        solver="saga",
        tol=1e-12,
        max_iter=100_000,
        warm_start=True,
        random_state=0,
    )
    coefs, intercepts = [np.zeros(X.shape[1])], [np.log(t.mean() / (1 - t.mean()))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a in alphas[1:]:
            clf.set_params(C=1.0 / (n * a))
            clf.fit(X, t)
            coefs.append(clf.coef_.ravel().copy())
            intercepts.append(float(clf.intercept_[0]))
    return coefs, intercepts


def logistic_alpha_max(X, y) -> float:
    t = labels01(y)
    return float(np.max(np.abs(X.T @ (t.mean() - t))) / len(t))


# --------------------------------------------------------------------------- least squares path


@pytest.mark.parametrize("seed", [0, 4])
def test_lars_trace_replays_to_the_independent_lars_path(seed):
    p = zhang(seed)
    res = engine.select(p.X, p.y, algorithm="lasso", path="lars", max_steps=40, standardize=False)
    alphas, coefs, intercepts, supports = independent_lars(seed, 40)
    points = by_point(res.trace)
    assert sorted(points) == list(range(1, len(alphas)))
    replayed = replay(res.trace)
    for t, idx in points.items():
        last = res.trace[idx[-1]]
        assert replayed[idx[-1]] == supports[t], t
        assert last.info["alpha"] == pytest.approx(alphas[t], rel=1e-10)
        assert last.objective == pytest.approx(
            ls_value(p.X, p.y, coefs[:, t], intercepts[t]), rel=1e-9
        )
        changed = supports[t] != supports[t - 1]
        assert all(res.trace[i].kind != "iterate" for i in idx) == changed
    kinds = {e.kind for e in res.trace}
    assert {"add", "swap", "iterate", "stop"} <= kinds  # these seeds' paths drop features
    assert res.trace[-1].kind == "stop" and res.trace[-1].support_size == len(supports[-1])


def test_lars_alpha_is_the_regularisation_of_our_objective():
    """At every knot, max_j |dQ/dw_j| of Q = (1/2n)||y - Xw - b||^2 equals the event's alpha and
    every selected feature sits at |dQ/dw_j| = alpha: the lasso's optimality conditions on our
    scale (an alpha scaled by n, or a penalised intercept, would fail this)."""
    p = zhang(1)
    res = engine.select(p.X, p.y, algorithm="lasso", max_steps=30, standardize=False)
    n = len(p.y)
    _, coefs, intercepts, supports = independent_lars(1, 30)
    for t, idx in by_point(res.trace).items():
        alpha = res.trace[idx[-1]].info["alpha"]
        r = p.y - p.X @ coefs[:, t] - intercepts[t]
        assert abs(r.sum()) < 1e-8 * np.abs(r).sum()  # the intercept is at its optimum
        g = -p.X.T @ r / n
        assert np.max(np.abs(g)) == pytest.approx(alpha, rel=1e-8)
        on = sorted(supports[t])
        np.testing.assert_allclose(np.abs(g[on]), alpha, rtol=1e-8)


def test_sparse_x_gives_the_dense_trace():
    X, y = make_regression(5, n=60, d=30, density=0.4)
    a = engine.select(X, y, algorithm="lasso", k=6, standardize=False)
    for fmt in (sp.csr_matrix, sp.csc_matrix):
        b = engine.select(fmt(X), y, algorithm="lasso", k=6, standardize=False)
        assert [(e.kind, e.feature, e.feature_out) for e in b.trace] == [
            (e.kind, e.feature, e.feature_out) for e in a.trace
        ]
        np.testing.assert_allclose(
            [e.objective for e in b.trace], [e.objective for e in a.trace], rtol=1e-9
        )
        np.testing.assert_allclose(b.coef, a.coef, rtol=1e-8, atol=1e-12)


def test_grid_path_dense_and_sparse_agree_with_lars():
    """The coordinate-descent grid (the path for large sparse X) lands on the LARS solution at
    the grid's alphas: the path is piecewise linear, so interpolate LARS's knots."""
    X, y = make_regression(6, n=80, d=30)
    grid = engine.select(
        X, y, algorithm="lasso", path="grid", n_alphas=15, tol=1e-12, standardize=False
    )
    grid_sp = engine.select(
        sp.csc_matrix(X),
        y,
        algorithm="lasso",
        path="grid",
        n_alphas=15,
        tol=1e-12,
        standardize=False,
    )
    assert [(e.kind, e.feature) for e in grid.trace] == [(e.kind, e.feature) for e in grid_sp.trace]
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    alphas, _, coefs = lars_path(Xc, yc, method="lasso")
    for t, idx in by_point(grid.trace).items():
        e = grid.trace[idx[-1]]
        a = e.info["alpha"]
        w = np.array([np.interp(-a, -alphas, coefs[j]) for j in range(X.shape[1])])
        assert replay(grid.trace)[idx[-1]] == nonzero(np.where(np.abs(w) > 1e-9, w, 0.0)), t
        assert e.objective == pytest.approx(ls_value(X, y, w, y.mean() - X.mean(0) @ w), rel=1e-6)


# --------------------------------------------------------------------------- logistic path


def test_logistic_trace_replays_to_the_independent_saga_path():
    """Same supports as saga at every grid point, and objective values equal to within the
    solvers' tolerances (the engine's: 1e-6 relative on the optimality conditions)."""
    X, y = make_classification(8, n=150, d=20, k_true=4)
    res = engine.select(
        X,
        y,
        algorithm="lasso",
        objective="logistic",
        lam=LAM,
        n_alphas=25,
        alpha_min_ratio=0.01,
        refine_steps=0,
        standardize=False,
    )
    alphas = logistic_alpha_max(X, y) * np.geomspace(1.0, 0.01, 25)
    coefs, intercepts = independent_logistic_grid(X, y, alphas)
    points = by_point(res.trace)
    assert sorted(points) == list(range(1, 25))
    replayed = replay(res.trace)
    for t, idx in points.items():
        last = res.trace[idx[-1]]
        assert last.info["alpha"] == pytest.approx(alphas[t], rel=1e-12)
        assert replayed[idx[-1]] == nonzero(coefs[t]), t
        assert last.objective == pytest.approx(
            logistic_value(X, y, coefs[t], intercepts[t], lam=LAM), rel=1e-7
        )
        for i in idx[:-1]:  # several changes at one point: coefficients restricted to the support
            w = np.where(np.isin(np.arange(len(coefs[t])), sorted(replayed[i])), coefs[t], 0.0)
            assert res.trace[i].objective == pytest.approx(
                logistic_value(X, y, w, intercepts[t], lam=LAM), rel=1e-7
            )
    assert len(replayed[-1]) > 4  # the path went well past the first few features
    assert any(len(idx) > 1 for idx in points.values())  # the coarse grid moved several at once


def engine_path(objective, k=None, **params):
    """The engine's own path points (not only the events), for the optimality checks."""
    cfg = lasso_module.lasso_config(objective, k, **engine.ALGORITHMS["lasso"].validate(params))
    return lasso_module.compute_path(objective, cfg)


def test_logistic_alpha_is_the_l1_weight_on_our_mean_loss():
    """KKT of (1/n) sum log-loss + alpha ||w||_1 with an unpenalised intercept at the engine's
    grid points: |g_j| <= alpha off the support, g_j = -alpha sign(w_j) on it, dQ/db = 0. An
    alpha off by the factor n (C = 1/alpha) or a penalised intercept fails this."""
    X, y = make_classification(9, n=120, d=15, k_true=4)
    path = engine_path(Logistic(X, y, lam=LAM), n_alphas=12, alpha_min_ratio=0.05, tol=1e-9)
    t01 = labels01(y)
    n = len(y)
    assert len(path.points) == 12
    for p in path.points[1:]:
        u = (expit(X @ p.coef + p.intercept) - t01) / n
        g = X.T @ u
        assert abs(u.sum()) < 1e-4 * p.alpha
        on = p.coef != 0
        assert on.any()
        assert np.all(np.abs(g[~on]) <= p.alpha * (1 + 1e-3))
        np.testing.assert_allclose(-g[on] * np.sign(p.coef[on]), p.alpha, rtol=1e-3)


def test_least_squares_grid_alpha_is_our_scale():
    """Same check for the coordinate-descent grid on sparse X (implicit centring)."""
    X, y = make_regression(18, n=70, d=20, density=0.5)
    path = engine_path(LeastSquares(sp.csc_matrix(X), y), path="grid", n_alphas=8, tol=1e-12)
    n = len(y)
    for p in path.points[1:]:
        r = y - X @ p.coef - p.intercept
        g = -X.T @ r / n
        assert abs(r.sum()) < 1e-8 * np.abs(r).sum()
        assert np.max(np.abs(g)) == pytest.approx(p.alpha, rel=1e-6)
        on = p.coef != 0
        np.testing.assert_allclose(-g[on] * np.sign(p.coef[on]), p.alpha, rtol=1e-6)


def test_sparse_logistic_gives_the_dense_trace():
    X, y = make_classification(10, n=100, d=20, density=0.5)
    a = engine.select(
        X, y, algorithm="lasso", objective="logistic", k=4, n_alphas=30, standardize=False
    )
    b = engine.select(
        sp.csr_matrix(X),
        y,
        algorithm="lasso",
        objective="logistic",
        k=4,
        n_alphas=30,
        standardize=False,
    )
    assert [(e.kind, e.feature) for e in b.trace] == [(e.kind, e.feature) for e in a.trace]
    np.testing.assert_allclose(b.coef, a.coef, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------- the answer at k


@pytest.mark.parametrize("k", [1, 3, 5, 7, 8])
def test_answer_at_k_is_the_least_shrunk_lars_point_with_k_features(k):
    p = zhang(0)
    res = engine.select(p.X, p.y, algorithm="lasso", k=k, standardize=False)
    _, coefs, intercepts, supports = independent_lars(0, 5 * k)
    with_k = [t for t, s in enumerate(supports) if len(s) == k]
    assert with_k  # the LARS path visits every size here
    t = with_k[-1]  # least squares: the smallest alpha has the smallest objective
    assert len(res.support) == k
    assert frozenset(res.support.tolist()) == supports[t]
    np.testing.assert_allclose(res.coef, coefs[:, t], rtol=1e-9, atol=1e-12)
    assert res.intercept == pytest.approx(intercepts[t], rel=1e-9)
    assert res.objective == pytest.approx(ls_value(p.X, p.y, res.coef, res.intercept), rel=1e-12)
    # Zhang's best size-k along the path, from the events themselves (iterate points included)
    sized = [e.objective for e, s in zip(res.trace, replay(res.trace), strict=True) if len(s) == k]
    assert res.objective == pytest.approx(min(sized), rel=1e-12)


def test_logistic_answer_at_k_has_k_features_thanks_to_bisection():
    """On a coarse grid the support jumps over k; bisection in log(alpha) finds k."""
    X, y = make_classification(11, n=150, d=30, k_true=6)
    kw = {"algorithm": "lasso", "objective": "logistic", "k": 5, "n_alphas": 6}
    coarse = engine.select(X, y, refine_steps=0, **kw, standardize=False)
    refined = engine.select(X, y, **kw, standardize=False)
    assert len(coarse.support) < 5 and "never had exactly k = 5" in coarse.stop_reason
    assert len(refined.support) == 5
    grid = [e.info["alpha"] for e in coarse.trace[:-1]]
    path = [e.info["alpha"] for e in refined.trace[:-1]]
    assert all(b <= a for a, b in itertools.pairwise(path))  # still a path, alpha decreasing
    extra = sorted(set(path) - set(grid))
    assert len(extra) == 1 and set(path) - set(extra) <= set(grid)
    size_at = {e.info["alpha"]: e.support_size for e in refined.trace[:-1]}
    assert size_at[extra[0]] == 5


def test_k_beyond_the_path_returns_the_largest_size_below_k():
    p = zhang(0)
    res = engine.select(p.X, p.y, algorithm="lasso", k=9, max_steps=4, standardize=False)
    assert len(res.support) == 4
    assert "never had exactly k = 9" in res.stop_reason
    assert "max_steps = 4" in res.stop_reason


def test_foba_selects_features_better_than_lasso_on_zhang2008():
    """Zhang (2008) Table 1: at k = 5, FoBa's feature-selection error is below the Lasso's."""
    foba, l1 = [], []
    for seed in range(10):
        p = zhang(seed)
        foba.append(
            feature_selection_error(
                engine.select(p.X, p.y, algorithm="foba-obj", k=5, standardize=False).support,
                p.support,
            )
        )
        l1.append(
            feature_selection_error(
                engine.select(p.X, p.y, algorithm="lasso", k=5, standardize=False).support,
                p.support,
            )
        )
    assert np.mean(foba) < np.mean(l1)


# --------------------------------------------------------------------------- lasso-refit


@pytest.mark.parametrize("k", [3, 6])
def test_lasso_refit_is_the_least_squares_refit_of_the_best_size_k_support(k):
    p = zhang(2)
    lasso = engine.select(p.X, p.y, algorithm="lasso", k=k, standardize=False)
    res = engine.select(p.X, p.y, algorithm="lasso-refit", k=k, standardize=False)
    # Zhang's rule: among the size-k supports the path visited, the best refit
    visited = {s for e, s in zip(lasso.trace, replay(lasso.trace), strict=True) if len(s) == k}
    best = min(visited, key=lambda s: ls_refit(p.X, p.y, sorted(s))[2])
    assert frozenset(res.support.tolist()) == best
    coef, b, value = ls_refit(p.X, p.y, sorted(best))
    np.testing.assert_allclose(res.coef, coef, rtol=1e-8, atol=1e-10)
    assert res.intercept == pytest.approx(b, rel=1e-8)
    assert res.objective == pytest.approx(value, rel=1e-10)
    assert res.objective <= lasso.objective
    # The trace: the lasso path up to the chosen support, then the refit's stop event.
    body = res.trace[:-1]
    assert [(e.kind, e.feature) for e in body] == [
        (e.kind, e.feature) for e in lasso.trace[: len(body)]
    ]
    assert replay(res.trace)[-1] == best
    assert res.trace[-1].kind == "stop" and res.trace[-1].objective == pytest.approx(value)


def test_lasso_refit_logistic_matches_sklearn_l2_refit():
    X, y = make_classification(12, n=120, d=20, k_true=4)
    res = engine.select(
        X, y, algorithm="lasso-refit", objective="logistic", k=4, lam=LAM, standardize=False
    )
    assert len(res.support) == 4
    coef, b, value = logistic_refit(X, y, res.support.tolist(), lam=LAM)  # C = 1/(n lam)
    np.testing.assert_allclose(res.coef, coef, rtol=1e-5, atol=1e-7)
    assert res.intercept == pytest.approx(b, rel=1e-5, abs=1e-7)
    assert res.objective == pytest.approx(value, rel=1e-9)
    assert res.trace[-1].objective == pytest.approx(value, rel=1e-9)


def test_lasso_refit_leaves_out_a_collinear_feature(monkeypatch):
    """LARS itself never selects a dependent column, so the refit's guard is fed a path whose
    end holds feature 8 = feature 0: the refit keeps 0, a remove event takes 8 out."""
    X, y = make_regression(13, n=40, d=8)
    X = np.column_stack([X, X[:, 0]])
    w = np.zeros(9)
    w[[0, 8]] = [1.0, 0.5]
    fake = lasso_module.LassoPath(
        [lasso_module.make_point(2.0, np.zeros(9), y.mean()), lasso_module.make_point(1.0, w, 0.0)],
        "lars",
        "a made-up path",
    )
    monkeypatch.setattr(lasso_module, "compute_path", lambda objective, cfg: fake)
    res = engine.select(X, y, algorithm="lasso-refit", standardize=False)
    assert [(e.kind, e.feature) for e in res.trace] == [
        ("add", 0),
        ("add", 8),
        ("remove", 8),
        ("stop", None),
    ]
    assert res.support.tolist() == [0] and "collinear features [8]" in res.stop_reason
    coef, _, value = ls_refit(X, y, [0])
    np.testing.assert_allclose(res.coef, coef, rtol=1e-9, atol=1e-12)
    assert res.objective == pytest.approx(value, rel=1e-10)


# --------------------------------------------------------------------------- trace hygiene


@pytest.mark.parametrize("algorithm", ["lasso", "lasso-refit"])
def test_trace_is_well_formed_and_reproducible(algorithm):
    X, y = make_classification(14, n=80, d=12)
    run = functools.partial(
        engine.select, X, y, algorithm=algorithm, objective="logistic", k=3, n_alphas=20
    )
    a, b = run(random_state=1), run(random_state=2)
    assert to_json(a.trace) == to_json(b.trace)  # saga's sample order is seeded internally
    assert from_json(to_json(a.trace)) == a.trace
    trace = a.trace
    assert [e.step for e in trace] == list(range(len(trace)))
    assert trace[-1].kind == "stop" and all(e.kind != "stop" for e in trace[:-1])
    for e, s in zip(trace, replay(trace), strict=True):
        assert e.support_size == len(s)
    assert a.n_steps == sum(e.kind in ("add", "remove", "swap") for e in trace)


def test_best_along_path_of_a_lasso_trace_is_consistent():
    p = zhang(4)
    res = engine.select(p.X, p.y, algorithm="lasso", k=5, standardize=False)
    best = best_along_path(res.trace)
    assert 5 in best and best[5][1] >= res.objective * (1 - 1e-12)


def test_recorder_can_cancel_a_lasso_run():
    p = zhang(0)
    seen = []
    res = engine.select(
        p.X,
        p.y,
        algorithm="lasso",
        k=5,
        recorder=lambda e: seen.append(e) or len(seen) < 3,
        standardize=False,
    )
    assert res.cancelled and res.trace[-1].reason == "stopped by recorder"
    assert len(res.trace) == 4


# --------------------------------------------------------------------------- parameters


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"path": "simplex"}, "path"),
        ({"n_alphas": 1}, "n_alphas"),
        ({"alpha_min_ratio": 1.5}, "alpha_min_ratio"),
        ({"alpha_min_ratio": 0.0, "path": "grid"}, "alpha_min_ratio"),
        ({"max_steps": 0}, "max_steps"),
        ({"refine_steps": -1}, "refine_steps"),
        ({"tol": 0.0}, "tol"),
        ({"max_iter": 0}, "max_iter"),
    ],
)
@pytest.mark.parametrize("algorithm", ["lasso", "lasso-refit"])
def test_invalid_parameters_name_the_parameter(algorithm, params, name):
    X, y = make_regression(15, n=30, d=6)
    with pytest.raises(ValueError, match=name):
        engine.select(X, y, algorithm=algorithm, k=2, **params, standardize=False)


def test_lars_refuses_logistic_and_huge_sparse_gram():
    X, y = make_classification(16, n=30, d=6)
    with pytest.raises(ValueError, match=r"'path'.*least squares"):
        engine.select(
            X, y, algorithm="lasso", objective="logistic", path="lars", k=2, standardize=False
        )
    big = sp.random(20, 2001, density=0.01, format="csc", random_state=0)
    with pytest.raises(ValueError, match=r"'path'.*grid"):
        engine.select(big, np.arange(20.0), algorithm="lasso", path="lars", k=2, standardize=False)


def test_constant_target_gives_the_empty_model():
    X, _ = make_regression(17, n=30, d=5)
    res = engine.select(X, np.full(30, 2.5), algorithm="lasso", k=2, standardize=False)
    assert res.support.size == 0 and res.intercept == pytest.approx(2.5)
    assert res.trace[-1].kind == "stop"


# --------------------------------------------------------------------------- path_end, speed fixes


@pytest.mark.parametrize("seed", [0, 3])
def test_path_end_sparsity_is_lars_path_run_to_k_features(seed):
    """path_end='sparsity': the first LARS knot with k features, exactly lars_path's last point
    when it is asked for k steps (retried with more steps if a feature left on the way)."""
    p = zhang(seed)
    Xc = np.asfortranarray(p.X - p.X.mean(axis=0))
    yc = p.y - p.y.mean()
    for k in (3, 5, 8):
        m = k
        while True:
            _, _, coefs = lars_path(Xc.copy(order="F"), yc, method="lasso", max_iter=m)
            size = len(nonzero(coefs[:, -1]))
            if size >= k or coefs.shape[1] - 1 < m:
                break
            m += k - size
        res = engine.select(
            p.X, p.y, algorithm="lasso", k=k, path_end="sparsity", standardize=False
        )
        assert frozenset(res.support.tolist()) == nonzero(coefs[:, -1])
        np.testing.assert_allclose(res.coef, coefs[:, -1], rtol=1e-9, atol=1e-12)
        assert "path_end = sparsity" in res.stop_reason
        full = engine.select(p.X, p.y, algorithm="lasso", k=k, standardize=False)
        assert full.n_steps >= res.n_steps
        assert full.objective <= res.objective + 1e-12  # Zhang's path can only do better


@pytest.mark.parametrize("objective", ["least_squares", "logistic"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_batched_path_values_equal_the_objective_at_every_point(objective, fit_intercept):
    if objective == "least_squares":
        X, y = make_regression(21, n=80, d=25)
        obj = LeastSquares(X, y, fit_intercept=fit_intercept)
    else:
        X, y = make_classification(21, n=80, d=25, k_true=4)
        obj = Logistic(X, y, lam=LAM, fit_intercept=fit_intercept)
    path = engine_path(obj, path="grid" if objective == "logistic" else "auto", n_alphas=15)
    got = lasso_module.path_values(obj, path.points)
    want = [obj.value(p.coef, p.intercept) for p in path.points]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def liblinear_supports(X, y, alphas):
    """Supports of scikit-learn's liblinear l1 logistic fits at the given alphas, its
    intercept made (nearly) unpenalised by a large intercept_scaling."""
    t = labels01(y)
    n = len(t)
    out = []
    for a in alphas:
        clf = LogisticRegression(
            C=1.0 / (n * a),
            solver="liblinear",
            tol=1e-10,
            max_iter=10_000,
            intercept_scaling=1e4,
            l1_ratio=1.0,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(X, t)
        out.append(nonzero(clf.coef_.ravel()))
    return out


@pytest.mark.parametrize("seed", [12, 13])
def test_logistic_path_supports_are_liblinears_and_no_warning_escapes(seed):
    X, y = make_classification(seed, n=200, d=40, k_true=6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning reaching the user fails the test
        res = engine.select(
            X,
            y,
            algorithm="lasso",
            objective="logistic",
            n_alphas=30,
            alpha_min_ratio=0.01,
            refine_steps=0,
            tol=1e-9,
            standardize=False,
        )
    points = by_point(res.trace)
    alphas = [res.trace[idx[-1]].info["alpha"] for idx in points.values()]
    replayed = replay(res.trace)
    ours = [replayed[idx[-1]] for idx in points.values()]
    assert ours == liblinear_supports(X, y, alphas)
    assert "max_iter" not in res.stop_reason


def test_logistic_path_end_sparsity_stops_at_the_first_k_point():
    X, y = make_classification(14, n=200, d=40, k_true=6)
    kw = {"algorithm": "lasso", "objective": "logistic", "k": 5}
    short = engine.select(X, y, path_end="sparsity", **kw, standardize=False)
    full = engine.select(X, y, **kw, standardize=False)
    assert len(short.support) == 5
    sizes = [len(s) for s in replay(short.trace)[:-1]]
    assert sizes[-1] == 5 and max(sizes) == 5
    first5 = next(s for s in replay(full.trace) if len(s) == 5)
    assert frozenset(short.support.tolist()) == first5
