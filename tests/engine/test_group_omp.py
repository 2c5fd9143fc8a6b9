"""Group OMP (Lozano, Swirszcz & Abe 2009; the gOMP baseline of Xiang et al. 2014).

The group order is checked against a plain numpy transcription (least squares: lstsq refits on
explicit centred columns) and, for logistic loss, against scikit-learn refits; recovery on
Xiang et al.'s group-sparse case 2.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from engine_problems import make_classification
from engine_reference import labels01, logistic_refit, ls_refit
from scipy.special import expit

import engine
import engine.algorithms.group_omp  # registers group-omp
from engine.datasets import generate
from engine.trace import from_json, replay, to_json

LAM = 1e-2


def grouped_problem(seed: int, n: int = 60):
    """Groups of sizes 1..6 with correlated columns inside groups, three active groups."""
    rng = np.random.default_rng(seed)
    sizes = [1, 6, 2, 5, 3, 4, 2, 6, 1, 3]
    groups = np.repeat(np.arange(len(sizes)), sizes)
    d = len(groups)
    shared = rng.standard_normal((n, len(sizes)))[:, groups]
    X = 0.6 * shared + 0.8 * rng.standard_normal((n, d)) + rng.normal(0, 1, size=(1, d))
    beta = np.zeros(d)
    for g in (1, 4, 7):
        idx = np.flatnonzero(groups == g)
        beta[idx] = rng.uniform(0.5, 1.5, len(idx)) * rng.choice([-1, 1])
    y = X @ beta + 2.0 + 0.5 * rng.standard_normal(n)
    return X, y, groups


def reference_group_omp_ls(X, y, groups, n_steps: int, scoring: str) -> list[int]:
    """Group OMP for (1/2n)||y - Xw - b||^2, by hand: residual of the lstsq refit on centred
    columns, group score from X_G^T r, the best group joins."""
    Xc = X - X.mean(axis=0)
    yc = y - y.mean()
    chosen: list[int] = []
    r = yc.copy()
    for _ in range(n_steps):
        scores = {}
        for g in np.unique(groups):
            if g in chosen:
                continue
            A = Xc[:, groups == g]
            if scoring == "orthonormal":
                Q, _ = np.linalg.qr(A)
                scores[g] = np.linalg.norm(Q.T @ r)
            else:
                scores[g] = np.linalg.norm(A.T @ r)
                if scoring == "sqrt_size":
                    scores[g] /= np.sqrt(A.shape[1])
        chosen.append(int(max(scores, key=scores.get)))
        S = np.isin(groups, chosen)
        w, *_ = np.linalg.lstsq(Xc[:, S], yc, rcond=None)
        r = yc - Xc[:, S] @ w
    return chosen


def group_order(res) -> list[int]:
    order: list[int] = []
    for e in res.trace:
        if e.kind == "add" and int(e.info["group"]) not in order:
            order.append(int(e.info["group"]))
    return order


@pytest.mark.parametrize("scoring", ["norm", "sqrt_size", "orthonormal"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_group_order_matches_a_numpy_reference(seed, scoring):
    X, y, groups = grouped_problem(seed)
    res = engine.select(
        X, y, algorithm="group-omp", groups=groups, n_groups=6, scoring=scoring, standardize=False
    )
    assert group_order(res) == reference_group_omp_ls(X, y, groups, 6, scoring)


def test_the_scorings_really_differ_on_these_problems():
    """Otherwise the reference comparison above could not tell the scorings apart."""
    orders = {
        scoring: tuple(
            tuple(reference_group_omp_ls(*grouped_problem(seed), 6, scoring)) for seed in range(3)
        )
        for scoring in ("norm", "sqrt_size", "orthonormal")
    }
    assert len(set(orders.values())) == 3


def test_every_add_is_the_refit_on_all_selected_features():
    X, y, groups = grouped_problem(3)
    res = engine.select(X, y, algorithm="group-omp", groups=groups, n_groups=3, standardize=False)
    for e, s in zip(res.trace, replay(res.trace), strict=True):
        if e.kind == "add":
            assert groups[e.feature] == e.info["group"]
            assert e.objective == pytest.approx(ls_refit(X, y, sorted(s))[2], rel=1e-9)
    # a group's features enter together, in index order
    adds = [e.feature for e in res.trace if e.kind == "add"]
    for g in group_order(res):
        idx = np.flatnonzero(groups == g).tolist()
        start = adds.index(idx[0])
        assert adds[start : start + len(idx)] == idx
    coef, _, value = ls_refit(X, y, res.support.tolist())
    np.testing.assert_allclose(res.coef, coef, rtol=1e-8, atol=1e-10)
    assert res.objective == pytest.approx(value, rel=1e-10)


def test_logistic_group_order_matches_sklearn_refits():
    X, y = make_classification(4, n=150, d=24, k_true=6)
    groups = np.arange(24) // 3
    res = engine.select(
        X,
        y,
        algorithm="group-omp",
        objective="logistic",
        groups=groups,
        n_groups=4,
        lam=LAM,
        standardize=False,
    )
    t = labels01(y)
    chosen: list[int] = []
    coef, b = np.zeros(24), np.log(t.mean() / (1 - t.mean()))
    for _ in range(4):
        grad = X.T @ (expit(X @ coef + b) - t) / len(t) + LAM * coef
        scores = {g: np.linalg.norm(grad[groups == g]) for g in range(8) if g not in chosen}
        chosen.append(max(scores, key=scores.get))
        coef, b, _ = logistic_refit(X, y, np.flatnonzero(np.isin(groups, chosen)), lam=LAM)
    assert group_order(res) == chosen
    np.testing.assert_allclose(res.coef, coef, rtol=1e-5, atol=1e-7)


def test_recovers_the_true_groups_of_xiang2014_case_2():
    p = generate("xiang2014_bilevel", random_state=0, case=2)
    true_groups = set(p.meta["active_groups"])
    by_k = engine.select(p.X, p.y, algorithm="group-omp", groups=p.groups, k=60, standardize=False)
    by_n = engine.select(
        p.X, p.y, algorithm="group-omp", groups=p.groups, n_groups=6, standardize=False
    )
    for res in (by_k, by_n):
        assert set(group_order(res)) == true_groups
        assert res.support.tolist() == p.support.tolist()


def test_k_is_a_cap_the_crossing_group_is_not_added():
    X, y, groups = grouped_problem(0)
    free = engine.select(X, y, algorithm="group-omp", groups=groups, n_groups=2, standardize=False)
    first, second = group_order(free)
    size1 = int(np.sum(groups == first))
    k = size1 + int(np.sum(groups == second)) - 1
    res = engine.select(X, y, algorithm="group-omp", groups=groups, k=k, standardize=False)
    assert group_order(res) == [first]
    assert len(res.support) == size1 <= k
    assert "past k" in res.stop_reason
    exact = engine.select(X, y, algorithm="group-omp", groups=groups, k=k + 1, standardize=False)
    assert group_order(exact) == [first, second] and len(exact.support) == k + 1
    assert f"reached k = {k + 1}" in exact.stop_reason


def test_epsilon_stops_on_the_group_score():
    """Three active groups: their scores are far above the noise groups' (6.3, 4.8, 2.8, then
    0.18 on this seed), so an epsilon between them keeps exactly the three."""
    X, y, groups = grouped_problem(1)
    res = engine.select(X, y, algorithm="group-omp", groups=groups, n_groups=10, standardize=False)
    per_group = list(dict.fromkeys(e.score for e in res.trace if e.kind == "add"))
    assert per_group[2] > 10 * per_group[3]
    eps = np.sqrt(per_group[2] * per_group[3])
    cut = engine.select(X, y, algorithm="group-omp", groups=groups, epsilon=eps, standardize=False)
    assert group_order(cut) == group_order(res)[:3]
    assert sorted(group_order(cut)) == [1, 4, 7]  # the true groups
    assert f"< epsilon = {eps:g}" in cut.stop_reason


def test_collinear_features_are_left_out():
    X, y, groups = grouped_problem(2)
    X = np.column_stack([X, X[:, 0] + X[:, 1]])  # joins the group of feature 1
    groups = np.append(groups, groups[1])
    res = engine.select(X, y, algorithm="group-omp", groups=groups, n_groups=10, standardize=False)
    assert len({0, 1, X.shape[1] - 1} & set(res.support.tolist())) == 2
    assert "collinear" in res.stop_reason
    assert frozenset(res.support.tolist()) == replay(res.trace)[-1]


def test_sparse_x_and_string_labels():
    X, y, groups = grouped_problem(5)
    labels = np.array([f"block-{g}" for g in groups])
    a = engine.select(X, y, algorithm="group-omp", groups=groups, n_groups=3, standardize=False)
    b = engine.select(
        sp.csr_matrix(X), y, algorithm="group-omp", groups=labels, n_groups=3, standardize=False
    )
    assert [e.feature for e in a.trace] == [e.feature for e in b.trace]
    np.testing.assert_allclose(b.coef, a.coef, rtol=1e-9, atol=1e-12)
    assert from_json(to_json(b.trace)) == b.trace


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"groups": None, "k": 3}, "needs groups"),
        ({}, "give k, n_groups or epsilon"),
        ({"k": 3, "scoring": "mean"}, "scoring"),
        ({"n_groups": 0}, "n_groups"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
    ],
)
def test_invalid_input_raises_value_error_naming_it(params, match):
    X, y, groups = grouped_problem(6)
    kw = {"groups": groups, **params}
    with pytest.raises(ValueError, match=match):
        engine.select(X, y, algorithm="group-omp", **kw, standardize=False)
