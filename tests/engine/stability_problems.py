"""Seeded data with a known support, for the stability-selection tests."""

from __future__ import annotations

import numpy as np


def known_support(seed: int, n: int = 150, d: int = 40, s: int = 4, noise: float = 1.0):
    """Gaussian columns (correlation 0.3), y = X beta + noise with s nonzeros of size 1-2.
    Returns X, y and the true support (sorted)."""
    rng = np.random.default_rng(seed)
    X = np.sqrt(0.7) * rng.standard_normal((n, d)) + np.sqrt(0.3) * rng.standard_normal((n, 1))
    support = np.sort(rng.choice(d, s, replace=False))
    beta = np.zeros(d)
    beta[support] = rng.choice([-1.0, 1.0], s) * rng.uniform(1.0, 2.0, s)
    return X, X @ beta + noise * rng.standard_normal(n), support
