"""Edge cases found by the reproductions: the fixed-threshold heuristic's cycle, and the
log-loss change at saturated probabilities."""

from __future__ import annotations

import warnings

import numpy as np

import engine
from engine.datasets import load_bundled
from engine.objectives.coordinate_newton import loss_change


def test_fixed_threshold_heuristic_stops_when_it_would_cycle():
    # Boston rows of one 50-row split (Zhang's Figure 4 setting) with a constant column: with
    # eps_back = 5 the heuristic adds feature 3 and deletes it at once, forever.
    b = load_bundled("boston_housing")
    X = np.column_stack([b.X, np.ones(b.n_samples)])
    rows = np.random.default_rng(3).permutation(b.n_samples)[:50]
    Xtr = X[rows] / np.sqrt((X[rows] ** 2).mean(axis=0))
    r = engine.select(
        Xtr,
        b.y[rows],
        algorithm="fb-threshold",
        k=10,
        eps_back=5.0,
        fit_intercept=False,
        standardize=False,
    )
    moves = [(e.kind, e.feature) for e in r.trace if e.kind in ("add", "remove")]
    assert moves[-2:] == [("add", 3), ("remove", 3)]
    assert r.n_steps == len(moves) < 10  # stopped, not run to max_steps = 50
    assert "cycles" in r.stop_reason


def test_foba_never_meets_the_cycle_rule():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 30))
    y = X[:, :4] @ np.array([3.0, -2.0, 1.5, 1.0]) + rng.normal(size=60)
    r = engine.select(X, y, algorithm="foba-obj", k=4, standardize=False)
    assert "cycles" not in r.stop_reason


def test_log_loss_change_is_exact_when_the_probability_saturates():
    p = np.array([0.0, 1.0, 0.0, 1.0])
    z = np.array([800.0, -800.0, -800.0, 800.0])
    t = np.array([0.0, 1.0, 0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = loss_change(p, z, t)
    # p = 0, z > 0: log(1 + e^800 * 0) = 0 exactly; p = 1, z < 0 likewise; the other two
    # move further into the saturated side, also 0.
    np.testing.assert_array_equal(out, np.zeros(4))
