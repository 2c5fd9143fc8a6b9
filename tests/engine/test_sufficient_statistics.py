"""Least squares from sufficient statistics against the in-memory objective on the same rows.

The reference is ``engine.select`` on X and y (engine.objectives.least_squares), which reads
the rows; the statistics objective never sees them. Supports must be equal and objectives,
coefficients and intercepts equal to rounding, for every algorithm the statistics allow.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import engine
from engine.config import ConfigError
from engine.cv import fold_errors
from engine.datasets import load_bundled
from engine.from_statistics import (
    fold_errors_from_statistics,
    heldout_mse,
    select_from_statistics,
    statistics_algorithms,
)
from engine.objectives.gram import GramLeastSquares
from engine.objectives.least_squares import LeastSquares
from engine.statistics import SufficientStatistics, fold_blocks, fold_statistics, merge_all

RTOL = 1e-8

# Every least-squares algorithm the statistics objective can run, with the parameters it needs.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("foba-obj", {}),
    ("foba-gdt", {}),
    ("foba-refit", {}),
    ("fb-threshold", {"eps_back": 1e-3}),
    ("forward-obj", {}),
    ("forward-obj", {"selection": "quad"}),
    ("forward-obj", {"replacement": "full"}),
    ("omp", {}),
    ("omp", {"replacement": "simple"}),
    ("stepwise", {}),
    ("replacement", {}),
    ("replacement", {"variant": "simple"}),
    ("backward", {}),
    ("oblivious", {}),
]


def _problem(seed: int, n: int = 300, d: int = 20, offset: float = 0.0):
    rng = np.random.default_rng(seed)
    cov = 0.5 ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    X = rng.multivariate_normal(np.zeros(d), cov, size=n) * rng.uniform(0.5, 5, d)
    X += offset + rng.normal(scale=3, size=d)
    coef = np.zeros(d)
    coef[rng.choice(d, 5, replace=False)] = rng.normal(scale=2, size=5)
    y = X @ coef + 4.0 + rng.normal(size=n)
    return X, y


def _one_hot_problem(seed: int, n: int = 400):
    """Numeric columns plus two categorical columns one-hot encoded (every level kept), with
    the group of each dummy: the dummies of a category sum to one, collinear with the
    intercept."""
    rng = np.random.default_rng(seed)
    num = rng.normal(size=(n, 8)) * rng.uniform(0.5, 3, 8)
    cats = [rng.integers(0, 4, n), rng.integers(0, 3, n)]
    dummies = [np.eye(int(c.max()) + 1)[c] for c in cats]
    X = np.hstack([num, *dummies])
    groups = list(range(8)) + [8] * dummies[0].shape[1] + [9] * dummies[1].shape[1]
    effect = np.array([0.0, 1.5, -1.0, 0.5])[cats[0]] + np.array([0.0, 0.0, 2.0])[cats[1]]
    y = num[:, 0] * 1.2 - num[:, 3] + effect + rng.normal(size=n)
    return X, y, np.array(groups)


def _assert_same(stats, X, y, algorithm, params, k, **kw):
    ref = engine.select(X, y, algorithm=algorithm, k=k, **params, **kw)
    got = select_from_statistics(stats, algorithm=algorithm, k=k, **params, **kw)
    assert list(got.support) == list(ref.support), (algorithm, params, kw)
    np.testing.assert_allclose(got.objective, ref.objective, rtol=RTOL)
    scale = np.abs(ref.coef).max() + 1
    np.testing.assert_allclose(got.coef, ref.coef, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(got.intercept, ref.intercept, rtol=1e-8, atol=1e-8 * scale)
    assert got.n_steps == ref.n_steps
    assert got.stop_reason == ref.stop_reason
    # The whole trace: same events, same support changes, same objectives along the path.
    assert [e.kind for e in got.trace] == [e.kind for e in ref.trace]
    return abs(got.objective - ref.objective) / abs(ref.objective)


@pytest.mark.parametrize(("algorithm", "params"), CASES)
@pytest.mark.parametrize("standardize", [True, False])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_same_answer_as_in_memory(algorithm, params, standardize, fit_intercept):
    X, y = _problem(1)
    stats = SufficientStatistics.from_arrays(X, y, block_rows=77)
    _assert_same(
        stats, X, y, algorithm, params, 6, standardize=standardize, fit_intercept=fit_intercept
    )


@pytest.mark.parametrize(("algorithm", "params"), CASES)
def test_same_answer_with_one_hot_groups(algorithm, params):
    X, y, groups = _one_hot_problem(2)
    stats = SufficientStatistics.from_arrays(X, y, block_rows=128)
    k = 5
    if algorithm == "backward":
        # The full model of every dummy plus the intercept is singular: drop one level each.
        keep = [j for j in range(X.shape[1]) if j not in (8, 12)]
        X, groups = X[:, keep], groups[keep]
        stats = SufficientStatistics.from_arrays(X, y, block_rows=128)
    _assert_same(stats, X, y, algorithm, params, k, groups=groups)


@pytest.mark.parametrize("name", ["boston_housing", "diabetes"])
@pytest.mark.parametrize("algorithm", ["foba-obj", "stepwise", "omp", "backward"])
def test_same_answer_on_real_tables(name, algorithm):
    data = load_bundled(name)
    stats = SufficientStatistics.from_arrays(data.X, data.y, block_rows=50)
    _assert_same(stats, data.X, data.y, algorithm, {}, 5)


def test_every_row_free_algorithm_is_covered():
    assert {a for a, _ in CASES} == set(statistics_algorithms())


@pytest.mark.parametrize("n_parts", [1, 2, 3])
def test_partition_count_and_order_do_not_change_the_answer(n_parts):
    X, y = _problem(3, n=600)
    whole = SufficientStatistics.from_arrays(X, y)
    bounds = np.linspace(0, len(y), n_parts + 1).astype(int)
    parts = [
        SufficientStatistics.from_arrays(X[a:b], y[a:b], block_rows=64)
        for a, b in itertools.pairwise(bounds)
    ]
    for merged in (merge_all(parts), sum(reversed(parts)), merge_all(parts[::-1])):
        assert merged.n == whole.n
        np.testing.assert_allclose(merged.xx, whole.xx, rtol=1e-11, atol=1e-9)
        np.testing.assert_allclose(merged.xy, whole.xy, rtol=1e-11, atol=1e-9)
        np.testing.assert_allclose(merged.mean, whole.mean, rtol=1e-12, atol=1e-12)
        for algorithm, params in CASES:
            _assert_same(merged, X, y, algorithm, params, 5)


def test_raw_sums_and_storage_round_trip(tmp_path):
    X, y = _problem(4, n=50, d=6)
    s = SufficientStatistics.from_arrays(X, y, feature_names=[f"x{j}" for j in range(6)])
    np.testing.assert_allclose(s.xtx, X.T @ X, rtol=1e-12)
    np.testing.assert_allclose(s.xty, X.T @ y, rtol=1e-12)
    np.testing.assert_allclose(s.yty, y @ y, rtol=1e-12)
    np.testing.assert_allclose(s.col_sums, X.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(s.y_sum, y.sum(), rtol=1e-12)
    back = SufficientStatistics.from_bytes(s.to_bytes())
    assert back.n == s.n and back.feature_names == s.feature_names
    np.testing.assert_array_equal(back.xx, s.xx)
    s.to_npz(str(tmp_path / "part.npz"))
    np.testing.assert_array_equal(
        SufficientStatistics.from_npz(str(tmp_path / "part.npz")).xy, s.xy
    )
    with pytest.raises(ValueError, match="different columns"):
        s.merge(SufficientStatistics.from_arrays(X, y, feature_names=list("abcdef")))


def test_subtraction_inverts_merge():
    X, y = _problem(5, n=200, d=5)
    a = SufficientStatistics.from_arrays(X[:130], y[:130])
    b = SufficientStatistics.from_arrays(X[130:], y[130:])
    back = (a + b) - b
    assert back.n == a.n
    np.testing.assert_allclose(back.xx, a.xx, rtol=1e-9, atol=1e-8)
    np.testing.assert_allclose(back.mean, a.mean, rtol=1e-12)
    np.testing.assert_allclose(back.yy, a.yy, rtol=1e-9)


def test_large_column_offset_keeps_its_precision():
    """A column at 1e6 with unit spread: raw sums of squares (1e12 per row) would lose the
    variance to cancellation; the centred merge keeps it, so the selection still matches the
    in-memory one run on the data with the offset removed exactly."""
    X, y = _problem(6, n=400, d=10)
    offset = np.zeros(10)
    offset[[0, 3, 7]] = 1e6
    shifted = X + offset
    parts = [
        SufficientStatistics.from_arrays(shifted[a : a + 57], y[a : a + 57])
        for a in range(0, 400, 57)
    ]
    stats = merge_all(parts[::-1])
    exact = SufficientStatistics.from_arrays(X, y)
    # Centred cross-products do not depend on the offset.
    np.testing.assert_allclose(stats.xx, exact.xx, rtol=1e-8, atol=1e-8 * np.abs(exact.xx).max())
    np.testing.assert_allclose(stats.mean - offset, exact.mean, rtol=0, atol=1e-8)
    # Naive raw sums on the same data lose most digits of the variance.
    naive_var = (shifted[:, 0] ** 2).sum() / 400 - (shifted[:, 0].sum() / 400) ** 2
    true_var = X[:, 0].var()
    assert abs(np.diag(stats.xx)[0] / 400 - true_var) / true_var < 1e-9
    assert abs(naive_var - true_var) / true_var > 1e-9  # the cancellation is real
    for algorithm, params in CASES:
        ref = engine.select(X, y, algorithm=algorithm, k=5, **params)
        got = select_from_statistics(stats, algorithm=algorithm, k=5, **params)
        assert list(got.support) == list(ref.support), algorithm
        np.testing.assert_allclose(got.objective, ref.objective, rtol=RTOL)
        np.testing.assert_allclose(got.coef, ref.coef, rtol=1e-7, atol=1e-9)


def test_value_and_gradient_at_any_point_match_the_rows():
    X, y = _problem(7, n=120, d=8)
    stats = SufficientStatistics.from_arrays(X, y, block_rows=31)
    rng = np.random.default_rng(0)
    scale = rng.uniform(0.5, 2, 8)
    for fit_intercept in (True, False):
        ref = LeastSquares(X / scale, y, fit_intercept=fit_intercept)
        got = GramLeastSquares(stats, fit_intercept=fit_intercept, scale=scale)
        for _ in range(3):
            w, b = rng.normal(size=8), float(rng.normal())
            np.testing.assert_allclose(got.value(w, b), ref.value(w, b), rtol=1e-10)
            gw, gb = got.gradient(w, b)
            rw, rb = ref.gradient(w, b)
            np.testing.assert_allclose(gw, rw, rtol=1e-9, atol=1e-10)
            np.testing.assert_allclose(gb, rb, rtol=1e-9, atol=1e-10)
        ref_state, got_state = ref.fit_support([1, 4, 6]), got.fit_support([1, 4, 6])
        for method in (
            "gradient",
            "coordinate_drops",
            "deletion_costs",
            "refit_gains",
            "refit_deletion_costs",
        ):
            np.testing.assert_allclose(
                getattr(got_state, method)(), getattr(ref_state, method)(), rtol=1e-8, atol=1e-10
            )


@pytest.mark.parametrize("algorithm", ["lasso", "frank-wolfe", "iht", "group-omp"])
def test_algorithms_that_need_rows_are_refused(algorithm):
    X, y, groups = _one_hot_problem(8, n=60)
    stats = SufficientStatistics.from_arrays(X, y)
    with pytest.raises(ConfigError, match="statistics does not offer") as err:
        select_from_statistics(stats, algorithm=algorithm, k=3, groups=groups)
    assert err.value.field == "algorithm"


def test_folds_from_chunk_statistics_match_row_folds():
    """Fold f holds out chunks f, f + K, ...; its training statistics are the merge of the
    other chunks (no second pass). The fold errors equal engine.cv.fold_errors on those rows."""
    X, y = _problem(9, n=360, d=12)
    bounds = [*list(range(0, 360, 40)), 360]
    chunks = list(itertools.pairwise(bounds))
    parts = [SufficientStatistics.from_arrays(X[a:b], y[a:b]) for a, b in chunks]
    n_folds = 3
    for f, (train, test) in enumerate(fold_statistics(parts, n_folds)):
        held = np.concatenate(
            [np.arange(a, b) for i, (a, b) in enumerate(chunks) if i % n_folds == f]
        )
        rest = np.setdiff1d(np.arange(360), held)
        assert train.n == len(rest) and test.n == len(held)
        for algorithm in ("foba-obj", "forward-obj", "backward"):
            ref = fold_errors(X, y, rest, held, algorithm=algorithm, k_max=6)
            got = fold_errors_from_statistics(train, test, algorithm=algorithm, k_max=6)
            assert got.supports == ref.supports
            assert got.mode == ref.mode
            np.testing.assert_allclose(got.errors, ref.errors, rtol=1e-8)


def test_heldout_mse_matches_rows():
    X, y = _problem(10, n=80, d=5)
    stats = SufficientStatistics.from_arrays(X, y)
    w, b = np.arange(5.0) / 7, 1.25
    np.testing.assert_allclose(heldout_mse(stats, w, b), np.mean((y - X @ w - b) ** 2), rtol=1e-10)


@pytest.mark.parametrize(
    ("standardize", "params"),
    [(True, {}), (False, {}), (True, {"fit_intercept": False})],
)
def test_shuffled_block_folds_equal_engine_cv_on_the_same_rows(standardize, params):
    """Folds as blocks of rows dealt from a seed (what CV on a table registered by reference
    does with its ranges' partials): each fold's errors equal ``engine.cv.fold_errors`` on the
    same rows, with the intercept and standardisation of the training rows."""
    X, y = _problem(12, n=410, d=9, offset=50.0)
    bounds = [0, 37, 90, 160, 171, 240, 300, 333, 410]  # uneven blocks, as ranges are
    chunks = list(itertools.pairwise(bounds))
    parts = [SufficientStatistics.from_arrays(X[a:b], y[a:b]) for a, b in chunks]
    n_folds, seed = 4, 7
    blocks = fold_blocks(len(parts), n_folds, shuffle=True, random_state=seed)
    assert sorted(i for held in blocks for i in held) == list(range(len(parts)))
    assert blocks == fold_blocks(len(parts), n_folds, shuffle=True, random_state=seed)
    folds = fold_statistics(parts, n_folds, shuffle=True, random_state=seed)
    for held_blocks, (train, test) in zip(blocks, folds, strict=True):
        held = np.concatenate([np.arange(*chunks[i]) for i in held_blocks])
        rest = np.setdiff1d(np.arange(len(y)), held)
        for algorithm in ("foba-obj", "omp"):
            ref = fold_errors(
                X,
                y,
                rest,
                held,
                algorithm=algorithm,
                k_max=5,
                params=params,
                standardize=standardize,
            )
            got = fold_errors_from_statistics(
                train,
                test,
                algorithm=algorithm,
                k_max=5,
                params=params,
                standardize=standardize,
            )
            assert got.supports == ref.supports and (got.n_train, got.n_test) == (
                ref.n_train,
                ref.n_test,
            )
            np.testing.assert_allclose(got.errors, ref.errors, rtol=1e-8)


def test_fold_blocks_refuses_more_folds_than_blocks():
    with pytest.raises(ValueError, match="number of chunks"):
        fold_blocks(3, 4)


@pytest.mark.parametrize(
    ("standardize", "fit_intercept"), [(True, True), (False, True), (True, False)]
)
def test_the_swap_certificate_from_statistics_equals_engine_certify(standardize, fit_intercept):
    """The judge's certificate on the Gram objective: the same verdict, exchanges and
    objectives as ``engine.certify`` on the rows."""
    from engine import certify
    from engine.from_statistics import certify_from_statistics

    X, y = _problem(13, n=250, d=11, offset=20.0)
    stats = merge_all(
        [SufficientStatistics.from_arrays(X[a : a + 50], y[a : a + 50]) for a in range(0, 250, 50)]
    )
    for support in ([0, 3, 5], [1, 2, 4, 6, 9]):
        ref = certify(X, y, support, standardize=standardize, fit_intercept=fit_intercept)
        got = certify_from_statistics(
            stats, support, standardize=standardize, fit_intercept=fit_intercept
        )
        a, b = ref.to_dict(), got.to_dict()
        for key in ("verdict", "support", "local_optimum", "n_improving", "n_exchanges"):
            assert a[key] == b[key], key
        assert a["objective"] == pytest.approx(b["objective"], rel=1e-9)
        for key in ("improving", "alternatives"):
            assert [(e["feature_out"], e["feature_in"]) for e in a[key]] == [
                (e["feature_out"], e["feature_in"]) for e in b[key]
            ]
            np.testing.assert_allclose(
                [e["objective"] for e in a[key]], [e["objective"] for e in b[key]], rtol=1e-9
            )


def test_stability_subsamples_of_whole_chunks_equal_the_engine_on_the_same_rows():
    """Complementary pairs of half the chunks (``block_pairs``): each half's supports from its
    merged statistics equal ``subsample_supports`` on the same rows, seeds and plan."""
    import dataclasses

    from engine.from_statistics import subsample_supports_from_statistics
    from engine.stability import plan_stability, subsample_supports
    from engine.statistics import block_pairs

    X, y = _problem(14, n=300, d=10)
    bounds = [0, 40, 75, 130, 170, 220, 251, 300]  # 7 uneven chunks: one sits each pair out
    chunks = list(itertools.pairwise(bounds))
    parts = [SufficientStatistics.from_arrays(X[a:b], y[a:b]) for a, b in chunks]
    halves = block_pairs(len(parts), 3, random_state=5)
    assert halves == block_pairs(len(parts), 3, random_state=5) and len(halves) == 6
    for first, second in zip(halves[0::2], halves[1::2], strict=True):
        assert len(first) == len(second) == 3 and not set(first) & set(second)
    for algorithm in ("foba-obj", "omp"):
        plan = plan_stability(
            algorithm, k_max=5, n_samples=300, n_features=10, n_pairs=3, random_state=5
        )
        rows = [np.concatenate([np.arange(*chunks[i]) for i in half]) for half in halves]
        plan = dataclasses.replace(plan, subsamples=rows)
        for index, half in enumerate(halves):
            stats = merge_all([parts[i] for i in half])
            got = subsample_supports_from_statistics(stats, plan, index)
            ref = subsample_supports(X, y, plan, index)
            assert got.supports == ref.supports and got.n_rows == ref.n_rows
