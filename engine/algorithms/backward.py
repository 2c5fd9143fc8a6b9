"""Backward elimination (Zhang 2008, Section 2): start from the full model and repeatedly
remove the feature whose removal (with refit) raises the objective least.

For least squares the refit cost of every deletion is exact and simultaneous
(w_j^2 / (2n [G^-1]_jj)); other objectives refit once per candidate.
"""

from __future__ import annotations

import numpy as np

from ..objectives import CollinearFeature
from ..registry import register_algorithm
from ..threads import blas_policy
from .common import PathTracker, emit_stop


@register_algorithm(
    name="backward",
    title="Backward elimination",
    summary="Fit all features, then remove the one whose removal raises the objective least, "
    "until k remain. Needs more samples than features.",
    reference="Zhang 2008, Section 2",
    params=(),
    k="required",
    family="backward",
)
@blas_policy
def backward(objective, rec, *, k, rng):
    n, d = objective.n_samples, objective.n_features
    if d >= n:
        raise ValueError(
            f"backward elimination needs more samples than features (got n_samples = {n}, "
            f"n_features = {d}): the full model fits the data exactly and no deletion can be "
            "told from another (Zhang 2008, Section 2). Use FoBa or forward selection instead."
        )
    state = objective.start()
    for j in range(d):
        try:
            gain = state.add(j)
        except CollinearFeature:
            raise ValueError(
                f"feature {j} is a linear combination of features 0..{j - 1}: the full model "
                "is not identifiable; drop duplicated or collinear columns first"
            ) from None
        rec.emit(
            "add",
            feature=j,
            objective=state.value,
            support_size=len(state.support),
            gain=gain,
            accepted=True,
            reason="building the full model",
        )
    tracker = PathTracker(k, d)
    tracker.observe(state)
    while len(state.support) > k:
        costs = state.refit_deletion_costs()
        p = int(np.argmin(costs))
        j = state.support[p]
        cand = rec.candidates(np.array(state.support), costs, largest_first=False)
        increase = state.remove(j)
        rec.emit(
            "remove",
            feature=j,
            objective=state.value,
            support_size=len(state.support),
            gain=increase,
            score=float(costs[p]),
            accepted=True,
            candidates=cand,
        )
        tracker.observe(state)
    reason = f"reached k = {k} features"
    emit_stop(rec, state, reason)
    return tracker.solution(state, reason)
