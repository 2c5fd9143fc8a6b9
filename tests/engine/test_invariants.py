"""Invariants of every algorithm x objective run, checked from the trace and against independent
refits: replay, best-along-path, forward gains, FoBa's backward rules recomputed from the trace,
step budgets, dense vs sparse, determinism, JSON round trip and cancellation by the recorder."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from engine_problems import (
    make_classification,
    make_decoy_classification,
    make_decoy_problem,
    make_regression,
)
from engine_reference import (
    best_intercept,
    logistic_refit,
    logistic_value,
    ls_best_intercept,
    ls_refit,
    ls_value,
)

import engine
from engine.algorithms.common import auto_margin
from engine.trace import best_along_path, from_json, replay, to_json

K = 4
LAM = 1e-2
EPS_BACK = {"least_squares": 0.05, "logistic": 0.004}

# (algorithm, params); fb-threshold gets its eps_back per objective.
CONFIGS = [
    ("foba-obj", {"backward": "standard"}),
    ("foba-obj", {"backward": "conservative"}),
    ("foba-obj", {"backward": "aggressive"}),
    ("foba-obj", {"backward": "standard", "nu": 0.9}),
    ("foba-obj", {"backward": "aggressive", "max_steps": 7}),
    ("foba-gdt", {"backward": "standard"}),
    ("foba-gdt", {"backward": "conservative"}),
    ("foba-gdt", {"backward": "aggressive", "nu": 0.3}),
    ("fb-threshold", {}),
    ("forward-obj", {}),
    ("forward-obj", {"selection": "quad"}),
    ("forward-obj", {"replacement": "full"}),
    ("omp", {"replacement": "simple"}),
    ("omp", {}),
    ("stepwise", {}),
    ("backward", {}),
    ("oblivious", {}),
    ("replacement", {"variant": "full"}),
    ("replacement", {"variant": "simple"}),
]
OBJECTIVES = ["least_squares", "logistic"]
PATH_METHODS = {"foba-obj", "foba-gdt", "fb-threshold"}  # Zhang's best size-k along the path


def _id(cfg):
    algorithm, params = cfg
    return algorithm + "".join(f"-{k}={v}" for k, v in params.items())


CASES = [pytest.param(cfg, obj, id=f"{_id(cfg)}-{obj}") for cfg in CONFIGS for obj in OBJECTIVES]
FOBA_CASES = [
    pytest.param(cfg, obj, id=f"{_id(cfg)}-{obj}")
    for cfg in CONFIGS
    if cfg[0] in PATH_METHODS
    for obj in OBJECTIVES
]


@functools.cache
def problem(objective: str, sparse_ready: bool = False):
    """n=60, d=25 problems with decoy columns (so FoBa's paths contain deletions). With
    ``sparse_ready`` about half of the entries are zero (to compare dense and sparse X)."""
    if objective == "least_squares":
        if sparse_ready:
            return make_regression(31, n=60, d=25, density=0.5)
        return make_decoy_problem(2, n=60, d=25, k=4)
    if sparse_ready:
        return make_classification(32, n=60, d=25, density=0.5)
    return make_decoy_classification(6, n=60, d=25, k=4)


def _params(cfg, objective):
    algorithm, params = cfg
    params = dict(params)
    if algorithm == "fb-threshold":
        params["eps_back"] = EPS_BACK[objective]
    if objective == "logistic":
        params["lam"] = LAM
    return params


def run(cfg, objective, X=None, y=None, **kw):
    if X is None:
        X, y = problem(objective)
    return engine.select(
        X,
        y,
        algorithm=cfg[0],
        objective=objective,
        k=K,
        **_params(cfg, objective),
        **kw,
        standardize=False,
    )


@functools.cache
def cached_run(cfg_index: int, objective: str):
    return run(CONFIGS[cfg_index], objective)


def result_of(cfg, objective):
    return cached_run(CONFIGS.index(cfg), objective)


@functools.cache
def independent_refit(objective: str, support: frozenset[int]):
    X, y = problem(objective)
    if objective == "least_squares":
        return ls_refit(X, y, sorted(support))
    return logistic_refit(X, y, sorted(support), lam=LAM)


def independent_value(objective, coef, b):
    X, y = problem(objective)
    if objective == "least_squares":
        return ls_value(X, y, coef, b)
    return logistic_value(X, y, coef, b, lam=LAM)


# --------------------------------------------------------------------------- trace shape


@pytest.mark.parametrize(("cfg", "objective"), CASES)
def test_trace_replays_to_the_result(cfg, objective):
    res = result_of(cfg, objective)
    trace = res.trace
    assert [e.step for e in trace] == list(range(len(trace)))
    assert trace[-1].kind == "stop" and all(e.kind != "stop" for e in trace[:-1])
    supports = replay(trace)
    for e, s in zip(trace, supports, strict=True):
        assert e.support_size == len(s), e
    assert trace[-1].support_size == len(supports[-1])
    assert res.n_steps == sum(e.kind in ("add", "remove", "swap") for e in trace)
    assert res.support.tolist() == sorted(res.support.tolist())
    assert len(res.support) == K
    if cfg[0] in PATH_METHODS:
        # Zhang's "best k features along the path": the result is the best size-k support the
        # path visited, while the trace itself ends wherever the path ended.
        best = best_along_path(trace)
        support, value, _ = best[K]
        assert frozenset(res.support.tolist()) == support
        assert res.objective == pytest.approx(value, rel=1e-12)
        for size, (_, v, _) in best.items():
            if size == K:
                continue
            assert all(
                e.objective >= v
                for e in trace
                if e.kind in ("add", "remove", "swap") and e.support_size == size
            )
    else:
        assert frozenset(res.support.tolist()) == supports[-1]
    # The stop event reports the objective where the path ended (its replayed support).
    assert trace[-1].objective == pytest.approx(
        independent_refit(objective, supports[-1])[2], rel=1e-9
    )


@pytest.mark.parametrize(("cfg", "objective"), CASES)
def test_result_and_event_objectives_match_independent_refits(cfg, objective):
    res = result_of(cfg, objective)
    coef, b, val = independent_refit(objective, frozenset(res.support.tolist()))
    assert res.objective == pytest.approx(val, rel=1e-9)
    np.testing.assert_allclose(res.coef, coef, rtol=1e-5, atol=1e-7)
    assert res.intercept == pytest.approx(b, rel=1e-5, abs=1e-7)
    assert res.objective == pytest.approx(
        independent_value(objective, res.coef, res.intercept), rel=1e-12
    )
    for e, s in zip(res.trace, replay(res.trace), strict=True):
        if e.kind in ("add", "remove", "swap") and len(s) <= 2 * K:
            assert e.objective == pytest.approx(independent_refit(objective, s)[2], rel=1e-9), e


@pytest.mark.parametrize(("cfg", "objective"), CASES)
def test_forward_gains_are_nonnegative_objective_decreases(cfg, objective):
    res = result_of(cfg, objective)
    trace = res.trace
    q0 = independent_refit(objective, frozenset())[2]
    previous = q0
    for e in trace:
        if e.kind == "add":
            assert e.gain >= -1e-12 * q0, e
            assert e.gain == pytest.approx(previous - e.objective, rel=1e-9, abs=1e-13 * q0), e
        if e.kind in ("add", "remove", "swap"):
            previous = e.objective
    if cfg[0] in ("forward-obj", "omp", "stepwise", "oblivious", "replacement"):
        objs = [e.objective for e in trace if e.kind in ("add", "swap")]
        assert all(b <= a * (1 + 1e-12) for a, b in itertools.pairwise(objs))


@pytest.mark.parametrize(("cfg", "objective"), CASES)
def test_step_budget(cfg, objective):
    res = result_of(cfg, objective)
    algorithm, params = cfg
    if algorithm in PATH_METHODS:
        budget = params.get("max_steps", 5 * K)  # Zhang: a path five times as long as k
        assert res.n_steps <= budget
        if res.n_steps < budget:
            # Cut short only when nothing could change the result any more: the path could not
            # return to K features in the steps left, it had nothing left to add, (fixed
            # threshold) it would add and delete the same feature forever, or (FoBa's default
            # path_end = auto) it holds K + max(5, ceil(K/10)) features.
            size = res.trace[-1].support_size
            d = problem(objective)[0].shape[1]
            moves = [(e.kind, e.feature) for e in res.trace if e.kind in ("add", "remove")]
            cycles = (
                "cycles" in res.stop_reason
                and moves[-2][0] == "add"
                and moves[-1] == ("remove", moves[-2][1])
            )
            capped = (
                algorithm != "fb-threshold"
                and params.get("path_end", "auto") == "auto"
                and size >= K + auto_margin(K)
                and "path_end = auto" in res.stop_reason
            )
            assert (
                size - K > budget - res.n_steps
                or capped
                or size == d
                or "no remaining" in (res.stop_reason)
                or cycles
            ), res.stop_reason
            assert "cycles" not in res.stop_reason or algorithm == "fb-threshold"
    elif algorithm == "backward":
        d = problem(objective)[0].shape[1]
        assert res.n_steps == d + (d - K)
    elif algorithm == "replacement" or params.get("replacement", "none") != "none":
        # K forward adds, then at most 10K swaps (the default max_replacements)
        assert K <= res.n_steps <= K + 10 * K
        assert sum(e.kind == "add" for e in res.trace) == K
    else:
        assert res.n_steps == K


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_foba_paths_in_the_matrix_contain_deletions(objective):
    # Guard: the backward-rule checks below are exercised on these problems, with every rule.
    for rule in ("standard", "conservative", "aggressive"):
        removes = sum(
            e.kind == "remove"
            for cfg in CONFIGS
            if cfg[1].get("backward") == rule
            for e in result_of(cfg, objective).trace
        )
        assert removes > 0, rule


# --------------------------------------------------------------------------- backward rules


@pytest.mark.parametrize(("cfg", "objective"), FOBA_CASES)
def test_backward_decisions_follow_the_rule(cfg, objective):
    """Every remove had gain < threshold, every check gain >= threshold, and the threshold is
    the rule's, recomputed from the trace alone:

    standard      nu * the gain of the last add that brought the support to its size
    conservative  nu * the smallest add gain so far
    aggressive    nu * (gains undone in this phase + gain of the size) - cost spent in the phase
    fixed         eps_back
    """
    algorithm, params = cfg
    res = result_of(cfg, objective)
    rule = "fixed" if algorithm == "fb-threshold" else params.get("backward", "standard")
    nu = params.get("nu", 0.5)
    gain_at_size: dict[int, float] = {}
    add_gains: list[float] = []
    phase_start = None
    undone = 0.0
    current = None  # objective before the event
    size = 0
    n_checked = 0
    for e in res.trace:
        if e.kind == "add":
            size = e.support_size
            gain_at_size[size] = e.gain
            add_gains.append(e.gain)
            phase_start, undone, current = e.objective, 0.0, e.objective
            continue
        if e.kind not in ("remove", "check"):
            continue
        if rule == "standard":
            expected = nu * gain_at_size[size]
        elif rule == "conservative":
            expected = nu * min(add_gains)
        elif rule == "aggressive":
            expected = nu * (undone + gain_at_size[size]) - (current - phase_start)
        else:
            expected = EPS_BACK[objective]
        assert e.threshold == pytest.approx(expected, rel=1e-12, abs=1e-15), e
        if e.kind == "remove":
            assert e.accepted is True
            assert e.gain < e.threshold, e
            assert e.support_size == size - 1
            undone += gain_at_size[size]
            size -= 1
            current = e.objective
        else:
            assert e.accepted is False
            assert e.gain >= e.threshold, e
            assert e.support_size == size
        n_checked += 1
    assert n_checked > 0


@pytest.mark.parametrize(("cfg", "objective"), FOBA_CASES)
def test_backward_candidate_is_the_cheapest_deletion(cfg, objective):
    """The feature a remove/check event tests is the selected feature whose deletion (without
    refitting the rest; the intercept re-optimised) raises the objective least, and its gain is
    that cost, computed from an independent refit of the support before the event."""
    res = result_of(cfg, objective)
    X, y = problem(objective)
    supports = replay(res.trace)
    for i, e in enumerate(res.trace):
        if e.kind not in ("remove", "check"):
            continue
        before = supports[i - 1]
        coef, b, val = independent_refit(objective, before)
        costs = {}
        for j in before:
            w = coef.copy()
            w[j] = 0.0
            if objective == "least_squares":
                costs[j] = ls_value(X, y, w, ls_best_intercept(X, y, w)) - val
            else:
                # the intercept re-optimised, as least squares profiles it out
                value = lambda ww, bb: logistic_value(X, y, ww, bb, lam=LAM)  # noqa: E731
                costs[j] = value(w, best_intercept(value, w, b)) - val
        cheapest = min(costs, key=costs.get)
        assert e.feature == cheapest, e
        assert e.gain == pytest.approx(costs[cheapest], rel=1e-5, abs=1e-10), e


# --------------------------------------------------------------------------- reproducibility


@pytest.mark.parametrize(("cfg", "objective"), CASES)
def test_dense_and_sparse_give_the_same_trace(cfg, objective):
    X, y = problem(objective, sparse_ready=True)
    a = run(cfg, objective, X, y)
    for fmt in (sp.csr_matrix, sp.csc_matrix):
        b = run(cfg, objective, fmt(X), y)
        assert [(e.kind, e.feature, e.feature_out) for e in a.trace] == [
            (e.kind, e.feature, e.feature_out) for e in b.trace
        ]
        np.testing.assert_allclose(
            [e.objective for e in b.trace], [e.objective for e in a.trace], rtol=1e-8
        )
        assert b.support.tolist() == a.support.tolist()
        np.testing.assert_allclose(b.coef, a.coef, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize(("cfg", "objective"), CASES)
def test_same_seed_same_trace(cfg, objective):
    a = run(cfg, objective, random_state=7)
    b = run(cfg, objective, random_state=7)
    assert to_json(a.trace) == to_json(b.trace)
    assert a.support.tolist() == b.support.tolist()
    np.testing.assert_array_equal(a.coef, b.coef)


@pytest.mark.parametrize(("cfg", "objective"), CASES)
def test_json_round_trip_is_lossless(cfg, objective):
    res = run(cfg, objective, record_candidates=True, max_candidates=0)
    text = to_json(res.trace)
    back = from_json(text)
    assert back == res.trace
    assert to_json(back) == text
    assert any(e.candidates is not None for e in back)


# --------------------------------------------------------------------------- cancellation


def _stopper(at: int, kinds=("add", "remove", "swap")):
    seen = []

    def callback(event):
        seen.append(event)
        if sum(e.kind in kinds for e in seen) >= at and event.kind in kinds:
            return False
        return None

    return callback, seen


@pytest.mark.parametrize(("cfg", "objective"), CASES)
def test_recorder_returning_false_stops_the_run(cfg, objective):
    callback, seen = _stopper(3)
    res = run(cfg, objective, recorder=callback)
    trace = res.trace
    assert res.cancelled is True
    assert res.stop_reason == "stopped by recorder"
    assert trace[-1].kind == "stop" and trace[-1].reason == "stopped by recorder"
    assert sum(e.kind in ("add", "remove", "swap") for e in trace) == 3
    assert res.n_steps == 3
    assert seen == trace  # the callback saw every event, the stop included, in order
    support = replay(trace)[-1]
    assert frozenset(res.support.tolist()) == support
    assert trace[-1].support_size == len(support)
    coef, _, val = independent_refit(objective, support)
    assert res.objective == pytest.approx(val, rel=1e-9)
    assert trace[-1].objective == pytest.approx(val, rel=1e-9)
    np.testing.assert_allclose(res.coef, coef, rtol=1e-5, atol=1e-7)


SWAP_CASES = [
    pytest.param(cfg, obj, id=f"{_id(cfg)}-{obj}")
    for cfg in CONFIGS
    if cfg[0] == "replacement" or cfg[1].get("replacement", "none") != "none"
    for obj in OBJECTIVES
    # the simple variant finds no improving swap on the logistic problem
    if not (obj == "logistic" and "simple" in cfg[1].values())
]


@pytest.mark.parametrize(("cfg", "objective"), SWAP_CASES)
def test_recorder_can_stop_on_a_swap(cfg, objective):
    assert any(e.kind == "swap" for e in result_of(cfg, objective).trace)  # guard
    callback, _ = _stopper(1, kinds=("swap",))
    res = run(cfg, objective, recorder=callback)
    assert res.cancelled and res.trace[-2].kind == "swap" and res.trace[-1].kind == "stop"
    support = replay(res.trace)[-1]
    assert len(support) == K
    assert frozenset(res.support.tolist()) == support
    assert res.objective == pytest.approx(independent_refit(objective, support)[2], rel=1e-9)


@pytest.mark.parametrize(("cfg", "objective"), FOBA_CASES)
def test_recorder_can_stop_on_a_backward_check(cfg, objective):
    callback, _ = _stopper(1, kinds=("check",))
    res = run(cfg, objective, recorder=callback)
    assert res.cancelled and res.trace[-2].kind == "check" and res.trace[-1].kind == "stop"
    support = replay(res.trace)[-1]
    assert frozenset(res.support.tolist()) == support
    assert res.objective == pytest.approx(independent_refit(objective, support)[2], rel=1e-9)


@pytest.mark.parametrize(("cfg", "objective"), CASES)
def test_uncancelled_run_reports_why_it_stopped(cfg, objective):
    res = result_of(cfg, objective)
    assert res.cancelled is False
    assert res.stop_reason and res.trace[-1].reason == res.stop_reason
    assert res.stop_reason != "stopped by recorder"


# --------------------------------------------------------------------------- degenerate designs

DEGENERATE_CONFIGS = [cfg for cfg in CONFIGS if cfg[0] != "backward"]


@functools.cache
def degenerate_problem():
    """8 ordinary columns, then a duplicate of column 2 (8), a constant column (9) and a column
    of zeros (10)."""
    X, y = make_decoy_problem(3, n=30, d=8, k=3)
    X = np.column_stack([X, X[:, 2], np.full(30, 3.0), np.zeros(30)])
    return X, y, (y > np.median(y)).astype(int)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("k", [3, 8])
@pytest.mark.parametrize("cfg", DEGENERATE_CONFIGS, ids=_id)
def test_degenerate_columns_least_squares(cfg, k):
    X, y, _ = degenerate_problem()
    params = _params(cfg, "least_squares")
    res = engine.select(X, y, algorithm=cfg[0], k=k, **params, standardize=False)
    S = set(res.support.tolist())
    assert not {2, 8} <= S  # a duplicate adds nothing once its twin is in
    assert not S & {9, 10}  # nothing the intercept does not already do
    assert res.objective == pytest.approx(ls_refit(X, y, sorted(S))[2], rel=1e-9)
    assert len(S) <= 8
    if k == 8 and cfg[0] not in PATH_METHODS:
        # Eight independent directions: the full-rank least-squares fit.
        assert res.objective == pytest.approx(ls_refit(X, y, range(11))[2], rel=1e-8)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("cfg", DEGENERATE_CONFIGS, ids=_id)
def test_degenerate_columns_logistic(cfg):
    X, _, t = degenerate_problem()
    params = _params(cfg, "logistic")
    res = engine.select(
        X, t, algorithm=cfg[0], objective="logistic", k=3, **params, standardize=False
    )
    assert 10 not in res.support
    assert res.objective == pytest.approx(logistic_refit(X, t, res.support, lam=LAM)[2], rel=1e-9)


def test_backward_refuses_collinear_columns():
    X, y, _ = degenerate_problem()
    with pytest.raises(ValueError, match="linear combination"):
        engine.select(
            np.vstack([X, X + 0.0]), np.r_[y, y], algorithm="backward", k=3, standardize=False
        )
