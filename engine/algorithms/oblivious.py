"""Oblivious support selection (Elenberg et al. 2016, Algorithm 1): rank every feature by the
objective decrease of the model with that feature alone (refit with the intercept), keep the
top k, refit on them."""

from __future__ import annotations

import numpy as np

from ..objectives import CollinearFeature
from ..registry import Traits, register_algorithm
from .common import Solution, emit_stop
from .params import MAX_REPLACEMENTS, REPLACEMENT
from .replacement import post_process


@register_algorithm(
    name="oblivious",
    title="Oblivious top-k",
    summary="Score each feature alone against the null model and keep the k best; ignores "
    "redundancy between features.",
    reference="Elenberg et al. 2016, Algorithm 1",
    params=(REPLACEMENT, MAX_REPLACEMENTS),
    k="required",
    family="forward",
    traits=Traits(forward_rule="alone", path="prefix", path_param="replacement"),
)
def oblivious(objective, rec, *, k, rng, replacement, max_replacements):
    """Oblivious top-k: rank features by the gain of each alone, keep the k best, refit.

    Parameters
    ----------
    objective : Objective
    rec : Recorder
        Receives one ``add`` per kept feature (the first carries every feature's score).
    k : int
        Features to keep.
    rng : numpy.random.Generator
        Unused.
    replacement, max_replacements
        Optional replacement steps afterwards, as in ``forward_obj``.

    Returns
    -------
    Solution
        The k features, refitted together.

    References
    ----------
    Elenberg et al. (2016), Algorithm 1.
    """
    state = objective.start()
    scores = state.refit_gains()
    cand = rec.candidates(np.arange(objective.n_features), scores)
    for j in np.argsort(-scores, kind="stable"):
        if len(state.support) == k:
            break
        try:
            gain = state.add(int(j))
        except CollinearFeature:
            continue  # a duplicate of a kept feature adds nothing to the model
        rec.added(
            int(j),
            objective=state.value,
            support_size=len(state.support),
            gain=gain,
            score=float(scores[j]),
            candidates=cand if len(state.support) == 1 else None,
        )
    reason = f"kept the top k = {k} features"
    state, reason = post_process(
        state, rec, variant=replacement, max_replacements=max_replacements, reason=reason
    )
    emit_stop(rec, state, reason)
    return Solution.of(state, reason)
