"""``engine.stability``: complementary-pairs stability selection at every k.

The supports read off one path per subsample must be those ``engine.select(k=k)`` returns on
that subsample; merging partial results must not depend on how they were split into jobs; on
null data the stable set's average size stays within the stated bound; on data with a known
support the true features have the highest frequencies at the true k.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from engine_problems import make_classification, make_regression
from stability_problems import known_support

import engine
from engine.stability import (
    StabilityPlan,
    SubsampleResult,
    compare_stability,
    complementary_pairs,
    error_bound,
    mean_jaccard,
    nogueira_index,
    nogueira_jackknife_se,
    plan_stability,
    stability_selection,
    subsample_supports,
    summarise,
    threshold_for,
)

# -- the pairs -------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [20, 21])
def test_complementary_pairs_are_disjoint_halves_and_seeded(n):
    subs = complementary_pairs(n, 7, random_state=3)
    assert len(subs) == 14
    for j in range(7):
        a, b = subs[2 * j], subs[2 * j + 1]
        assert len(a) == len(b) == n // 2
        assert not set(a) & set(b)
        assert np.all(np.diff(a) > 0) and np.all(np.diff(b) > 0)
    again = complementary_pairs(n, 7, random_state=3)
    assert all(np.array_equal(s, t) for s, t in zip(subs, again, strict=True))
    other = complementary_pairs(n, 7, random_state=4)
    assert not all(np.array_equal(s, t) for s, t in zip(subs, other, strict=True))


def test_pairs_stratified_by_class():
    y = np.array([0] * 30 + [1] * 11)
    for rows in complementary_pairs(41, 10, y=y, random_state=0):
        assert len(rows) == 20
        assert 5 <= int(y[rows].sum()) <= 6  # 11 positives dealt between two halves


def test_plan_is_reproducible_and_json():
    kw: dict[str, Any] = {"k_max": 5, "n_samples": 60, "n_features": 12, "n_pairs": 4}
    a = plan_stability("foba-obj", random_state=5, **kw)
    b = plan_stability("foba-obj", random_state=5, **kw)
    assert a.seeds == b.seeds and a.mode == "path" and a.n_subsamples == 8
    assert all(np.array_equal(s, t) for s, t in zip(a.subsamples, b.subsamples, strict=True))
    d = json.loads(json.dumps(a.to_dict(rows=True)))
    assert d["subsamples"][3] == a.subsamples[3].tolist() and d["subsample_size"] == 30
    drawn = plan_stability("omp", random_state=None, **kw)
    assert isinstance(drawn.random_state, int)  # a drawn seed is kept
    assert plan_stability("lasso", **kw).mode == "per-k"
    with pytest.raises(engine.ConfigError) as err:
        plan_stability("foba-obj", **{**kw, "k_max": 13})
    assert err.value.field == "k"
    with pytest.raises(engine.ConfigError, match="stability selection over k") as err:
        plan_stability("foba-obj", objective="crf", **kw)
    assert err.value.field == "objective"
    with pytest.raises(engine.ConfigError, match="stability selection over k") as err:
        plan_stability("ght", **kw)  # its budget is a parameter, not k
    assert err.value.field == "algorithm"


# -- one subsample = engine.select on its rows -----------------------------------------------


@pytest.mark.parametrize(
    ("algorithm", "params", "mode"),
    [
        ("foba-obj", {}, "path"),
        ("foba-gdt", {"backward": "conservative"}, "path"),
        ("omp", {}, "path"),
        ("backward", {}, "path"),
        ("lasso", {}, "per-k"),
    ],
)
def test_subsample_supports_equal_select_on_the_rows(algorithm, params, mode):
    X, y = make_regression(11, n=70, d=12, k_true=3)
    plan = plan_stability(algorithm, k_max=5, n_samples=70, n_features=12, params=params, n_pairs=2)
    assert plan.mode == mode
    for index in (0, 3):
        part = subsample_supports(X, y, plan, index)
        rows = plan.subsamples[index]
        for k in range(1, 6):
            r = engine.select(X[rows], y[rows], algorithm=algorithm, k=k, **params)
            assert part.supports[k - 1] == tuple(int(j) for j in r.support), (index, k)
        assert part.n_runs == (1 if mode == "path" else 5)


def test_partials_merge_in_any_order_and_from_json():
    X, y = make_regression(2, n=80, d=15, k_true=3)
    result = stability_selection(X, y, algorithm="omp", k_max=6, n_pairs=5, random_state=1)
    plan = result.plan
    parts = [json.loads(json.dumps(p.to_dict())) for p in result.subsamples]
    merged = summarise(parts[::-1], plan)
    assert np.array_equal(merged.frequency, result.summary.frequency)
    assert merged.to_dict() == result.summary.to_dict()
    json.dumps(result.to_dict())
    partial = summarise(parts[:5], plan)  # what a service shows while jobs are running
    assert partial.n_subsamples == 5 and partial.n_pairs == 2
    assert result.summary.n_pairs == 5
    with pytest.raises(ValueError, match="twice"):
        summarise(parts[:2] + parts[:1], plan)


def test_two_workers_give_the_same_result():
    X, y = make_regression(4, n=60, d=10, k_true=2)
    one = stability_selection(X, y, algorithm="foba-obj", k_max=4, n_pairs=3)
    two = stability_selection(X, y, algorithm="foba-obj", k_max=4, n_pairs=3, n_jobs=2)
    assert [p.supports for p in one.subsamples] == [p.supports for p in two.subsamples]
    assert np.array_equal(one.summary.frequency, two.summary.frequency)


# -- the bound --------------------------------------------------------------------------------


def test_bound_and_threshold_for():
    assert error_bound(4, 40, 0.6) == pytest.approx(16 / (0.2 * 40))
    assert error_bound(4, 40, 1.0) == pytest.approx(0.4)
    pi = threshold_for(4, 40, 1.0)
    assert pi is not None and pi == pytest.approx(0.7)
    assert error_bound(4, 40, pi) == pytest.approx(1.0)
    assert threshold_for(10, 40, 1.0) is None  # would need pi = 1.75
    with pytest.raises(ValueError, match="threshold"):
        error_bound(4, 40, 0.5)
    with pytest.raises(ValueError, match="max_false"):
        threshold_for(4, 40, 0.0)


def test_stable_sets_bounds_and_targets_per_k():
    X, y, _ = known_support(0, n=100, d=20, s=3)
    r = stability_selection(X, y, algorithm="omp", k_max=5, n_pairs=5, threshold=0.7, max_false=1.0)
    s = r.summary
    assert np.allclose(s.q, np.arange(1, 6))  # a forward path reaches every k
    for k in range(1, 6):
        assert s.bound[k - 1] == pytest.approx(k * k / (0.4 * 20))
        assert set(s.stable[k - 1]) == set(np.flatnonzero(s.frequency[k - 1] >= 0.7))
        freqs = s.frequency[k - 1, s.stable[k - 1]]
        assert np.all(np.diff(freqs) <= 0)  # by decreasing frequency
        pi = s.threshold_for_target[k - 1]
        assert pi is None or error_bound(k, 20, pi) == pytest.approx(1.0)
    assert s.q_path == pytest.approx(5.0)  # prefixes: the union is the support at k_max
    assert set(s.stable_path) == set(np.flatnonzero(s.frequency.max(axis=0) >= 0.7))


def null_run(seed: int, k_max: int = 4, threshold: float = 0.6):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((60, 40))
    y = rng.standard_normal(60)  # independent of X
    return stability_selection(
        X, y, algorithm="omp", k_max=k_max, n_pairs=10, threshold=threshold, random_state=seed
    ).summary


NULL_SEEDS = range(40)


def test_null_data_stable_set_within_the_bound():
    """y independent of X: every selected feature is a false selection. Over 40 seeds the
    average stable-set size stays within q^2 / ((2 pi - 1) d) at every k, and over the path."""
    summaries = [null_run(seed) for seed in NULL_SEEDS]
    sizes = np.array([[len(st) for st in s.stable] for s in summaries], dtype=float)
    bound = summaries[0].bound  # q = k on every seed (OMP reaches every k)
    assert np.allclose([s.bound for s in summaries], bound)
    assert np.all(sizes.mean(axis=0) <= bound), (sizes.mean(axis=0), bound)
    path_sizes = np.array([len(s.stable_path) for s in summaries], dtype=float)
    assert path_sizes.mean() <= np.mean([s.bound_path for s in summaries])
    # The bound is informative at small k: below one false selection at k = 1..2.
    assert bound[0] < 1 and bound[1] < 1


def test_null_data_stable_set_within_the_bound_foba():
    """The same with FoBa's best size-k supports (10 seeds)."""
    foba = []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        X, y = rng.standard_normal((60, 40)), rng.standard_normal(60)
        foba.append(stability_selection(X, y, algorithm="foba-obj", k_max=4, n_pairs=10).summary)
    sizes = np.array([[len(st) for st in s.stable] for s in foba], dtype=float)
    assert np.all(sizes.mean(axis=0) <= np.mean([s.bound for s in foba], axis=0))


