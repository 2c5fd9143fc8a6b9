"""Frank-Wolfe on the l1 ball (Algorithm 2) and randomized sparsification (Algorithm 1) of
Shalev-Shwartz, Srebro & Zhang (2010), checked against an independent l1-constrained optimum
(SLSQP on the split w = u - v), the closed-form step and stopping rule recomputed from the
trace, and the exact expected excess objective of Maurey's sampling for least squares."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.sparse as sp
from engine_problems import make_classification, make_regression
from scipy.optimize import minimize

import engine
import engine.algorithms.frank_wolfe  # registers the algorithms
import engine.objectives.smoothed  # registers the objectives
from engine.algorithms.frank_wolfe import InterceptProfile, solve_l1, sparsify
from engine.objectives import LeastSquares, Logistic, Objective
from engine.objectives.smoothed import SmoothedAbsolute, SmoothedHinge
from engine.trace import replay, to_json

# --------------------------------------------------------------------------- problems


@functools.cache
def regression():
    X, y = make_regression(1, n=30, d=4, k_true=3, rho=0.0)
    return (X - X.mean(axis=0)) / X.std(axis=0), y


@functools.cache
def classification():
    X, y = make_classification(1, n=40, d=3, k_true=2)
    return X / X.std(axis=0) / 2, y


# (objective factory, data, B1): small l1-smoothness x B1^2 so Frank-Wolfe's O(1/t) rate
# reaches the tolerances below in a few thousand iterations; the l1 constraint is active.
CASES = {
    "least_squares": (lambda X, y: LeastSquares(X, y), regression, 1.0),
    "logistic": (lambda X, y: Logistic(X, y, lam=0.0), classification, 1.0),
    "smoothed_hinge": (lambda X, y: SmoothedHinge(X, y, beta=2.0), classification, 1.0),
    "smoothed_absolute": (lambda X, y: SmoothedAbsolute(X, y, beta=2.0), regression, 1.0),
}


def _case(name):
    factory, data, radius = CASES[name]
    X, y = data()
    return factory(X, y), X, y, radius


@functools.cache
def l1_optimum(name):
    """min Q(w, b) s.t. ||w||_1 <= B1 by SLSQP on w = u - v, u, v >= 0, sum(u + v) <= B1."""
    obj, _, _, radius = _case(name)
    d, fit_b = obj.n_features, obj.fit_intercept

    def unpack(p):
        return p[:d] - p[d : 2 * d], (p[2 * d] if fit_b else 0.0)

    def fun(p):
        w, b = unpack(p)
        gw, gb = obj.gradient(w, b)
        return obj.value(w, b), np.r_[gw, -gw, [gb] if fit_b else []]

    ball = {
        "type": "ineq",
        "fun": lambda p: radius - p[: 2 * d].sum(),
        "jac": lambda p: np.r_[-np.ones(2 * d), [0.0] if fit_b else []],
    }
    res = minimize(
        fun,
        np.zeros(2 * d + fit_b),
        jac=True,
        method="SLSQP",
        constraints=[ball],
        bounds=[(0.0, None)] * (2 * d) + ([(None, None)] if fit_b else []),
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    assert res.success
    w, b = unpack(res.x)
    return res.fun, w, b


def _gap(obj, coef, intercept, radius):
    """<theta, w> + B1 ||theta||_inf from the objective's gradient at the returned point."""
    theta, _ = obj.gradient(coef, intercept)
    return float(theta @ coef) + radius * float(np.max(np.abs(theta)))


# --------------------------------------------------------------------------- the l1 solver


@pytest.mark.parametrize("name", list(CASES))
def test_iterates_stay_in_the_ball_and_the_objective_never_rises(name):
    obj, _, _, radius = _case(name)
    steps = []
    sol = solve_l1(obj, radius, epsilon=1e-9, max_iter=300, callback=steps.append)
    assert len(steps) == 300 and sol.iterations == 300
    previous = obj.value(np.zeros(obj.n_features), _b0(obj))
    for s in steps:
        assert np.abs(s.coef).sum() <= radius * (1 + 1e-12)
        assert 0.0 < s.step <= 1.0
        assert s.previous == pytest.approx(previous, rel=1e-12)
        assert s.value <= s.previous + 1e-13 * abs(s.previous)  # the step's bound guarantees it
        previous = s.value
    assert steps[-1].value < steps[0].previous - 1e-3  # and it does decrease


def _b0(obj):
    return InterceptProfile(obj)(np.zeros(obj.n_features), 0.0)[0]


