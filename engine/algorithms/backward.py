"""Backward elimination (Zhang 2008, Section 2): start from the full model and repeatedly
remove the feature whose removal (with refit) raises the objective least.

For least squares the refit cost of every deletion is exact and simultaneous
(w_j^2 / (2n [G^-1]_jj)); other objectives refit once per candidate.
"""

from __future__ import annotations

import numpy as np

from ..objectives import CollinearFeature
from ..registry import Requirements, Traits, register_algorithm
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
    requires=Requirements(more_samples_than_features=True),
    traits=Traits(deletion="refit", path="backward"),
)
def backward(objective, rec, *, k, rng):
    """Backward elimination from the full model.

    Parameters
    ----------
    objective : Objective
        Needs more samples than features (``engine.check_config`` makes sure).
    rec : Recorder
        Receives the ``add`` events that build the full model, one ``remove`` per deletion
        (``gain`` = the refit objective increase), then ``stop``.
    k : int
        Features to keep.
    rng : numpy.random.Generator
        Unused.

    Returns
    -------
    Solution
        The size-k support, refitted.

    Raises
    ------
    ValueError
        When a feature is a linear combination of others (the full model is not identifiable).

    References
    ----------
    Zhang (2008), Section 2.
    """
    d = objective.n_features
    state = objective.start()
    for j in range(d):
        try:
            gain = state.add(j)
        except CollinearFeature:
            raise ValueError(
                f"feature {j} is a linear combination of features 0..{j - 1}: the full model "
                "is not identifiable; drop duplicated or collinear columns first"
            ) from None
        rec.added(
            j,
            objective=state.value,
            support_size=len(state.support),
            gain=gain,
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
        rec.removed(
            j,
            objective=state.value,
            support_size=len(state.support),
            cost=increase,
            score=float(costs[p]),
            candidates=cand,
        )
        tracker.observe(state)
    reason = f"reached k = {k} features"
    emit_stop(rec, state, reason)
    return tracker.solution(state, reason)
