"""engine.select's ``groups`` argument: one label per feature, names or integers."""

import numpy as np
import pytest

from engine.api import _check_groups


def test_names_become_codes_in_order_of_first_appearance():
    codes = _check_groups(["rm", "rm", "age", "tax", "age"], 5)
    np.testing.assert_array_equal(codes, [0, 0, 1, 2, 1])


def test_integer_labels_are_renumbered_from_zero():
    np.testing.assert_array_equal(_check_groups([7, 3, 7, 9], 4), [0, 1, 0, 2])


def test_wrong_length_names_both_counts():
    with pytest.raises(ValueError, match="2 labels for 3 features"):
        _check_groups([1, 2], 3)


def test_none_means_no_groups():
    assert _check_groups(None, 3) is None