@pytest.mark.parametrize(("name", "tolerances"), [
    ("least_squares", (1e-1, 1e-2)),
    ("logistic", (1e-2, 1e-3)),
    ("smoothed_hinge", (1e-1, 1e-2)),
    ("smoothed_absolute", (1e-1, 3e-2)),
])  # fmt: skip
def test_objective_decreases_to_the_independent_l1_optimum(name, tolerances):
    obj, _, _, radius = _case(name)
    best, w_star, _ = l1_optimum(name)
    assert np.abs(w_star).sum() == pytest.approx(radius, rel=1e-6)  # the constraint binds
    excess = []
    for eps in tolerances:
        sol = solve_l1(obj, radius, epsilon=eps, max_iter=20_000)
        assert sol.stop_reason.startswith("duality gap")
        assert sol.gap <= eps
        # The gap bounds Q(w) - Q* (weak duality); the iterate is feasible, so Q(w) >= Q*.
        assert -1e-9 <= sol.objective - best <= eps
        excess.append(sol.objective - best)
    assert excess[1] < excess[0]


def test_stopping_rule_and_trace_of_a_select_run():
    X, y = regression()
    eps = 0.05
    res = engine.select(X, y, algorithm="frank-wolfe", B1=1.0, epsilon=eps, standardize=False)
    obj = LeastSquares(X, y)
    assert res.stop_reason.startswith("duality gap")
    # Recomputed independently at the returned point: the intercept minimises Q(coef, .) and
    # the gap there is within epsilon.
    assert res.intercept == pytest.approx(np.mean(y - X @ res.coef), abs=1e-10)
    assert _gap(obj, res.coef, res.intercept, 1.0) <= eps
    assert res.objective == pytest.approx(obj.value(res.coef, res.intercept), rel=1e-12)
    steps = res.trace[:-1]
    assert res.trace[-1].kind == "stop" and all(e.kind in ("add", "iterate") for e in steps)
    assert all(e.info["gap"] > eps for e in steps)  # it did not stop any earlier
    assert res.trace[-1].info["gap"] <= eps
    assert sorted(replay(res.trace)[-1]) == res.support.tolist()
    assert res.support.tolist() == np.flatnonzero(res.coef).tolist()
    seen: set[int] = set()
    for e in steps:
        assert (e.kind == "add") == (e.feature not in seen)  # add exactly when a feature enters
        seen.add(e.feature)
        assert e.support_size == len(seen)


def test_step_is_the_papers_closed_form():
    for name, beta in (
        ("least_squares", lambda X: np.max(np.mean((X - X.mean(axis=0)) ** 2, axis=0))),
        ("smoothed_hinge", lambda X: 2.0 * np.max(np.mean(X**2, axis=0))),
    ):
        obj, X, _, radius = _case(name)
        steps = []
        solve_l1(obj, radius, epsilon=1e-9, max_iter=50, callback=steps.append)
        for s in steps:
            assert s.step == pytest.approx(min(1.0, s.gap / (4 * radius**2 * beta(X))), rel=1e-12)


def test_k_caps_the_support():
    X, y = make_regression(3, n=50, d=12, k_true=6, rho=0.0)
    free = engine.select(X, y, algorithm="frank-wolfe", B1=20.0, max_iter=300, standardize=False)
    assert len(free.support) > 3
    capped = engine.select(
        X, y, algorithm="frank-wolfe", B1=20.0, max_iter=300, k=3, standardize=False
    )
    assert len(capped.support) == 3
    assert "beyond k = 3" in capped.stop_reason
    assert len(capped.trace) < len(free.trace)
    # The trace agrees with the first steps of the uncapped run up to the stop.
    n = len(capped.trace) - 1
    assert [e.feature for e in capped.trace[:n]] == [e.feature for e in free.trace[:n]]


def test_full_steps_replace_the_support_and_the_trace_says_so():
    # A tiny beta makes every step eta = 1: w jumps to the vertex B1 e_r and the other features
    # leave; the trace must record those removals for replay to give the right support.
    X, y = make_regression(3, n=50, d=12, k_true=6, rho=0.0)
    res = engine.select(
        X, y, algorithm="frank-wolfe", B1=1.0, smoothness=1e-9, max_iter=30, standardize=False
    )
    kinds = [e.kind for e in res.trace]
    assert kinds.count("remove") > 0
    assert all(e.info["step"] == 1.0 for e in res.trace[:-1])
    for e, support in zip(res.trace, replay(res.trace), strict=True):
        assert e.support_size == len(support)
    assert sorted(replay(res.trace)[-1]) == res.support.tolist() and len(res.support) == 1


