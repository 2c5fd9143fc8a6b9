"""Tests of engine.datasets: shapes, reproducibility, the constructions the papers specify, and
parameter validation."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit

from engine.datasets import (
    GENERATORS,
    Problem,
    elenberg2016,
    gaussian_regression,
    generate,
    liu2014_logistic,
    sparse_design,
    xiang2014_bilevel,
    zhang2008,
)
from engine.registry import Param

# Small versions of every generator, so the generic tests run fast.
SMALL = {
    "zhang2008": {"n": 40, "d": 60},
    "liu2014_logistic": {"n": 30, "d": 40},
    "elenberg2016": {"n": 50, "p": 60, "s": 10},
    "xiang2014_bilevel": {"n": 30},
    "sparse_design": {"n": 500, "d": 2000, "density": 0.01, "k_true": 10},
    "gaussian_regression": {"n": 30, "d": 15, "k_true": 4},
    "liu2014_crf": {"T": 60, "n_relevant": 4},
    "xiang2014_convergence": {"n": 30, "p": 200, "group_size": 20},
}


def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def test_registry_lists_every_generator():
    assert set(GENERATORS) == set(SMALL)
    for name, spec in GENERATORS.items():
        assert spec.name == name
        assert spec.task in ("regression", "classification", "sequence")
        assert spec.title and spec.help and spec.reference
        assert all(isinstance(p, Param) for p in spec.params)
        assert len({p.name for p in spec.params}) == len(spec.params)
        json.dumps(spec.to_dict())  # the app serves it as JSON


@pytest.mark.parametrize("name", sorted(SMALL))
def test_shapes_and_support(name):
    P = generate(name, random_state=0, **SMALL[name])
    n, d = P.X.shape[0], P.n_features  # the CRF's features are indicators, not X's columns
    assert isinstance(P, Problem)
    assert P.name == name and P.task == GENERATORS[name].task
    assert P.y.shape == (n,) and P.true_coef.shape == (d,)
    np.testing.assert_array_equal(P.support, np.flatnonzero(P.true_coef))
    assert P.k_true == P.support.size > 0
    assert len(P.feature_names) == d
    assert np.all(np.isfinite(_dense(P.X))) and np.all(np.isfinite(P.y))
    if P.task == "classification":
        assert np.unique(P.y).size == 2
    if P.task == "sequence":
        assert np.issubdtype(P.X.dtype, np.integer) and np.unique(P.y).size >= 2
    assert P.meta["random_state"] == 0
    assert P.meta["params"] == GENERATORS[name].validate(SMALL[name])


@pytest.mark.parametrize("name", sorted(SMALL))
def test_same_seed_same_arrays(name):
    a = generate(name, random_state=7, **SMALL[name])
    b = generate(name, random_state=7, **SMALL[name])
    c = generate(name, random_state=8, **SMALL[name])
    np.testing.assert_array_equal(_dense(a.X), _dense(b.X))
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.true_coef, b.true_coef)
    np.testing.assert_array_equal(a.support, b.support)
    assert not np.array_equal(_dense(a.X), _dense(c.X))


@pytest.mark.parametrize("name", sorted(SMALL))
def test_generator_instances_reproduce_too(name):
    a = generate(name, random_state=np.random.default_rng(3), **SMALL[name])
    b = generate(name, random_state=np.random.default_rng(3), **SMALL[name])
    np.testing.assert_array_equal(_dense(a.X), _dense(b.X))
    np.testing.assert_array_equal(a.y, b.y)
    assert a.meta["random_state"] is None  # a Generator is not a reproducible seed by itself


def test_drawing_from_a_shared_generator_advances_it():
    rng = np.random.default_rng(0)
    a = gaussian_regression(rng)
    b = gaussian_regression(rng)
    assert not np.array_equal(a.X, b.X)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_problem_is_frozen(name):
    P = generate(name, random_state=0, **SMALL[name])
    with pytest.raises(dataclasses.FrozenInstanceError):
        P.y = P.y  # type: ignore[misc]
    for arr in (P.y, P.true_coef, P.support):
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = arr[0]


def test_direct_call_matches_generate():
    a = zhang2008(5, n=50, d=80)
    b = generate("zhang2008", random_state=5, n=50, d=80)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)


# --------------------------------------------------------------------------- zhang2008


def test_zhang_defaults_follow_the_paper():
    P = zhang2008(0)
    assert P.X.shape == (100, 500) and P.k_true == 5
    # Zhang's Assumption 3.1: (1/n) ||f_j||^2 = 1.
    np.testing.assert_allclose(np.sum(P.X**2, axis=0), 100.0)
    assert np.all((P.true_coef[P.support] > 0) & (P.true_coef[P.support] < 10))
    assert len(P.meta["decoys"]) == 10


def test_zhang_noise_variance():
    P = zhang2008(1, n=5000, d=50, noise_var=0.1)
    resid = P.y - P.X @ P.true_coef
    # Sample variance of 5000 draws: relative sd sqrt(2/5000) = 2%.
    assert abs(np.var(resid) / 0.1 - 1) < 0.1


def test_zhang_decoys_are_correlated_with_their_parents_only():
    r = 0.85
    P = zhang2008(2, n=5000, d=60, k_true=5, correlation=r)
    X = P.X
    for j, parents in P.meta["decoys"].items():
        assert len(parents) == 2 and set(parents) <= set(P.support.tolist())
        fit = np.linalg.lstsq(X[:, parents], X[:, j], rcond=None)[0]
        multiple_corr = np.linalg.norm(X[:, parents] @ fit) / np.linalg.norm(X[:, j])
        assert abs(multiple_corr - r) < 0.03
    plain = np.setdiff1d(np.arange(60), [*P.support, *P.meta["decoys"]])
    corr = X[:, plain].T @ X[:, P.support] / 5000
    assert np.abs(corr).max() < 0.1
    assert P.meta["min_decoy_eigenvalue"] > 0.05  # sparse eigenvalues stay bounded


def test_zhang_decoys_can_fool_the_first_forward_step():
    # Forward greedy's first pick is the column most correlated with y: a decoy sometimes.
    fooled = 0
    for seed in range(30):
        P = zhang2008(seed)
        best = int(np.argmax(np.abs(P.X.T @ P.y)))
        fooled += best in P.meta["decoys"]
    assert 0 < fooled < 30


def test_zhang_without_decoys():
    P = zhang2008(0, n_decoys=0)
    assert P.meta["decoys"] == {} and P.meta["min_decoy_eigenvalue"] is None


# --------------------------------------------------------------------------- liu2014_logistic


@pytest.mark.parametrize("seed", range(5))
def test_liu_beta_norm_and_support(seed):
    P = liu2014_logistic(seed)
    assert P.X.shape == (100, 500) and P.k_true == 5
    assert np.linalg.norm(P.true_coef) == pytest.approx(5.0, rel=1e-12)
    assert np.all(P.true_coef[P.support] > 0)  # U[0, 1] entries, scaled


def test_liu_classes_equal_size_and_means():
    P = liu2014_logistic(0, n=20000, d=20, s=5)
    assert set(np.unique(P.y).tolist()) == {-1, 1}
    assert np.sum(P.y == 1) == np.sum(P.y == -1) == 10000
    # Class +1 is N(+beta*, I), class -1 is N(-beta*, I): sd of a class mean is 0.01.
    np.testing.assert_allclose(P.X[P.y == 1].mean(axis=0), P.true_coef, atol=0.05)
    np.testing.assert_allclose(P.X[P.y == -1].mean(axis=0), -P.true_coef, atol=0.05)
    np.testing.assert_allclose(np.var(P.X[P.y == 1], axis=0), 1.0, atol=0.1)
    assert 0 < np.sum(P.y[:100] == 1) < 100  # classes interleaved, not in two blocks


def test_liu_odd_n():
    P = liu2014_logistic(0, n=7, d=10, s=2)
    assert np.sum(P.y == 1) == 4 and np.sum(P.y == -1) == 3


# --------------------------------------------------------------------------- elenberg2016


@pytest.mark.parametrize("seed", range(5))
def test_elenberg_coefficients(seed):
    P = elenberg2016(seed)
    assert P.X.shape == (600, 200) and P.k_true == 50
    assert P.true_coef @ P.true_coef == pytest.approx(5.0, rel=1e-12)
    np.testing.assert_allclose(np.abs(P.true_coef[P.support]), np.sqrt(5 / 50))
    signs = np.sign(P.true_coef[P.support])
    assert 0 < np.sum(signs > 0) < 50
    assert set(np.unique(P.y).tolist()) == {0, 1}


def test_elenberg_rows_are_ar1():
    P = elenberg2016(0, n=20000, p=8, s=4)
    X = P.X
    np.testing.assert_allclose(X.var(axis=0), 5 / (1 - 0.3**2), rtol=0.05)
    C = np.corrcoef(X.T)
    np.testing.assert_allclose(np.diag(C, 1), 0.3, atol=0.03)
    np.testing.assert_allclose(np.diag(C, 2), 0.09, atol=0.03)
    np.testing.assert_allclose(np.diag(C, 4), 0.0081, atol=0.03)


def test_elenberg_labels_follow_the_logistic_model():
    P = elenberg2016(1, n=20000, p=30, s=10)
    prob = expit(P.X @ P.true_coef)
    order = np.argsort(prob)
    # Calibration by deciles: mean label ~ mean probability (sd of a bin mean <= 0.012).
    for chunk in np.array_split(order, 10):
        assert abs(P.y[chunk].mean() - prob[chunk].mean()) < 0.05


def test_elenberg_test_set_does_not_change_training_data():
    a = elenberg2016(4, n=100, p=30, s=5)
    b = elenberg2016(4, n=100, p=30, s=5, n_test=80)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    assert "X_test" not in a.meta
    assert b.meta["X_test"].shape == (80, 30) and b.meta["y_test"].shape == (80,)
    assert not np.array_equal(b.meta["X_test"][:80], b.X[:80])


# --------------------------------------------------------------------------- xiang2014_bilevel


@pytest.mark.parametrize(("case", "per_group"), [(1, 3), (2, 10)])
def test_xiang_grouping_cases(case, per_group):
    P = xiang2014_bilevel(0, case=case)
    assert P.X.shape == (100, 200)
    np.testing.assert_array_equal(np.bincount(P.groups), np.full(20, 10))
    np.testing.assert_array_equal(P.groups, np.arange(200) // 10)
    assert P.k_true == 6 * per_group  # Table 3: 18 features (case 1), 60 (case 2)
    np.testing.assert_array_equal(np.unique(P.groups[P.support]), np.arange(6))
    for g in range(20):
        values = P.true_coef[P.groups == g]
        nonzero = values[values != 0]
        if g < 6:
            assert nonzero.size == per_group
            assert np.all(nonzero == nonzero[0])  # identical within a group
            assert 1 <= abs(nonzero[0]) <= 2
        else:
            assert nonzero.size == 0  # groups 7 to 20 are redundant


def test_xiang_noise_level():
    P = xiang2014_bilevel(3, n=20000, noise_std=0.5)
    resid = P.y - P.X @ P.true_coef
    assert abs(np.std(resid) / 0.5 - 1) < 0.05


# --------------------------------------------------------------------------- sparse_design


def test_sparse_design_defaults_are_rcv1_shaped():
    # How long it takes is the bench's business (bench/), not a pass/fail of the suite.
    P = sparse_design(0)
    X = P.X
    assert isinstance(X, sp.csr_matrix) and X.shape == (20000, 50000)
    assert abs(X.nnz / (20000 * 50000) / 0.001 - 1) < 0.1
    assert X.data.min() > 0
    np.testing.assert_allclose(sp.linalg.norm(X, axis=1), 1.0)
    assert P.k_true == 100


@pytest.mark.parametrize(("n", "d", "density"), [(1000, 5000, 0.01), (3000, 800, 0.05)])
def test_sparse_design_density(n, d, density):
    P = sparse_design(1, n=n, d=d, density=density, k_true=5)
    assert abs(P.X.nnz / (n * d) / density - 1) < 0.1
    assert np.diff(P.X.indptr).min() >= 1  # no empty document


def test_sparse_design_response_and_support():
    P = sparse_design(2, n=4000, d=3000, density=0.01, k_true=20, snr=4.0)
    df = np.diff(P.X.tocsc().indptr)
    # True terms come from the 20 k_true = 400 most frequent.
    assert np.all(df[P.support] >= np.sort(df)[::-1][399])
    signal = P.X @ P.true_coef
    resid = P.y - signal
    assert abs(np.std(resid) / P.meta["noise_std"] - 1) < 0.1
    assert abs(np.var(signal) / np.var(resid) / 4.0 - 1) < 0.15
    assert np.all(np.abs(P.true_coef[P.support]) >= 1)


# --------------------------------------------------------------------------- gaussian_regression


def test_gaussian_regression_correlation_and_snr():
    P = gaussian_regression(0, n=20000, d=6, k_true=3, rho=0.6, snr=2.0)
    C = np.corrcoef(P.X.T)
    np.testing.assert_allclose(np.diag(C, 1), 0.6, atol=0.03)
    np.testing.assert_allclose(np.diag(C, 2), 0.36, atol=0.03)
    np.testing.assert_allclose(P.X.var(axis=0), 1.0, rtol=0.05)
    signal = P.X @ P.true_coef
    resid = P.y - signal
    assert abs(np.var(signal) / np.var(resid) / 2.0 - 1) < 0.1


# --------------------------------------------------------------------------- parameter errors


@pytest.mark.parametrize(
    ("name", "params", "pattern"),
    [
        ("zhang2008", {"n": 1}, r"'n' must be an integer >= 2"),
        ("zhang2008", {"correlation": 1.5}, r"'correlation' must be a number >= 0 and <= 0.99"),
        ("zhang2008", {"noise_var": -1.0}, r"'noise_var' must be a number >= 0"),
        ("zhang2008", {"d": 10, "k_true": 20}, r"'k_true' must be an integer between 1 and d"),
        ("zhang2008", {"d": 10, "k_true": 5, "n_decoys": 6}, r"'n_decoys' must be at most"),
        ("zhang2008", {"n": 2.5}, r"'n' must be an integer"),
        ("liu2014_logistic", {"s": 0}, r"'s' must be an integer >= 1"),
        ("liu2014_logistic", {"norm": 0.0}, r"'norm' must be a number > 0"),
        ("liu2014_logistic", {"d": 3, "s": 4}, r"'s' must be an integer between 1 and d = 3"),
        ("elenberg2016", {"alpha": 1.0}, r"'alpha' must be a number >= -0.99 and <= 0.99"),
        ("elenberg2016", {"p": 10}, r"'s' must be an integer between 1 and p = 10"),
        ("xiang2014_bilevel", {"case": 3}, r"'case' must be an integer >= 1 and <= 2"),
        ("xiang2014_bilevel", {"n_groups": 7}, r"'n_groups' must be a divisor of d = 200"),
        ("xiang2014_bilevel", {"active_groups": 21}, r"'active_groups' must be at most"),
        ("xiang2014_bilevel", {"active_features": 11}, r"'active_features' must be at most"),
        ("sparse_design", {"density": 0.5}, r"'density' must be a number > 0 and <= 0.05"),
        ("sparse_design", {"n": 1_000_000, "d": 1_000_000, "density": 0.05}, r"'density'"),
        ("gaussian_regression", {"snr": 0.0}, r"'snr' must be a number > 0"),
        ("gaussian_regression", {"rho": -1.0}, r"'rho' must be a number >= -0.99"),
    ],
)
def test_parameter_errors_name_the_parameter_and_range(name, params, pattern):
    with pytest.raises(ValueError, match=pattern):
        generate(name, random_state=0, **params)
    with pytest.raises(ValueError, match=pattern):
        GENERATORS[name].func(0, **params)  # direct calls are checked the same way


def test_unknown_names():
    with pytest.raises(ValueError, match=r"unknown dataset 'nope'; available: .*zhang2008"):
        generate("nope")
    with pytest.raises(ValueError, match=r"has no parameter 'k'; its parameters: .*k_true"):
        generate("zhang2008", k=5)


@pytest.mark.parametrize("seed", [-1, 1.5, "0", True])
def test_bad_random_state(seed):
    with pytest.raises(ValueError, match="random_state"):
        generate("gaussian_regression", random_state=seed)
