"""Whole algorithms against independent references: exhaustive best-subset search, scikit-learn's
OMP, Zhang's Figure 2 example, and straight transcriptions of the papers' algorithm boxes."""

from __future__ import annotations

import numpy as np
import pytest
from engine_problems import (
    make_classification,
    make_decoy_classification,
    make_decoy_problem,
    make_pruning_problem,
    make_regression,
)
from engine_reference import (
    best_subset,
    logistic_candidate_drops,
    logistic_refit,
    ls_refit,
    reference_backward_ls,
    reference_foba,
    reference_forward_ls,
)
from sklearn.linear_model import orthogonal_mp

import engine
from engine.trace import best_along_path, replay

# Every algorithm with the parameters it needs to run (k is given separately).
METHODS = [
    ("foba-obj", {}),
    ("foba-obj", {"backward": "conservative"}),
    ("foba-obj", {"backward": "aggressive"}),
    ("foba-gdt", {}),
    ("fb-threshold", {"eps_back": 0.05}),
    ("forward-obj", {}),
    ("forward-obj", {"selection": "quad"}),
    ("forward-obj", {"replacement": "full"}),
    ("omp", {}),
    ("omp", {"replacement": "simple"}),
    ("stepwise", {}),
    ("backward", {}),
    ("oblivious", {}),
    ("replacement", {"variant": "full"}),
    ("replacement", {"variant": "simple"}),
]


# --------------------------------------------------------------------------- best subset


@pytest.mark.parametrize("seed", [0, 1])
def test_no_method_beats_best_subset_least_squares(seed):
    X, y = make_regression(100 + seed, n=40, d=11, k_true=3, rho=0.5, noise=1.0)
    k = 3
    opt, _ = best_subset(lambda S: ls_refit(X, y, S), 11, k)
    for algorithm, params in METHODS:
        res = engine.select(X, y, algorithm=algorithm, k=k, **params, standardize=False)
        assert len(res.support) == k, algorithm
        assert res.objective >= opt * (1 - 1e-9), (algorithm, params)
        # The reported objective is the least-squares optimum on the reported support.
        coef, b, val = ls_refit(X, y, res.support)
        assert res.objective == pytest.approx(val, rel=1e-9), algorithm
        np.testing.assert_allclose(res.coef, coef, rtol=1e-7, atol=1e-9)
        assert res.intercept == pytest.approx(b, rel=1e-7, abs=1e-9)


def test_no_method_beats_best_subset_logistic(classification):
    X, y = classification(200, n=80, d=8, k_true=3)
    k, lam = 3, 1e-2
    opt, _ = best_subset(lambda S: logistic_refit(X, y, S, lam=lam), 8, k)
    for algorithm, params in METHODS:
        res = engine.select(
            X,
            y,
            algorithm=algorithm,
            objective="logistic",
            k=k,
            lam=lam,
            **params,
            standardize=False,
        )
        assert len(res.support) == k, algorithm
        assert res.objective >= opt * (1 - 1e-9), (algorithm, params)
        coef, _, val = logistic_refit(X, y, res.support, lam=lam)
        assert res.objective == pytest.approx(val, rel=1e-9), algorithm
        np.testing.assert_allclose(res.coef, coef, rtol=1e-5, atol=1e-7)


def test_decoy_family_is_well_conditioned():
    for seed in range(20):
        X, _ = make_decoy_problem(seed)
        Z = (X - X.mean(axis=0)) / X.std(axis=0)
        assert np.linalg.cond(Z) < 10, seed