@pytest.mark.parametrize("objective", ["least_squares", "logistic", "smoothed_hinge"])
def test_frank_wolfe_with_every_objective_via_select(objective):
    X, y = (classification if objective != "least_squares" else regression)()
    res = engine.select(
        X, y, algorithm="frank-wolfe", objective=objective, B1=0.8, max_iter=200, standardize=False
    )
    assert np.abs(res.coef).sum() <= 0.8 * (1 + 1e-12)
    assert np.isfinite(res.objective) and res.trace[-1].kind == "stop"
    assert all("step" in e.info for e in res.trace[:-1])


@pytest.mark.parametrize("algorithm", ["frank-wolfe", "randomized-sparsification"])
def test_dense_and_sparse_x_give_the_same_run(algorithm):
    X, y = make_regression(9, n=40, d=10, k_true=4, density=0.4)
    kw = {"algorithm": algorithm, "objective": "smoothed_absolute", "B1": 4.0, "max_iter": 150}
    if algorithm == "randomized-sparsification":
        kw |= {"k": 3, "random_state": 2}
    dense, sparse = (
        engine.select(X, y, **kw, standardize=False),
        engine.select(sp.csr_matrix(X), y, **kw, standardize=False),
    )
    assert [(e.kind, e.feature) for e in dense.trace] == [(e.kind, e.feature) for e in sparse.trace]
    np.testing.assert_allclose(
        [e.objective for e in dense.trace], [e.objective for e in sparse.trace], rtol=1e-9
    )
    np.testing.assert_allclose(dense.coef, sparse.coef, rtol=1e-9, atol=1e-12)


def test_b1_is_required():
    X, y = regression()
    with pytest.raises(ValueError, match="'B1'"):
        engine.select(X, y, algorithm="frank-wolfe", standardize=False)
    with pytest.raises(ValueError, match="'B1'"):
        engine.select(X, y, algorithm="frank-wolfe", B1=0.0, standardize=False)


class _Opaque(Objective):
    """Least squares behind the bare Objective interface: no l1_smoothness, no design, an
    unknown name. Frank-Wolfe must estimate beta by backtracking."""

    name = "opaque"

    def __init__(self, inner: Objective) -> None:
        self._inner = inner
        self.n_samples, self.n_features = inner.n_samples, inner.n_features
        self.fit_intercept = inner.fit_intercept

    def value(self, coef, intercept=0.0):
        return self._inner.value(coef, intercept)

    def gradient(self, coef, intercept=0.0):
        return self._inner.gradient(coef, intercept)

    def start(self):
        return self._inner.start()


def test_objectives_without_a_known_smoothness_use_backtracking():
    obj, _, _, radius = _case("least_squares")
    steps = []
    sol = solve_l1(_Opaque(obj), radius, epsilon=1e-2, max_iter=20_000, callback=steps.append)
    assert sol.smoothness is None and sol.gap <= 1e-2
    assert all(np.abs(s.coef).sum() <= radius * (1 + 1e-12) for s in steps)
    assert all(s.value <= s.previous + 1e-13 for s in steps)
    best = l1_optimum("least_squares")[0]
    assert -1e-9 <= sol.objective - best <= 1e-2


# --------------------------------------------------------------------------- sparsification


def test_sparsify_is_algorithm_1():
    w_star = np.array([0.5, 0.0, -1.5, 0.25, 0.0])
    rng = np.random.default_rng(0)
    for k in (1, 3, 10):
        w, draws = sparsify(w_star, k, rng)
        counts = np.bincount(draws, minlength=5)
        np.testing.assert_allclose(w, 2.25 / k * np.sign(w_star) * counts, rtol=1e-15)
        assert np.count_nonzero(w) <= k and set(draws) <= {0, 2, 3}
        assert np.abs(w).sum() == pytest.approx(2.25, rel=1e-14)
    # The draws follow |w*| / ||w*||_1.
    _, draws = sparsify(w_star, 20_000, np.random.default_rng(1))
    freq = np.bincount(draws, minlength=5) / 20_000
    np.testing.assert_allclose(freq, np.abs(w_star) / 2.25, atol=0.015)


