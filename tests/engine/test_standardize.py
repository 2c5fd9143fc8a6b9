"""``standardize=True``: the selection does not depend on the columns' units, and the
coefficients come back on the original scale."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from engine_problems import make_classification, make_regression

import engine
from engine.objectives import LeastSquares, Logistic
from engine.scaling import column_scale

EXTRA = {
    "fb-threshold": {"eps_back": 0.05},
    "frank-wolfe": {"B1": 5.0},
    "randomized-sparsification": {"B1": 5.0},
    "ght": {"s2": 2},
    "sght": {"s2": 2},
}
# Methods whose answer is the refit on their support (the others return an iterate).
REFIT = [n for n, s in engine.ALGORITHMS.items() if s.traits.path != "final"] + ["lasso-refit"]


def decisions(result) -> list[tuple[str, int | None, int | None]]:
    return [(e.kind, e.feature, e.feature_out) for e in result.trace]


def units(X: np.ndarray) -> np.ndarray:
    """The same data in other units: grams for kilograms, and so on."""
    factors = np.ones(X.shape[1])
    factors[::3] = 1000.0
    factors[1::3] = 1e-3
    return X * factors


def run(X, y, algorithm: str, objective: str, **kw):
    spec = engine.ALGORITHMS[algorithm]
    k = None if spec.k == "unused" else 4
    return engine.select(
        X,
        y,
        algorithm=algorithm,
        objective=objective,
        k=k,
        groups=np.arange(X.shape[1]) // 3,
        random_state=0,
        standardize=True,
        **EXTRA.get(algorithm, {}),
        **kw,
    )


@pytest.mark.parametrize("objective", ["least_squares", "logistic"])
@pytest.mark.parametrize("algorithm", sorted(engine.ALGORITHMS))
def test_changing_units_changes_no_decision(algorithm: str, objective: str) -> None:
    if objective == "logistic":
        X, y = make_classification(5, n=80, d=12, k_true=3)
    else:
        X, y = make_regression(5, n=60, d=12, k_true=3)
    a = run(X, y, algorithm, objective)
    b = run(units(X), y, algorithm, objective)
    assert decisions(a) == decisions(b)
    np.testing.assert_array_equal(a.support, b.support)
    np.testing.assert_allclose(
        [e.objective for e in a.trace], [e.objective for e in b.trace], rtol=1e-7, atol=1e-12
    )
    # Same model, other units: the coefficients scale inversely, predictions agree.
    np.testing.assert_allclose(a.coef, units(b.coef[None, :])[0], rtol=1e-6, atol=1e-9)


def test_without_standardizing_units_do_change_the_choice() -> None:
    """The control: OMP's |gradient| follows the units (the reason for the option)."""
    X, y = make_regression(5, n=60, d=12, k_true=3)
    plain = engine.select(X, y, algorithm="omp", k=4, standardize=False)
    scaled = engine.select(units(X), y, algorithm="omp", k=4, standardize=False)
    assert decisions(plain) != decisions(scaled)


@pytest.mark.parametrize("algorithm", sorted(REFIT))
def test_coefficients_equal_a_refit_on_the_unscaled_columns(algorithm: str) -> None:
    X, y = make_regression(7, n=60, d=12, k_true=3)
    X = units(X)
    result = run(X, y, algorithm, "least_squares")
    refit = LeastSquares(X, y).fit_support(result.support.tolist())
    np.testing.assert_allclose(result.coef, refit.coef, rtol=1e-7, atol=1e-10)
    assert result.intercept == pytest.approx(refit.intercept, rel=1e-7, abs=1e-10)
    assert result.objective == pytest.approx(refit.value, rel=1e-9)


def test_logistic_without_ridge_refits_on_the_unscaled_columns() -> None:
    X, y = make_classification(3, n=120, d=10, k_true=3, flip=0.15)
    X = units(X)
    result = engine.select(
        X, y, algorithm="foba-obj", objective="logistic", k=3, lam=0.0, standardize=True
    )
    refit = Logistic(X, y, lam=0.0).fit_support(result.support.tolist())
    np.testing.assert_allclose(result.coef, refit.coef, rtol=1e-5, atol=1e-8)


def test_sparse_x_is_scaled_without_densifying_and_agrees_with_dense() -> None:
    X, y = make_regression(2, n=80, d=15, k_true=3, density=0.3)
    X = units(X)
    dense = engine.select(X, y, algorithm="foba-obj", k=3, standardize=True)
    sparse = engine.select(sp.csr_matrix(X), y, algorithm="foba-obj", k=3, standardize=True)
    assert decisions(dense) == decisions(sparse)
    np.testing.assert_allclose(sparse.coef, dense.coef, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(sparse.scale, dense.scale, rtol=1e-12)


def test_scales_are_standard_deviations_or_root_mean_squares() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(3.0, 2.0, size=(200, 3))
    X[:, 2] = 5.0  # constant: left alone
    np.testing.assert_allclose(column_scale(X, centered=True)[:2], X[:, :2].std(axis=0))
    np.testing.assert_allclose(
        column_scale(X, centered=False)[:2], np.sqrt((X[:, :2] ** 2).mean(axis=0))
    )
    assert column_scale(X, centered=True)[2] == 1.0
    result = engine.select(
        X, X[:, 0] + rng.normal(size=200), algorithm="omp", k=1, standardize=True
    )
    assert result.support.tolist() == [0]
    assert result.scale is not None and result.scale[2] == 1.0


def test_the_crf_ignores_standardize() -> None:
    from engine.datasets import generate

    p = generate("liu2014_crf", random_state=0, n_relevant=3, T=60)
    a = engine.select(p.X, p.y, algorithm="omp", objective="crf", k=2, standardize=True)
    b = engine.select(p.X, p.y, algorithm="omp", objective="crf", k=2, standardize=False)
    assert decisions(a) == decisions(b) and a.scale is None