def test_foba_reaches_best_subset_where_forward_greedy_does_not():
    """Over a seeded family of well-conditioned designs with decoy columns, FoBa's best size-k
    support along its path is the exhaustive optimum in clearly more cases than forward greedy's
    (Zhang 2008, Section 4: FoBa is the better approximation to subset selection)."""
    k, n_cases = 3, 20
    foba_hits = forward_hits = 0
    foba_only = []
    for seed in range(n_cases):
        X, y = make_decoy_problem(seed)
        opt, _ = best_subset(lambda S, X=X, y=y: ls_refit(X, y, S), X.shape[1], k)
        fwd = engine.select(X, y, algorithm="forward-obj", k=k, standardize=False).objective
        fb = engine.select(X, y, algorithm="foba-obj", k=k, standardize=False).objective
        assert fwd >= opt * (1 - 1e-9) and fb >= opt * (1 - 1e-9)
        hit_fwd, hit_fb = fwd <= opt * (1 + 1e-9), fb <= opt * (1 + 1e-9)
        forward_hits += hit_fwd
        foba_hits += hit_fb
        if hit_fb and not hit_fwd:
            foba_only.append(seed)
    assert foba_only, "no case where forward greedy misses the optimum and FoBa reaches it"
    assert foba_hits >= forward_hits + n_cases // 4, (foba_hits, forward_hits)
    assert foba_hits >= 0.8 * n_cases, foba_hits


# --------------------------------------------------------------------------- Zhang's Figure 2


def test_figure2_forward_greedy_keeps_the_misleading_feature(figure2_problem):
    X, y = figure2_problem
    opt, S = best_subset(lambda F: ls_refit(X, y, F), X.shape[1], 2)
    assert S == (0, 1)  # f1, f2 are the best pair
    for algorithm in ("forward-obj", "omp"):
        for k in (2, 3):
            res = engine.select(X, y, algorithm=algorithm, k=k, standardize=False)
            assert 2 in res.support, (algorithm, k)
            adds = [e.feature for e in res.trace if e.kind == "add"]
            assert adds[0] == 2, (algorithm, k)  # f3 is closest to y
        res2 = engine.select(X, y, algorithm=algorithm, k=2, standardize=False)
        assert res2.objective > 10 * opt


@pytest.mark.parametrize("algorithm", ["foba-obj", "foba-gdt"])
def test_figure2_foba_removes_the_misleading_feature(figure2_problem, algorithm):
    X, y = figure2_problem
    res = engine.select(X, y, algorithm=algorithm, k=2, standardize=False)
    assert sorted(res.support.tolist()) == [0, 1]
    removes = [e for e in res.trace if e.kind == "remove"]
    assert any(e.feature == 2 for e in removes)
    # f3 entered first and was removed once f1 and f2 were both in.
    kinds = [(e.kind, e.feature) for e in res.trace if e.kind in ("add", "remove")]
    first_remove = kinds.index(("remove", 2))
    assert kinds[0] == ("add", 2)
    assert {("add", 0), ("add", 1)} <= set(kinds[:first_remove])
    assert res.objective == pytest.approx(ls_refit(X, y, [0, 1])[2], rel=1e-9)


# --------------------------------------------------------------------------- OMP


@pytest.mark.parametrize(("seed", "n", "d", "k"), [(0, 50, 30, 6), (1, 30, 80, 8)])
def test_omp_matches_sklearn_orthogonal_mp(seed, n, d, k):
    X, y = make_regression(300 + seed, n=n, d=d, k_true=5, rho=0.2, offset=0.0)
    X = X / np.linalg.norm(X, axis=0)
    res = engine.select(X, y, algorithm="omp", k=k, fit_intercept=False, standardize=False)
    path = orthogonal_mp(X, y, n_nonzero_coefs=k, return_path=True)
    order = []
    for i in range(k):
        new = set(np.flatnonzero(path[:, i])) - set(order)
        assert len(new) == 1
        order.append(new.pop())
    adds = [e.feature for e in res.trace if e.kind == "add"]
    assert adds == order
    ref = orthogonal_mp(X, y, n_nonzero_coefs=k)
    np.testing.assert_allclose(res.coef, ref, rtol=1e-8, atol=1e-10)
    assert res.intercept == 0.0


# --------------------------------------------------------------------------- paper boxes


