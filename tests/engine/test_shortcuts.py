"""The engine's shortcuts give exactly the answers of the computations they skip.

Each speed-up that avoids work (bounds that rule candidates out, a path stopped where it cannot
return to k) is checked against the full computation on data where the shortcut is taken.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.objectives import LeastSquares, Logistic
from engine.objectives.logistic import _intercept_shifts, _row_log_sums, _shift_gain_bounds


def _logistic_problem(seed: int, n: int = 150, d: int = 40, scale: float = 1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * scale
    w = np.zeros(d)
    w[:8] = rng.normal(0, 1.5, 8)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ w)))).astype(int)
    return X, y


def _cheapest_deletion_checked(state, features) -> list[int]:
    """Adds ``features`` one by one, checking after each that ``cheapest_deletion`` gives the
    argmin of ``deletion_costs`` and its cost, to the bit; the support sizes checked."""
    sizes = []
    for j in features:
        state.add(int(j))
        costs = state.deletion_costs()
        p, cost = state.cheapest_deletion()
        assert p == int(np.argmin(costs))
        assert cost == costs[p]
        sizes.append(len(state.support))
    return sizes


@pytest.mark.parametrize("seed,scale,lam", [(0, 1.0, 1e-4), (1, 3.0, 1e-2), (2, 0.3, 0.0)])
def test_logistic_cheapest_deletion_is_the_argmin_of_all_costs(seed, scale, lam):
    X, y = _logistic_problem(seed, scale=scale)
    state = Logistic(X, y, lam=lam).start()
    order = np.random.default_rng(seed).permutation(X.shape[1])
    sizes = _cheapest_deletion_checked(state, order[:30])
    assert sum(k > 4 for k in sizes) > 20  # sizes where the bounds are used


@pytest.mark.parametrize(
    "seed,scale,noise,lam", [(5, 1.0, None, 1e-3), (6, 4.0, None, 1e-4), (7, 1.0, 0.1, 1e-6)]
)
def test_logistic_cheapest_deletion_screened_is_the_argmin(seed, scale, noise, lam):
    """Supports of 17 to 40 features at n = 600: the screen (k x n >= 10 000 entries) is
    used. The last case is nearly separable with a tiny ridge: large weights, prediction
    changes past 80, so the screen's logs are taken one by one."""
    X, y = _logistic_problem(seed, n=600, d=60, scale=scale)
    order = np.random.default_rng(seed).permutation(X.shape[1])
    if noise is not None:  # labels from the sign of the prediction, true features first
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((600, 60)) * scale
        w = np.zeros(60)
        w[:8] = rng.normal(0, 1.5, 8)
        y = (X @ w + noise * rng.standard_normal(600) > 0).astype(int)
        order = np.arange(60)
    state = Logistic(X, y, lam=lam).start()
    sizes = _cheapest_deletion_checked(state, order[:40])
    assert sum(k * 600 >= 10_000 for k in sizes) >= 20


@pytest.mark.parametrize("seed", [0, 7, 10])
def test_logistic_screen_gives_no_bound_to_changes_past_the_clip(seed):
    """Two nearly collinear columns with an outlier row along both: their opposite weights
    cancel in that row's prediction, and deleting either moves it by thousands, past the
    screen's clip at 700. Such a row's cost with the intercept held must not bound the others
    (clipped in the log, whole in z.t, it came out too low and screened out the cheapest: 4
    wrong argmins in these seeds' paths before)."""
    rng = np.random.default_rng(seed)
    n, d = 600, 24
    X = rng.standard_normal((n, d))
    w = np.zeros(d)
    w[:6] = rng.normal(0, 1.5, 6)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ w)))).astype(int)
    X[:, 1] = X[:, 0] + 0.05 * rng.standard_normal(n)
    X[5, 0], X[5, 1] = 3e4, 3e4 + 50.0
    state = Logistic(X, y, lam=1e-6).start()
    clipped = 0
    for j in range(d - 4):
        _cheapest_deletion_checked(state, [j])
        clipped += float(np.max(-(state._cols * state._w[:, None]))) > 700.0
    assert clipped >= 10  # the case is exercised


