"""The bounds and shortcuts of logistic FoBa-obj's forward step and refits (issue 22), each
against an independent reference: scipy's scalar minimiser per column, finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import expit

from engine.objectives import coordinate_bounds, glm
from engine.objectives.coordinate_bounds import _upper_bounds, lower_bounds
from engine.objectives.coordinate_newton import (
    logistic_coordinate_moves,
    self_concordant_decrease,
)
from engine.objectives.logistic import Logistic, LogLoss


def _problem(seed: int, lam: float):
    rng = np.random.default_rng(seed)
    n, d = 120, 25
    # Heavy-tailed columns of different scales: M_j = max |x_ij| far above the typical entry.
    X = rng.standard_t(3, (n, d)) * rng.uniform(0.2, 3.0, d)
    y = (X[:, 0] - X[:, 1] + rng.standard_normal(n) > 0).astype(int)
    obj = Logistic(X, y, lam=lam)
    state = obj.start()
    for j in (0, 1):
        state.add(j)
    return X, obj, state


def _exact_drops(X, obj, eta, cand):
    """-min_a Q(w + a e_j) + Q(w) per candidate, by scipy's bounded scalar minimiser."""
    t, lam = obj.t, obj.lam
    base = np.mean(np.logaddexp(0.0, eta) - t * eta)
    drops = []
    for j in cand:

        def f(a, j=j):
            z = eta + a * X[:, j]
            return np.mean(np.logaddexp(0.0, z) - t * z) + 0.5 * lam * a * a - base

        res = minimize_scalar(f, bounds=(-50.0, 50.0), method="bounded", options={"xatol": 1e-12})
        drops.append(-res.fun)
    return np.array(drops)


@pytest.mark.parametrize(("seed", "lam"), [(0, 1e-4), (1, 1e-2), (2, 0.0)])
def test_drop_bounds_hold(seed: int, lam: float) -> None:
    X, obj, state = _problem(seed, lam)
    n = X.shape[0]
    cand = np.arange(2, X.shape[1])
    p = expit(state.eta)
    g = np.abs(X[:, cand].T @ (p - obj.t)) / n
    h = (X[:, cand] ** 2).T @ (p * (1 - p)) / n
    M = np.abs(X[:, cand]).max(axis=0)
    S = (X[:, cand] ** 2).mean(axis=0)
    exact = _exact_drops(X, obj, state.eta, cand)
    lower = lower_bounds(g, h, M, S, lam)
    upper = _upper_bounds(g, h, M, lam)
    assert np.all(lower <= exact * (1 + 1e-9) + 1e-15)
    assert np.all(upper >= exact * (1 - 1e-9) - 1e-15)
    assert np.any(lower > 0.3 * exact)  # not vacuous


@pytest.mark.parametrize("lam", [1e-4, 1e-2, 0.0])
def test_upper_bounds_are_the_maximum_of_their_model(lam: float) -> None:
    """_upper_bounds' Newton start is a shortcut: the value must still be max_s of
    |g| s - h (e^{-Ms} + Ms - 1)/M^2 - lam s^2/2, found here by scipy."""
    rng = np.random.default_rng(4)
    g = np.abs(rng.standard_normal(40)) * 1e-2
    h = rng.uniform(1e-3, 5e-2, 40)
    M = rng.uniform(0.5, 12.0, 40)
    got = _upper_bounds(g, h, M, lam)
    for gi, hi, Mi, ub in zip(g, h, M, got, strict=True):
        if not np.isfinite(ub):
            assert lam == 0.0 and gi * Mi >= hi
            continue

        def neg(s, gi=gi, hi=hi, Mi=Mi):
            return -(gi * s - hi * (np.expm1(-Mi * s) + Mi * s) / Mi**2 - 0.5 * lam * s * s)

        top = gi / lam if lam > 0 else 60.0 / Mi
        best = -minimize_scalar(neg, bounds=(0.0, top), method="bounded").fun
        assert ub >= best * (1 - 1e-12)
        assert ub == pytest.approx(best, rel=1e-7)


def test_self_concordant_decrease_is_the_maximum_of_its_model() -> None:
    """The bound against max_s of -(g s + h (e^{-|s|} + |s| - 1)): found by scipy where the model
    can be evaluated to 1e-12 (r = |g|/h >= 1e-2), and from the series sum_{k>=2} r^k/(k(k-1))
    summed to 40 terms where the closed form cancels (r < 1e-2); and every other branch:
    r >= 1 and h = 0 (unbounded), g = 0 (nothing to gain)."""
    rng = np.random.default_rng(11)
    h = rng.uniform(1e-3, 2.0, 64)
    r = np.concatenate([10.0 ** rng.uniform(-7, -2, 20), rng.uniform(1e-2, 0.999, 30)])
    g = np.concatenate([r * h[:50] * rng.choice([-1.0, 1.0], 50), np.zeros(4), [2.0, -5.0] * 5])
    h[50:52] = h[54:56] = 0.0  # g = 0 with and without curvature; then g != 0, h = 0
    got = self_concordant_decrease(g, h)
    for gi, hi, bound in zip(g, h, got, strict=True):
        if gi == 0.0:
            assert bound == 0.0
            continue
        ri = abs(gi) / hi if hi > 0 else np.inf
        if ri >= 1.0:
            assert bound == np.inf
            continue
        if ri < 1e-2:
            series = sum(ri**j / (j * (j - 1)) for j in range(2, 42))
            # the code's r^2/2 + r^3/(6(1 - r)) is above the series by about r^2/6 of it, and
            # the bound carries a relative margin of 1e-9
            assert hi * series <= bound <= hi * series * (1 + ri * ri / 5 + 2e-9)
            continue

        def neg(s, gi=gi, hi=hi):
            return gi * s + hi * (np.expm1(-abs(s)) + abs(s))

        top = -np.log1p(-ri) * 1.01  # past the maximiser, |s| = -log(1 - r)
        side = (-top, 0.0) if gi > 0 else (0.0, top)
        best = -minimize_scalar(neg, bounds=side, method="bounded", options={"xatol": 1e-14}).fun
        assert bound >= best * (1 - 1e-10)
        assert bound == pytest.approx(best, rel=1e-7)