@pytest.mark.parametrize(
    ("rule", "fit_intercept", "seed", "n", "d"),
    [
        ("obj", True, 1, 60, 25),
        ("obj", False, 5, 60, 25),
        ("obj", True, 2, 30, 50),
        ("obj", False, 3, 30, 50),
        ("gdt", True, 3, 60, 25),
        ("gdt", False, 2, 60, 25),
        ("gdt", True, 0, 30, 50),
        ("gdt", False, 1, 30, 50),
    ],
)
def test_foba_least_squares_follows_the_algorithm_box(rule, fit_intercept, seed, n, d):
    """Same add/remove sequence, objectives and best size-k support as a transcription of
    Zhang's Figure 3 / Liu et al.'s Algorithm 1 with lstsq refits, on designs with decoys so
    the paths contain deletions."""
    X, y = make_decoy_problem(seed, n=n, d=d, k=4)
    k = 4
    path, best = reference_foba("least_squares", X, y, k=k, rule=rule, fit_intercept=fit_intercept)
    res = engine.select(
        X,
        y,
        algorithm=f"foba-{rule}",
        k=k,
        fit_intercept=fit_intercept,
        path_end="zhang",  # the whole path is compared, not only its answer
        standardize=False,
    )
    _assert_same_path(res, path, best, k)


def _assert_same_path(res, path, best, k):
    """The engine's path is the reference path, possibly cut short once it can no longer
    return to k features within Zhang's 5k-step budget (which cannot change the best support
    of any size <= k); deletions are part of the compared stretch."""
    got = [(e.kind, e.feature, e.objective) for e in res.trace if e.kind in ("add", "remove")]
    m = len(got)
    assert 0 < m <= len(path)
    assert [g[:2] for g in got] == [p[:2] for p in path[:m]]
    np.testing.assert_allclose([g[2] for g in got], [p[2] for p in path[:m]], rtol=1e-8)
    assert any(kind == "remove" for kind, _, _ in got)  # the comparison covers deletions
    if m < len(path):
        size = len(replay(res.trace)[-1])
        assert size - k > 5 * k - m, "the path stopped early while it could still return to k"
    assert frozenset(res.support.tolist()) == best[k][1]
    assert res.objective == pytest.approx(best[k][0], rel=1e-9)
    along = best_along_path(res.trace)
    for size in range(1, k + 1):
        assert along[size][0] == best[size][1], size
        assert along[size][1] == pytest.approx(best[size][0], rel=1e-9)


@pytest.mark.parametrize("rule", ["obj", "gdt"])
def test_foba_logistic_follows_the_algorithm_box(rule):
    X, y = make_decoy_classification(6)
    lam, k = 1e-2, 3
    path, best = reference_foba("logistic", X, y, k=k, rule=rule, lam=lam)
    res = engine.select(
        X,
        y,
        algorithm=f"foba-{rule}",
        objective="logistic",
        k=k,
        lam=lam,
        path_end="zhang",
        standardize=False,
    )
    _assert_same_path(res, path, best, k)


@pytest.mark.parametrize(
    ("lam", "fit_intercept", "density"),
    [(1e-4, True, None), (1e-2, False, 0.3), (0.0, True, 0.6)],
)
def test_logistic_forward_choice_is_the_best_coordinate_drop(lam, fit_intercept, density):
    """Every add of FoBa-obj on logistic loss (d = 60, so the engine's bound-based pruning of
    candidates is exercised) picks the feature with the largest exact one-coordinate drop,
    computed by scipy's Brent per candidate at an independent scikit-learn refit, and reports
    that drop as its score."""
    X, y = make_classification(50, n=100, d=60, k_true=6, density=density, flip=0.2)
    res = engine.select(
        X,
        y,
        algorithm="foba-obj",
        objective="logistic",
        k=3,
        lam=lam,
        fit_intercept=fit_intercept,
        max_steps=6,
        standardize=False,
    )
    supports = replay(res.trace)
    n_adds = 0
    for i, e in enumerate(res.trace):
        if e.kind != "add":
            continue
        before = supports[i - 1] if i else frozenset()
        coef, b, _ = logistic_refit(X, y, sorted(before), lam=lam, fit_intercept=fit_intercept)
        cand = [j for j in range(60) if j not in before]
        drops = logistic_candidate_drops(X, y, coef, b, cand, lam=lam)
        best = max(drops, key=drops.get)
        assert e.feature == best, (i, e.feature, best)
        assert e.score == pytest.approx(drops[best], rel=1e-7)
        n_adds += 1
    assert n_adds >= 4


