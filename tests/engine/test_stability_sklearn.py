"""``engine.sklearn.StabilitySelector``: the stable set as a scikit-learn transformer."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import check_estimator
from stability_problems import known_support

from engine.sklearn import StabilitySelector
from engine.stability import error_bound, stability_selection, threshold_for


def test_check_estimator_passes() -> None:
    outcomes: list[tuple[str, str, str]] = []

    def record(*, check_name, status, exception, **_):
        outcomes.append((check_name, status, repr(exception)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(
            StabilitySelector("omp", 2, n_pairs=2), on_fail=None, on_skip=None, callback=record
        )
    failed = [o for o in outcomes if o[1] == "failed"]
    assert not failed, failed
    assert len(outcomes) > 40


def test_keeps_the_stable_set_of_the_engine():
    X, y, support = known_support(0, n=150, d=30, s=4)
    sel = StabilitySelector("foba-obj", 6, n_pairs=8, threshold=0.8).fit(X, y)
    direct = stability_selection(X, y, algorithm="foba-obj", k_max=6, n_pairs=8, threshold=0.8)
    assert sorted(sel.stable_units_) == sorted(direct.summary.stable_path)
    assert set(support) <= set(sel.support_)
    assert sel.error_bound_ == pytest.approx(direct.summary.bound_path)
    assert sel.transform(X).shape == (150, len(sel.support_))
    assert sel.frequencies_.shape == (6, 30) and sel.stability_index_.shape == (6,)
    at4 = clone(sel).set_params(k=4).fit(X, y)
    assert sorted(at4.support_) == sorted(support)
    assert at4.error_bound_ == pytest.approx(error_bound(4, 30, 0.8))
    pipe = make_pipeline(StabilitySelector("omp", 5, n_pairs=4), LinearRegression()).fit(X, y)
    assert pipe.score(X, y) > 0.8


def test_max_false_sets_the_threshold():
    X, y, _ = known_support(1, n=120, d=30, s=3)
    sel = StabilitySelector("omp", k=3, n_pairs=5, max_false=0.5).fit(X, y)
    assert sel.threshold_ == pytest.approx(threshold_for(3, 30, 0.5))
    assert sel.error_bound_ == pytest.approx(0.5)
    with pytest.warns(UserWarning, match="nothing is kept"):
        none = StabilitySelector("omp", k=6, n_pairs=2, max_false=0.1).fit(X, y)
    assert none.threshold_ is None and none.support_.size == 0


def test_groups_kept_whole():
    rng = np.random.default_rng(0)
    cat = rng.integers(0, 3, 100)
    X = np.column_stack([np.eye(3)[cat], rng.standard_normal((100, 4))])
    y = 2.0 * (cat == 2) + X[:, 4] + 0.3 * rng.standard_normal(100)
    groups = ["c", "c", "c", "x0", "x1", "x2", "x3"]
    sel = StabilitySelector("foba-obj", 3, n_pairs=4, groups=groups).fit(X, y)
    assert {0, 1, 2, 4} <= set(sel.support_)
