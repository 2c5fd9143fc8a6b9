"""FoBa's fidelity options: ``deletion_cost`` (fixed / refit), ``foba-refit`` (exact refit
forward rule), ``path_end`` (zhang / sparsity), and deletion costs that re-optimise the intercept
for every objective. Checked against direct computations: refits from scratch (lstsq,
scikit-learn), scalar minimisation over the intercept (scipy's Brent).
"""

from __future__ import annotations

import numpy as np
import pytest
from engine_problems import make_classification, make_regression
from engine_reference import best_intercept, refit_fn, value_fn

import engine
from engine.objectives import LeastSquares, Logistic, SmoothedHinge
from engine.trace import replay

LAM = 1e-2


def objective_of(name: str, X, y):
    if name == "least_squares":
        return LeastSquares(X, y)
    return Logistic(X, y, lam=LAM)


def problem(name: str, seed: int, n: int = 60, d: int = 12):
    if name == "least_squares":
        return make_regression(seed, n=n, d=d)
    return make_classification(seed, n=n, d=d, k_true=4)


def support_before(trace, i):
    """The support just before event i."""
    return replay(trace)[i - 1] if i else frozenset()


# --------------------------------------------------------------------------- deletion costs


@pytest.mark.parametrize("name", ["least_squares", "logistic"])
def test_refit_deletion_costs_are_refits_from_scratch(name):
    X, y = problem(name, 1)
    obj = objective_of(name, X, y)
    refit = refit_fn(name, X, y, lam=LAM)
    S = [0, 3, 5, 7, 9]
    state = obj.fit_support(S)
    costs = state.refit_deletion_costs()
    base = refit(S)[2]
    want = [refit([j for j in S if j != i])[2] - base for i in state.support]
    np.testing.assert_allclose(costs, want, rtol=1e-6, atol=1e-10)


@pytest.mark.parametrize("name", ["least_squares", "logistic", "smoothed_hinge"])
def test_fixed_deletion_costs_reoptimise_the_intercept(name):
    """Q(w - w_j e_j, b*) - Q(w, b) with b* = argmin_b (Brent), for every objective."""
    kind = "least_squares" if name == "least_squares" else "logistic"
    X, y = problem(kind, 2)
    if name == "smoothed_hinge":
        obj = SmoothedHinge(X, np.where(y == np.unique(y)[1], 1.0, -1.0), lam=LAM, beta=0.5)

        def value(w, b):
            return obj.value(w, b)
    else:
        obj = objective_of(name, X, y)
        value = value_fn(name, X, y, lam=LAM)
    state = obj.fit_support([1, 2, 4, 6])
    w, b = state.coef, state.intercept
    base = value(w, b)
    want = []
    for j in state.support:
        v = w.copy()
        v[j] = 0.0
        want.append(value(v, best_intercept(value, v, b)) - base)
    np.testing.assert_allclose(state.deletion_costs(), want, rtol=1e-7, atol=1e-11)
    # and never above the cost with the intercept held
    held = [value(np.where(np.arange(len(w)) == j, 0.0, w), b) - base for j in state.support]
    assert np.all(state.deletion_costs() <= np.array(held) + 1e-12)


@pytest.mark.parametrize("name", ["least_squares", "logistic"])
@pytest.mark.parametrize("seed", [3, 4])
def test_foba_with_refit_deletion_cost_follows_the_refit_rule(name, seed):
    """Every backward decision of deletion_cost='refit' picks the feature whose refit without
    it raises the objective least, with that increase as its cost, computed from scratch."""
    X, y = problem(name, seed, n=50, d=10)
    refit = refit_fn(name, X, y, lam=LAM)
    kw = {"lam": LAM} if name == "logistic" else {}
    res = engine.select(
        X,
        y,
        algorithm="foba-obj",
        objective=name,
        k=4,
        deletion_cost="refit",
        **kw,
        standardize=False,
    )
    checked = 0
    for i, e in enumerate(res.trace):
        if e.kind not in ("remove", "check"):
            continue
        S = sorted(support_before(res.trace, i))
        base = refit(S)[2]
        costs = {j: refit([q for q in S if q != j])[2] - base for j in S}
        j = min(costs, key=costs.get)
        assert e.feature == j
        assert e.gain == pytest.approx(costs[j], rel=1e-6, abs=1e-10)
        assert (e.kind == "remove") == (e.gain < e.threshold)
        checked += 1
    assert checked > 0


def test_refit_deletion_cost_can_change_the_path():
    """The two costs are different rules: on some seed they make different decisions."""
    differ = False
    for seed in range(10):
        X, y = make_regression(seed, n=40, d=15, k_true=5, noise=1.0)
        a = engine.select(X, y, algorithm="foba-obj", k=5, standardize=False)
        b = engine.select(X, y, algorithm="foba-obj", k=5, deletion_cost="refit", standardize=False)
        if [(e.kind, e.feature) for e in a.trace] != [(e.kind, e.feature) for e in b.trace]:
            differ = True
            break
    assert differ


# --------------------------------------------------------------------------- foba-refit


@pytest.mark.parametrize("name", ["least_squares", "logistic"])
def test_foba_refit_adds_the_argmax_of_exact_refit_gains(name):
    X, y = problem(name, 5, n=50, d=10)
    refit = refit_fn(name, X, y, lam=LAM)
    kw = {"lam": LAM} if name == "logistic" else {}
    res = engine.select(X, y, algorithm="foba-refit", objective=name, k=4, **kw, standardize=False)
    adds = 0
    for i, e in enumerate(res.trace):
        if e.kind != "add":
            continue
        S = sorted(support_before(res.trace, i))
        base = refit(S)[2]
        gains = {j: base - refit([*S, j])[2] for j in range(X.shape[1]) if j not in S}
        best = max(gains, key=gains.get)
        assert e.feature == best
        assert e.gain == pytest.approx(gains[best], rel=1e-6, abs=1e-10)
        adds += 1
    assert adds >= 4
    assert len(res.support) == 4


# --------------------------------------------------------------------------- path_end


@pytest.mark.parametrize("algorithm", ["foba-obj", "foba-gdt", "foba-refit"])
@pytest.mark.parametrize("name", ["least_squares", "logistic"])
def test_path_end_sparsity_is_a_prefix_of_zhangs_path(algorithm, name):
    X, y = problem(name, 6, n=60, d=20)
    kw = {"lam": LAM} if name == "logistic" else {}
    full = engine.select(X, y, algorithm=algorithm, objective=name, k=5, **kw, standardize=False)
    short = engine.select(
        X, y, algorithm=algorithm, objective=name, k=5, path_end="sparsity", **kw, standardize=False
    )
    ev = [(e.kind, e.feature) for e in short.trace[:-1]]
    assert ev == [(e.kind, e.feature) for e in full.trace[: len(ev)]]
    assert len(short.support) == 5
    sizes = [len(s) for s in replay(short.trace)]
    assert max(sizes) == 5  # it never went past k
    first = next(i for i, s in enumerate(replay(full.trace)) if len(s) == 5)
    assert short.n_steps <= full.n_steps
    assert full.objective <= short.objective + 1e-12
    assert first < len(short.trace)
    assert "path_end = sparsity" in short.stop_reason