@pytest.mark.parametrize("seed", [0, 1])
def test_logistic_forward_choice_when_the_newton_estimate_misranks(seed):
    """The engine may skip exact 1-D solves for candidates it can bound away from the best;
    on a design where the quadratic (Newton) estimate ranks the true best feature far down,
    FoBa-obj must still add the feature with the largest exact drop."""
    X, t = make_pruning_problem(seed)
    n, d = X.shape
    lam = 1e-4
    res = engine.select(
        X,
        t,
        algorithm="foba-obj",
        objective="logistic",
        k=2,
        lam=lam,
        max_steps=3,
        standardize=False,
    )
    supports = replay(res.trace)
    for i, e in enumerate(res.trace):
        if e.kind != "add":
            continue
        before = supports[i - 1] if i else frozenset()
        coef, b, _ = logistic_refit(X, t, sorted(before), lam=lam)
        cand = [j for j in range(d) if j not in before]
        drops = logistic_candidate_drops(X, t, coef, b, cand, lam=lam)
        best = max(drops, key=drops.get)
        if i == 0:
            # Guard: the first decision is one the Newton estimate gets wrong.
            p = 1 / (1 + np.exp(-b))
            g = X.T @ (p - t) / n
            h = (X * X).T @ np.full(n, p * (1 - p)) / n + lam
            estimate = g * g / (2 * h)
            assert best == 45
            assert int(np.sum(estimate > estimate[best])) >= 10
        assert e.feature == best, (i, e.feature, best)
        assert e.score == pytest.approx(drops[best], rel=1e-7)


def test_logistic_stepwise_order_matches_sklearn_refits(classification):
    X, y = classification(650, n=80, d=15, k_true=4)
    lam, k = 1e-3, 4
    F: list[int] = []
    val = logistic_refit(X, y, F, lam=lam)[2]
    for _ in range(k):
        vals = {j: logistic_refit(X, y, [*F, j], lam=lam)[2] for j in range(15) if j not in F}
        F.append(min(vals, key=vals.get))
        gain, val = val - vals[F[-1]], vals[F[-1]]
        assert gain > 0
    res = engine.select(
        X, y, algorithm="stepwise", objective="logistic", k=k, lam=lam, standardize=False
    )
    assert [e.feature for e in res.trace if e.kind == "add"] == F
    assert res.objective == pytest.approx(val, rel=1e-9)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize(
    ("algorithm", "params", "rule"),
    [
        ("forward-obj", {}, "obj"),
        ("forward-obj", {"selection": "quad"}, "obj"),  # quadratic model exact for LS
        ("omp", {}, "gdt"),
        ("stepwise", {}, "refit"),
    ],
)
def test_forward_selection_order_least_squares(algorithm, params, rule, fit_intercept):
    X, y = make_regression(600, n=40, d=30, k_true=5, rho=0.5, noise=1.0)
    k = 6
    ref = reference_forward_ls(X, y, k=k, rule=rule, fit_intercept=fit_intercept)
    res = engine.select(
        X, y, algorithm=algorithm, k=k, fit_intercept=fit_intercept, **params, standardize=False
    )
    assert [e.feature for e in res.trace if e.kind == "add"] == ref
    coef, _, val = ls_refit(X, y, ref, fit_intercept)
    np.testing.assert_allclose(res.coef, coef, rtol=1e-8, atol=1e-10)
    assert res.objective == pytest.approx(val, rel=1e-10)


