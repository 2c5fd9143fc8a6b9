"""The logistic kernels of issue 22 (leftovers) give the answers the previous ones gave.

``data/logistic_answers_before_i22.json`` was written by the tree before the change (commit
02955ce: ``logistic_coordinate_moves`` with its per-entry sigmoid update, the einsum of the
squared columns, and ``engine.select(standardize=True)`` on a scaled copy of X) for FoBa-obj,
FoBa-gdt and forward-obj on Liu et al.'s and Elenberg et al.'s generators, three seeds each,
with and without standardisation. The new kernels (an expit per entry, cached squares, the
column scaling folded into the products) must pick the same supports in the same number of
steps, with objectives equal to rounding.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import engine
from engine.datasets import generate
from engine.objectives.logistic import Logistic

_ANSWERS = Path(__file__).parent / "data" / "logistic_answers_before_i22.json"
CASES = json.loads(_ANSWERS.read_text())


def _case_id(c: dict) -> str:
    size = c["params"].get("d", c["params"].get("p"))
    std = "std" if c["standardize"] else "raw"
    return f"{c['dataset']}-d{size}-s{c['seed']}-{c['algorithm']}-{std}"


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_same_answer_as_before(case: dict) -> None:
    problem = generate(case["dataset"], random_state=case["seed"], **case["params"])
    res = engine.select(
        problem.X,
        problem.y,
        algorithm=case["algorithm"],
        objective="logistic",
        k=case["k"],
        lam=case["lam"],
        standardize=case["standardize"],
    )
    assert sorted(int(j) for j in res.support) == case["support"]
    assert res.n_steps == case["steps"]
    assert res.objective == pytest.approx(case["objective"], rel=1e-9)


@pytest.mark.parametrize("sparse", [False, True])
def test_standardize_folds_the_scaling_without_copying_x(sparse: bool) -> None:
    """The objective built by engine.select(standardize=True) reads the caller's X itself and
    agrees with the objective on an explicitly scaled copy (value, gradient, forward drops,
    deletion costs), dense and sparse."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((80, 12)) * rng.uniform(0.1, 20.0, 12) + rng.uniform(-5, 5, 12)
    X[rng.random(X.shape) < 0.3] = 0.0
    y = (X[:, 0] / 20 + rng.standard_normal(80) > 0).astype(int)
    scale = X.std(axis=0)
    data = sp.csc_matrix(X) if sparse else X
    folded = Logistic(data, y, lam=0.01, standardize=True)
    if not sparse:
        assert np.shares_memory(folded.design.X, X)  # no scaled copy
    np.testing.assert_allclose(folded.design.scale, scale, rtol=1e-12)
    copied = Logistic(sp.csc_matrix(X / scale) if sparse else X / scale, y, lam=0.01)
    a, b = folded.start(), copied.start()
    for j in (3, 7):
        a.add(j)
        b.add(j)
    assert a.value == pytest.approx(b.value, rel=1e-12)
    np.testing.assert_allclose(a.gradient(), b.gradient(), rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(a.coordinate_drops(), b.coordinate_drops(), rtol=1e-9, atol=1e-15)
    assert a.best_candidate("obj", set()) == pytest.approx(b.best_candidate("obj", set()))
    np.testing.assert_allclose(a.deletion_costs(), b.deletion_costs(), rtol=1e-9)
