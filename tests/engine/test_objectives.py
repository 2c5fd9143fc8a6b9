"""Objectives and their active sets against values, refits and derivatives computed independently
(by hand, numpy lstsq, scikit-learn, central finite differences, scipy scalar minimisation)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from engine_reference import (
    best_intercept,
    coordinate_drop,
    dense,
    labels01,
    logistic_refit,
    logistic_value,
    ls_best_intercept,
    ls_refit,
    ls_value,
)

from engine.objectives import CollinearFeature, LeastSquares, Logistic

FORMATS = ["dense", "csr", "csc"]


def _fmt(X, fmt):
    if fmt == "dense":
        return X
    return sp.csr_matrix(X) if fmt == "csr" else sp.csc_matrix(X)


def _ls(X, y, fmt="dense", fit_intercept=True):
    return LeastSquares(_fmt(X, fmt), y, fit_intercept=fit_intercept)


def _lg(X, y, fmt="dense", lam=1e-2, fit_intercept=True):
    return Logistic(_fmt(X, fmt), y, lam=lam, fit_intercept=fit_intercept)


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_least_squares_value_is_half_mean_squared_residual(regression, fmt, fit_intercept):
    X, y = regression(1, n=30, d=8, density=0.4)
    rng = np.random.default_rng(11)
    obj = _ls(X, y, fmt, fit_intercept)
    for _ in range(3):
        w, b = rng.standard_normal(8), float(rng.standard_normal())
        by_hand = sum((y[i] - X[i] @ w - b) ** 2 for i in range(30)) / (2 * 30)
        assert obj.value(w, b) == pytest.approx(by_hand, rel=1e-12)
    assert obj.value(np.zeros(8)) == pytest.approx(np.sum(y**2) / 60, rel=1e-12)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("lam", [0.0, 1e-4, 0.3])
def test_logistic_value_is_mean_log_loss_plus_ridge(classification, fmt, lam):
    X, y = classification(2, n=30, d=8, density=0.5, labels=("no", "yes"))
    rng = np.random.default_rng(12)
    obj = _lg(X, y, fmt, lam=lam)
    s = np.where(y == "yes", 1.0, -1.0)
    for _ in range(3):
        w, b = rng.standard_normal(8), float(rng.standard_normal())
        by_hand = sum(np.log1p(np.exp(-s[i] * (X[i] @ w + b))) for i in range(30)) / 30
        by_hand += lam / 2 * float(w @ w)
        assert obj.value(w, b) == pytest.approx(by_hand, rel=1e-12)
    # At w = 0, b = 0 every sample costs log 2 whatever the labels.
    assert obj.value(np.zeros(8), 0.0) == pytest.approx(np.log(2.0), rel=1e-14)


def test_logistic_positive_class_is_the_larger_label(classification):
    X, y01 = classification(3, n=40, d=5)
    w = np.linspace(-1, 1, 5)
    flipped = Logistic(X, 1 - y01, lam=0.0).value(-w, 0.0)
    assert Logistic(X, y01, lam=0.0).value(w, 0.0) == pytest.approx(flipped, rel=1e-13)
    as_pm1 = Logistic(X, 2 * y01 - 1, lam=0.0).value(w, 0.3)
    assert Logistic(X, y01, lam=0.0).value(w, 0.3) == pytest.approx(as_pm1, rel=1e-13)


# --------------------------------------------------------------------------- gradients


def _central_differences(f, w, b, h=1e-6):
    gw = np.empty_like(w)
    for j in range(len(w)):
        e = np.zeros_like(w)
        e[j] = h
        gw[j] = (f(w + e, b) - f(w - e, b)) / (2 * h)
    gb = (f(w, b + h) - f(w, b - h)) / (2 * h)
    return gw, gb


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", ["least_squares", "logistic"])
def test_gradient_matches_central_differences(regression, classification, fmt, kind):
    rng = np.random.default_rng(21)
    if kind == "least_squares":
        X, y = regression(4, n=40, d=9, density=0.5)
        obj = _ls(X, y, fmt)
    else:
        X, y = classification(4, n=40, d=9, density=0.5)
        obj = _lg(X, y, fmt, lam=0.05)
    for _ in range(3):
        w, b = 0.5 * rng.standard_normal(9), float(rng.standard_normal())
        gw, gb = obj.gradient(w, b)
        fw, fb = _central_differences(obj.value, w, b)
        np.testing.assert_allclose(gw, fw, rtol=1e-6, atol=1e-8)
        assert gb == pytest.approx(fb, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("fmt", ["dense", "csc"])
@pytest.mark.parametrize("kind", ["least_squares", "logistic"])
def test_active_set_gradient_is_the_objective_gradient_at_its_point(
    regression, classification, fmt, kind
):
    if kind == "least_squares":
        X, y = regression(5, n=40, d=9, density=0.6)
        obj = _ls(X, y, fmt)
    else:
        X, y = classification(5, n=40, d=9, density=0.6)
        obj = _lg(X, y, fmt, lam=0.02)
    state = obj.fit_support([3, 0, 7])
    gw, gb = obj.gradient(state.coef, state.intercept)
    np.testing.assert_allclose(state.gradient(), gw, rtol=1e-9, atol=1e-12)
    # The active set is at its optimum on the support (and in the intercept).
    np.testing.assert_allclose(gw[[3, 0, 7]], 0.0, atol=1e-8)
    assert gb == pytest.approx(0.0, abs=1e-8)
    # ... and its gradient matches finite differences of the objective too.
    fw, _ = _central_differences(obj.value, state.coef, state.intercept)
    np.testing.assert_allclose(state.gradient(), fw, rtol=1e-5, atol=1e-8)


# --------------------------------------------------------------------------- refits


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_least_squares_fit_support_matches_lstsq(regression, fmt, fit_intercept):
    X, y = regression(6, n=50, d=12, density=0.7)
    obj = _ls(X, y, fmt, fit_intercept)
    for S in ([], [4], [4, 9, 1], [11, 0, 5, 6, 2]):
        state = obj.fit_support(S)
        coef, b, val = ls_refit(X, y, S, fit_intercept)
        np.testing.assert_allclose(state.coef, coef, rtol=1e-8, atol=1e-10)
        assert state.intercept == pytest.approx(b, rel=1e-8, abs=1e-10)
        assert state.value == pytest.approx(val, rel=1e-10)
        assert state.value == pytest.approx(obj.value(state.coef, state.intercept), rel=1e-10)
        assert sorted(state.support) == sorted(S)


@pytest.mark.parametrize(
    ("lam", "fit_intercept", "labels", "fmt"),
    [
        (1e-4, True, (0, 1), "dense"),
        (1e-2, True, (-1, 1), "csr"),
        (1e-2, False, ("ham", "spam"), "dense"),
        (0.3, True, (0, 1), "csc"),
    ],
)
def test_logistic_fit_support_matches_sklearn(classification, lam, fit_intercept, labels, fmt):
    X, y = classification(7, n=120, d=10, density=0.8, labels=labels)
    obj = _lg(X, y, fmt, lam=lam, fit_intercept=fit_intercept)
    for S in ([2], [2, 8, 5], [0, 1, 3, 4, 6, 9]):
        state = obj.fit_support(S)
        coef, b, val = logistic_refit(X, y, S, lam=lam, fit_intercept=fit_intercept)
        np.testing.assert_allclose(state.coef, coef, rtol=1e-5, atol=1e-7)
        assert state.intercept == pytest.approx(b, rel=1e-5, abs=1e-7)
        assert state.value == pytest.approx(val, rel=1e-9)
        assert state.value == pytest.approx(obj.value(state.coef, state.intercept), rel=1e-12)


def test_logistic_empty_support_fits_the_intercept_alone(classification):
    X, y = classification(8, n=50, d=4)
    state = Logistic(X, y, lam=1e-3).start()
    p = labels01(y).mean()
    assert state.intercept == pytest.approx(np.log(p / (1 - p)), rel=1e-12)
    assert state.value == pytest.approx(
        logistic_value(X, y, np.zeros(4), np.log(p / (1 - p)), lam=1e-3), rel=1e-12
    )
    assert Logistic(X, y, fit_intercept=False).start().intercept == 0.0


@pytest.mark.parametrize("kind", ["least_squares", "logistic"])
def test_remove_refits_to_the_smaller_support(regression, classification, kind):
    if kind == "least_squares":
        X, y = regression(9, n=50, d=10)
        obj, refit = _ls(X, y), (lambda S: ls_refit(X, y, S))
    else:
        X, y = classification(9, n=80, d=10)
        obj, refit = _lg(X, y, lam=0.01), (lambda S: logistic_refit(X, y, S, lam=0.01))
    state = obj.fit_support([1, 6, 2, 8])
    before = state.value
    increase = state.remove(6)
    coef, _, val = refit([1, 2, 8])
    assert state.value == pytest.approx(val, rel=1e-9)
    assert increase == pytest.approx(val - before, rel=1e-7)
    np.testing.assert_allclose(state.coef, coef, rtol=1e-5, atol=1e-7)
    gain = state.add(6)
    assert gain == pytest.approx(val - refit([1, 2, 8, 6])[2], rel=1e-7)
    assert state.support == [1, 2, 8, 6]


def test_least_squares_add_of_a_collinear_column_raises(regression):
    X, y = regression(10, n=30, d=5)
    X = np.column_stack([X, X[:, 1] - 2 * X[:, 3]])
    state = LeastSquares(X, y).fit_support([1, 3])
    with pytest.raises(CollinearFeature):
        state.add(5)
    # The failed add left the state untouched.
    assert state.support == [1, 3]
    assert state.value == pytest.approx(ls_refit(X, y, [1, 3])[2], rel=1e-12)


def test_active_set_copy_is_independent(regression):
    X, y = regression(11, n=40, d=8)
    state = LeastSquares(X, y).fit_support([0, 5])
    value = state.value
    trial = state.copy()
    trial.add(3)
    trial.remove(0)
    assert state.support == [0, 5]
    assert state.value == value
    np.testing.assert_allclose(state.coef, ls_refit(X, y, [0, 5])[0], rtol=1e-10)


# --------------------------------------------------------------------------- scores


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize(
    ("kind", "fit_intercept"),
    [("least_squares", True), ("least_squares", False), ("logistic", True), ("logistic", False)],
)
def test_coordinate_drops_match_scalar_minimisation(
    regression, classification, fmt, kind, fit_intercept
):
    """coordinate_drops()[j] = Q(w, b) - min_alpha Q(w + alpha e_j, b) (Liu et al.'s FoBa-obj
    goodness). For least squares with an intercept the engine documents the intercept as
    profiled out, so the reference re-optimises b for every alpha."""
    if kind == "least_squares":
        X, y = regression(12, n=40, d=10, density=0.5)
        obj = _ls(X, y, fmt, fit_intercept)

        def value(w, b):
            return ls_value(X, y, w, b)

        profile = (lambda w: ls_best_intercept(X, y, w)) if fit_intercept else None
    else:
        X, y = classification(12, n=40, d=10, density=0.5)
        obj = _lg(X, y, fmt, lam=0.01, fit_intercept=fit_intercept)

        def value(w, b):
            return logistic_value(X, y, w, b, lam=0.01)

        profile = None
    for S in ([], [2, 7]):
        state = obj.fit_support(S)
        drops = state.coordinate_drops()
        assert drops.shape == (10,)
        for j in range(10):
            if j in S:
                assert drops[j] == 0.0
                continue
            ref = coordinate_drop(value, state.coef, state.intercept, j, profile_intercept=profile)
            assert drops[j] == pytest.approx(ref, rel=1e-7, abs=1e-13), j


@pytest.mark.parametrize("fmt", ["dense", "csc"])
@pytest.mark.parametrize(
    ("kind", "fit_intercept"),
    [("least_squares", True), ("least_squares", False), ("logistic", True), ("logistic", False)],
)
def test_deletion_costs_match_direct_evaluation(
    regression, classification, fmt, kind, fit_intercept
):
    """deletion_costs()[p] = Q(w - w_j e_j) - Q(w) for j = support[p], with no refit of the other
    coefficients (Zhang Figure 3, Liu et al. Algorithm 1 line 17). With an intercept, every
    objective re-optimises it (least squares profiles it out; logistic by Brent here)."""
    S = [5, 1, 8, 3]
    if kind == "least_squares":
        X, y = regression(13, n=40, d=10, density=0.6)
        state = _ls(X, y, fmt, fit_intercept).fit_support(S)
    else:
        X, y = classification(13, n=60, d=10, density=0.6)
        state = _lg(X, y, fmt, lam=0.01, fit_intercept=fit_intercept).fit_support(S)
    costs = state.deletion_costs()
    assert costs.shape == (len(state.support),)
    for p, j in enumerate(state.support):
        w = state.coef.copy()
        w[j] = 0.0
        if kind == "least_squares":
            b = ls_best_intercept(X, y, w) if fit_intercept else 0.0
            ref = ls_value(X, y, w, b) - ls_value(X, y, state.coef, state.intercept)
        else:
            value = lambda ww, bb: logistic_value(X, y, ww, bb, lam=0.01)  # noqa: E731
            b = best_intercept(value, w, state.intercept) if fit_intercept else 0.0
            ref = logistic_value(X, y, w, b, lam=0.01) - logistic_value(
                X, y, state.coef, state.intercept, lam=0.01
            )
        assert costs[p] == pytest.approx(ref, rel=1e-7, abs=1e-14), j
        assert costs[p] > 0


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_least_squares_refit_gains_match_explicit_refits(regression, fmt, fit_intercept):
    X, y = regression(14, n=40, d=12, density=0.6)
    obj = _ls(X, y, fmt, fit_intercept)
    S = [9, 2, 4]
    state = obj.start()
    for step, j in enumerate(S):
        gains = state.refit_gains()  # also exercises the incremental basis between calls
        base = ls_refit(X, y, S[:step], fit_intercept)[2]
        for c in range(12):
            if c in S[:step]:
                assert gains[c] == 0.0
            else:
                ref = base - ls_refit(X, y, [*S[:step], c], fit_intercept)[2]
                assert gains[c] == pytest.approx(ref, rel=1e-8, abs=1e-14), (step, c)
        state.add(j)
    # After a removal the cached basis must not be reused stale.
    state.remove(2)
    gains = state.refit_gains()
    base = ls_refit(X, y, [9, 4], fit_intercept)[2]
    for c in (0, 2, 11):
        ref = base - ls_refit(X, y, [9, 4, c], fit_intercept)[2]
        assert gains[c] == pytest.approx(ref, rel=1e-8, abs=1e-14)


def test_logistic_refit_gains_match_sklearn_refits(classification):
    X, y = classification(15, n=80, d=8)
    state = Logistic(X, y, lam=0.01).fit_support([3, 6])
    gains = state.refit_gains()
    base = logistic_refit(X, y, [3, 6], lam=0.01)[2]
    for c in range(8):
        if c in (3, 6):
            assert gains[c] == 0.0
        else:
            ref = base - logistic_refit(X, y, [3, 6, c], lam=0.01)[2]
            assert gains[c] == pytest.approx(ref, rel=1e-6, abs=1e-12), c


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize(
    ("kind", "fit_intercept"),
    [("least_squares", True), ("least_squares", False), ("logistic", True), ("logistic", False)],
)
def test_refit_deletion_costs_match_explicit_refits(
    regression, classification, fmt, kind, fit_intercept
):
    S = [7, 0, 4, 9, 2]
    if kind == "least_squares":
        X, y = regression(16, n=40, d=10, density=0.7)
        state = _ls(X, y, fmt, fit_intercept).fit_support(S)

        def refit(F):
            return ls_refit(X, y, F, fit_intercept)
    else:
        X, y = classification(16, n=80, d=10, density=0.7)
        state = _lg(X, y, fmt, lam=0.01, fit_intercept=fit_intercept).fit_support(S)

        def refit(F):
            return logistic_refit(X, y, F, lam=0.01, fit_intercept=fit_intercept)

    costs = state.refit_deletion_costs()
    base = refit(S)[2]
    for p, j in enumerate(state.support):
        ref = refit([i for i in S if i != j])[2] - base
        assert costs[p] == pytest.approx(ref, rel=1e-6, abs=1e-12), j
    # The refit cost never exceeds the no-refit deletion cost (the refit can only help).
    assert np.all(costs <= state.deletion_costs() * (1 + 1e-9) + 1e-15)


def test_logistic_quadratic_scores_are_the_normalised_squared_correlation(classification):
    """Shalev-Shwartz et al. Sec. 2.3: the score is (x_j . g)^2 / ||x_j||^2, g = dQ/dpredictions,
    up to one constant factor shared by every feature."""
    X, y = classification(17, n=60, d=10)
    obj = Logistic(X, y, lam=0.01)
    state = obj.fit_support([1, 4])
    t = labels01(y)
    eta = X @ state.coef + state.intercept
    g = 1 / (1 + np.exp(-eta)) - t
    ref = (X.T @ g) ** 2 / np.sum(X * X, axis=0)
    ref[[1, 4]] = 0.0
    s = state.quadratic_scores()
    assert s[1] == 0.0 and s[4] == 0.0
    mask = ref > 0
    ratio = s[mask] / ref[mask]
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-9)


def test_least_squares_quadratic_scores_equal_coordinate_drops(regression):
    X, y = regression(18, n=40, d=10)
    state = LeastSquares(X, y).fit_support([3])
    np.testing.assert_allclose(state.quadratic_scores(), state.coordinate_drops(), rtol=1e-14)


# --------------------------------------------------------------------------- dense vs sparse


@pytest.mark.parametrize("kind", ["least_squares", "logistic"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_dense_and_sparse_active_sets_agree(regression, classification, kind, fit_intercept):
    if kind == "least_squares":
        X, y = regression(19, n=50, d=15, density=0.3)
        make = lambda Z: LeastSquares(Z, y, fit_intercept=fit_intercept)  # noqa: E731
    else:
        X, y = classification(19, n=50, d=15, density=0.3)
        make = lambda Z: Logistic(Z, y, lam=0.01, fit_intercept=fit_intercept)  # noqa: E731
    objs = [make(X), make(sp.csr_matrix(X)), make(sp.csc_matrix(X))]
    w, b = np.linspace(-1, 1, 15), 0.4
    states = [o.fit_support([2, 11, 6]) for o in objs]
    ref_state = states[0]
    for o, s in zip(objs[1:], states[1:], strict=True):
        assert o.value(w, b) == pytest.approx(objs[0].value(w, b), rel=1e-12)
        np.testing.assert_allclose(o.gradient(w, b)[0], objs[0].gradient(w, b)[0], rtol=1e-11)
        assert s.value == pytest.approx(ref_state.value, rel=1e-10)
        np.testing.assert_allclose(s.coef, ref_state.coef, rtol=1e-8, atol=1e-12)
        assert s.intercept == pytest.approx(ref_state.intercept, rel=1e-8, abs=1e-12)
        for name in (
            "gradient",
            "coordinate_drops",
            "quadratic_scores",
            "deletion_costs",
            "refit_gains",
            "refit_deletion_costs",
        ):
            np.testing.assert_allclose(
                getattr(s, name)(),
                getattr(ref_state, name)(),
                rtol=1e-7,
                atol=1e-13,
                err_msg=name,
            )
    assert dense(sp.csr_matrix(X)).shape == X.shape
