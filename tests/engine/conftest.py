"""Fixtures for the engine tests: the seeded problem builders of ``engine_problems``.

Every builder takes an integer seed and returns the same arrays on every run (numpy Generator
seeded explicitly); nothing depends on global random state. Tests that need a builder at import
time (for parametrisation) import it from ``engine_problems`` directly.
"""

from __future__ import annotations

import pytest
from engine_problems import (
    make_classification,
    make_figure2_problem,
    make_regression,
)


@pytest.fixture(scope="session")
def regression():
    """make_regression(seed, n=60, d=25, k_true=4, *, rho, noise, density, offset)."""
    return make_regression


@pytest.fixture(scope="session")
def classification():
    """make_classification(seed, n=60, d=25, k_true=4, *, density, flip, labels)."""
    return make_classification


@pytest.fixture(scope="session")
def figure2_problem():
    return make_figure2_problem()
