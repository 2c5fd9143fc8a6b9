"""Judging an answer: swap certificates, "why not this feature?", polish and the exact best
size-k support, each checked against brute force on small problems (every exchange refitted
by the independent references, every size-k support enumerated with itertools)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
import scipy.sparse as sp
from engine_problems import make_classification, make_regression
from engine_reference import best_subset, refit_fn

import engine
from engine.judge.problem import build_problem, fit
from engine.trace import final_support

OBJECTIVES = ["least_squares", "logistic"]


def problem(objective: str, seed: int, n: int = 50, d: int = 9):
    if objective == "logistic":
        return make_classification(seed, n=n, d=d, k_true=3)
    return make_regression(seed, n=n, d=d, k_true=3, rho=0.5, noise=1.0)


def brute_exchanges(objective: str, X, y, support) -> dict[tuple[int, int], float]:
    """Objective after every exchange (out, in), by the independent reference refits."""
    refit = refit_fn(objective, X, y)
    S = sorted(support)
    return {
        (s, j): refit([t for t in S if t != s] + [j])[2]
        for s in S
        for j in range(X.shape[1])
        if j not in S
    }


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("sparse", [False, True])
def test_exchange_values_equal_the_refits_of_every_exchange(objective: str, sparse: bool) -> None:
    X, y = problem(objective, 1)
    if sparse:
        X = X * (np.random.default_rng(0).random(X.shape) < 0.6)
    S = [0, 4, 7]
    p = build_problem(
        sp.csr_matrix(X) if sparse else X, y, objective=objective, standardize=False, params={}
    )
    table = fit(p.objective, S).exchange_values()
    brute = brute_exchanges(objective, X, y, S)
    for (s, j), v in brute.items():
        assert table[S.index(s), j] == pytest.approx(v, rel=1e-7, abs=1e-10)
    assert np.isnan(table[:, S]).all()


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("seed", range(6))
def test_certificate_claims_a_local_optimum_only_where_no_exchange_improves(
    objective: str, seed: int
) -> None:
    X, y = problem(objective, seed)
    rng = np.random.default_rng(seed)
    supports = [
        sorted(rng.choice(X.shape[1], 3, replace=False).tolist()),
        engine.select(X, y, algorithm="omp", objective=objective, k=3, standardize=False).support,
        engine.select(
            X, y, algorithm="foba-obj", objective=objective, k=3, standardize=False, polish=True
        ).support,
    ]
    for S in supports:
        cert = engine.certify(X, y, S, objective=objective, standardize=False)
        brute = brute_exchanges(objective, X, y, S)
        base = refit_fn(objective, X, y)(list(S))[2]
        assert cert.objective == pytest.approx(base, rel=1e-8)
        improving = {e: v for e, v in brute.items() if v < base - 1e-8 * abs(base)}
        if cert.local_optimum:
            assert not improving, (S, improving)
            assert cert.verdict == engine.judge.LOCAL_OPTIMUM
        else:
            assert improving
            best = min(brute, key=brute.get)
            assert cert.improving[0].objective == pytest.approx(brute[best], rel=1e-7)
            assert cert.n_improving == len(improving)
            for e in cert.improving:
                assert e.gain > 0
                assert e.objective == pytest.approx(brute[(e.feature_out, e.feature_in)], rel=1e-7)
        assert cert.n_exchanges == len(brute)
        json.dumps(cert.to_dict())
        events = cert.events(start=7)
        assert events and all(e.kind == "check" for e in events)
        assert [e.step for e in events] == list(range(7, 7 + len(events)))


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_near_ties_are_listed_as_equally_good_alternatives(objective: str) -> None:
    X, y = problem(objective, 3)
    S = engine.select(
        X, y, algorithm="stepwise", objective=objective, k=3, standardize=False, polish=True
    ).support
    first = int(S[0])  # a twin of a selected feature: exchanging them costs almost nothing
    twin = X.shape[1]
    X = np.column_stack([X, X[:, first]])
    cert = engine.certify(X, y, S, objective=objective, standardize=False)
    assert any((e.feature_out, e.feature_in) == (first, twin) for e in cert.alternatives)
    verdict = engine.why_not(X, y, S, twin, objective=objective, standardize=False)
    assert not verdict.selected and verdict.best.feature_out == first
    assert abs(verdict.cost) <= 1e-3 * verdict.objective
    assert verdict.alternatives and "equally good" in verdict.explanation


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_why_not_gives_the_best_exchange_in_or_out_of_each_feature(objective: str) -> None:
    X, y = problem(objective, 4)
    S = [1, 3, 5]
    brute = brute_exchanges(objective, X, y, S)
    base = refit_fn(objective, X, y)(S)[2]
    for f in range(X.shape[1]):
        v = engine.why_not(X, y, S, f, objective=objective, standardize=False)
        mine = {e: val for e, val in brute.items() if f in e}
        best = min(mine, key=mine.get)
        assert v.selected == (f in S)
        assert (v.best.feature_out, v.best.feature_in) == best
        assert v.cost == pytest.approx(mine[best] - base, rel=1e-6, abs=1e-10)
        alone = refit_fn(objective, X, y)([t for t in S if t != f] if f in S else [*S, f])[2]
        assert v.change_alone == pytest.approx(abs(alone - base), rel=1e-6, abs=1e-10)
        json.dumps(v.to_dict())


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("seed", range(4))
def test_exact_best_equals_brute_force(objective: str, seed: int) -> None:
    X, y = problem(objective, 10 + seed, d=10)
    k = 3
    value, support = best_subset(refit_fn(objective, X, y), X.shape[1], k)
    given = engine.select(X, y, algorithm="omp", objective=objective, k=k, standardize=False)
    res = engine.exact_best(X, y, k, objective=objective, standardize=False, support=given.support)
    assert res.optimal and res.status == "optimal"
    assert res.objective == pytest.approx(value, rel=1e-8)
    assert tuple(res.support) == tuple(support) or res.objective <= value * (1 + 1e-9)
    gap = (given.objective - value) / value
    assert res.gap == pytest.approx(gap, rel=1e-6, abs=1e-9)
    assert (res.verdict == "optimal") == (gap < 1e-10)
    json.dumps(res.to_dict())
    # Without a given support: forward stepwise is the incumbent; the same optimum.
    alone = engine.exact_best(X, y, k, objective=objective, standardize=False)
    assert alone.objective == pytest.approx(value, rel=1e-8)


def test_exact_best_handles_collinear_columns_and_k_one() -> None:
    X, y = make_regression(2, n=40, d=7, k_true=2)
    X = np.column_stack([X, X[:, 0] + X[:, 1], X[:, 3]])
    for k in (1, 2, 3):
        value, _ = best_subset(refit_fn("least_squares", X, y), X.shape[1], k)
        res = engine.exact_best(X, y, k, standardize=False)
        assert res.optimal and res.objective == pytest.approx(value, rel=1e-8)


def test_exact_best_says_not_affordable_when_the_budget_runs_out() -> None:
    X, y = make_regression(3, n=80, d=40, k_true=8)
    res = engine.exact_best(X, y, 8, time_budget=1e-3)
    assert not res.optimal and res.status == "not affordable"
    assert "not affordable" in res.verdict and "no optimum is claimed" in res.verdict
    assert len(res.support) == 8
    with pytest.raises(engine.ConfigError, match="time_budget"):
        engine.exact_best(X, y, 3, time_budget=0.0)
    with pytest.raises(engine.ConfigError, match="k must be"):
        engine.exact_best(X, y, 41)
    with pytest.raises(engine.ConfigError, match="support has 2 features"):
        engine.exact_best(X, y, 3, support=[0, 1])


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("algorithm", ["foba-obj", "forward-obj", "omp", "backward", "oblivious"])
def test_polish_never_raises_the_objective_and_ends_at_a_swap_local_optimum(
    objective: str, algorithm: str
) -> None:
    X, y = problem(objective, 5, d=9)
    plain = engine.select(X, y, algorithm=algorithm, objective=objective, k=3, standardize=False)
    polished = engine.select(
        X, y, algorithm=algorithm, objective=objective, k=3, standardize=False, polish=True
    )
    assert polished.objective <= plain.objective * (1 + 1e-12)
    assert len(polished.support) == 3
    np.testing.assert_array_equal(final_support(polished.trace), polished.support)
    assert polished.trace[-1].kind == "stop" and "polish" in polished.stop_reason
    swaps = [e for e in polished.trace if e.kind == "swap"]
    assert all(e.gain > 0 and e.info.get("polish") == 1.0 for e in swaps)
    values = [e.objective for e in swaps]
    assert values == sorted(values, reverse=True)
    brute = brute_exchanges(objective, X, y, polished.support)
    assert min(brute.values()) >= polished.objective * (1 - 1e-8)
    # The run without polish is the paper's algorithm, unchanged.
    assert "polish" not in plain.stop_reason


def test_polish_is_declared_once_for_the_size_k_methods() -> None:
    spec = engine.ALGORITHMS
    for name in ("foba-obj", "foba-gdt", "forward-obj", "omp", "stepwise", "backward"):
        assert spec[name].params[-1].name == "polish" and spec[name].polishable
    for name in ("lasso", "group-omp", "frank-wolfe", "ght"):
        assert "polish" not in {p.name for p in spec[name].params}
    with pytest.raises(engine.ConfigError, match="no parameter 'polish'"):
        engine.check_config("lasso", k=3, params={"polish": True})
    assert engine.check_config("foba-obj", k=3, params={"polish": True}).path == "final"
    assert engine.check_config("foba-obj", k=3).path == "best-k"
    for tool in engine.JUDGES.values():
        json.dumps(tool.to_dict())


def test_certificate_of_an_empty_or_full_support_needs_no_exchange() -> None:
    X, y = make_regression(0, n=30, d=4)
    cert = engine.certify(X, y, [0, 1, 2, 3])
    assert cert.local_optimum and cert.n_exchanges == 0
    with pytest.raises(engine.ConfigError, match="twice"):
        engine.certify(X, y, [1, 1])
    with pytest.raises(engine.ConfigError, match="no parameter"):
        engine.certify(X, y, [1], lamda=1.0)


def test_brute_force_reference_is_itertools_combinations() -> None:
    # The reference the exact search is checked against visits every size-k support.
    assert sum(1 for _ in itertools.combinations(range(10), 3)) == 120


def test_cross_validation_reads_polished_and_abess_answers_per_k() -> None:
    from engine.cv import cross_validate_k

    X, y = make_regression(1, n=80, d=12, k_true=3)
    for algorithm, params in (("foba-obj", {"polish": True}), ("abess", {})):
        result = cross_validate_k(X, y, algorithm=algorithm, k_max=3, params=params, n_folds=3)
        assert result.plan.mode == "per-k" and result.plan.path == "final"


def test_settings_of_a_result_judge_the_problem_it_solved() -> None:
    X, y = make_classification(2, n=60, d=8, k_true=2)
    res = engine.select(X, y, algorithm="foba-obj", objective="logistic", k=2, lam=0.01)
    settings = engine.judge.settings_of(res)
    assert settings == {
        "objective": "logistic",
        "standardize": True,
        "lam": 0.01,
        "fit_intercept": True,
    }
    cert = engine.certify(X, y, res.support, **settings)
    assert cert.objective == pytest.approx(res.objective, rel=1e-9)