@pytest.mark.parametrize("algorithm", ["foba-obj", "omp", "lasso"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_true_features_have_the_highest_frequencies_at_the_true_k(algorithm, seed):
    X, y, support = known_support(seed, n=150, d=40, s=4)
    s = stability_selection(X, y, algorithm=algorithm, k_max=6, n_pairs=8).summary
    f = s.frequency[3]  # k = 4 = the true k
    top = np.argsort(-f, kind="stable")[:4]
    assert set(top) == set(support), (f[support], np.sort(f)[::-1][:6])
    assert f[support].min() > np.delete(f, support).max()
    assert set(support) <= set(s.stable[3])


# -- groups and classification ---------------------------------------------------------------


def test_groups_count_as_one_unit():
    rng = np.random.default_rng(0)
    n = 120
    cat = rng.integers(0, 3, n)
    onehot = np.eye(3)[cat]
    Z = rng.standard_normal((n, 5))
    X = np.column_stack([onehot, Z])  # features 0-2: one categorical; 3-7: numeric
    y = 2.0 * onehot[:, 1] + 1.5 * Z[:, 2] + 0.3 * rng.standard_normal(n)
    groups = ["colour"] * 3 + ["a", "b", "c", "d", "e"]
    r = stability_selection(X, y, algorithm="foba-obj", k_max=4, n_pairs=5, groups=groups)
    s = r.summary
    assert s.n_units == 6 and s.unit_names == ["colour", "a", "b", "c", "d", "e"]
    assert s.frequency.shape == (4, 6)
    assert np.all(s.q <= np.arange(1, 5))  # two features of one group are one unit
    assert s.bound[1] == pytest.approx(s.q[1] ** 2 / (0.2 * 6))
    assert {0, 3} <= set(s.stable_path)  # the categorical and numeric feature 2
    assert r.features([0]).tolist() == [0, 1, 2]
    # A group-aware algorithm runs once per k (sizes inside a group are not answers).
    g = plan_stability("group-omp", k_max=4, n_samples=n, n_features=8, groups=groups, n_pairs=2)
    assert g.mode == "per-k"
    grouped = stability_selection(
        X, y, algorithm="group-omp", k_max=3, n_pairs=2, groups=groups
    ).summary
    assert grouped.frequency.shape == (3, 6)
    assert grouped.frequency[2, 0] == 1.0  # the categorical, whole, in every half sample


def test_sparse_matrix_gives_the_dense_result():
    X, y = make_regression(6, n=80, d=20, k_true=3, density=0.5)
    dense = stability_selection(X, y, algorithm="omp", k_max=4, n_pairs=3)
    sparse = stability_selection(sp.csr_matrix(X), y, algorithm="omp", k_max=4, n_pairs=3)
    assert [p.supports for p in dense.subsamples] == [p.supports for p in sparse.subsamples]


def test_logistic_with_class_labels():
    X, y = make_classification(3, n=120, d=15)
    r = stability_selection(X, y, algorithm="foba-obj", objective="logistic", k_max=3, n_pairs=4)
    for rows in r.plan.subsamples:
        assert len(np.unique(y[rows])) == 2
    assert r.summary.frequency.shape == (3, 15)


# -- stability indices and comparisons --------------------------------------------------------


def test_nogueira_and_jaccard_values():
    same = np.zeros((6, 10), dtype=bool)
    same[:, [1, 4, 7]] = True
    assert nogueira_index(same) == pytest.approx(1.0)
    assert mean_jaccard(same) == pytest.approx(1.0)
    disjoint = np.zeros((2, 4), dtype=bool)
    disjoint[0, [0, 1]] = disjoint[1, [2, 3]] = True
    # p = 1/2 everywhere, s^2 = 2 * 1/4 = 1/2, kbar/d = 1/2: 1 - (1/2) / (1/4) = -1
    assert nogueira_index(disjoint) == pytest.approx(-1.0)
    assert mean_jaccard(disjoint) == 0.0
    half = np.array([[1, 1, 0], [1, 0, 1], [1, 1, 0]], dtype=bool)
    assert mean_jaccard(half) == pytest.approx((1 / 3 + 1 + 1 / 3) / 3)
    assert np.isnan(nogueira_index(half[:1]))


def test_nogueira_jackknife_over_pairs():
    rng = np.random.default_rng(0)
    Z = rng.random((12, 15)) < 0.3
    pair = np.arange(12) // 2
    loo = [nogueira_index(np.delete(Z, [2 * g, 2 * g + 1], axis=0)) for g in range(6)]
    expected = np.sqrt(5 / 6 * np.sum((np.array(loo) - np.mean(loo)) ** 2))
    assert nogueira_jackknife_se(Z, pair) == pytest.approx(expected)
    same = np.zeros((8, 5), dtype=bool)
    same[:, 2] = True
    assert nogueira_jackknife_se(same, np.arange(8) // 2) == 0.0
    assert np.isnan(nogueira_jackknife_se(Z[:4], pair[:4]))  # two pairs: too few
    X, y = make_regression(1, n=60, d=12, k_true=2)
    s = stability_selection(X, y, algorithm="omp", k_max=3, n_pairs=4).summary
    assert s.nogueira_se.shape == (3,) and np.all(s.nogueira_se >= 0)


def top_correlations(X, y, k):
    """A selector outside the engine: the k columns most correlated with y."""
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    c = np.abs(Xc.T @ yc) / (np.linalg.norm(Xc, axis=0) * np.linalg.norm(yc))
    return np.argsort(-c, kind="stable")[:k]


def test_compare_on_the_same_subsamples():
    X, y, _ = known_support(5, n=100, d=25, s=3)
    c = compare_stability(
        X,
        y,
        algorithms={"foba-obj": {}, "omp": {}},
        selectors={"marginal": top_correlations},
        k_max=4,
        n_pairs=4,
    )
    assert list(c.results) == ["foba-obj", "omp", "marginal"]
    rows = [r.plan.subsamples for r in c.results.values()]
    assert all(
        np.array_equal(a, b) for other in rows[1:] for a, b in zip(rows[0], other, strict=True)
    )
    alone = stability_selection(X, y, algorithm="omp", k_max=4, n_pairs=4)
    assert np.array_equal(alone.summary.frequency, c.results["omp"].summary.frequency)
    for i in range(4):
        best = max(c.nogueira[m][i] for m in c.nogueira)
        assert c.steadiest[i] == [m for m in c.nogueira if c.nogueira[m][i] >= best - 1e-12]
    d = json.loads(json.dumps(c.to_dict()))
    assert d["methods"] == ["foba-obj", "omp", "marginal"] and len(d["nogueira"]["omp"]) == 4


def test_compare_with_abess_when_present():
    abess = pytest.importorskip("abess")
    X, y, support = known_support(1, n=120, d=20, s=3)

    def abess_select(Xs, ys, k):
        model = abess.LinearRegression(support_size=k, thread=1)
        model.fit(Xs, ys)
        return np.flatnonzero(model.coef_)

    c = compare_stability(
        X, y, algorithms=["foba-obj"], selectors={"abess": abess_select}, k_max=3, n_pairs=3
    )
    f = c.results["abess"].summary.frequency[2]
    assert set(np.argsort(-f)[:3]) == set(support)


def test_external_selector_result_roundtrip():
    p = SubsampleResult(3, [(1,), (1, 4)], "per-k", 30, 2, 0.1)
    assert SubsampleResult.from_dict(json.loads(json.dumps(p.to_dict()))) == p
    assert isinstance(plan_stability("omp", k_max=2, n_samples=10, n_features=5), StabilityPlan)