def test_expected_excess_objective_follows_theorem_2_1_exactly_for_least_squares():
    # Q(w) = ||y - Xw||^2 / (2n), w = mean of k iid v with E[v] = w*: the linear term vanishes
    # in expectation and E Q(w_k) - Q(w*) = (||w*||_1 sum_j |w*_j| ||x_j||^2 - ||Xw*||^2)/(2nk).
    X, y = make_regression(4, n=40, d=8, k_true=4)
    obj = LeastSquares(X, y, fit_intercept=False)
    w_star = solve_l1(obj, 3.0, epsilon=1e-3, max_iter=3000).coef
    base = obj.value(w_star)
    spread = np.abs(w_star).sum() * np.abs(w_star) @ np.sum(X**2, axis=0) - np.sum(
        (X @ w_star) ** 2
    )
    rng = np.random.default_rng(5)
    for k in (1, 4, 16):
        excess = np.array([obj.value(sparsify(w_star, k, rng)[0]) - base for _ in range(3000)])
        expected = spread / (2 * 40 * k)
        assert excess.mean() == pytest.approx(expected, abs=5 * excess.std() / np.sqrt(3000))


def test_randomized_sparsification_support_weights_and_trace():
    X, y = make_regression(6, n=50, d=10, k_true=5)
    k, radius = 4, 3.0
    res = engine.select(
        X,
        y,
        algorithm="randomized-sparsification",
        k=k,
        B1=radius,
        random_state=0,
        max_iter=500,
        standardize=False,
    )
    obj = LeastSquares(X, y)
    l1 = solve_l1(obj, radius, max_iter=500)  # deterministic: the same w*
    norm = np.abs(l1.coef).sum()
    assert len(res.support) <= k and set(res.support) <= set(np.flatnonzero(l1.coef))
    counts = res.coef[res.support] / (norm / k) * np.sign(l1.coef[res.support])
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-9)
    assert counts.sum() == pytest.approx(k) and np.all(counts >= 1 - 1e-9)
    assert res.intercept == pytest.approx(np.mean(y - X @ res.coef), abs=1e-10)
    assert res.objective == pytest.approx(obj.value(res.coef, res.intercept), rel=1e-12)
    draws = res.trace[:-1]
    assert len(draws) == k and [e.info["draw"] for e in draws] == [1.0, 2.0, 3.0, 4.0]
    assert draws[-1].objective == pytest.approx(res.objective, rel=1e-14)
    assert sorted(replay(res.trace)[-1]) == res.support.tolist()
    stop = res.trace[-1]
    assert stop.kind == "stop" and stop.info["l1_norm"] == pytest.approx(norm, rel=1e-12)
    assert stop.info["draws_max"] >= stop.info["draws_mean"] >= res.objective
    # The same ten draws by hand (select seeds default_rng(random_state)): the best is kept.
    rng = np.random.default_rng(0)
    values = []
    for _ in range(10):
        w, _ = sparsify(l1.coef, k, rng)
        values.append(obj.value(w, np.mean(y - X @ w)))
    assert np.ptp(values) > 1e-3  # the choice matters
    assert res.objective == pytest.approx(min(values), rel=1e-12)
    assert stop.info["kept_draw"] == np.argmin(values)


def test_same_seed_same_trace_and_more_repeats_never_worse():
    X, y = make_classification(7, n=40, d=8, k_true=3)
    run = functools.partial(
        engine.select,
        X,
        y,
        algorithm="randomized-sparsification",
        objective="smoothed_hinge",
        k=3,
        B1=3.0,
        max_iter=300,
    )
    a, b = run(random_state=11), run(random_state=11)
    assert to_json(a.trace) == to_json(b.trace)
    assert np.array_equal(a.coef, b.coef)
    others = [to_json(run(random_state=s, n_repeats=1).trace) for s in range(4)]
    assert len(set(others)) > 1  # the seed matters
    # Repeats draw in sequence from one generator: the first draw is shared, the best is kept.
    for seed in range(3):
        one = run(random_state=seed, n_repeats=1).objective
        assert run(random_state=seed, n_repeats=10).objective <= one


def test_sparsified_objective_approaches_the_l1_optimum_as_k_grows():
    X, y = make_regression(8, n=60, d=20, k_true=10, rho=0.0)
    mean_excess = []
    for k in (1, 5, 20):
        excess = []
        for seed in range(8):
            res = engine.select(
                X,
                y,
                algorithm="randomized-sparsification",
                k=k,
                B1=8.0,
                n_repeats=1,
                random_state=seed,
                max_iter=200,
                standardize=False,
            )
            l1_value = res.trace[-1].info["l1_objective"]
            assert res.objective >= l1_value - 0.5  # in the ball: at most the l1 gap below
            excess.append(res.objective - l1_value)
        mean_excess.append(np.mean(excess))
    assert mean_excess[0] > mean_excess[1] > mean_excess[2]
    assert mean_excess[2] < 0.25 * mean_excess[0]