@pytest.mark.parametrize("n", [5, 8, 600, 605])
def test_row_log_sums_match_the_sum_of_logs(n):
    rng = np.random.default_rng(n)
    p = rng.random(n)
    z = rng.normal(0, 3, (7, n))
    z[0] = np.minimum(z[0], 0.0) - 20.0  # entries near 1 - p
    z[1] = np.abs(z[1]) + 60.0  # entries near e^z, up to the block bound
    inner = 1.0 - p + p * np.exp(z)
    want = np.log(inner).sum(axis=1)
    got = _row_log_sums(inner, float(z.max()))
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-13 * n)
    # past the bound: one log per entry, the same numbers
    assert np.array_equal(_row_log_sums(inner, 81.0), want)


def test_intercept_shifts_from_given_first_derivatives_are_the_same():
    rng = np.random.default_rng(8)
    n, m = 300, 9
    p = 1 / (1 + np.exp(-rng.normal(0, 2, n)))
    t = (rng.random(n) < p).astype(float)
    z = rng.normal(0, 1, (m, n))
    pe = p * np.exp(z)
    q = pe / ((1.0 - p) + pe)
    first = (q.sum(axis=1) / n - t.mean(), (q * (1.0 - q)).sum(axis=1) / n)
    plain = _intercept_shifts(p[None, :], z, float(t.mean()))
    given = _intercept_shifts(p[None, :], z, float(t.mean()), first)
    assert np.array_equal(plain, given)


def test_cheapest_deletion_default_is_the_argmin():
    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((60, 12)), rng.standard_normal(60)
    state = LeastSquares(X, y).start()
    for j in (0, 3, 5, 7, 11):
        state.add(j)
    costs = state.deletion_costs()
    assert state.cheapest_deletion() == (int(np.argmin(costs)), float(costs.min()))


def test_shift_gain_bounds_cover_the_exact_intercept_gain():
    """phi(0) - min_s phi(s) <= the bound, for shifted log-losses far from and near saturation."""
    rng = np.random.default_rng(4)
    n, m = 200, 60
    eta = rng.normal(0, 3, n)
    p = 1 / (1 + np.exp(-eta))
    t = (rng.random(n) < p).astype(float)
    z = rng.normal(0, 1, (m, n)) * rng.uniform(0.01, 4, m)[:, None]

    def phi(s):
        v = eta[None, :] + z + s[:, None]
        return (np.logaddexp(0, v) - t * v).mean(axis=1)

    s = _intercept_shifts(p[None, :], z, float(t.mean()))
    gain = phi(np.zeros(m)) - phi(s)
    q = 1 / (1 + np.exp(-(eta[None, :] + z)))
    g = q.mean(axis=1) - t.mean()
    h = (q * (1 - q)).mean(axis=1)
    bound = _shift_gain_bounds(g, h)
    assert np.all(gain <= bound + 1e-15)
    assert np.all(bound[np.abs(g) < 0.01 * h] < 1e-3)  # and it is tight where it is used


def _full_lars_answer(X, y, k):
    """The last knot with k features on lars_path's whole 5k-step path (least squares: the
    least shrunk one is Zhang's best), recomputed here without the engine."""
    from sklearn.linear_model import lars_path

    Xc, yc = X - X.mean(axis=0), y - y.mean()
    _, _, coefs = lars_path(Xc, yc, method="lasso", max_iter=5 * k)
    sizes = [np.count_nonzero(np.abs(c) > 1e-12 * np.max(np.abs(c), initial=0)) for c in coefs.T]
    t = max(i for i, s in enumerate(sizes) if s == k)
    return coefs[:, t]


@pytest.mark.parametrize("seed", range(6))
def test_lasso_lars_path_cut_where_it_cannot_return_keeps_the_answer(seed):
    from engine.datasets import generate

    # Zhang's design: decoys correlated with the true features make LARS drop features, so
    # the first cut is often not yet settled and the path is rerun longer.
    p = generate("zhang2008", random_state=seed, n=60, d=120)
    cut = 0
    for k in (3, 5, 8):
        res = engine.select(p.X, p.y, algorithm="lasso", k=k, path_end="zhang", standardize=False)
        want = _full_lars_answer(p.X, p.y, k)
        np.testing.assert_allclose(res.coef, want, rtol=1e-9, atol=1e-12)
        assert res.n_steps <= 5 * k
        cut += "cannot return" in res.stop_reason
    assert cut  # the rule did cut these paths
