"""Seeded problem builders for the engine tests (exposed as fixtures by conftest.py).

Every builder takes an integer seed and returns the same arrays on every run (numpy Generator
seeded explicitly); nothing depends on global random state.
"""

from __future__ import annotations

import numpy as np


def make_regression(
    seed: int,
    n: int = 60,
    d: int = 25,
    k_true: int = 4,
    *,
    rho: float = 0.3,
    noise: float = 0.5,
    density: float | None = None,
    offset: float = 1.5,
):
    """Least-squares data: equicorrelated Gaussian columns (correlation rho), y = X beta + b +
    noise with k_true nonzeros of random sign. ``density`` zeroes entries at random so the same
    matrix can be passed dense and as scipy.sparse."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d))
    u = rng.standard_normal((n, 1))
    X = np.sqrt(1 - rho) * Z + np.sqrt(rho) * u + rng.normal(0.0, 0.5, size=(1, d))
    if density is not None:
        X = X * (rng.random((n, d)) < density)
    beta = np.zeros(d)
    S = rng.choice(d, k_true, replace=False)
    beta[S] = rng.choice([-1.0, 1.0], k_true) * rng.uniform(1.0, 2.0, k_true)
    y = X @ beta + offset + noise * rng.standard_normal(n)
    return X, y


def make_classification(
    seed: int,
    n: int = 60,
    d: int = 25,
    k_true: int = 4,
    *,
    density: float | None = None,
    flip: float = 0.15,
    labels=(0, 1),
):
    """Two-class data from a sparse logistic model, with a fraction ``flip`` of labels flipped so
    the classes are not separable and the L2 logistic optimum is well conditioned."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + rng.normal(0.0, 0.3, size=(1, d))
    if density is not None:
        X = X * (rng.random((n, d)) < density)
    beta = np.zeros(d)
    S = rng.choice(d, k_true, replace=False)
    beta[S] = rng.choice([-1.0, 1.0], k_true) * rng.uniform(1.0, 2.0, k_true)
    eta = X @ beta + 0.3
    t = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(int)
    t = np.where(rng.random(n) < flip, 1 - t, t)
    if t.min() == t.max():  # never a single class
        t[:2] = [0, 1]
    y = np.where(t == 1, labels[1], labels[0])
    return X, y


def make_decoy_problem(seed: int, n: int = 40, d: int = 10, k: int = 3):
    """A well-conditioned design where forward greedy is easily misled (Zhang 2008, Figure 2
    generalised): y = X beta + noise on k true columns, and two "decoy" columns that are each
    0.7 x (standardised sum of two true contributions) + 0.71 x fresh noise. The decoys look
    better than any single true column to a forward step; the design stays well conditioned
    (every column keeps an independent component of variance ~0.5)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    chosen = rng.choice(d, k + 2, replace=False)
    true, decoys = chosen[:k], chosen[k:]
    beta = np.zeros(d)
    beta[true] = rng.uniform(1.0, 2.0, k) * rng.choice([-1.0, 1.0], k)
    signal = X @ beta
    mix = 0.7
    for j in decoys:
        pair = rng.choice(true, 2, replace=False)
        c = X[:, pair] @ beta[pair]
        X[:, j] = mix * c / c.std() + np.sqrt(1 - mix**2) * rng.standard_normal(n)
    y = signal + 0.3 * rng.standard_normal(n)
    return X, y


def make_decoy_classification(seed: int, n: int = 80, d: int = 10, k: int = 3):
    """Labels from the decoy design: 1 where the noisy response is above its median."""
    X, y = make_decoy_problem(seed, n=n, d=d, k=k)
    noisy = y + 0.5 * np.random.default_rng(seed).standard_normal(n)
    return X, (noisy > np.median(noisy)).astype(int)


def make_figure2_problem(seed: int = 0, n: int = 50, n_noise: int = 5):
    """Zhang (2008) Figure 2: y = f1 + f2 (plus tiny noise), f3 a unit vector between them that
    is closer to y than either, and a few unrelated noise columns.

    Columns 0, 1, 2 are f1, f2, f3. All columns are centred and of unit norm; f1 and f2 are
    orthogonal, so corr(f1, y) = corr(f2, y) = 0.707 while corr(f3, y) ~ 0.9."""
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((n, 3 + n_noise))
    G -= G.mean(axis=0)
    Q, _ = np.linalg.qr(G)  # orthonormal, centred (the constant is orthogonal to G's columns)
    f1, f2, g = Q[:, 0], Q[:, 1], Q[:, 2]
    cos = 0.9
    f3 = cos * (f1 + f2) / np.sqrt(2) + np.sqrt(1 - cos**2) * g
    noise_cols = 0.6 * Q[:, 3:] + 0.4 * rng.standard_normal((n, n_noise)) / np.sqrt(n)
    noise_cols -= noise_cols.mean(axis=0)
    noise_cols /= np.linalg.norm(noise_cols, axis=0)
    X = np.column_stack([f1, f2, f3, noise_cols])
    y = f1 + 1.05 * f2 + 1e-3 * rng.standard_normal(n)
    return X, y


def make_pruning_problem(seed: int, n: int = 200):
    """Logistic data where the one-coordinate Newton estimate g^2 / (2 h) misranks the best
    feature: column 45 is a 0/1 indicator of 27 positive samples (its exact drop, ~0.69 * 27/n,
    is well above its quadratic estimate 0.5 * 27/n), columns 15..29 are 15 near-copies of a
    Gaussian column whose correlation with the labels is set exactly (estimate above the
    indicator's, exact drop below it), the rest are weak Gaussian columns. Balanced labels."""
    rng = np.random.default_rng(seed)
    t = (np.arange(n) % 2).astype(int)
    rng.shuffle(t)
    s = 2.0 * t - 1.0
    e = rng.standard_normal(n)
    B = np.column_stack([np.ones(n), s])
    e -= B @ np.linalg.lstsq(B, e, rcond=None)[0]
    e /= e.std()
    z = 0.42 * s + e
    near = z[:, None] + 0.02 * rng.standard_normal((n, 15))
    weak = np.linspace(0.0, 0.15, 30) * s[:, None] + rng.standard_normal((n, 30))
    indicator = np.zeros(n)
    indicator[rng.choice(np.flatnonzero(t == 1), 27, replace=False)] = 1.0
    return np.column_stack([weak[:, :15], near, weak[:, 15:], indicator]), t