@pytest.mark.parametrize(("seed", "lam"), [(0, 1e-4), (3, 1e-2)])
def test_pruned_coordinate_moves_keep_the_best(seed: int, lam: float) -> None:
    """With ``prune``, columns stop after one step only when their drop is below another's:
    the kept columns' drops are those of the unpruned iteration, the best among them."""
    X, obj, state = _problem(seed, lam)
    n = X.shape[0]
    cand = np.arange(2, X.shape[1])
    cols = obj.columns.subset(cand)
    full, moves = logistic_coordinate_moves(cols, state.eta, obj.t, lam)
    p = expit(state.eta)
    at_zero = (X[:, cand].T @ (p - obj.t) / n, (X[:, cand] ** 2).T @ (p * (1 - p)) / n)
    M = np.abs(X[:, cand]).max(axis=0)
    pruned, pmoves = logistic_coordinate_moves(
        obj.columns.subset(cand), state.eta, obj.t, lam, at_zero, (0.0, M)
    )
    kept = np.isfinite(pruned)
    assert kept.sum() < kept.size  # something was pruned
    assert kept[np.argmax(full)]
    np.testing.assert_allclose(pruned[kept], full[kept], rtol=1e-12)
    np.testing.assert_allclose(pmoves[kept], moves[kept], rtol=1e-9, atol=1e-12)
    assert np.all(full[~kept] < full.max())


@pytest.mark.parametrize(("seed", "lam"), [(0, 1e-4), (1, 1e-2), (2, 0.0)])
@pytest.mark.parametrize("probes_fail", [False, True])
def test_best_coordinate_drop_is_the_argmax_of_scipy_drops(
    seed: int, lam: float, probes_fail: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shortcut's feature and drop against scipy's per-column minimiser. With
    ``probes_fail`` the probes' Newton steps report no decrease, so the floor comes from
    lower_bounds instead (the fallback). Each with _SKIP_UPPER_ENTRIES as shipped and at 0, where
    _upper_bounds always trims the short list."""
    X, obj, state = _problem(seed, lam)
    cand = np.arange(2, X.shape[1])
    want = _exact_drops(X, obj, state.eta, cand)
    if probes_fail:
        monkeypatch.setattr(
            coordinate_bounds,
            "objective_change",
            lambda cols, a, *args: np.full(len(a), np.inf),
        )
    for cap in (coordinate_bounds._SKIP_UPPER_ENTRIES, 0):
        monkeypatch.setattr(coordinate_bounds, "_SKIP_UPPER_ENTRIES", cap)
        j, drop, _, _ = coordinate_bounds.best_coordinate_drop(
            obj.column_stats, state.eta, obj.t, lam, cand
        )
        assert j == cand[int(np.argmax(want))]
        assert drop == pytest.approx(want.max(), rel=1e-8, abs=1e-14)


@pytest.mark.parametrize("fit_b", [True, False])
def test_hessian_matches_finite_differences(fit_b: bool) -> None:
    rng = np.random.default_rng(5)
    k, n, lam = 6, 90, 1e-3
    A = rng.standard_normal((k, n))
    y = (rng.random(n) < 0.4).astype(float)
    w = rng.standard_normal(k) * 0.3
    b = 0.2 if fit_b else 0.0
    loss = LogLoss()
    eta = w @ A + b
    H = glm._hessian(A, y, loss, lam, fit_b, eta)
    assert np.array_equal(H, H.T)
    eps = 1e-6
    fd = np.empty_like(H)
    for i in range(k + fit_b):
        e = np.zeros(k + fit_b)
        e[i] = eps
        up, dn = w + e[:k], w - e[:k]
        eta_up = up @ A + b + (e[k] if fit_b else 0.0)
        eta_dn = dn @ A + b - (e[k] if fit_b else 0.0)
        g_up = glm._gradient(A, y, loss, lam, fit_b, up, eta_up)
        g_dn = glm._gradient(A, y, loss, lam, fit_b, dn, eta_dn)
        fd[:, i] = (g_up - g_dn) / (2 * eps)
    np.testing.assert_allclose(H, fd, rtol=1e-6, atol=1e-9)
