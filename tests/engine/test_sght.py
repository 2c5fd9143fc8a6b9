"""Sparse group hard thresholding (Xiang, Yang & Ye, KDD 2014): the exact projection (Algorithms
3-4) against brute force and a straight transcription of the boxes, the projection property,
ISTA/FISTA (Algorithms 1-2, Table 1) convergence, recovery on the Section 5.3 problems, IHT against
best subset, dense vs sparse X, the trace, and parameter validation."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
import scipy.sparse as sp
from engine_problems import make_classification, make_regression
from engine_reference import best_subset, ls_refit, refit_fn

import engine
import engine.algorithms.sght  # registers sght, iht and ght until __init__ imports it
from engine import projections as pj
from engine.algorithms import sght as sght_module
from engine.datasets import generate
from engine.objectives import LeastSquares
from engine.trace import replay

VARIANTS = ("ISTA", "ISTA-L", "FISTA", "FISTA-C")

# --------------------------------------------------------------------------- references


def brute_force(v: np.ndarray, groups: np.ndarray, s1: int, s2: int):
    """Every subset of at most s1 entries in at most s2 groups: (best value, all best subsets)."""
    w = v * v
    best, winners = -1.0, []
    for r in range(min(s1, len(v)) + 1):
        for S in itertools.combinations(range(len(v)), r):
            if len(set(groups[list(S)].tolist())) > s2:
                continue
            val = float(w[list(S)].sum())
            if val > best + 1e-12:
                best, winners = val, [frozenset(S)]
            elif val >= best - 1e-12:
                winners.append(frozenset(S))
    return best, winners


def algorithm3(v: np.ndarray, groups: np.ndarray, n_groups: int, s1: int, s2: int) -> float:
    """Algorithm 3 as printed (full sort of every group, the whole table T), the t loop
    vectorised over k only."""
    C = [np.sort(v[groups == g] ** 2)[::-1] for g in range(n_groups)]
    T = np.zeros((n_groups + 1, s2 + 1, s1 + 1))
    for i in range(1, n_groups + 1):
        CH = np.concatenate(([0.0], np.cumsum(C[i - 1])))
        for j in range(1, s2 + 1):
            T[i, j] = T[i - 1, j]
            for t in range(1, min(s1, len(C[i - 1])) + 1):
                T[i, j, t:] = np.maximum(T[i, j, t:], T[i - 1, j - 1, : s1 + 1 - t] + CH[t])
    return float(T[n_groups, s2, s1])


def uses_dp(groups: np.ndarray, s1: int, s2: int) -> bool:
    """Whether sght() reaches the table, rather than one of the closed-form cases of Lemma 1."""
    sizes = np.sort(np.bincount(groups))[::-1]
    return s2 < s1 < sizes[: min(s2, len(sizes))].sum() and s2 < np.count_nonzero(sizes)


def _name(word: str) -> str:
    return rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])"


# --------------------------------------------------------------------------- the projection


def test_dp_equals_brute_force_on_small_instances_with_ties_and_small_groups():
    rng = np.random.default_rng(0)
    n_dp = n_ties = n_small = n_unique = 0
    for trial in range(400):
        p = int(rng.integers(4, 11))
        G = int(rng.integers(2, 5))
        groups = rng.integers(0, G, p)
        groups[:G] = np.arange(G)  # no empty group
        v = rng.standard_normal(p)
        if trial % 3 == 0:  # ties, and exact zeros
            v = np.round(v * 2) / 2
            n_ties += len(np.unique(np.abs(v))) < p
        # Mostly budgets where both constraints bind (the table); some closed-form cases.
        s2, s1 = int(rng.integers(1, G + 1)), int(rng.integers(1, p + 1))
        cap = np.sort(np.bincount(groups))[::-1][:s2].sum()  # s1 >= cap: s1 cannot bind
        if trial % 5 and s2 < G and s2 + 1 < cap:
            s1 = int(rng.integers(s2 + 1, cap))
        n_dp += uses_dp(groups, s1, s2)
        n_small += uses_dp(groups, s1, s2) and np.bincount(groups).min() < s1
        res = pj.sght(v, pj.group_index(groups), s1, s2)
        best, winners = brute_force(v, groups, s1, s2)
        S = res.support
        assert len(S) == len(set(S.tolist())) <= s1
        assert len(set(groups[S].tolist())) <= s2
        assert float(np.sum(v[S] ** 2)) == pytest.approx(best, abs=1e-12)
        assert res.value == pytest.approx(best, abs=1e-12)
        # Selected zeros change nothing: compare the nonzero parts with the optimal subsets.
        optimal = {frozenset(i for i in W if v[i] != 0) for W in winners}
        assert frozenset(int(i) for i in S if v[i] != 0) in optimal
        n_unique += len(optimal) == 1
    # The sample must exercise the table, ties and groups smaller than s1, not only Lemma 1.
    assert n_dp >= 140 and n_ties >= 100 and n_small >= 90 and n_unique >= 300


@pytest.mark.parametrize("seed", range(8))
def test_dp_equals_algorithm_3_as_printed_on_larger_groups(seed):
    """Groups up to ~50 entries and s1 up to 40: both the dense and the divide-and-conquer
    (max,+) convolutions are used; candidate pruning and the row band are in play."""
    rng = np.random.default_rng(100 + seed)
    G = int(rng.integers(3, 8))
    p = int(rng.integers(4 * G, 60 * G))
    groups = rng.integers(0, G, p)
    v = rng.standard_normal(p) * rng.choice([0.3, 1.0, 3.0], G)[groups]
    s2 = int(rng.integers(1, G))
    s1 = int(rng.integers(s2 + 1, 41))
    res = pj.sght(v, pj.group_index(groups, G), s1, s2)
    ref = algorithm3(v, groups, G, s1, s2)
    S = res.support
    assert len(S) <= s1 and len(np.unique(groups[S])) <= s2
    assert float(np.sum(v[S] ** 2)) == pytest.approx(ref, rel=1e-12)


def test_concave_maxplus_divide_and_conquer_equals_enumeration():
    rng = np.random.default_rng(1)
    for trial in range(150):
        R, n, m = int(rng.integers(1, 5)), int(rng.integers(1, 150)), int(rng.integers(0, 90))
        F = rng.random((R, n)) * 10
        if trial % 2:
            F = np.maximum.accumulate(F, axis=1)  # the table's rows are nondecreasing in k
        inc = np.sort(rng.random(m))[::-1]
        if trial % 4 == 0:
            inc = np.round(inc * 3) / 3  # equal increments: many maximisers
        g = np.concatenate(([0.0], np.cumsum(inc)))
        H_dense, _ = pj._maxplus_dense(F, g)
        H, t = pj._maxplus_monotone(F, g)
        k = np.arange(n)
        np.testing.assert_allclose(H, H_dense, rtol=1e-13, atol=1e-13)
        assert np.all((t >= 0) & (t <= np.minimum(k, m)))
        np.testing.assert_allclose(np.take_along_axis(F, k - t, axis=1) + g[t], H, rtol=1e-13)


def _random_feasible_support(rng, groups, s1, s2):
    chosen = rng.choice(np.unique(groups), size=s2, replace=False)
    pool = np.flatnonzero(np.isin(groups, chosen))
    return rng.choice(pool, size=min(s1, len(pool)), replace=False)


@pytest.mark.parametrize("seed", range(4))
def test_projection_is_feasible_and_no_feasible_point_is_closer(seed):
    rng = np.random.default_rng(10 + seed)
    p, G = 400, 25
    groups = rng.integers(0, G, p)
    index = pj.group_index(groups)
    v = rng.standard_normal(p) * rng.exponential(1.0, G)[groups]
    s2, s1 = 4, 15
    x = pj.sght_project(v, index, s1, s2)
    nz = np.flatnonzero(x)
    assert len(nz) <= s1 and len(np.unique(groups[nz])) <= s2
    assert np.all(x[nz] == v[nz])
    dist = np.linalg.norm(x - v)
    for _ in range(300):
        S = _random_feasible_support(rng, groups, s1, s2)
        z = np.zeros(p)
        z[S] = v[S]  # the closest point with this support
        assert dist <= np.linalg.norm(z - v) + 1e-12
        z[S] += 0.1 * rng.standard_normal(len(S))
        assert dist < np.linalg.norm(z - v)
    # Greedy competitors are the hard ones: the s1 largest entries of the s2 largest groups,
    # and the s2 groups holding the largest entries.
    norms = np.bincount(groups, weights=v * v, minlength=G)
    for top_groups in (np.argsort(-norms)[:s2], np.unique(groups[np.argsort(-np.abs(v))])[:s2]):
        pool = np.flatnonzero(np.isin(groups, top_groups))
        S = pool[np.argsort(-np.abs(v[pool]))[:s1]]
        assert dist**2 <= np.sum(v**2) - np.sum(v[S] ** 2) + 1e-9
    # A feasible point is its own projection.
    np.testing.assert_array_equal(pj.sght_project(x, index, s1, s2), x)


def test_projection_does_not_depend_on_feature_order_or_group_layout():
    rng = np.random.default_rng(3)
    p, G, s1, s2 = 3000, 30, 40, 6
    groups = np.repeat(np.arange(G), p // G)  # contiguous equal groups: the reshape path
    v = rng.standard_normal(p)
    base = pj.sght(v, pj.group_index(groups), s1, s2)
    perm = rng.permutation(p)  # scattered groups: the scatter path
    shuffled = pj.sght(v[perm], pj.group_index(groups[perm]), s1, s2)
    assert shuffled.value == pytest.approx(base.value, rel=1e-13)
    np.testing.assert_array_equal(np.sort(perm[shuffled.support]), base.support)


def test_per_group_loop_and_padded_top_entries_agree(monkeypatch):
    rng = np.random.default_rng(4)
    sizes = np.array([1, 2, 700, 3, 50, 9])  # unbalanced
    groups = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    w = rng.random(len(groups))
    index = pj.group_index(groups)
    padded = pj.top_entries(w, index, 8)
    monkeypatch.setattr(pj, "_PAD_FACTOR", 0.0)
    monkeypatch.setattr(pj, "_top_padded", None)  # must not be used now
    looped = pj.top_entries(w, index, 8)
    np.testing.assert_array_equal(looped.values, padded.values)
    np.testing.assert_array_equal(looped.features, padded.features)
    np.testing.assert_array_equal(padded.counts, np.minimum(sizes, 8))
    for g in range(len(sizes)):
        expected = np.sort(w[groups == g])[::-1][:8]
        np.testing.assert_array_equal(padded.values[g, : len(expected)], expected)


def test_closed_form_special_cases():
    rng = np.random.default_rng(5)
    groups = np.repeat(np.arange(10), 6)
    v = rng.standard_normal(60)
    index = pj.group_index(groups)
    top5 = np.sort(np.argsort(-np.abs(v))[:5])
    np.testing.assert_array_equal(pj.hard_threshold_support(v, 5), top5)
    np.testing.assert_array_equal(pj.sght(v, index, 5, 5).support, top5)  # s1 <= s2
    norms = np.bincount(groups, weights=v * v)
    best3 = np.sort(np.argsort(-norms)[:3])
    expected = np.flatnonzero(np.isin(groups, best3))
    np.testing.assert_array_equal(pj.group_hard_threshold_support(v, index, 3), expected)
    np.testing.assert_array_equal(pj.sght(v, index, 18, 3).support, expected)  # s1 slack


# --------------------------------------------------------------------------- the algorithms


def iterate_events(res):
    return [e for e in res.trace if e.kind == "iterate"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_variants_decrease_the_objective_and_converge(variant):
    X, y = make_regression(7, n=80, d=60, k_true=6, rho=0.2)
    groups = np.arange(60) // 6
    res = engine.select(
        X,
        y,
        algorithm="sght",
        groups=groups,
        s1=6,
        s2=2,
        variant=variant,
        tol=1e-10,
        max_iter=3000,
        refit=False,
        standardize=False,
    )
    values = [e.objective for e in iterate_events(res)]
    start = LeastSquares(X, y).start().value
    assert values[0] < start
    if not variant.startswith("FISTA"):  # (3) and (4) both make ISTA monotone
        assert np.all(np.diff(values) <= 1e-12 * start)
    assert "max_iter" not in res.stop_reason and "line search" not in res.stop_reason
    assert res.objective == pytest.approx(values[-1], rel=1e-12)
    # Converged: the last iterate is a fixed point of x -> SGHT(x - grad / L).
    last = iterate_events(res)[-1]
    obj = LeastSquares(X, y)
    gw, gb = obj.gradient(res.coef, res.intercept)
    L = last.info["L"]
    nxt = pj.sght_project(res.coef - gw / L, pj.group_index(groups), 6, 2)
    np.testing.assert_array_equal(np.flatnonzero(nxt), res.support)
    assert np.linalg.norm(nxt - res.coef) <= 1e-4 * np.linalg.norm(res.coef)
    assert abs(gb) <= 1e-4


def test_bb_and_constant_initial_steps():
    """Table 1: FISTA-C starts every line search from the same constant L0; the BB variants
    from max(1e-3 L0, alpha_BB), which moves with the iterates; all start from L0."""
    pr = generate("xiang2014_bilevel", random_state=0, case=1)
    inits = {}
    for v in VARIANTS:
        res = engine.select(
            pr.X, pr.y, algorithm="sght", groups=pr.groups, k=18, s2=6, variant=v, standardize=False
        )
        inits[v] = [e.info["L_init"] for e in iterate_events(res)]
    L0 = inits["FISTA-C"][0]
    assert set(inits["FISTA-C"]) == {L0}
    for v in ("ISTA", "ISTA-L", "FISTA"):
        assert inits[v][0] == L0 and min(inits[v]) >= 1e-3 * L0
        assert len(set(inits[v])) > len(inits[v]) // 2  # the BB value moves


def test_fista_extrapolation_accelerates_a_convex_problem():
    """With a slack budget (k = d) the projection is the identity and the problem is a convex
    quadratic: Algorithm 2's extrapolation must beat the same iteration without it."""
    rng = np.random.default_rng(12)
    X = rng.standard_normal((80, 20)) * np.logspace(0, -2, 20)  # condition number ~1e4
    y = X @ rng.standard_normal(20) + 0.1 * rng.standard_normal(80)
    obj = LeastSquares(X, y)
    best = obj.fit_support(range(20)).value
    gaps = {}
    for accelerated in (True, False):
        settings = sght_module.SghtConfig(
            accelerated,
            False,
            "lipschitz",
            max_iter=150,
            tol=1e-15,
            eta=2.0,
            sigma=1e-5,
            refit=False,
        )
        constraint = sght_module.Constraint("iht", 20, None, None)
        _, value, _ = sght_module.iterate(obj, engine.Recorder(), constraint, settings)
        gaps[accelerated] = value - best
    assert gaps[True] < 0.1 * gaps[False]


