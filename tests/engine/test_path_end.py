"""path_end="auto" (the default) returns Zhang's full-path answer.

The guarantee behind the default: on generated problems of several kinds, several seeds, both
losses and both forward rules, the default's support and objective equal those of Zhang's
full path of 5k steps: an independent transcription of Zhang's Figure 3 (``reference_foba``)
on small problems, the engine's own ``path_end="zhang"`` on the papers' settings. The cases
include paths whose answer is a later return to k (not the first size-k support), which
``path_end="sparsity"`` misses, so the comparison covers what the longer path is for.
"""

from __future__ import annotations

import numpy as np
import pytest
from engine_problems import make_decoy_classification, make_decoy_problem
from engine_reference import reference_foba

import engine
from engine.algorithms.common import auto_margin, size_cap
from engine.datasets import generate
from engine.trace import best_along_path, replay


def _late(res: engine.SelectionResult, k: int) -> bool:
    """Zhang's answer came after the path's first size-k support."""
    best = best_along_path(res.trace)[k]
    sizes = [len(s) for s in replay(res.trace)]
    first = next(e.step for e, size in zip(res.trace, sizes, strict=True) if size == k)
    return best[2] != first


@pytest.mark.parametrize("rule", ["obj", "gdt"])
@pytest.mark.parametrize("seed", range(4))
def test_auto_equals_the_reference_full_path_least_squares(rule, seed):
    X, y = make_decoy_problem(seed, n=40, d=12, k=3)
    _, best = reference_foba("least_squares", X, y, k=3, rule=rule)
    res = engine.select(X, y, algorithm=f"foba-{rule}", k=3, standardize=False)
    assert res.params["path_end"] == "auto"
    assert frozenset(res.support.tolist()) == best[3][1]
    assert res.objective == pytest.approx(best[3][0], rel=1e-9)


@pytest.mark.parametrize("rule", ["obj", "gdt"])
def test_auto_equals_the_reference_full_path_logistic(rule):
    X, y = make_decoy_classification(6)
    _, best = reference_foba("logistic", X, y, k=3, rule=rule, lam=1e-2)
    res = engine.select(
        X, y, algorithm=f"foba-{rule}", objective="logistic", k=3, lam=1e-2, standardize=False
    )
    assert frozenset(res.support.tolist()) == best[3][1]
    assert res.objective == pytest.approx(best[3][0], rel=1e-9)


def _paper_cases():
    """Zhang's setting (incl. strongly correlated decoys), Liu et al.'s and Elenberg et al.'s,
    with the seeds and k where Zhang's answer is a later return to k among them."""
    for seed in range(3):
        P = generate("zhang2008", random_state=seed, correlation=0.95)
        yield f"zhang2008-corr.95-s{seed}", P.X, P.y, "least_squares", 5, {}
        yield (
            f"zhang2008-corr.95-s{seed}-logistic",
            P.X,
            (P.y > np.median(P.y)) * 1.0,
            ("logistic"),
            5,
            {"lam": 0.01},
        )
    P = generate("zhang2008", random_state=0)
    yield "zhang2008-s0", P.X, P.y, "least_squares", 5, {}
    for s in (5, 11):
        P = generate("liu2014_logistic", random_state=2 + s, s=s)
        yield f"liu2014-s{s}", P.X, P.y, "logistic", s, {"lam": 0.01}
        yield f"liu2014-s{s}-ls", P.X, (P.y > 0) * 1.0, "least_squares", s, {}
    P = generate("elenberg2016", random_state=0, n=200)
    yield "elenberg2016", P.X, P.y, "logistic", 20, {}


PAPER_CASES = list(_paper_cases())


def test_auto_equals_zhangs_path_on_the_papers_settings():
    lates = 0
    for label, X, y, objective, k, params in PAPER_CASES:
        for algorithm in ("foba-obj", "foba-gdt"):
            kw = dict(algorithm=algorithm, objective=objective, k=k, **params)
            full = engine.select(X, y, path_end="zhang", **kw)
            auto = engine.select(X, y, **kw)
            where = f"{label} {algorithm}"
            assert set(auto.support.tolist()) == set(full.support.tolist()), where
            assert auto.objective == pytest.approx(full.objective, rel=1e-9), where
            # the default path is the start of Zhang's path, cut at the cap
            n = len(auto.trace) - 1  # without the stop event
            assert [(e.kind, e.feature) for e in auto.trace[:n]] == [
                (e.kind, e.feature) for e in full.trace[:n]
            ], where
            assert max(len(s) for s in replay(auto.trace)) <= k + auto_margin(k), where
            lates += _late(full, k)
    assert lates >= 2  # the cases include answers that only a return to k finds


def test_size_cap_and_path_budget():
    assert size_cap(None, "auto") is None
    assert size_cap(40, "zhang") is None
    assert size_cap(40, "sparsity") == 40
    assert size_cap(40, "auto") == 45 and size_cap(200, "auto") == 220
    with pytest.raises(ValueError):
        size_cap(3, "bogus")
    b = engine.path_budget("foba-obj", 50, 10_000)
    assert (b.steps, b.size, b.likely_steps) == (250, 55, 55)
    b = engine.path_budget("foba-gdt", 50, 10_000, {"path_end": "zhang", "max_steps": 70})
    assert (b.steps, b.size, b.likely_steps) == (70, None, 70)
    assert engine.path_budget("lasso", 10, 100).size == 15
    assert engine.path_budget("omp", 10, 100).size is None


def test_auto_run_stays_within_its_budget():
    P = generate("zhang2008", random_state=0, correlation=0.95)
    res = engine.select(P.X, P.y, algorithm="foba-obj", k=5)
    budget = engine.path_budget("foba-obj", 5, P.X.shape[1])
    assert res.n_steps <= budget.steps
    assert max(len(s) for s in replay(res.trace)) <= budget.size


@pytest.mark.parametrize("algorithm", ["lasso", "lasso-refit"])
@pytest.mark.parametrize("seed", range(3))
def test_lasso_auto_equals_zhangs_path(algorithm, seed):
    P = generate("zhang2008", random_state=seed, correlation=0.95)
    for objective, y in (("least_squares", P.y), ("logistic", (P.y > np.median(P.y)) * 1.0)):
        kw = dict(algorithm=algorithm, objective=objective, k=5)
        full = engine.select(P.X, y, path_end="zhang", **kw)
        auto = engine.select(P.X, y, **kw)
        assert set(auto.support.tolist()) == set(full.support.tolist()), objective
        assert auto.objective == pytest.approx(full.objective, rel=1e-9), objective
        assert max(len(s) for s in replay(auto.trace)) <= 10
