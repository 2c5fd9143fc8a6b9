"""The best size-k support, by branch and bound over supports, with a time budget.

Refitting on more features never raises the objective (the smaller support's optimum is a point
of the larger model), so Q(F u R) bounds below every size-k support that contains F and draws
the rest from R. The search is depth first: the features are ordered (the incumbent's first,
then by their gain alone), a node (F, R) branches on the first feature of R it adds, and child
i's bound is the refit on F u R[i:], obtained from child i-1's by removing one feature (a warm
start). Those bounds only grow with i, so the first child whose bound reaches the incumbent
ends the node. At the last level the children are the supports F + j themselves, priced all at
once by the active set's exact refit gains. The incumbent starts as the answer being judged
(or forward greedy's), so a good answer prunes from the first node.

Affordable: a search visits far fewer supports than C(d, k) when the features' gains are
uneven, but nothing bounds that in advance, so the search runs under ``time_budget`` seconds
and, when the budget runs out, says so with the best support found, claiming no optimum.
Measured (bench/judge.py, shared 2-core machine): d = 16, k = 5: 0.2-0.9 s; diabetes and
Boston housing (least squares, k = 5): 22 and 59 nodes, under 0.1 s; breast cancer, least
squares: 39k nodes, 3 s; breast cancer, logistic: 17k nodes, 289 s (its 10-30 feature bound
refits are nearly separable: milliseconds each, and weak), not affordable at the default 10 s.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..objectives import ActiveSet, CollinearFeature, Objective
from .problem import fit

DEFAULT_TIME_BUDGET = 10.0
# Prune a node whose bound is within this fraction of |Q| of the incumbent: the optimum is found
# to this relative accuracy (refits round at ~1e-15).
_SLACK = 1e-12


class _OutOfBudget(Exception):
    pass


@dataclass(frozen=True)
class ExactResult:
    """The best size-k support, or what the search found before its budget ran out.

    Attributes
    ----------
    k : int
    optimal : bool
        True when the search finished: ``support`` is a best size-k support (its objective
        within 1e-12 relative of the minimum).
    status : str
        ``"optimal"``, or ``"not affordable"`` (the time budget ran out).
    support : tuple of int
        The best size-k support found.
    objective : float
        Its refitted objective.
    n_supports : int
        C(d, k), the supports a plain enumeration would fit.
    nodes : int
        Refits and supports the search priced.
    elapsed, time_budget : float
        Seconds.
    given_support : tuple of int or None
        The support being judged, when one was given.
    given_objective : float or None
    gap : float or None
        (given - best) / |best|: 0 when the given support is optimal. When the search did not
        finish it is a lower bound on the true gap (the best found may not be the best).
    verdict : str
        ``"optimal"``, ``"x% above the best size-k support"``, or what is known when the search
        did not finish.
    """

    k: int
    optimal: bool
    status: str
    support: tuple[int, ...]
    objective: float
    n_supports: int
    nodes: int
    elapsed: float
    time_budget: float
    given_support: tuple[int, ...] | None
    given_objective: float | None
    gap: float | None
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "optimal": self.optimal,
            "status": self.status,
            "support": list(self.support),
            "objective": self.objective,
            "n_supports": self.n_supports,
            "nodes": self.nodes,
            "elapsed": self.elapsed,
            "time_budget": self.time_budget,
            "given_support": list(self.given_support) if self.given_support is not None else None,
            "given_objective": self.given_objective,
            "gap": self.gap,
            "verdict": self.verdict,
        }


_fit_set = fit


class _Search:
    def __init__(self, objective: Objective, k: int, deadline: float) -> None:
        self.objective, self.k, self.deadline = objective, k, deadline
        self.best_value = math.inf
        self.best: list[int] = []
        self.nodes = 0
        # Least squares prices every leaf F + j at once by rank-one algebra; other objectives
        # refit leaf by leaf behind the bounds (their batched refit gains cost more than the
        # few leaves the bounds leave, measured on breast cancer: 88 ms per batch).
        self.batched_leaves = "quadratic" in type(objective).capabilities

    def tick(self) -> None:
        self.nodes += 1
        if time.perf_counter() > self.deadline:
            raise _OutOfBudget

    def offer(self, support: list[int], value: float) -> None:
        if value < self.best_value - _SLACK * abs(self.best_value) or not self.best:
            self.best_value, self.best = float(value), sorted(int(j) for j in support)

    def prunes(self, bound: float) -> bool:
        return bound >= self.best_value - _SLACK * abs(self.best_value)

    def shrink(self, cur: ActiveSet, features: list[int], gone: int) -> ActiveSet:
        """The refit on ``features`` from the one on ``features + [gone]``."""
        if len(cur.support) == len(features) + 1 and gone in cur.support:
            cur.remove(gone)
            return cur
        return _fit_set(self.objective, features)  # a collinear feature was left out: refit

    def visit(self, F: list[int], state_F: ActiveSet, R: list[int], bound: ActiveSet) -> None:
        need = self.k - len(F)
        if need == 1 and self.batched_leaves:
            self.tick()
            gains = state_F.refit_gains()
            values = state_F.value - gains[R]
            self.nodes += len(R)
            i = int(np.argmin(values))
            self.offer([*F, R[i]], float(values[i]))
            return
        cur = bound
        for i, r in enumerate(R):
            if len(R) - i < need:
                break
            if i > 0:
                cur = self.shrink(cur, F + R[i:], R[i - 1])
            self.tick()
            if self.prunes(cur.value):
                break
            child = state_F.copy()
            try:
                child.add(r)
            except CollinearFeature:
                pass  # r adds nothing to F's fit; F + r is still a support of the search
            if need == 1:
                self.offer([*F, r], child.value)
            else:
                self.visit([*F, r], child, R[i + 1 :], cur.copy())


def branch_and_bound(
    objective: Objective,
    k: int,
    *,
    incumbent: list[int] | None = None,
    time_budget: float = DEFAULT_TIME_BUDGET,
) -> tuple[list[int], float, bool, int, float]:
    """(best support, its objective, finished, nodes, seconds) of the size-k search."""
    d = objective.n_features
    if not 1 <= k <= d:
        raise ValueError(f"k must be between 1 and {d}, got {k}")
    start_time = time.perf_counter()
    search = _Search(objective, k, start_time + time_budget)
    empty = objective.start()
    alone = empty.refit_gains()
    if incumbent is None:  # forward stepwise as the incumbent
        state = empty.copy()
        incumbent = []
        while len(incumbent) < k:
            g = state.refit_gains()
            g[incumbent] = -np.inf
            j = int(np.argmax(g))
            incumbent.append(j)
            try:
                state.add(j)
            except CollinearFeature:
                pass
    search.offer(list(incumbent), fit(objective, incumbent).value)
    first = sorted(incumbent, key=lambda j: -alone[j])
    rest = [int(j) for j in np.argsort(-alone, kind="stable") if int(j) not in incumbent]
    order = first + rest
    finished = True
    try:
        search.visit([], empty, order, _fit_set(objective, order))
    except _OutOfBudget:
        finished = False
    value = fit(objective, search.best).value
    return search.best, float(value), finished, search.nodes, time.perf_counter() - start_time


def exact_result(
    objective: Objective,
    k: int,
    *,
    support: list[int] | None = None,
    time_budget: float = DEFAULT_TIME_BUDGET,
) -> ExactResult:
    """:func:`branch_and_bound` with the verdict on ``support`` (when given)."""
    given = sorted(support) if support is not None else None
    incumbent = given if given is not None and len(given) == k else None
    best, value, finished, nodes, elapsed = branch_and_bound(
        objective, k, incumbent=incumbent, time_budget=time_budget
    )
    n_supports = math.comb(objective.n_features, k)
    given_value = fit(objective, given).value if given is not None else None
    gap = None
    if given_value is not None:
        gap = max(given_value - value, 0.0) / max(abs(value), 1e-300)
    if finished:
        status = "optimal"
        if gap is None:
            verdict = f"the best size-{k} support has objective {value:.6g}"
        elif gap <= _SLACK * 10:
            verdict = "optimal"
        else:
            verdict = f"{100 * gap:.3g}% above the best size-{k} support"
    else:
        status = "not affordable"
        verdict = (
            f"not affordable: the search for the best of the C({objective.n_features}, {k}) = "
            f"{n_supports:.3g} supports did not finish in {time_budget:g} s; no optimum is "
            f"claimed. The best support found has objective {value:.6g}"
        )
        if gap:
            verdict += f"; the given support is at least {100 * gap:.3g}% above it"
    return ExactResult(
        k,
        finished,
        status,
        tuple(best),
        value,
        n_supports,
        nodes,
        elapsed,
        time_budget,
        tuple(given) if given is not None else None,
        given_value,
        gap,
        verdict,
    )
