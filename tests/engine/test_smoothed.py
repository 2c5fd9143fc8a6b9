"""Smoothed hinge and absolute losses (Shalev-Shwartz, Srebro & Zhang 2010, Lemma 2.5) and the
generic smooth-loss objective behind them, against independent computations: the infimal
convolution minimised numerically point by point, central finite differences,
scipy.optimize.minimize refits, per-feature scalar minimisation; and every registered greedy
algorithm run on both objectives."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from engine_problems import make_classification, make_regression
from engine_reference import best_intercept
from scipy.optimize import minimize, minimize_scalar

import engine
import engine.objectives.smoothed  # registers the objectives
from engine.objectives.smoothed import (
    SmoothedAbsolute,
    SmoothedAbsoluteLoss,
    SmoothedHinge,
    SmoothedHingeLoss,
)
from engine.trace import replay

FORMATS = ["dense", "csr", "csc"]


def _fmt(X, fmt):
    if fmt == "dense":
        return X
    return sp.csr_matrix(X) if fmt == "csr" else sp.csc_matrix(X)


def _hinge(a, s):
    return max(0.0, 1.0 - s * a)


def _absolute(a, y):
    return abs(a - y)


def _inf_convolution(loss, a, y, beta):
    """inf_v (beta/2) v^2 + loss(a - v, y) by bounded scalar minimisation. A 1-Lipschitz loss
    has its minimiser in |v| <= 1/beta (beta v is a subgradient of the loss)."""
    res = minimize_scalar(
        lambda v: 0.5 * beta * v * v + loss(a - v, y),
        bounds=(-2.0 / beta, 2.0 / beta),
        method="bounded",
        options={"xatol": 1e-13, "maxiter": 500},
    )
    return res.fun


def _problem(kind, seed=0, n=40, d=6, density=None):
    if kind == "hinge":
        X, y = make_classification(seed, n=n, d=d, density=density, labels=("no", "yes"))
    else:
        X, y = make_regression(seed, n=n, d=d, density=density, noise=1.0)
    return X, y


def _objective(kind, X, y, fmt="dense", **kw):
    cls = SmoothedHinge if kind == "hinge" else SmoothedAbsolute
    return cls(_fmt(X, fmt), y, **kw)


def _by_hand(kind, X, y, w, b, beta, lam):
    """Q(w, b) from the infimal convolution computed per sample."""
    eta = X @ w + b
    if kind == "hinge":
        s = np.where(np.asarray(y) == "yes", 1.0, -1.0)
        per = [_inf_convolution(_hinge, eta[i], s[i], beta) for i in range(len(eta))]
    else:
        per = [_inf_convolution(_absolute, eta[i], y[i], beta) for i in range(len(eta))]
    return float(np.mean(per)) + 0.5 * lam * float(w @ w)


# --------------------------------------------------------------------------- the losses


@pytest.mark.parametrize("beta", [0.5, 3.0, 40.0])
def test_smoothed_losses_are_the_infimal_convolution(beta):
    z = np.r_[np.linspace(-3.0, 3.0, 41), 1.0 - 1.0 / beta, 1.0, 1.0 + 1e-9, -1.0 / beta]
    cases = [(SmoothedHingeLoss(beta), _hinge, s) for s in (-1.0, 1.0)]
    cases += [(SmoothedAbsoluteLoss(beta), _absolute, y) for y in (-0.7, 0.0, 2.5)]
    for smoothed, loss, y in cases:
        closed = smoothed.value(z, y)
        brute = np.array([_inf_convolution(loss, a, y, beta) for a in z])
        # A numerical minimum can only lie above the infimum; the scalar search is accurate to
        # ~1e-9 where the minimiser sits on the loss's kink.
        assert np.all(closed <= brute + 1e-13)
        np.testing.assert_allclose(closed, brute, rtol=0, atol=1e-8)


@pytest.mark.parametrize("beta", [0.5, 3.0, 40.0])
def test_lemma_2_5_gap_is_between_zero_and_one_over_two_beta(beta):
    z = np.linspace(-5.0, 5.0, 2001)
    hinge_gap = np.maximum(0.0, 1.0 - z) - SmoothedHingeLoss(beta).value(z, 1.0)
    abs_gap = np.abs(z - 0.3) - SmoothedAbsoluteLoss(beta).value(z, 0.3)
    for gap in (hinge_gap, abs_gap):
        assert gap.min() >= -1e-15
        assert gap.max() <= 0.5 / beta + 1e-15
        assert gap.max() == pytest.approx(0.5 / beta, rel=1e-12)  # attained far from the kink


@pytest.mark.parametrize("beta", [0.5, 3.0, 40.0])
def test_loss_derivatives_match_finite_differences(beta):
    rng = np.random.default_rng(1)
    z = rng.uniform(-3.0, 3.0, 400)
    h = 1e-7
    cases = [(SmoothedHingeLoss(beta), s) for s in (-1.0, 1.0)]
    cases += [(SmoothedAbsoluteLoss(beta), t) for t in (-0.4, 1.3)]
    for loss, y in cases:
        fd1 = (loss.value(z + h, y) - loss.value(z - h, y)) / (2 * h)
        np.testing.assert_allclose(loss.derivative(z, y), fd1, atol=1e-6 * max(beta, 1.0))
        # Second derivative: only where [z - h, z + h] holds no kink of L'.
        fd2 = (loss.derivative(z + h, y) - loss.derivative(z - h, y)) / (2 * h)
        smooth = np.abs(fd2 - np.round(fd2 / beta) * beta) < 1e-6 * beta
        assert smooth.mean() > 0.9
        np.testing.assert_allclose(loss.curvature(z, y)[smooth], fd2[smooth], atol=1e-5 * beta)
        assert loss.curvature(z, y).max() <= loss.smoothness


# --------------------------------------------------------------------------- objective values


@pytest.mark.parametrize("kind", ["hinge", "absolute"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_objective_value_is_mean_smoothed_loss_plus_ridge(kind, fmt):
    X, y = _problem(kind, 2, n=20, d=5, density=0.6)
    beta, lam = 2.0, 0.3
    obj = _objective(kind, X, y, fmt, beta=beta, lam=lam)
    rng = np.random.default_rng(3)
    for _ in range(2):
        w, b = rng.standard_normal(5), float(rng.standard_normal())
        assert obj.value(w, b) == pytest.approx(_by_hand(kind, X, y, w, b, beta, lam), abs=1e-8)


def test_hinge_labels_any_two_values_larger_is_positive():
    X, y01 = make_classification(4, n=30, d=4)
    w = np.array([0.5, -1.0, 0.2, 0.0])
    ref = SmoothedHinge(X, np.where(y01 == 1, 1, -1)).value(w, 0.1)
    assert SmoothedHinge(X, np.where(y01 == 1, "b", "a")).value(w, 0.1) == ref
    assert SmoothedHinge(X, 1 - y01).value(-w, -0.1) == pytest.approx(ref, rel=1e-14)
    with pytest.raises(ValueError, match="two distinct labels"):
        SmoothedHinge(X, np.arange(30) % 3)


def test_bad_parameters_are_refused():
    X, y = make_regression(0, n=10, d=3, k_true=2)
    with pytest.raises(ValueError, match="beta"):
        SmoothedAbsolute(X, y, beta=0.0)
    with pytest.raises(ValueError, match="lam"):
        SmoothedAbsolute(X, y, lam=-1.0)
    with pytest.raises(ValueError, match="'beta'"):
        engine.select(
            X, y, algorithm="omp", objective="smoothed_absolute", k=1, beta=-2.0, standardize=False
        )


def test_registered_with_their_tasks_and_parameters():
    hinge, absolute = engine.OBJECTIVES["smoothed_hinge"], engine.OBJECTIVES["smoothed_absolute"]
    assert hinge.task == "classification" and absolute.task == "regression"
    for spec in (hinge, absolute):
        assert [p.name for p in spec.params] == ["beta", "lam", "fit_intercept"]
        assert spec.params[1].default == 0.0 and spec.params[2].default is True
        assert "Lemma 2.5" in spec.reference
    X, y = make_classification(0, n=30, d=5, labels=("x", "y"))
    res = engine.select(
        X, y, algorithm="omp", objective="smoothed_hinge", k=2, beta=4.0, standardize=False
    )
    assert {n: res.params[n] for n in ("beta", "lam", "fit_intercept")} == {
        "beta": 4.0,
        "lam": 0.0,
        "fit_intercept": True,
    }


# --------------------------------------------------------------------------- gradients


@pytest.mark.parametrize("kind", ["hinge", "absolute"])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("lam", [0.0, 0.2])
def test_gradient_matches_finite_differences(kind, fmt, lam):
    X, y = _problem(kind, 5, n=30, d=6, density=0.5)
    obj = _objective(kind, X, y, fmt, beta=3.0, lam=lam)
    rng = np.random.default_rng(6)
    w, b = 0.5 * rng.standard_normal(6), 0.2
    gw, gb = obj.gradient(w, b)
    h = 1e-6
    fd = [(obj.value(w + h * e, b) - obj.value(w - h * e, b)) / (2 * h) for e in np.eye(6)]
    np.testing.assert_allclose(gw, fd, atol=1e-7)
    assert gb == pytest.approx((obj.value(w, b + h) - obj.value(w, b - h)) / (2 * h), abs=1e-7)
    # The active set's gradient at its own point agrees with the objective's.
    state = obj.fit_support([1, 4])
    np.testing.assert_allclose(
        state.gradient(), obj.gradient(state.coef, state.intercept)[0], atol=1e-14
    )


# --------------------------------------------------------------------------- refits


def _scipy_refit(obj, support):
    """min over (w_S, b) of obj.value by L-BFGS-B with the (finite-difference-checked)
    gradient, started from zero: an independent optimiser on the same function."""
    S = list(support)
    d = obj.n_features
    fit_b = obj.fit_intercept

    def unpack(p):
        w = np.zeros(d)
        w[S] = p[: len(S)]
        return w, (p[-1] if fit_b else 0.0)

    def fun(p):
        w, b = unpack(p)
        gw, gb = obj.gradient(w, b)
        return obj.value(w, b), np.r_[gw[S], [gb] if fit_b else []]

    res = minimize(
        fun,
        np.zeros(len(S) + fit_b),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-12, "ftol": 1e-16, "maxiter": 20_000, "maxcor": 30},
    )
    return res.fun


@pytest.mark.parametrize("kind", ["hinge", "absolute"])
@pytest.mark.parametrize(
    ("lam", "fit_intercept", "fmt"),
    [(0.0, True, "dense"), (0.05, True, "csc"), (0.0, False, "csr"), (0.05, False, "dense")],
)
def test_refit_reaches_the_scipy_minimum(kind, lam, fit_intercept, fmt):
    X, y = _problem(kind, 7, n=50, d=8, density=0.7)
    obj = _objective(kind, X, y, fmt, beta=4.0, lam=lam, fit_intercept=fit_intercept)
    support = [5, 0, 3]
    state = obj.fit_support(support)
    reference = _scipy_refit(obj, support)
    assert state.value <= reference + 1e-12
    assert state.value == pytest.approx(reference, abs=1e-8)
    assert state.value == pytest.approx(obj.value(state.coef, state.intercept), rel=1e-14)
    gw, gb = obj.gradient(state.coef, state.intercept)
    assert np.max(np.abs(gw[support])) < 1e-8  # stationary on the support
    assert abs(gb) < 1e-8 if fit_intercept else state.intercept == 0.0
    assert np.all(state.coef[np.setdiff1d(np.arange(8), support)] == 0.0)


@pytest.mark.parametrize("kind", ["hinge", "absolute"])
def test_warm_started_add_and_remove_match_a_fresh_fit(kind):
    X, y = _problem(kind, 8, n=50, d=8)
    obj = _objective(kind, X, y, beta=5.0, lam=0.01)
    state = obj.start()
    assert state.value == pytest.approx(_scipy_refit(obj, []), abs=1e-9)
    gains = [state.add(j) for j in (2, 6, 1, 4)]
    assert all(g >= -1e-12 for g in gains)
    increase = state.remove(6)
    assert increase >= -1e-12
    fresh = obj.fit_support([2, 1, 4])
    assert state.support == [2, 1, 4]
    assert state.value == pytest.approx(fresh.value, abs=1e-12)
    np.testing.assert_allclose(state.coef, fresh.coef, atol=1e-7)
    trial = state.copy()
    trial.add(0)
    assert state.support == [2, 1, 4] and state.value == pytest.approx(fresh.value, abs=1e-12)


def test_separable_hinge_with_a_singular_hessian_reaches_zero_loss():
    # One feature separates the classes with margin: the optimum sits where every sample is on
    # the flat part of the loss, so L'' = 0 everywhere there (lam = 0: a singular Hessian).
    rng = np.random.default_rng(9)
    s = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    X = np.column_stack([s * rng.uniform(0.5, 2.0, 40), rng.standard_normal(40)])
    obj = SmoothedHinge(X, s, beta=10.0)
    state = obj.fit_support([0])
    assert state.value <= 1e-12
    assert np.all(np.isfinite(state.coef)) and np.isfinite(state.intercept)
    # Every sample on the flat part: margin >= 1.
    assert np.min(s * (X @ state.coef + state.intercept)) >= 1.0 - 1e-9


# --------------------------------------------------------------------------- scores


def _exact_drop(obj, state, j):
    w, b = state.coef, state.intercept

    def phi(a):
        v = w.copy()
        v[j] = a
        return obj.value(v, b)

    res = minimize_scalar(phi, bounds=(-60.0, 60.0), method="bounded", options={"xatol": 1e-12})
    return state.value - min(res.fun, state.value)


@pytest.mark.parametrize("kind", ["hinge", "absolute"])
@pytest.mark.parametrize(("fmt", "lam"), [("dense", 0.0), ("csc", 0.0), ("csr", 0.1)])
def test_coordinate_drops_are_exact_one_coordinate_minimisations(kind, fmt, lam):
    X, y = _problem(kind, 10, n=40, d=9, density=0.6 if fmt != "dense" else None)
    obj = _objective(kind, X, y, fmt, beta=5.0, lam=lam)
    state = obj.fit_support([3, 7])
    drops = state.coordinate_drops()
    assert drops[3] == 0.0 and drops[7] == 0.0
    for j in set(range(9)) - {3, 7}:
        assert drops[j] == pytest.approx(_exact_drop(obj, state, j), abs=1e-10)
    assert drops.max() > 1e-4  # the comparison is not all zeros


@pytest.mark.parametrize("kind", ["hinge", "absolute"])
def test_deletion_costs_and_quadratic_scores_from_their_definitions(kind):
    X, y = _problem(kind, 11, n=40, d=7)
    lam = 0.05
    obj = _objective(kind, X, y, beta=3.0, lam=lam)
    state = obj.fit_support([1, 5, 2])
    costs = state.deletion_costs()
    for p, j in enumerate(state.support):
        w = state.coef
        w[j] = 0.0
        # the intercept re-optimised (scipy's Brent), as least squares profiles it out
        b = best_intercept(obj.value, w, state.intercept)
        assert costs[p] == pytest.approx(obj.value(w, b) - state.value, abs=1e-11)
        assert costs[p] <= obj.value(w, state.intercept) - state.value + 1e-13
    # (x_j . g)^2 n / (2 ||x_j||^2), g = dQ/d(prediction) = gradient minus the ridge part.
    c = obj.gradient(state.coef, state.intercept)[0] - lam * state.coef
    expected = c**2 * 40 / (2 * np.sum(X**2, axis=0))
    expected[state.support] = 0.0
    np.testing.assert_allclose(state.quadratic_scores(), expected, rtol=1e-10, atol=1e-15)


# --------------------------------------------------------------------------- every algorithm

ALGORITHM_CASES = [
    ("foba-obj", {}),
    ("foba-gdt", {}),
    ("forward-obj", {}),
    ("forward-obj", {"selection": "quad", "replacement": "full"}),
    ("omp", {"replacement": "simple"}),
    ("stepwise", {}),
    ("oblivious", {}),
    ("replacement", {}),
    ("fb-threshold", {"eps_back": 0.01}),
    ("backward", {}),
]


@pytest.mark.parametrize("kind", ["hinge", "absolute"])
@pytest.mark.parametrize(
    ("algorithm", "params"), ALGORITHM_CASES, ids=[a + str(p) for a, p in ALGORITHM_CASES]
)
def test_every_algorithm_runs_on_the_smoothed_objectives(kind, algorithm, params):
    X, y = _problem(kind, 12, n=40, d=8)
    name = "smoothed_hinge" if kind == "hinge" else "smoothed_absolute"
    k = 3
    res = engine.select(
        X, y, algorithm=algorithm, objective=name, k=k, lam=0.01, **params, standardize=False
    )
    support = res.support
    assert support.dtype.kind == "i" and np.all(np.diff(support) > 0)
    assert 1 <= len(support) <= k and support.min() >= 0 and support.max() < 8
    assert np.all(res.coef[np.setdiff1d(np.arange(8), support)] == 0.0)
    assert np.isfinite(res.objective) and np.isfinite(res.intercept)
    obj = _objective(kind, X, y, beta=10.0, lam=0.01)
    assert res.objective == pytest.approx(obj.value(res.coef, res.intercept), rel=1e-10)
    assert res.objective < obj.start().value  # selecting features helped
    if algorithm not in ("foba-obj", "foba-gdt", "fb-threshold"):  # those return best-along-path
        assert sorted(replay(res.trace)[-1]) == support.tolist()