def test_stepwise_and_forward_obj_differ_on_correlated_data():
    # Guard: the selection rules compared above are not trivially identical on the test data.
    X, y = make_regression(600, n=40, d=30, k_true=5, rho=0.5, noise=1.0)
    orders = {r: reference_forward_ls(X, y, k=6, rule=r) for r in ("obj", "gdt", "refit")}
    assert len({tuple(o) for o in orders.values()}) > 1


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_backward_elimination_order_least_squares(fit_intercept):
    X, y = make_regression(700, n=40, d=12, k_true=4, rho=0.5, noise=1.0)
    ref = reference_backward_ls(X, y, k=3, fit_intercept=fit_intercept)
    res = engine.select(
        X, y, algorithm="backward", k=3, fit_intercept=fit_intercept, standardize=False
    )
    assert [e.feature for e in res.trace if e.kind == "remove"] == ref
    assert sorted(res.support.tolist()) == sorted(set(range(12)) - set(ref))
    assert res.objective == pytest.approx(ls_refit(X, y, res.support, fit_intercept)[2], rel=1e-9)


@pytest.mark.parametrize("objective", ["least_squares", "logistic"])
def test_oblivious_keeps_the_k_best_single_feature_models(classification, objective):
    if objective == "least_squares":
        X, y = make_regression(800, n=40, d=15, rho=0.4)
        refit = lambda S: ls_refit(X, y, S)  # noqa: E731
        extra = {}
    else:
        X, y = classification(800, n=60, d=15)
        refit = lambda S: logistic_refit(X, y, S, lam=1e-2)  # noqa: E731
        extra = {"lam": 1e-2}
    single = np.array([refit([j])[2] for j in range(15)])
    res = engine.select(
        X, y, algorithm="oblivious", objective=objective, k=4, **extra, standardize=False
    )
    assert sorted(res.support.tolist()) == sorted(np.argsort(single)[:4].tolist())
    assert res.objective == pytest.approx(refit(res.support)[2], rel=1e-9)


@pytest.mark.parametrize("objective", ["least_squares", "logistic"])
@pytest.mark.parametrize("variant", ["full", "simple"])
def test_replacement_never_worse_than_forward_greedy(classification, objective, variant):
    if objective == "least_squares":
        X, y = make_regression(900, n=40, d=20, rho=0.6, noise=1.5)
        extra = {}
    else:
        X, y = classification(900, n=60, d=20)
        extra = {"lam": 1e-2}
    k = 4
    fwd = engine.select(
        X, y, algorithm="forward-obj", objective=objective, k=k, **extra, standardize=False
    )
    res = engine.select(
        X,
        y,
        algorithm="replacement",
        objective=objective,
        k=k,
        variant=variant,
        **extra,
        standardize=False,
    )
    assert len(res.support) == k
    assert res.objective <= fwd.objective * (1 + 1e-12)
    swaps = [e for e in res.trace if e.kind == "swap"]
    previous = fwd.objective
    for e in swaps:
        assert e.objective < previous
        assert e.gain == pytest.approx(previous - e.objective, rel=1e-9, abs=1e-15)
        previous = e.objective
        assert e.support_size == k
    # The trace up to the swaps is forward greedy's.
    adds = [e.feature for e in res.trace if e.kind == "add"]
    assert adds == [e.feature for e in fwd.trace if e.kind == "add"]
    assert frozenset(res.support.tolist()) == replay(res.trace)[-1]


def test_replacement_improves_on_the_figure2_example(figure2_problem):
    X, y = figure2_problem
    res = engine.select(X, y, algorithm="replacement", k=2, standardize=False)
    assert sorted(res.support.tolist()) == [0, 1]
    assert any(e.kind == "swap" and e.feature_out == 2 for e in res.trace)


def test_fb_threshold_with_tiny_threshold_is_forward_greedy():
    X, y = make_regression(1000, n=50, d=20)
    res = engine.select(X, y, algorithm="fb-threshold", k=4, eps_back=1e-300, standardize=False)
    fwd = engine.select(X, y, algorithm="forward-obj", k=4, standardize=False)
    assert not any(e.kind == "remove" for e in res.trace)
    assert res.support.tolist() == fwd.support.tolist()
    assert res.objective == pytest.approx(fwd.objective, rel=1e-12)
