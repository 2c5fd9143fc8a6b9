"""Tests of the Section 5.2 generator of Xiang, Yang & Ye (2014), ``xiang2014_convergence``:
seeding, the paper's shapes, the group structure and the planted support."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.datasets import GENERATORS, Problem, generate, xiang2014_convergence

# The paper's four (n, p) settings; the two large ones are only built in the shape test.
PAPER_SIZES = [(100, 2000), (100, 5000), (1000, 20000), (1000, 50000)]


def test_registered_with_its_parameters():
    spec = GENERATORS["xiang2014_convergence"]
    assert spec.task == "regression" and "Sec. 5.2" in spec.reference
    names = [p.name for p in spec.params]
    assert names == ["n", "p", "group_size", "active_groups", "active_features", "noise_std"]
    json.dumps(spec.to_dict())  # the app serves it as JSON


def test_same_seed_same_arrays_other_seed_other_arrays():
    a = generate("xiang2014_convergence", random_state=7)
    b = generate("xiang2014_convergence", random_state=7)
    c = generate("xiang2014_convergence", random_state=8)
    for field in ("X", "y", "true_coef", "support", "groups"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(a.X, c.X)
    assert a.meta["random_state"] == 7


def test_generator_argument_is_drawn_from():
    rng = np.random.default_rng(3)
    first = xiang2014_convergence(rng, n=20, p=300)
    second = xiang2014_convergence(rng, n=20, p=300)
    assert not np.array_equal(first.X, second.X)
    assert first.meta["random_state"] is None


@pytest.mark.parametrize(("n", "p"), PAPER_SIZES[:2])
def test_paper_shapes_and_contiguous_groups_of_100(n, p):
    P = generate("xiang2014_convergence", random_state=0, n=n, p=p)
    assert isinstance(P, Problem) and P.task == "regression"
    assert P.X.shape == (n, p) and P.y.shape == (n,)
    np.testing.assert_array_equal(P.groups, np.arange(p) // 100)
    np.testing.assert_array_equal(np.bincount(P.groups), np.full(p // 100, 100))
    assert len(P.feature_names) == p


@pytest.mark.parametrize(("p", "s2"), [(2000, 2), (2000, 4), (5000, 5), (5000, 10)])
def test_support_is_5_features_in_each_of_s2_groups(p, s2):
    """The paper's budgets s2 in {0.1|G|, 0.2|G|}, s1 = 5 s2: the planted x uses exactly them."""
    P = generate("xiang2014_convergence", random_state=1, p=p, active_groups=s2)
    assert P.k_true == 5 * s2
    used = np.unique(P.groups[P.support])
    np.testing.assert_array_equal(used, P.meta["active_groups"])
    assert used.size == s2
    per_group = np.bincount(P.groups[P.support], minlength=p // 100)
    np.testing.assert_array_equal(per_group, np.where(np.isin(np.arange(p // 100), used), 5, 0))
    np.testing.assert_array_equal(P.support, np.flatnonzero(P.true_coef))


def test_default_active_groups_is_a_tenth_of_the_groups():
    for p, expected in ((2000, 2), (5000, 5), (300, 1)):
        P = generate("xiang2014_convergence", random_state=0, n=10, p=p)
        assert len(P.meta["active_groups"]) == expected


def test_coefficients_standard_normal_and_noise_level():
    P = generate(
        "xiang2014_convergence",
        random_state=2,
        n=4000,
        p=2000,
        active_groups=20,
        active_features=50,
    )
    values = P.true_coef[P.support]
    assert values.size == 1000
    assert abs(values.mean()) < 0.1 and abs(values.std() - 1) < 0.1
    resid = P.y - P.X @ P.true_coef
    assert abs(resid.std() / 0.1 - 1) < 0.05
    assert abs(P.X.std() - 1) < 0.01


def test_design_is_standard_normal_at_the_largest_paper_size():
    P = generate("xiang2014_convergence", random_state=0, n=1000, p=50000)
    assert P.X.shape == (1000, 50000) and P.groups.max() == 499
    assert P.k_true == 5 * 50  # s2 = 0.1 |G| = 50
    assert abs(P.X[:, :500].mean()) < 0.01


@pytest.mark.parametrize(
    ("params", "pattern"),
    [
        ({"p": 250}, r"'group_size' must be a divisor of p = 250"),
        ({"active_groups": 21}, r"'active_groups' must be at most 20 groups"),
        ({"active_features": 101}, r"'active_features' must be at most group_size"),
        ({"noise_std": -1.0}, r"'noise_std' must be a number >= 0"),
        ({"n": 1}, r"'n' must be an integer >= 2"),
    ],
)
def test_parameter_errors_name_the_parameter(params, pattern):
    with pytest.raises(ValueError, match=pattern):
        generate("xiang2014_convergence", random_state=0, **params)
    with pytest.raises(ValueError, match=pattern):
        xiang2014_convergence(0, **params)