@pytest.mark.parametrize("criterion", ["lipschitz", "decrease"])
def test_line_search_returns_the_first_L_on_the_eta_grid_meeting_its_criterion(criterion):
    """From a far too small L, the search must backtrack, and stop at the first eta^i L that
    satisfies (3) (against the search point) or (4) (against the previous iterate)."""
    X, y = make_regression(11, n=60, d=40, k_true=5, rho=0.5)
    obj = LeastSquares(X, y)
    f = sght_module.Smooth(obj)
    constraint = sght_module.sght_constraint(40, np.arange(40) // 4, None, 8, 3)
    settings = sght_module.SghtConfig.of(
        "ISTA" if criterion == "decrease" else "ISTA-L",
        max_iter=1,
        tol=1e-6,
        eta=2.0,
        sigma=0.1,
        refit=False,
    )
    x = sght_module.project(f.start() + 0.3, constraint, 40)  # a feasible point
    fx, gx = f.value(x), f.gradient(x)
    L_start = 1e-3 * f.curvature_scale(x, gx)
    step = sght_module.line_search(f, constraint, settings, x, fx, gx, x, fx, L_start)

    def holds(L):
        z = sght_module.project(x - gx / L, constraint, 40)
        d = z - x
        if criterion == "lipschitz":
            return f.value(z) <= fx + gx @ d + 0.5 * L * d @ d
        return f.value(z) <= fx - 0.5 * L * settings.sigma * d @ d

    assert step.backtracks >= 3 and step.L == pytest.approx(L_start * 2.0**step.backtracks)
    assert holds(step.L)
    assert not any(holds(L_start * 2.0**i) for i in range(step.backtracks))
    assert step.value == pytest.approx(f.value(step.x)) and step.value < fx


@pytest.mark.parametrize("case", [1, 2])
def test_sght_recovers_the_true_groups_of_xiang_2014_section_5_3(case):
    pr = generate("xiang2014_bilevel", random_state=0, case=case)
    true_groups = np.unique(pr.groups[pr.support])
    res = engine.select(
        pr.X,
        pr.y,
        algorithm="sght",
        groups=pr.groups,
        s1=len(pr.support),
        s2=len(true_groups),
        standardize=False,
    )
    np.testing.assert_array_equal(np.unique(pr.groups[res.support]), true_groups)
    np.testing.assert_array_equal(res.support, pr.support)
    coef, _, value = ls_refit(pr.X, pr.y, res.support)
    assert res.objective == pytest.approx(value, rel=1e-10)
    np.testing.assert_allclose(res.coef, coef, atol=1e-8)
    assert "refitted on the final support" in res.stop_reason


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_recovers_case_1(variant):
    """Bi-level case: 18 features in 6 of 20 groups (case 2, 60 features from 100 samples, is
    left to the default variant above: the BB-initialised FISTA and ISTA stop in a local
    minimum there on this seed)."""
    pr = generate("xiang2014_bilevel", random_state=0, case=1)
    res = engine.select(
        pr.X,
        pr.y,
        algorithm="sght",
        groups=pr.groups,
        k=18,
        s2=6,
        variant=variant,
        standardize=False,
    )
    np.testing.assert_array_equal(res.support, pr.support)


def test_iht_finds_the_best_subset_when_well_conditioned_and_a_fixed_point_otherwise():
    # Independent columns, small noise: iht's support is the best subset, every seed.
    for seed in range(10):
        X, y = make_regression(seed, n=40, d=8, k_true=3, rho=0.0, noise=0.5)
        best_val, best_S = best_subset(refit_fn("least_squares", X, y), 8, 3)
        res = engine.select(X, y, algorithm="iht", k=3, standardize=False)
        assert tuple(res.support) == best_S
        assert res.objective == pytest.approx(best_val, rel=1e-10)
    # More noise: not always the best subset, but never better (the refit is exact) and always
    # a fixed point of the IHT map, which is all that iterative hard thresholding promises.
    hits = 0
    for seed in range(20):
        X, y = make_regression(seed, n=40, d=8, k_true=3, rho=0.0, noise=2.0)
        best_val, best_S = best_subset(refit_fn("least_squares", X, y), 8, 3)
        res = engine.select(X, y, algorithm="iht", k=3, tol=1e-12, refit=False, standardize=False)
        refit = ls_refit(X, y, res.support)[2]
        assert refit >= best_val - 1e-12
        hits += tuple(res.support) == best_S
        L = iterate_events(res)[-1].info["L"]
        gw, _ = LeastSquares(X, y).gradient(res.coef, res.intercept)
        np.testing.assert_array_equal(pj.hard_threshold_support(res.coef - gw / L, 3), res.support)
    assert 14 <= hits < 20  # "sometimes": both outcomes occur on this set


def test_ght_keeps_whole_groups():
    X, y = make_regression(8, n=60, d=30, k_true=4)
    groups = np.arange(30) % 6  # interleaved groups of 5
    res = engine.select(X, y, algorithm="ght", groups=groups, s2=2, standardize=False)
    chosen = np.unique(groups[res.support])
    assert len(chosen) == 2
    np.testing.assert_array_equal(res.support, np.flatnonzero(np.isin(groups, chosen)))


def test_dense_and_sparse_X_agree():
    X, y = make_regression(31, n=60, d=30, density=0.5)
    groups = np.arange(30) // 5
    kw = dict(algorithm="sght", groups=groups, s1=6, s2=2)
    dense = engine.select(X, y, **kw, standardize=False)
    sparse = engine.select(sp.csr_matrix(X), y, **kw, standardize=False)
    np.testing.assert_array_equal(dense.support, sparse.support)
    assert dense.objective == pytest.approx(sparse.objective, rel=1e-10)
    np.testing.assert_allclose(dense.coef, sparse.coef, rtol=1e-8, atol=1e-10)
    assert [(e.kind, e.feature) for e in dense.trace] == [(e.kind, e.feature) for e in sparse.trace]
    np.testing.assert_allclose(
        [e.objective for e in dense.trace], [e.objective for e in sparse.trace], rtol=1e-9
    )


def test_logistic_through_the_gradient_interface():
    X, y = make_classification(1, n=200, d=40, k_true=4)
    groups = np.repeat(np.arange(10), 4)
    res = engine.select(
        X,
        y,
        algorithm="sght",
        objective="logistic",
        groups=groups,
        s1=4,
        s2=2,
        lam=1e-2,
        standardize=False,
    )
    obj = engine.OBJECTIVES["logistic"].factory(X, y, lam=1e-2)
    assert res.objective < obj.start().value
    assert len(res.support) <= 4 and len(np.unique(groups[res.support])) <= 2
    state = obj.fit_support(res.support)
    assert res.objective == pytest.approx(state.value, rel=1e-10)
    assert "refitted" in res.stop_reason


def test_without_intercept_the_intercept_stays_zero():
    X, y = make_regression(9, n=50, d=20, offset=0.0)
    res = engine.select(X, y, algorithm="iht", k=3, fit_intercept=False, standardize=False)
    assert res.intercept == 0.0
    value = ls_refit(X, y, res.support, fit_intercept=False)[2]
    assert res.objective == pytest.approx(value, rel=1e-10)


def test_a_support_that_cannot_be_refitted_returns_the_iterate():
    """More features than samples: the refit on the final support is singular, so the last
    iterate is returned as it is, and the stop reason says so."""
    rng = np.random.default_rng(13)
    X, y = rng.standard_normal((6, 20)), rng.standard_normal(6)
    res = engine.select(X, y, algorithm="iht", k=10, standardize=False)
    assert "unrefitted" in res.stop_reason and "refitted on" not in res.stop_reason
    assert len(res.support) == 10
    value = LeastSquares(X, y).value(res.coef, res.intercept)
    assert res.objective == pytest.approx(value, rel=1e-12, abs=1e-15)
    assert res.trace[-1].objective == res.objective


# --------------------------------------------------------------------------- the trace


def test_trace_iterates_and_support_changes_replay_to_the_result():
    pr = generate("xiang2014_bilevel", random_state=1, case=1)
    res = engine.select(
        pr.X, pr.y, algorithm="sght", groups=pr.groups, s1=18, s2=6, standardize=False
    )
    trace = res.trace
    assert trace[-1].kind == "stop" and trace[-1].reason == res.stop_reason
    assert trace[-1].objective == res.objective
    its = iterate_events(res)
    assert [e.info["iteration"] for e in its] == list(range(1, len(its) + 1))
    assert all(e.info["step"] > 0 and e.info["step"] * e.info["L"] == pytest.approx(1) for e in its)
    supports = replay(trace)
    assert supports[-1] == frozenset(res.support.tolist())
    for e, S in zip(trace, supports, strict=True):
        assert e.support_size == len(S)
    assert any(e.kind == "remove" for e in trace)  # the support moved, not only grew
    # Between two iterate events, the adds and removes carry that iteration's objective.
    last = None
    for e in reversed(trace[:-1]):
        if e.kind == "iterate":
            last = e.objective
        elif last is not None:
            assert e.objective == last


def test_recorder_returning_false_stops_the_run():
    pr = generate("xiang2014_bilevel", random_state=0, case=1)
    seen = []

    def stop_at_third_iterate(event):
        seen.append(event)
        return False if sum(e.kind == "iterate" for e in seen) == 3 else None

    res = engine.select(
        pr.X,
        pr.y,
        algorithm="sght",
        groups=pr.groups,
        s1=18,
        s2=6,
        recorder=stop_at_third_iterate,
        standardize=False,
    )
    assert res.cancelled and res.stop_reason == "stopped by recorder"
    assert sum(e.kind == "iterate" for e in res.trace) == 3
    assert res.trace[-1].kind == "stop" and res.trace[-2].kind == "iterate"
    assert frozenset(res.support.tolist()) == replay(res.trace)[-1]


# --------------------------------------------------------------------------- parameters

X0, Y0 = make_regression(0, n=30, d=12)
G0 = np.arange(12) // 3  # 4 groups of 3

BAD = [
    ("s1<s2", dict(algorithm="sght", groups=G0, s1=2, s2=3), "s1"),
    ("s2>groups", dict(algorithm="sght", groups=G0, s1=6, s2=5), "s2"),
    ("s1>p", dict(algorithm="sght", groups=G0, s1=13, s2=2), "s1"),
    ("s1=0", dict(algorithm="sght", groups=G0, s1=0, s2=1), "s1"),
    ("s2=0", dict(algorithm="sght", groups=G0, s1=3, s2=0), "s2"),
    ("s2-missing", dict(algorithm="sght", groups=G0, s1=3), "s2"),
    ("no-s1-no-k", dict(algorithm="sght", groups=G0, s2=2), "s1"),
    ("s1-contradicts-k", dict(algorithm="sght", groups=G0, k=4, s1=5, s2=2), "s1"),
    ("sght-no-groups", dict(algorithm="sght", s1=4, s2=2), "groups"),
    ("sght-groups-length", dict(algorithm="sght", groups=G0[:-1], s1=4, s2=2), "groups"),
    ("ght-no-groups", dict(algorithm="ght", s2=2), "groups"),
    ("ght-s2>groups", dict(algorithm="ght", groups=G0, s2=9), "s2"),
    ("ght-k", dict(algorithm="ght", groups=G0, s2=2, k=3), "k"),
    ("iht-no-k", dict(algorithm="iht"), "k"),
    ("variant", dict(algorithm="iht", k=2, variant="fista"), "variant"),
    ("eta=1", dict(algorithm="iht", k=2, eta=1.0), "eta"),
    ("tol=0", dict(algorithm="iht", k=2, tol=0.0), "tol"),
    ("sigma=2", dict(algorithm="iht", k=2, sigma=2.0), "sigma"),
    ("max_iter=0", dict(algorithm="iht", k=2, max_iter=0), "max_iter"),
    ("refit-str", dict(algorithm="iht", k=2, refit="yes"), "refit"),
]


@pytest.mark.parametrize(("kwargs", "word"), [pytest.param(k, w, id=i) for i, k, w in BAD])
def test_invalid_parameters_raise_value_error_naming_them(kwargs, word):
    with pytest.raises(ValueError, match=_name(word)):
        engine.select(X0, Y0, **kwargs, standardize=False)


def test_k_stands_for_s1():
    a = engine.select(X0, Y0, algorithm="sght", groups=G0, k=4, s2=2, standardize=False)
    b = engine.select(X0, Y0, algorithm="sght", groups=G0, s1=4, s2=2, standardize=False)
    np.testing.assert_array_equal(a.support, b.support)
    assert "s1 = 4" in a.stop_reason


def test_registered_with_paper_reference_and_groups():
    for name, k_mode, grouped in (
        ("sght", "optional", True),
        ("iht", "required", False),
        ("ght", "unused", True),
    ):
        spec = engine.ALGORITHMS[name]
        assert spec.k == k_mode and spec.uses_groups is grouped
        assert "Xiang" in spec.reference
    names = [p.name for p in engine.ALGORITHMS["sght"].params]
    assert names[:3] == ["s1", "s2", "variant"]
    assert engine.ALGORITHMS["sght"].params[2].choices == VARIANTS
