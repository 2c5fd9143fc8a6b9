"""Group orthogonal matching pursuit (Group-OMP).

Lozano, Swirszcz & Abe (2009), "Group orthogonal matching pursuit for variable selection and
prediction" (NIPS), the group-selection baseline of Xiang, Yang & Ye (2014), Section 5.3
("gOMP"); Lozano, Swirszcz & Abe (2011) carry it to logistic regression. Each step:

1. score every unselected group G by the l2 norm of the objective's gradient over its
   features, ``||grad_G Q||_2`` (for least squares ``||X_G^T r||_2 / n``);
2. add every feature of the best group (lowest group code on ties) and refit the objective on
   all selected features (one ``ActiveSet.add`` per feature, so the refit is exact);
3. stop at ``n_groups`` groups, when the best score falls below ``epsilon``, or when the next
   group would take the support past k.

Scoring. ``norm`` (default) is the papers' criterion: no normalisation by the group size.
Lozano et al. state it for groups whose columns were orthonormalised beforehand
(``X_G^T X_G = I``); ``orthonormal`` applies that orthonormalisation implicitly, scoring
``||(X_G^T X_G)^{-1/2} grad_G||_2`` (for least squares, the norm of the residual's projection
on the group's span), which is what ``norm`` computes on orthonormalised data. ``sqrt_size``
divides the norm by ``sqrt(|G|)``, the group-lasso weighting (Yuan & Lin 2006), so that large
groups are not favoured for their size alone.

k is a hard cap: a group that would take the support past k is not added, and the run stops
there (a smaller group further down the ranking is not tried, which would no longer be the
greedy order). A feature that is collinear with the support is left out of its group
(``CollinearFeature``); the group still counts as selected.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..objectives import ActiveSet, CollinearFeature, Objective
from ..registry import Param, register_algorithm
from ..threads import blas_policy
from ..trace import Recorder
from .common import Solution, emit_stop

SCORINGS = ("norm", "sqrt_size", "orthonormal")
# Eigenvalues of a group's Gram matrix below this fraction of its largest span no direction.
_RANK_TOL = 1e-10

GROUP_OMP_PARAMS = (
    Param(
        "n_groups",
        "int",
        None,
        "Stop after selecting this many groups (Xiang et al. tune it for gOMP).",
        minimum=1,
        nullable=True,
    ),
    Param(
        "epsilon",
        "float",
        None,
        "Stop when the best group score falls below epsilon (Lozano et al.'s stopping rule).",
        minimum=0.0,
        exclusive_minimum=True,
        nullable=True,
    ),
    Param(
        "scoring",
        "str",
        "norm",
        "Group score: norm (||gradient over the group||_2, Lozano et al.), sqrt_size (that "
        "norm / sqrt(group size), the group-lasso weighting) or orthonormal (the norm after "
        "orthonormalising the group's columns, as Lozano et al. assume).",
        choices=SCORINGS,
    ),
)


def group_members(groups: np.ndarray) -> list[np.ndarray]:
    """Feature indices of every group code 0..G-1, in increasing order."""
    order = np.argsort(groups, kind="stable")
    bounds = np.searchsorted(groups[order], np.arange(int(groups.max()) + 2))
    return [order[bounds[g] : bounds[g + 1]] for g in range(len(bounds) - 1)]


def _whiteners(objective: Objective, members: list[np.ndarray]) -> list[np.ndarray]:
    """(X_G^T X_G)^{-1/2} of every group (pseudo-inverse on rank-deficient groups), on the
    columns the objective sees (centred for least squares with an intercept)."""
    out = []
    for idx in members:
        cols = objective.design.columns(idx)
        evals, evecs = np.linalg.eigh(cols.T @ cols)
        keep = evals > _RANK_TOL * max(float(evals.max(initial=0.0)), 1e-300)
        out.append(evecs[:, keep].T / np.sqrt(evals[keep])[:, None])
    return out


def group_scores(
    grad: np.ndarray,
    members: list[np.ndarray],
    open_groups: list[int],
    scoring: str,
    whiteners: list[np.ndarray] | None = None,
) -> np.ndarray:
    """Score of every open group.

    Parameters
    ----------
    grad : ndarray, shape (n_features,)
        The objective's gradient at the current refit.
    members : list of ndarray
        Feature indices of every group.
    open_groups : list of int
        Groups not selected yet.
    scoring : {"norm", "sqrt_size", "orthonormal"}
    whiteners : list of ndarray, optional
        ``(X_G^T X_G)^{-1/2}`` of every group, for ``orthonormal``.

    Returns
    -------
    ndarray, shape (len(open_groups),)
    """
    scores = np.empty(len(open_groups))
    for i, g in enumerate(open_groups):
        gg = grad[members[g]]
        if scoring == "orthonormal":
            assert whiteners is not None
            gg = whiteners[g] @ gg
        scores[i] = np.linalg.norm(gg)
        if scoring == "sqrt_size":
            scores[i] /= np.sqrt(len(members[g]))
    return scores


@dataclass(frozen=True)
class _Add:
    feature: int
    objective: float
    gain: float
    support_size: int


def _add_group(state: ActiveSet, features: np.ndarray) -> tuple[ActiveSet, list[_Add], list[int]]:
    """A copy of ``state`` with the group added feature by feature (each add refits): the new
    state, every add, and the collinear features left out. A copy, because a group that would
    take the support past k is not added after all."""
    trial = state.copy()
    added: list[_Add] = []
    skipped: list[int] = []
    for j in features:
        try:
            gain = trial.add(int(j))
        except CollinearFeature:
            skipped.append(int(j))
            continue
        added.append(_Add(int(j), trial.value, gain, len(trial.support)))
    return trial, added, skipped


@register_algorithm(
    name="group-omp",
    title="Group OMP",
    summary="Group orthogonal matching pursuit: add every feature of the group with the largest "
    "gradient norm, refit on all selected features; stop at k features, n_groups groups or "
    "epsilon.",
    reference="Lozano, Swirszcz & Abe 2009 (Group-OMP); Xiang, Yang & Ye 2014, Section 5.3 "
    "(gOMP baseline)",
    params=GROUP_OMP_PARAMS,
    k="optional",
    family="forward",
    uses_groups=True,
)
@blas_policy
def group_omp(
    objective: Objective,
    rec: Recorder,
    *,
    k: int | None,
    rng: np.random.Generator,
    groups: np.ndarray | None,
    n_groups: int | None,
    epsilon: float | None,
    scoring: str,
) -> Solution:
    """Group-OMP (Lozano, Swirszcz & Abe 2009): whole groups by largest gradient norm.

    Parameters
    ----------
    objective : Objective
        Any objective; the score uses its gradient only, the refit its active set.
    rec : Recorder
        Receives one ``add`` event per feature, with ``info={"group": g}`` and ``score`` the
        group's score, then ``stop``.
    k : int or None
        Most features: the group that would take the support past k is not added.
    rng : numpy.random.Generator
        Unused (the algorithm is deterministic).
    groups : ndarray of int, shape (n_features,), or None
        Group code 0..G-1 of every feature (``engine.select`` builds it from any labels).
    n_groups : int or None
        Stop after this many groups.
    epsilon : float or None
        Stop when the best group score is below epsilon.
    scoring : {"norm", "sqrt_size", "orthonormal"}
        The group score (module docstring).

    Returns
    -------
    Solution
        The refit on every selected feature.

    Raises
    ------
    ValueError
        Without groups, or without any stopping rule (k, n_groups, epsilon).
    """
    if groups is None:
        raise ValueError(
            "algorithm 'group-omp' needs groups: pass groups=, one group label per feature"
        )
    if k is None and n_groups is None and epsilon is None:
        raise ValueError("give k, n_groups or epsilon: the group path needs an end")
    members = group_members(np.asarray(groups))
    whiteners = _whiteners(objective, members) if scoring == "orthonormal" else None
    state = objective.start()
    open_groups = list(range(len(members)))
    n_selected = 0
    skipped_all: list[int] = []
    while True:
        if n_groups is not None and n_selected >= n_groups:
            reason = f"selected n_groups = {n_groups} groups"
            break
        if k is not None and len(state.support) >= k:
            reason = f"reached k = {k} features"
            break
        if not open_groups:
            reason = "every group is selected"
            break
        scores = group_scores(state.gradient(), members, open_groups, scoring, whiteners)
        i = int(np.argmax(scores))
        g, best = open_groups[i], float(scores[i])
        if epsilon is not None and best < epsilon:
            reason = f"largest group score {best:.4g} < epsilon = {epsilon:g}"
            break
        if best <= 0.0:
            reason = "no remaining group decreases the objective"
            break
        trial, added, skipped = _add_group(state, members[g])
        if k is not None and len(trial.support) > k:
            reason = (
                f"the next group ({g}, {len(added)} features) would take the support past "
                f"k = {k}; stopped at {len(state.support)} features"
            )
            break
        open_groups.pop(i)
        state = trial
        n_selected += bool(added)
        skipped_all += skipped
        for a in added:
            rec.emit(
                "add",
                feature=a.feature,
                objective=a.objective,
                support_size=a.support_size,
                gain=a.gain,
                score=best,
                threshold=epsilon,
                accepted=True,
                info={"group": g},
            )
    if skipped_all:
        reason += f"; left out collinear features {skipped_all}"
    emit_stop(rec, state, reason)
    return Solution.of(state, reason)
