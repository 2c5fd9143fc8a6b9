"""Evaluation measures used in the papers' experiments.

The training objective itself is computed by the engine's objectives; this module holds what is
computed from its outputs: prediction errors, distances to the true coefficients, agreement of
a selected support with the true one (Zhang's feature-selection error, Liu et al.'s F-measure,
Elenberg et al.'s percent recovered and support-recovery ROC), groups used, and the order in
which a traced run admitted its features.

Supports are given as arrays of feature indices (any order, repeats ignored) or as boolean masks
over the features.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .trace import Event, membership

# --------------------------------------------------------------------------- objective, errors


def normalised_objective(l_s: Any, l_0: Any, *, loss: bool = False) -> np.ndarray | float:
    """Elenberg et al.'s normalised objective ``l(beta_s) - l(0)``.

    Parameters
    ----------
    l_s : float or array-like
        Log-likelihood of the fitted s-sparse model (one value or one per sparsity level).
    l_0 : float or array-like
        Log-likelihood of the empty model, ``beta = 0`` (with its intercept when one is fitted).
    loss : bool, default False
        Set when ``l_s`` and ``l_0`` are losses to minimise (negative log-likelihoods, such as
        the engine's objectives): the result is then ``l_0 - l_s``, so that in both cases it is
        the improvement over the empty model, zero for it and positive when the fit is better.

    Returns
    -------
    float or ndarray
    """
    diff = np.asarray(l_s, dtype=float) - np.asarray(l_0, dtype=float)
    out = -diff if loss else diff
    return float(out) if out.ndim == 0 else out


def squared_error(y: Any, pred: Any, *, mean: bool = True) -> float:
    """Squared prediction error, ``(1/n) ||pred - y||^2`` (Zhang's training and test error).

    Parameters
    ----------
    y, pred : array-like, shape (n_samples,)
    mean : bool, default True
        Divide by the number of samples (Zhang's ``R(w)``); False gives the plain sum.

    Returns
    -------
    float
    """
    y, pred = _paired(y, pred, float)
    sq = float(np.sum((pred - y) ** 2))
    return sq / y.size if mean else sq


def classification_error(y: Any, pred_labels: Any) -> float:
    """Fraction of samples whose predicted label differs from the true one.

    Parameters
    ----------
    y, pred_labels : array-like, shape (n_samples,)
        Labels in the same encoding.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        When one side uses {0, 1} and the other {-1, 1}: every -1 would count as wrong, which is
        an encoding slip, not an error rate.
    """
    y, pred = _paired(y, pred_labels, None)
    _check_label_encoding(y, pred)
    return float(np.mean(y != pred))


def accuracy(y: Any, pred_labels: Any) -> float:
    """Fraction of correctly predicted labels, ``1 - classification_error``.

    Parameters
    ----------
    y, pred_labels : array-like, shape (n_samples,)

    Returns
    -------
    float
    """
    return 1.0 - classification_error(y, pred_labels)


def estimation_error(coef: Any, true_coef: Any, *, relative: bool = False) -> float:
    """Distance to the true coefficients, ``||coef - true_coef||_2``.

    Zhang's "parameter estimation error" is the absolute form; Liu et al.'s "estimation error"
    divides by ``||true_coef||`` (``relative=True``).

    Parameters
    ----------
    coef, true_coef : array-like, shape (n_features,)
    relative : bool, default False

    Returns
    -------
    float
    """
    coef, true_coef = _paired(coef, true_coef, float)
    err = float(np.linalg.norm(coef - true_coef))
    if not relative:
        return err
    norm = float(np.linalg.norm(true_coef))
    if norm == 0.0:
        raise ValueError("relative estimation error is undefined when true_coef is zero")
    return err / norm


# --------------------------------------------------------------------------- support agreement


def feature_selection_error(support: Any, true_support: Any) -> int:
    """Zhang's feature-selection error: selected features that are not true features.

    Zhang (2008) Table 1 reports "the number of incorrectly selected features" for supports of
    the true size k = 5. We read it as ``|F - F*|``, the selected features outside the true set.
    When ``|F| = |F*|`` this equals ``|F* - F|``, the true features missed, so the reading and its
    mirror agree on Table 1; for supports of other sizes, use :func:`recovery_percent` for the
    missed side.

    Parameters
    ----------
    support, true_support : array-like of int or boolean mask

    Returns
    -------
    int
    """
    return len(_as_set(support) - _as_set(true_support))


def f_measure(support: Any, true_support: Any) -> float:
    """Liu et al.'s F-measure ``2 |F cap F*| / (|F| + |F*|)``.

    Parameters
    ----------
    support, true_support : array-like of int or boolean mask

    Returns
    -------
    float
        In [0, 1]; 1.0 when both sets are empty (they agree).
    """
    f, f_true = _as_set(support), _as_set(true_support)
    if not f and not f_true:
        return 1.0
    return 2.0 * len(f & f_true) / (len(f) + len(f_true))


def recovery_percent(support: Any, true_support: Any) -> float:
    """Elenberg et al.'s percent of the true support recovered, ``100 |F cap F*| / |F*|``.

    Parameters
    ----------
    support, true_support : array-like of int or boolean mask

    Returns
    -------
    float
        In [0, 100].
    """
    f_true = _as_set(true_support)
    if not f_true:
        raise ValueError("recovery_percent needs a nonempty true support")
    return 100.0 * len(_as_set(support) & f_true) / len(f_true)


def groups_used(support: Any, groups: Any) -> np.ndarray:
    """Groups holding at least one selected feature (a "sensor" is used when any feature is).

    Parameters
    ----------
    support : array-like of int or boolean mask
    groups : array-like of int, shape (n_features,), or sequence of index arrays
        Either the group label of every feature (as ``Problem.groups``), or a list whose entry g
        lists the features of group g (groups may then overlap).

    Returns
    -------
    ndarray of int
        Sorted group labels (or list positions).
    """
    selected = _as_set(support)
    if _is_label_array(groups):
        labels = np.asarray(groups)
        idx = np.fromiter(selected, dtype=np.intp, count=len(selected))
        if idx.size and idx.max() >= labels.size:
            raise ValueError(
                f"support holds feature {int(idx.max())} but groups labels {labels.size} features"
            )
        return np.unique(labels[idx]).astype(np.int64)
    used = [g for g, members in enumerate(groups) if selected & _as_set(members)]
    return np.array(used, dtype=np.int64)


# --------------------------------------------------------------------------- ROC


@dataclass(frozen=True)
class RocCurve:
    """Support-recovery ROC curve.

    Attributes
    ----------
    fpr, tpr : ndarray
        From (0, 0) to (1, 1), one point per distinct rank (ties are one step).
    ranked_by : {"order", "scores"}
        ``"order"``: features ranked by their position in an admission order, features never
        admitted tied last. ``"scores"``: ranked by decreasing score (e.g. ``|coef|``), equal
        scores tied.
    n_positive, n_negative : int
        True and false features among the ``n_features``.
    """

    fpr: np.ndarray
    tpr: np.ndarray
    ranked_by: str
    n_positive: int
    n_negative: int

    @property
    def auc(self) -> float:
        """Area under the curve (trapezoid rule)."""
        return auc(self.fpr, self.tpr)


def roc_curve(
    order_or_scores: Any,
    true_support: Any,
    n_features: int,
    *,
    by: str | None = None,
) -> RocCurve:
    """ROC curve of the true support against a ranking of all features.

    Parameters
    ----------
    order_or_scores : array-like
        Either an *order*: distinct feature indices, first admitted first (as returned by
        :func:`path_order`); features not listed tie at the end. Or *scores*: one number per
        feature, larger ranked earlier (pass ``np.abs(coef)`` to rank by coefficient size);
        equal scores tie. Integer arrays are taken as orders and float arrays as scores unless
        ``by`` says otherwise.
    true_support : array-like of int or boolean mask
    n_features : int
    by : {"order", "scores"}, optional
        Force the reading of ``order_or_scores``.

    Returns
    -------
    RocCurve
        ``ranked_by`` says which reading was used.

    Raises
    ------
    ValueError
        When the true support is empty or covers every feature (one rate is then 0/0), or the
        order repeats or exceeds features, or the scores have the wrong length.
    """
    values = np.asarray(order_or_scores)
    if by is None:
        by = "order" if values.size == 0 or np.issubdtype(values.dtype, np.integer) else "scores"
    if by == "order":
        scores = _order_scores(values, n_features)
    elif by == "scores":
        scores = values.astype(float).ravel()
        if scores.size != n_features or not np.all(np.isfinite(scores)):
            raise ValueError(f"scores must be {n_features} finite numbers, got {scores.size}")
    else:
        raise ValueError(f"by must be 'order' or 'scores', got {by!r}")

    positive = np.zeros(n_features, dtype=bool)
    idx = _as_index_array(true_support)
    if idx.size and idx.max() >= n_features:
        raise ValueError(f"true support holds feature {int(idx.max())} >= n_features")
    positive[idx] = True
    n_pos = int(positive.sum())
    n_neg = n_features - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError(
            f"ROC needs true and false features; the true support has {n_pos} of {n_features}"
        )
    fpr, tpr = _roc_points(scores, positive, n_pos, n_neg)
    return RocCurve(fpr=fpr, tpr=tpr, ranked_by=by, n_positive=n_pos, n_negative=n_neg)


def auc(fpr: Any, tpr: Any) -> float:
    """Area under a curve by the trapezoid rule.

    Parameters
    ----------
    fpr, tpr : array-like, same length >= 2
        ``fpr`` nondecreasing.

    Returns
    -------
    float
    """
    x, y = _paired(fpr, tpr, float)
    if x.size < 2:
        raise ValueError("auc needs at least two points")
    if np.any(np.diff(x) < 0):
        raise ValueError("fpr must be nondecreasing")
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0))


def _order_scores(order: np.ndarray, n_features: int) -> np.ndarray:
    """Scores that rank listed features by position and tie the unlisted ones last."""
    order = order.ravel()
    if not np.issubdtype(order.dtype, np.integer):
        if not np.issubdtype(order.dtype, np.number) or not np.all(order == np.round(order)):
            raise ValueError("an order must hold integer feature indices")
    order = order.astype(np.intp)
    if order.size and (order.min() < 0 or order.max() >= n_features):
        raise ValueError(f"order holds indices outside [0, {n_features})")
    if np.unique(order).size != order.size:
        raise ValueError("order repeats a feature; use path_order to deduplicate a path")
    scores = np.zeros(n_features)
    scores[order] = np.arange(order.size, 0, -1)  # first admitted gets the largest score
    return scores


def _roc_points(
    scores: np.ndarray, positive: np.ndarray, n_pos: int, n_neg: int
) -> tuple[np.ndarray, np.ndarray]:
    rank = np.argsort(-scores, kind="stable")
    s, pos = scores[rank], positive[rank]
    tp = np.cumsum(pos)
    fp = np.cumsum(~pos)
    # One point after each block of tied scores: a tie is one threshold, so one diagonal step.
    last_of_tie = np.r_[s[1:] != s[:-1], True]
    tpr = np.r_[0.0, tp[last_of_tie] / n_pos]
    fpr = np.r_[0.0, fp[last_of_tie] / n_neg]
    return fpr, tpr


# --------------------------------------------------------------------------- trace


def path_order(events: Iterable[Event | Mapping[str, Any]]) -> np.ndarray:
    """Features in the order a run first admitted them.

    An ``add`` admits its feature and a ``swap`` its incoming one; later re-admissions of a
    removed feature do not move it (its first admission is what it earned).

    Parameters
    ----------
    events : iterable of Event or of dicts (``Event.to_dict`` / the trace JSON)

    Returns
    -------
    ndarray of int
    """
    order = membership(Event.from_dict(e) if isinstance(e, Mapping) else e for e in events).order
    return np.array(order, dtype=np.intp)


# --------------------------------------------------------------------------- helpers


def _paired(a: Any, b: Any, dtype: type | None) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=dtype).ravel()
    b = np.asarray(b, dtype=dtype).ravel()
    if a.shape != b.shape:
        raise ValueError(f"inputs have {a.size} and {b.size} entries; they must match")
    if a.size == 0:
        raise ValueError("inputs are empty")
    return a, b


def _check_label_encoding(y: np.ndarray, pred: np.ndarray) -> None:
    labels_y, labels_p = set(np.unique(y).tolist()), set(np.unique(pred).tolist())
    for a, b in ((labels_y, labels_p), (labels_p, labels_y)):
        if a <= {0, 1} and 0 in a and b <= {-1, 1} and -1 in b:
            raise ValueError("labels mix the {0, 1} and {-1, 1} encodings; convert one side first")


def _as_index_array(support: Any) -> np.ndarray:
    arr = np.asarray(support)
    if arr.dtype == bool:
        return np.flatnonzero(arr)
    arr = arr.ravel()
    if arr.size == 0:
        return arr.astype(np.intp)
    if not np.issubdtype(arr.dtype, np.integer):
        if not np.issubdtype(arr.dtype, np.number) or not np.all(arr == np.round(arr)):
            raise ValueError(f"a support must hold integer feature indices, got {arr.dtype}")
        arr = arr.astype(np.intp)
    if arr.min() < 0:
        raise ValueError("a support cannot hold negative feature indices")
    return np.unique(arr).astype(np.intp)


def _as_set(support: Any) -> set[int]:
    return set(_as_index_array(support).tolist())


def _is_label_array(groups: Any) -> bool:
    if isinstance(groups, np.ndarray):
        return groups.ndim == 1 and groups.dtype != object
    return isinstance(groups, Sequence) and all(np.isscalar(g) for g in groups)
