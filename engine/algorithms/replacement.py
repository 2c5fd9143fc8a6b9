"""Replacement steps as post-processing (Shalev-Shwartz, Srebro & Zhang 2010, Algorithm 4).

``full``: add the feature of largest one-coordinate objective drop, refit on the enlarged
support, and drop the feature of smallest weight there; accept only if the objective after that
drop (before the final refit, as in the paper: delta_t = R(w_t) - R(w' - w'_q e_q)) is lower.

``simple``: the paper's cheaper variant, swapping the largest |gradient| feature in and the
smallest |weight| feature out with no intermediate refit. The paper leaves its acceptance
implicit; we accept a swap only when the refitted objective decreases, so the support size is
kept and the objective never rises, as in Algorithm 4.
"""

from __future__ import annotations

import numpy as np

from ..objectives import ActiveSet, CollinearFeature
from ..trace import Recorder


def post_process(
    state: ActiveSet, rec: Recorder, *, variant: str, max_replacements: int | None, reason: str
) -> tuple[ActiveSet, str]:
    """Apply replacement steps when ``variant`` is not "none"; extend the stop reason."""
    if variant == "none":
        return state, reason
    budget = max_replacements or 10 * max(len(state.support), 1)
    state, why = replacement_steps(state, rec, variant=variant, max_iter=budget)
    return state, f"{reason}; {why}"


def replacement_steps(
    state: ActiveSet, rec: Recorder, *, variant: str, max_iter: int
) -> tuple[ActiveSet, str]:
    """Run up to ``max_iter`` replacements on ``state``; return the new state and why it ended."""
    for _ in range(max_iter):
        if not state.support or len(state.support) >= state.objective.n_features:
            return state, "no replacement possible"
        trial, r, q, tested = _propose(state, variant)
        if trial is None:
            return state, "no candidate feature outside the support"
        improvement = state.value - tested
        if not improvement > 0:
            rec.checked(
                r,
                feature_out=q,
                objective=state.value,
                support_size=len(state.support),
                cost=improvement,
                threshold=0.0,
                reason="replacement would not lower the objective",
            )
            return state, "replacement steps converged"
        old = state.value
        state = trial
        rec.swapped(
            r,
            q,
            objective=state.value,
            support_size=len(state.support),
            gain=old - state.value,
            score=improvement,
            threshold=0.0,
        )
    return state, f"max_replacements = {max_iter} replacement steps taken"


def _propose(state: ActiveSet, variant: str):
    """Return (state after the swap, feature in, feature out, objective tested against 0)."""
    if variant == "full":
        scores = state.coordinate_drops()
    else:
        scores = np.abs(state.gradient())
        scores[state.support] = 0.0
    order = np.argsort(-scores, kind="stable")
    for r in order:
        r = int(r)
        if r in state.support or scores[r] <= 0:
            break
        trial = state.copy()
        if variant == "full":
            try:
                trial.add(r)
            except CollinearFeature:
                continue
            weights = np.abs(trial.coef[trial.support])
            p = int(np.argmin(weights))
            q = trial.support[p]
            if q == r:  # the newcomer is the weakest: no swap (the paper's delta_t <= 0)
                return trial, r, q, state.value
            tested = trial.value + float(trial.deletion_costs()[p])
            trial.remove(q)
            return trial, r, q, tested
        p = int(np.argmin(np.abs(state.coef[state.support])))
        q = state.support[p]
        trial.remove(q)
        try:
            trial.add(r)
        except CollinearFeature:
            continue
        return trial, r, q, trial.value
    return None, -1, -1, state.value
