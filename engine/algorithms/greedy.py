"""The forward(-backward) greedy path shared by forward greedy, OMP, forward stepwise, FoBa
and the fixed-threshold heuristic.

Forward step (Liu, Fujimaki & Ye 2014, Algorithm 1, lines 3-14; Zhang 2008, Figures 1 and 3):
score every candidate, add the best, refit on the new support, record the gain delta(size).

Backward step (Algorithm 1, lines 15-24; Zhang's Figure 3): take the selected feature whose
removal, *without* refitting, raises the objective least; delete it (and refit) while its cost is
below the rule's threshold. (``deletion_cost="refit"`` ranks and thresholds the deletions by the
objective increase *after* refitting the rest instead, as Zhang's R package ``foba`` does. The
intercept, never selected, is re-optimised in both: a deletion cost is the change of the
objective minimised over the intercept, for every objective.)

``standard``      nu * delta(size), the gain recorded when the support last grew to its size;
``conservative``  nu * the smallest forward gain seen so far;
``aggressive``    the cumulative increase of this backward phase must stay below nu times the
                  forward gains it undoes (the threshold recorded is what is left of that);
``fixed``         a fixed eps_back (the heuristic "as implemented in SAS", Zhang Section 3).

Every decision is an event: ``add``, ``remove`` (gain = cost < threshold) and ``check`` (the
cheapest deletion was too costly), so a reader of the trace can verify each rule.

Where the path ends with a target k: Zhang's path runs ``max_steps`` (5k) add/remove steps and
returns the best size-k support along it; it stops earlier only when it provably cannot come
back to k features in the steps left. ``size_cap`` stops it before a forward step would take
it past that many features: k for ``path_end="sparsity"`` (the path stops as soon as it holds k
features after a backward phase, Liu et al. 2014, Appendix D), k + max(5, ceil(k/10)) for
``path_end="auto"`` (``common.size_cap``; why that keeps Zhang's answer: ``params.PATH_END``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..objectives import ActiveSet, CollinearFeature, Objective
from ..trace import Recorder
from .common import PathTracker, Solution, candidate_mask, default_max_steps, tiny_gain


@dataclass(frozen=True)
class PathConfig:
    """How one greedy path runs.

    rule: forward score, ``obj`` (one-coordinate objective drop), ``gdt`` (|gradient|),
        ``quad`` (quadratic approximation) or ``refit`` (exact full-refit gain: forward stepwise).
    backward: None (forward only), ``standard``, ``conservative``, ``aggressive`` or ``fixed``.
    k: target support size. Forward only: stop there. With a backward rule: Zhang's semantics,
        the path runs on and the best size-k support along it is the answer.
    delta: stop when the best forward score (obj/quad/refit) falls below it.
    epsilon: stop when the largest |gradient| falls below it (gdt).
    deletion_cost: ``fixed`` (no refit, the algorithm boxes) or ``refit``.
    size_cap: stop before a forward step when the path holds this many features or more
        (after the backward phase): ``common.size_cap(k, path_end)``; None: no cap.
    """

    rule: str
    backward: str | None = None
    k: int | None = None
    nu: float = 0.5
    eps_back: float | None = None
    delta: float | None = None
    epsilon: float | None = None
    max_steps: int | None = None
    deletion_cost: str = "fixed"
    size_cap: int | None = None


def greedy_path(
    objective: Objective, rec: Recorder, cfg: PathConfig, state: ActiveSet | None = None
) -> tuple[Solution, ActiveSet]:
    """Run the forward(-backward) greedy path shared by the greedy algorithms.

    Parameters
    ----------
    objective : Objective
        The loss; only its active-set interface is used.
    rec : Recorder
        Receives an ``add`` per forward step and, with a backward rule, a ``remove`` per
        deletion and a ``check`` for each backward test that kept the support.
    cfg : PathConfig
        The forward rule, the backward rule and the stopping rules.
    state : ActiveSet, optional
        Where to start (default: the empty support).

    Returns
    -------
    solution : Solution
        The best size-k support along the path when k is set (Zhang 2008, Section 4), else the
        last support.
    state : ActiveSet
        The final state, for post-processing on the same trace. The caller emits ``stop``.
    """
    state = state if state is not None else objective.start()
    d = objective.n_features
    forward_only = cfg.backward is None
    max_steps = cfg.max_steps if cfg.max_steps is not None else default_max_steps(cfg.k, d)
    tracker = PathTracker(cfg.k, d)
    tracker.observe(state)
    tiny = tiny_gain(state.value)
    gains: dict[int, float] = {}  # support size -> forward gain when it last grew to that size
    smallest_gain = np.inf
    steps = 0
    excluded: set[int] = set()  # collinear with the support at the time they were tried

    while True:
        size = len(state.support)
        if forward_only and cfg.k is not None and size >= cfg.k:
            reason = f"reached k = {cfg.k} features"
            break
        if cfg.size_cap is not None and size >= cfg.size_cap:
            if cfg.size_cap == cfg.k:
                reason = f"path_end = sparsity: the path holds k = {cfg.k} features"
            else:
                reason = (
                    f"path_end = auto: the path holds {size} >= k + {cfg.size_cap - (cfg.k or 0)}"
                    f" = {cfg.size_cap} features"
                )
            break
        if steps >= max_steps:
            reason = f"max_steps = {max_steps} add/remove steps taken"
            break
        if cfg.k is not None and size - cfg.k > max_steps - steps:
            # Even deleting at every remaining step could not bring the path back to k
            # features, so the best size-k support along it is already known.
            reason = (
                f"the path ({size} features) cannot return to k = {cfg.k} in the "
                f"{max_steps - steps} steps left of max_steps = {max_steps}"
            )
            break
        if size + len(excluded) >= d:
            reason = "every feature is selected"
            break
        if rec.record_candidates:
            scores = state.forward_scores(cfg.rule)
            if excluded:
                scores[list(excluded)] = 0.0
            j = int(np.argmax(scores))
            best = float(scores[j])
        else:
            j, best = state.best_candidate(cfg.rule, excluded)
        if cfg.rule == "gdt" and cfg.epsilon is not None and best < cfg.epsilon:
            reason = f"largest |gradient| {best:.4g} < epsilon = {cfg.epsilon:g}"
            break
        if cfg.rule != "gdt" and cfg.delta is not None and best < cfg.delta:
            reason = f"best forward gain {best:.4g} < delta = {cfg.delta:g}"
            break
        if best <= (tiny if cfg.rule != "gdt" else 0.0):
            reason = "no remaining feature decreases the objective"
            break
        before = None if forward_only else set(state.support)  # for the cycle check below
        try:
            gain = state.add(j)
        except CollinearFeature:
            excluded.add(j)
            continue
        excluded.clear()  # the span changed; earlier verdicts no longer hold
        steps += 1
        gains[len(state.support)] = gain
        smallest_gain = min(smallest_gain, gain)
        cand = None
        if rec.record_candidates:
            mask = candidate_mask(state)
            mask[j] = True
            cand = rec.candidates(np.flatnonzero(mask), scores[mask])
        rec.added(
            j,
            objective=state.value,
            support_size=len(state.support),
            gain=gain,
            score=best,
            threshold=cfg.epsilon if cfg.rule == "gdt" else cfg.delta,
            candidates=cand,
        )
        tracker.observe(state)
        if not forward_only:
            steps = _backward_phase(
                state, rec, cfg, gains, smallest_gain, steps, max_steps, tracker
            )
            if set(state.support) == before:
                # Back where the forward step started: the same feature would be added and
                # removed again forever. Only a fixed threshold allows it (FoBa's rules need a
                # deletion cheaper than nu x the gain, and deleting the feature just added
                # costs at least its gain); SAS stops when it would re-add what it just deleted.
                reason = (
                    f"the path cycles: feature {j} was added and at once removed again "
                    "(the heuristic stops when it would re-add the feature it just deleted)"
                )
                break

    return tracker.solution(state, reason), state


def _backward_phase(
    state: ActiveSet,
    rec: Recorder,
    cfg: PathConfig,
    gains: dict[int, float],
    smallest_gain: float,
    steps: int,
    max_steps: int,
    tracker: PathTracker,
) -> int:
    phase_start = state.value
    undone = 0.0  # forward gains undone by this phase's deletions (aggressive rule)
    while state.support and steps < max_steps:
        size = len(state.support)
        costs = None
        if cfg.deletion_cost == "refit":
            costs = state.refit_deletion_costs()
        elif rec.record_candidates:
            costs = state.deletion_costs()
        if costs is None:  # only the cheapest is needed: objectives may bound the rest away
            p, cost = state.cheapest_deletion()
        else:
            p = int(np.argmin(costs))
            cost = float(costs[p])
        j = state.support[p]
        info: dict[str, float] = {}
        if cfg.backward == "standard":
            threshold = cfg.nu * gains[size]
        elif cfg.backward == "conservative":
            threshold = cfg.nu * smallest_gain
        elif cfg.backward == "aggressive":
            spent = state.value - phase_start
            threshold = cfg.nu * (undone + gains[size]) - spent
            info = {"cumulative_cost": spent + cost, "undone_gain": undone + gains[size]}
        else:  # fixed
            threshold = float(cfg.eps_back)  # type: ignore[arg-type]
        cand = None
        if costs is not None:
            cand = rec.candidates(np.array(state.support), costs, largest_first=False)
        if not cost < threshold:
            rec.checked(
                j,
                objective=state.value,
                support_size=size,
                cost=cost,
                threshold=threshold,
                info=info,
                candidates=cand,
            )
            return steps
        undone += gains[size]
        state.remove(j)
        steps += 1
        rec.removed(
            j,
            objective=state.value,
            support_size=len(state.support),
            cost=cost,
            threshold=threshold,
            info=info,
            candidates=cand,
        )
        tracker.observe(state)
    return steps
