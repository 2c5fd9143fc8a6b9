"""Tests of engine.metrics against hand-computed values, brute-force enumeration and scikit-learn
(installed for the tests only; the engine does not import it)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sk_roc_curve

from engine import metrics as m
from engine.trace import Recorder

# --------------------------------------------------------------------------- objective, errors


def test_normalised_objective():
    assert m.normalised_objective(-40.0, -69.3) == pytest.approx(29.3)
    assert m.normalised_objective(0.4, 0.693, loss=True) == pytest.approx(0.293)
    np.testing.assert_allclose(m.normalised_objective([-50.0, -45.0], -60.0), [10.0, 15.0])
    assert m.normalised_objective(-60.0, -60.0) == 0.0


def test_squared_error():
    assert m.squared_error([1, 2, 3], [1, 1, 5]) == pytest.approx(5 / 3)
    assert m.squared_error([1, 2, 3], [1, 1, 5], mean=False) == pytest.approx(5.0)
    with pytest.raises(ValueError, match="must match"):
        m.squared_error([1, 2], [1, 2, 3])


def test_classification_error_and_accuracy():
    y = [0, 1, 1, 0, 1]
    pred = [0, 0, 1, 1, 1]
    assert m.classification_error(y, pred) == pytest.approx(0.4)
    assert m.accuracy(y, pred) == pytest.approx(0.6)
    assert m.classification_error([-1, 1, 1], [-1, 1, -1]) == pytest.approx(1 / 3)
    assert m.accuracy(["a", "b"], ["a", "a"]) == pytest.approx(0.5)


def test_classification_error_rejects_mixed_encodings():
    with pytest.raises(ValueError, match="encodings"):
        m.classification_error([0, 1, 1], [-1, 1, 1])
    with pytest.raises(ValueError, match="encodings"):
        m.accuracy([-1, 1], [0, 1])


def test_estimation_error():
    assert m.estimation_error([1.0, 2.0], [1.0, 0.0]) == pytest.approx(2.0)
    assert m.estimation_error([0.0, 0.0], [3.0, 4.0]) == pytest.approx(5.0)
    assert m.estimation_error([3.0, 0.0], [3.0, 4.0], relative=True) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="true_coef is zero"):
        m.estimation_error([1.0], [0.0], relative=True)


# --------------------------------------------------------------------------- support agreement


def test_feature_selection_error():
    assert m.feature_selection_error([1, 2, 3], [2, 3, 4]) == 1
    assert m.feature_selection_error([7, 8], [2, 3]) == 2
    assert m.feature_selection_error([3, 2], [2, 3]) == 0
    assert m.feature_selection_error([2], [2, 3, 4]) == 0  # misses do not count, extras do
    assert m.feature_selection_error([2, 9, 9], [2, 3]) == 1  # repeats ignored
    mask = np.array([False, True, True, True, False])
    assert m.feature_selection_error(mask, [2, 3, 4]) == 1


def test_feature_selection_error_is_symmetric_at_equal_sizes():
    rng = np.random.default_rng(0)
    for _ in range(50):
        f, f_true = rng.choice(20, 5, replace=False), rng.choice(20, 5, replace=False)
        assert m.feature_selection_error(f, f_true) == m.feature_selection_error(f_true, f)


def test_f_measure():
    assert m.f_measure([1, 2, 3], [2, 3, 4, 5]) == pytest.approx(4 / 7)
    assert m.f_measure([1, 2], [1, 2]) == 1.0
    assert m.f_measure([1], [2]) == 0.0
    assert m.f_measure([], [1, 2]) == 0.0
    assert m.f_measure([], []) == 1.0


def test_recovery_percent():
    assert m.recovery_percent([1, 2, 9], [1, 2, 3, 4]) == pytest.approx(50.0)
    assert m.recovery_percent([], [1]) == 0.0
    with pytest.raises(ValueError, match="nonempty"):
        m.recovery_percent([1], [])


def test_support_validation():
    with pytest.raises(ValueError, match="negative"):
        m.f_measure([-1, 2], [2])
    with pytest.raises(ValueError, match="integer"):
        m.f_measure([0.5], [2])


def test_groups_used():
    labels = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    np.testing.assert_array_equal(m.groups_used([0, 1, 5], labels), [0, 2])
    np.testing.assert_array_equal(m.groups_used([], labels), [])
    members = [[0, 1], [1, 2], [3]]  # overlapping groups: feature 1 uses both
    np.testing.assert_array_equal(m.groups_used([1], members), [0, 1])
    np.testing.assert_array_equal(m.groups_used([3], members), [2])
    with pytest.raises(ValueError, match="labels 8 features"):
        m.groups_used([8], labels)


# --------------------------------------------------------------------------- ROC / AUC


def test_auc_trapezoid():
    assert m.auc([0, 0.5, 1], [0, 1, 1]) == pytest.approx(0.75)
    assert m.auc([0, 1], [0, 1]) == pytest.approx(0.5)
    assert m.auc([0, 0, 1], [0, 1, 1]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="nondecreasing"):
        m.auc([0, 1, 0.5], [0, 1, 1])


def test_roc_from_order_by_hand():
    # Features 0..4, true {0, 2}. Order [2, 3]: 2 first, 3 second, then 0, 1, 4 tied last.
    roc = m.roc_curve([2, 3], [0, 2], 5)
    assert roc.ranked_by == "order"
    np.testing.assert_allclose(roc.fpr, [0, 0, 1 / 3, 1])
    np.testing.assert_allclose(roc.tpr, [0, 0.5, 0.5, 1])
    # Pairs (positive, negative): 2 beats 1, 3, 4; 0 ties 1 and 4 and loses to 3: (3 + 1) / 6.
    assert roc.auc == pytest.approx(2 / 3)
    assert roc.n_positive == 2 and roc.n_negative == 3


def test_roc_from_scores_by_hand():
    coef = np.array([0.0, -3.0, 0.5, 0.0, 2.0])
    roc = m.roc_curve(np.abs(coef), [1, 4], 5)
    assert roc.ranked_by == "scores"
    np.testing.assert_allclose(roc.fpr, [0, 0, 0, 1 / 3, 1])
    np.testing.assert_allclose(roc.tpr, [0, 0.5, 1, 1, 1])
    assert roc.auc == pytest.approx(1.0)


def test_roc_extremes():
    assert m.roc_curve([0, 1], [0, 1], 6).auc == pytest.approx(1.0)
    assert m.roc_curve([2, 3, 4, 5], [0, 1], 6).auc == pytest.approx(0.0)
    empty = m.roc_curve([], [0, 1], 6)  # nothing admitted: all tied
    np.testing.assert_allclose(empty.fpr, [0, 1])
    assert empty.auc == pytest.approx(0.5)


def test_roc_by_overrides_the_dtype():
    as_scores = m.roc_curve(np.array([0, 1, 5, 2]), [2], 4, by="scores")
    assert as_scores.ranked_by == "scores" and as_scores.auc == pytest.approx(1.0)
    as_order = m.roc_curve(np.array([1.0, 2.0]), [2], 4, by="order")
    # 1 (false) first, 2 (true) second, 0 and 3 tied last: 2 beats two of three negatives.
    assert as_order.ranked_by == "order" and as_order.auc == pytest.approx(2 / 3)


def test_roc_errors():
    with pytest.raises(ValueError, match="true and false features"):
        m.roc_curve([0], [], 3)
    with pytest.raises(ValueError, match="true and false features"):
        m.roc_curve([0], [0, 1, 2], 3)
    with pytest.raises(ValueError, match="repeats"):
        m.roc_curve([0, 0], [1], 3)
    with pytest.raises(ValueError, match="outside"):
        m.roc_curve([3], [1], 3)
    with pytest.raises(ValueError, match="3 finite numbers"):
        m.roc_curve([0.5, 0.1], [1], 3)
    with pytest.raises(ValueError, match="by must be"):
        m.roc_curve([0], [1], 3, by="rank")


def _pairwise_auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """Mann-Whitney by enumeration: P(score_pos > score_neg) + P(tie) / 2."""
    pos, neg = scores[positive], scores[~positive]
    wins = sum((p > q) + 0.5 * (p == q) for p, q in itertools.product(pos, neg))
    return wins / (pos.size * neg.size)


@pytest.mark.parametrize("seed", range(40))
def test_roc_matches_enumeration_and_sklearn(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 12))
    positive = np.zeros(d, dtype=bool)
    positive[rng.choice(d, int(rng.integers(1, d)), replace=False)] = True
    # Few distinct values so that ties are common.
    scores = rng.integers(0, 4, d).astype(float)
    roc = m.roc_curve(scores, np.flatnonzero(positive), d)
    assert roc.auc == pytest.approx(_pairwise_auc(scores, positive))
    assert roc.auc == pytest.approx(roc_auc_score(positive, scores))
    fpr, tpr, _ = sk_roc_curve(positive, scores, drop_intermediate=False)
    np.testing.assert_allclose(roc.fpr, fpr)
    np.testing.assert_allclose(roc.tpr, tpr)


@pytest.mark.parametrize("seed", range(40))
def test_roc_of_an_order_matches_enumeration_and_sklearn(seed):
    rng = np.random.default_rng(100 + seed)
    d = int(rng.integers(3, 12))
    true = rng.choice(d, int(rng.integers(1, d)), replace=False)
    order = rng.permutation(d)[: int(rng.integers(0, d + 1))]
    positive = np.isin(np.arange(d), true)
    # Equivalent scores: d - position for admitted features, -1 for the rest (all tied).
    scores = np.full(d, -1.0)
    scores[order] = d - np.arange(order.size)
    roc = m.roc_curve(order, true, d)
    assert roc.auc == pytest.approx(_pairwise_auc(scores, positive))
    assert roc.auc == pytest.approx(roc_auc_score(positive, scores))


# --------------------------------------------------------------------------- trace


def _events():
    rec = Recorder()
    rec.emit("add", objective=3.0, support_size=1, feature=3)
    rec.emit("add", objective=2.0, support_size=2, feature=1)
    rec.emit("check", objective=2.0, support_size=2, accepted=False)
    rec.emit("remove", objective=2.5, support_size=1, feature=3, accepted=True)
    rec.emit("add", objective=1.5, support_size=2, feature=3)
    rec.emit("swap", objective=1.0, support_size=2, feature=5, feature_out=1)
    rec.emit("add", objective=0.5, support_size=3, feature=0)
    rec.emit("stop", objective=0.5, support_size=3, reason="done")
    return rec.events


def test_path_order_first_admission():
    order = m.path_order(_events())
    np.testing.assert_array_equal(order, [3, 1, 5, 0])
    assert order.dtype.kind == "i"


def test_path_order_accepts_event_dicts():
    np.testing.assert_array_equal(m.path_order([e.to_dict() for e in _events()]), [3, 1, 5, 0])
    assert m.path_order([]).size == 0


def test_path_order_feeds_roc():
    roc = m.roc_curve(m.path_order(_events()), [3, 5], 7)
    assert roc.ranked_by == "order"
    # 3 first, 1 (false) second, 5 third, 0 fourth, then 2, 4, 6 tied.
    np.testing.assert_allclose(roc.tpr, [0, 0.5, 0.5, 1, 1, 1])
    np.testing.assert_allclose(roc.fpr, [0, 0, 0.2, 0.2, 0.4, 1])
