"""The smoothed hinge and absolute losses on rows read in chunks (engine.from_rows,
engine.objectives.streamed_glm) against the in-memory objectives through ``engine.select``:
the same supports, traces and objectives, and the passes counted."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.config import ConfigError
from engine.datasets.classification import liu2014_logistic
from engine.from_rows import select_from_rows
from engine.objectives.smoothed import SmoothedAbsolute, SmoothedHinge
from engine.objectives.streamed_glm import StreamedSmoothedAbsolute, StreamedSmoothedHinge
from engine.rows import ArrayRows
from tests.engine.test_streamed_logistic import PATHS, Counting, _same


def _regression(seed: int, n: int = 140, d: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """A sparse linear model with heavy-tailed noise (where the Huber loss is meant for)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.2, 5.0, size=d)
    w = np.zeros(d)
    w[[1, 4, d // 3, d - 2]] = [2.0, -1.5, 1.0, 0.7]
    y = X @ (w / X.std(axis=0)) + 0.5 + rng.standard_t(2, size=n)
    return X, y


def _data(objective: str) -> tuple[np.ndarray, np.ndarray]:
    if objective == "smoothed_absolute":
        return _regression(3)
    problem = liu2014_logistic(3, n=150, d=30, s=5)
    return problem.X, problem.y


@pytest.mark.parametrize("objective", ["smoothed_hinge", "smoothed_absolute"])
@pytest.mark.parametrize("algorithm, extra", PATHS)
@pytest.mark.parametrize("standardize", [True, False])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_same_answer_as_in_memory(objective, algorithm, extra, standardize, fit_intercept):
    X, y = _data(objective)
    n, d = X.shape
    common = dict(
        algorithm=algorithm,
        objective=objective,
        k=5,
        standardize=standardize,
        fit_intercept=fit_intercept,
        beta=4.0,
        lam=1e-3,
    )
    ref = engine.select(X, y, **common, **extra)
    source = Counting(X, y, chunk_rows=37)  # 37 divides neither 140 nor 150
    got = select_from_rows(source, **common, **extra)
    _same(ref, got)
    # Every pass counted; each reads every row.
    assert got.passes == len(source.widths)
    assert got.rows_read == source.rows == got.passes * n
    assert got.full_passes == sum(w >= d for w in source.widths)
    if algorithm != "foba-obj":  # the gradient: one full-width pass per forward step
        assert got.full_passes == 1 + sum(e.kind == "add" for e in got.trace)


@pytest.mark.parametrize("objective", ["smoothed_hinge", "smoothed_absolute"])
def test_foba_with_deletions_matches(objective):
    # Zhang's path (no early end) goes past k and deletes: the backward costs are compared.
    X, y = _data(objective)
    kw = dict(algorithm="foba-obj", objective=objective, k=4, path_end="zhang", beta=2.0)
    ref = engine.select(X, y, **kw)
    assert any(e.kind in ("remove", "check") for e in ref.trace)
    got = select_from_rows(ArrayRows(X, y, chunk_rows=50), **kw)
    _same(ref, got)
    checks = [
        (e.gain, f.gain) for e, f in zip(ref.trace, got.trace, strict=True) if e.kind == "check"
    ]
    assert checks
    for a, b in checks:
        assert b == pytest.approx(a, rel=1e-7, abs=1e-13)


def test_scores_and_costs_equal_the_in_memory_active_set():
    """The generic forward drops and deletion costs themselves, on one-row chunks."""
    X, y = _regression(5, n=60, d=8)
    for fit_intercept in (True, False):
        memory = SmoothedAbsolute(X, y, beta=3.0, lam=1e-2, fit_intercept=fit_intercept)
        rows = ArrayRows(X, y, chunk_rows=1)
        streamed = StreamedSmoothedAbsolute(rows, beta=3.0, lam=1e-2, fit_intercept=fit_intercept)
        a, b = memory.start(), streamed.start()
        for j in (4, 1):
            a.add(j)
            b.add(j)
        assert b.value == pytest.approx(a.value, rel=1e-10)
        np.testing.assert_allclose(
            b.coordinate_drops(), a.coordinate_drops(), rtol=1e-8, atol=1e-13
        )
        np.testing.assert_allclose(b.deletion_costs(), a.deletion_costs(), rtol=1e-8, atol=1e-13)
        np.testing.assert_allclose(b.gradient(), a.gradient(), rtol=1e-9, atol=1e-13)
        np.testing.assert_allclose(
            b.quadratic_scores(), a.quadratic_scores(), rtol=1e-9, atol=1e-13
        )


def test_hinge_labels_strings_and_value_anywhere():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 5))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=50) > 0, "yes", "no")
    memory = SmoothedHinge(X, y, beta=5.0)
    streamed = StreamedSmoothedHinge(ArrayRows(X, y, chunk_rows=7), beta=5.0)
    coef = rng.normal(size=5)
    coef[2] = 0.0
    assert streamed.value(coef, 0.3) == pytest.approx(memory.value(coef, 0.3), rel=1e-12)
    g, gb = streamed.gradient(coef, 0.3)
    g_ref, gb_ref = memory.gradient(coef, 0.3)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-14)
    assert gb == pytest.approx(gb_ref, rel=1e-10, abs=1e-14)
    got = select_from_rows(
        ArrayRows(X, y, chunk_rows=9), algorithm="omp", objective="smoothed_hinge", k=2
    )
    assert got.classes == ("no", "yes")


