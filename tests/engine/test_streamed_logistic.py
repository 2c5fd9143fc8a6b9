"""Logistic regression on rows read in chunks (engine.from_rows) against the in-memory
``Logistic`` through ``engine.select``: the same supports, traces and objectives, and the
passes counted."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

import engine
from engine.config import ConfigError
from engine.datasets.bundled import load_bundled
from engine.datasets.classification import liu2014_logistic
from engine.from_rows import select_from_rows
from engine.objectives.logistic import Logistic
from engine.objectives.streamed_logistic import StreamedLogistic
from engine.rows import ArrayRows

PATHS = [
    ("foba-obj", {"path_end": "sparsity"}),
    ("foba-gdt", {"path_end": "sparsity"}),
    ("omp", {}),
]


class Counting:
    """An ArrayRows that counts, independently of the objective, what was read."""

    def __init__(self, X: np.ndarray, y: np.ndarray, chunk_rows: int) -> None:
        self.inner = ArrayRows(X, y, chunk_rows=chunk_rows)
        self.n_features = self.inner.n_features
        self.widths: list[int] = []
        self.rows = 0

    def chunks(self, columns: Sequence[int] | None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        self.widths.append(self.n_features if columns is None else len(columns))
        for X, y in self.inner.chunks(columns):
            self.rows += X.shape[0]
            yield X, y


def _same(ref, got, rel: float = 1e-8) -> None:
    assert list(got.support) == list(ref.support)
    assert [(e.kind, e.feature) for e in got.trace] == [(e.kind, e.feature) for e in ref.trace]
    assert got.objective == pytest.approx(ref.objective, rel=rel)
    for a, b in zip(got.trace, ref.trace, strict=True):
        assert a.objective == pytest.approx(b.objective, rel=rel)
    np.testing.assert_allclose(got.coef, ref.coef, rtol=1e-5, atol=1e-7)
    assert got.intercept == pytest.approx(ref.intercept, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("algorithm, extra", PATHS)
@pytest.mark.parametrize("standardize", [True, False])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_same_answer_as_in_memory(algorithm, extra, standardize, fit_intercept):
    problem = liu2014_logistic(3, n=150, d=40, s=5)
    X, y = problem.X, problem.y
    common = dict(algorithm=algorithm, k=6, standardize=standardize, fit_intercept=fit_intercept)
    ref = engine.select(X, y, objective="logistic", **common, **extra)
    source = Counting(X, y, chunk_rows=37)  # 37 does not divide 150
    got = select_from_rows(source, **common, **extra)
    _same(ref, got)
    # Every pass counted, and only one full-width pass per forward step after the first.
    assert got.passes == len(source.widths)
    assert got.rows_read == source.rows == got.passes * 150
    assert got.full_passes == sum(w == 40 for w in source.widths)
    assert got.full_passes == 1 + sum(e.kind == "add" for e in got.trace)


def test_foba_with_deletions_matches():
    # Zhang's path (no early end) goes past k and deletes: the backward costs are compared.
    problem = liu2014_logistic(5, n=120, d=30, s=4)
    X, y = problem.X, problem.y
    ref = engine.select(X, y, algorithm="foba-obj", objective="logistic", k=4, path_end="zhang")
    assert any(e.kind in ("remove", "check") for e in ref.trace)
    got = select_from_rows(
        ArrayRows(X, y, chunk_rows=50), algorithm="foba-obj", k=4, path_end="zhang"
    )
    _same(ref, got)
    checks = [
        (e.gain, f.gain) for e, f in zip(ref.trace, got.trace, strict=True) if e.kind == "check"
    ]
    for a, b in checks:
        assert b == pytest.approx(a, rel=1e-7, abs=1e-14)


@pytest.mark.parametrize("algorithm, extra", PATHS)
def test_breast_cancer_string_classes(algorithm, extra):
    problem = load_bundled("breast_cancer")
    X, y = problem.X, np.asarray(problem.y)
    assert y.dtype.kind in "UO"  # "benign" / "malignant"
    ref = engine.select(X, y, algorithm=algorithm, objective="logistic", k=5, **extra)
    got = select_from_rows(ArrayRows(X, y, chunk_rows=128), algorithm=algorithm, k=5, **extra)
    _same(ref, got)
    assert got.classes == ("benign", "malignant")


def test_one_row_chunks_constant_and_zero_columns():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(41, 9))
    X[:, 2] = 3.0  # constant: scale 1, the intercept's twin
    X[:, 5] = 0.0  # nothing at all: never a candidate
    y = (X[:, 0] - X[:, 7] + 0.5 * rng.normal(size=41) > 0).astype(int)
    for algorithm, extra in PATHS:
        ref = engine.select(X, y, algorithm=algorithm, objective="logistic", k=3, **extra)
        got = select_from_rows(ArrayRows(X, y, chunk_rows=1), algorithm=algorithm, k=3, **extra)
        _same(ref, got)
        assert 5 not in got.support


def test_record_candidates_same_scores():
    problem = liu2014_logistic(1, n=80, d=20, s=3)
    X, y = problem.X, problem.y
    kw = dict(algorithm="foba-obj", k=3, path_end="sparsity", record_candidates=True)
    ref = engine.select(X, y, objective="logistic", **kw)
    got = select_from_rows(ArrayRows(X, y, chunk_rows=30), **kw)
    _same(ref, got)
    for a, b in zip(ref.trace, got.trace, strict=True):
        if a.candidates is not None:
            assert b.candidates is not None
            np.testing.assert_allclose(
                b.candidates.scores, a.candidates.scores, rtol=1e-7, atol=1e-14
            )


def test_cancel_from_the_recorder():
    problem = liu2014_logistic(2, n=100, d=20, s=4)

    def stop_after_two(event):
        return not (event.kind == "add" and event.support_size >= 2)

    got = select_from_rows(
        ArrayRows(problem.X, problem.y, chunk_rows=25),
        algorithm="omp",
        k=5,
        recorder=stop_after_two,
    )
    assert got.cancelled and len(got.support) == 2
    assert got.trace[-1].kind == "stop"


def test_refusals():
    problem = liu2014_logistic(0, n=40, d=6, s=2)
    rows = ArrayRows(problem.X, problem.y, chunk_rows=10)
    with pytest.raises(ConfigError, match="foba-obj, foba-gdt, omp") as info:
        select_from_rows(rows, algorithm="lasso", k=2)
    assert info.value.field == "algorithm"
    with pytest.raises(ConfigError) as info:
        select_from_rows(rows, algorithm="omp", k=2, replacement="full")
    assert info.value.field == "replacement"
    three = np.arange(40) % 3
    with pytest.raises(ValueError, match="exactly two distinct labels"):
        select_from_rows(ArrayRows(problem.X, three, chunk_rows=7), algorithm="omp", k=2)
    bad = problem.X.copy()
    bad[17, 4] = np.nan
    with pytest.raises(ValueError, match=r"row 17, column 4"):
        select_from_rows(ArrayRows(bad, problem.y, chunk_rows=7), algorithm="omp", k=2)


def test_value_and_gradient_anywhere():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(50, 5)) * [1, 10, 1, 0.1, 1], rng.integers(0, 2, 50)
    coef = rng.normal(size=5)
    coef[2] = 0.0
    for standardize in (False, True):
        streamed = StreamedLogistic(ArrayRows(X, y, chunk_rows=7), standardize=standardize)
        memory = Logistic(X, y, standardize=standardize)
        assert streamed.value(coef, 0.3) == pytest.approx(memory.value(coef, 0.3), rel=1e-12)
        g, gb = streamed.gradient(coef, 0.3)
        g_ref, gb_ref = memory.gradient(coef, 0.3)
        np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-14)
        assert gb == pytest.approx(gb_ref, rel=1e-10, abs=1e-14)


def test_a_poll_stops_the_run_inside_a_pass(monkeypatch):
    """A callback with ``poll`` is asked before every chunk: a stop needs no full pass, and
    the support reached so far is refitted (more passes, no more polls)."""
    monkeypatch.setattr("engine.trace.POLL_SECONDS", 0.0)  # ask at every chunk, not by time
    problem = liu2014_logistic(4, n=120, d=15, s=3)

    class StopAfterAdd:
        def __init__(self) -> None:
            self.added = 0
            self.polls_after = 0

        def __call__(self, event):
            self.added += event.kind == "add"

        def poll(self):
            if self.added >= 1:
                self.polls_after += 1
                return False
            return True

    callback = StopAfterAdd()
    rows = ArrayRows(problem.X, problem.y, chunk_rows=10)
    got = select_from_rows(rows, algorithm="foba-gdt", k=4, recorder=callback)
    assert got.cancelled and len(got.support) == 1
    assert callback.polls_after == 1  # stopped at the first chunk it was asked about
    assert got.trace[-1].kind == "stop"


def test_the_streamed_estimate_counts_passes_and_offers_a_sample():
    """The cost model's shape (engine.estimate.streamed_estimate), never a timing."""
    from engine.estimate import LONG_SECONDS, STREAMED_PASSES, streamed_estimate

    def predicted(algorithm, k, per_pass, n=10_000_000, **params):
        return streamed_estimate(
            algorithm, n_samples=n, n_features=200, k=k, seconds_per_pass=per_pass, params=params
        )

    short = predicted("omp", 3, 0.01)
    assert not short.long and short.seconds == pytest.approx(
        (1 + 3 * STREAMED_PASSES["omp"]) * 0.01
    )
    long = predicted("foba-obj", 10, 20.0, path_end="sparsity")
    assert long.long and long.seconds == pytest.approx((1 + 10 * STREAMED_PASSES["foba-obj"]) * 20)
    assert "reads the table about 171 times" in long.sentence
    (sample,) = long.faster
    rows = sample.settings["sample_rows"]
    assert 1000 <= rows < 10_000_000 and rows % 1000 == 0
    assert sample.seconds <= 20.0 + LONG_SECONDS  # one pass to draw it, a short run on it
    assert predicted("foba-gdt", 20, 20.0).seconds > predicted("foba-gdt", 10, 20.0).seconds
    # A table smaller than the smallest sample (1000 rows) has no faster setting.
    assert predicted("omp", 10, 20.0, n=999).faster == []
    with pytest.raises(ConfigError, match="foba-obj, foba-gdt, omp"):
        predicted("lasso", 3, 1.0)