def test_refusals():
    X, y = _regression(0, n=40, d=6)
    rows = ArrayRows(X, y, chunk_rows=10)
    with pytest.raises(ConfigError, match="logistic, smoothed_hinge, smoothed_absolute") as info:
        select_from_rows(rows, algorithm="omp", objective="least_squares", k=2)
    assert info.value.field == "objective"
    with pytest.raises(ConfigError, match="beta"):  # as engine.select validates it
        select_from_rows(rows, algorithm="omp", objective="smoothed_absolute", k=2, beta=0.0)
    with pytest.raises(ConfigError) as info:
        select_from_rows(rows, algorithm="lasso", objective="smoothed_hinge", k=2)
    assert info.value.field == "algorithm"
    three = np.arange(40) % 3
    with pytest.raises(ValueError, match="exactly two distinct labels"):
        select_from_rows(
            ArrayRows(X, three, chunk_rows=7), algorithm="omp", objective="smoothed_hinge", k=2
        )
    bad = y.copy()
    bad[23] = np.inf
    with pytest.raises(ValueError, match=r"row 23"):
        select_from_rows(
            ArrayRows(X, bad, chunk_rows=7), algorithm="omp", objective="smoothed_absolute", k=2
        )
    words = np.array(["a"] * 40)
    with pytest.raises(ValueError, match="numeric"):
        select_from_rows(
            ArrayRows(X, words, chunk_rows=7), algorithm="omp", objective="smoothed_absolute", k=2
        )


def test_the_streamed_estimate_prices_each_loss_by_its_passes():
    """engine.estimate.streamed_estimate for the smoothed losses: their measured passes per
    step, their parameters checked; never a timing."""
    from engine.estimate import PASSES_BY_OBJECTIVE, streamed_estimate

    for objective, passes in PASSES_BY_OBJECTIVE.items():
        got = streamed_estimate(
            "omp",
            n_samples=10_000,
            n_features=50,
            k=4,
            seconds_per_pass=0.01,
            objective=objective,
        )
        assert got.seconds == pytest.approx((1 + 4 * passes["omp"]) * 0.01)
    with pytest.raises(ConfigError, match="beta"):
        streamed_estimate(
            "omp",
            n_samples=100,
            n_features=5,
            k=2,
            seconds_per_pass=0.1,
            objective="smoothed_hinge",
            params={"beta": -1.0},
        )
    with pytest.raises(ConfigError) as info:
        streamed_estimate(
            "omp", n_samples=100, n_features=5, k=2, seconds_per_pass=0.1, objective="crf"
        )
    assert info.value.field == "objective"


@pytest.mark.parametrize("objective", ["smoothed_hinge", "smoothed_absolute"])
def test_best_candidate_prunes_passes_but_not_the_winner(objective):
    """FoBa-obj's argmax without iterating the columns that cannot win: the same feature and
    the same drop as the argmax of every exact drop, in fewer passes over fewer columns."""
    X, y = _data(objective)
    factory = StreamedSmoothedHinge if objective == "smoothed_hinge" else StreamedSmoothedAbsolute
    streamed = factory(ArrayRows(X, y, chunk_rows=40), beta=10.0, lam=1e-3)
    state = streamed.start()
    for j in (0, 7):
        state.add(j)
        for excluded in (set(), {3, 11}):
            before = streamed.passes.passes
            drops = state.coordinate_drops()
            every = streamed.passes.passes - before
            drops[list(excluded)] = 0.0
            best = int(np.argmax(drops))
            before = streamed.passes.passes
            j_got, drop = state.best_candidate("obj", excluded)
            assert (j_got, drop) == (best, pytest.approx(drops[best], rel=1e-12))
            assert streamed.passes.passes - before <= every
