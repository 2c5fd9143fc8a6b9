"""Swap certificates, "why not this feature?" and polish: single exchanges around an answer.

An exchange takes one selected feature out and one unselected feature in, keeping the size, and
refits. ``ActiveSet.exchange_values`` prices every exchange at once (least squares by rank-one
algebra on the Cholesky factor its active set keeps; logistic by one refit per selected feature
and the batched exact refit gains of every candidate from there); the few exchanges a result
names are refitted once more from scratch, so every number reported is an exact refit.

A support no single exchange improves is a *local optimum under swaps*: not necessarily the
best size-k support (``engine.judge.exact`` finds that where affordable), but no one-for-one
change of its features helps. Polish (``polish=True`` on any algorithm whose answer is a size-k
support) applies the best improving exchange until none improves. That goes beyond the papers:
their algorithms are unchanged unless it is asked for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..objectives import ActiveSet, CollinearFeature, Objective
from ..trace import Event, Recorder
from .problem import fit

# An exchange "lowers the objective" when it does by more than this fraction of |Q|: far above
# the rounding of a refit (~1e-15 relative), far below any difference worth a swap.
IMPROVE_TOL = 1e-10
DEFAULT_TIE_TOL = 1e-3
DEFAULT_MAX_LISTED = 10
LOCAL_OPTIMUM = "no single exchange lowers the objective: a local optimum under swaps"


@dataclass(frozen=True)
class Exchange:
    """``feature_out`` leaves, ``feature_in`` enters; ``objective`` is the refit after it and
    ``gain`` the objective decrease (negative: the exchange costs)."""

    feature_out: int
    feature_in: int
    objective: float
    gain: float

    @property
    def relative_gain(self) -> float:
        return self.gain / max(abs(self.objective + self.gain), 1e-300)

    def to_dict(self) -> dict[str, Any]:
        return {
            "feature_out": self.feature_out,
            "feature_in": self.feature_in,
            "objective": _num(self.objective),
            "gain": _num(self.gain),
            "relative_gain": _num(self.relative_gain),
        }


@dataclass(frozen=True)
class Certificate:
    """Whether any single exchange lowers the objective of ``support``.

    Attributes
    ----------
    support : tuple of int
    objective : float
        Q refitted on ``support`` (on the scaled problem with ``standardize``, as in a run).
    local_optimum : bool
        True when no exchange lowers Q by more than ``IMPROVE_TOL`` x |Q|.
    verdict : str
        One sentence for a page.
    improving : tuple of Exchange
        The best improving exchanges, best first (at most ``max_listed``).
    n_improving : int
        How many exchanges improve in all.
    alternatives : tuple of Exchange
        Equally good alternatives: exchanges that do not improve but change Q by at most
        ``tie_tolerance`` x |Q|, best first (at most ``max_listed``).
    best : Exchange or None
        The exchange of smallest objective (None when no exchange exists: k = 0 or k = d).
    n_exchanges : int
        Exchanges priced: k x (d - k).
    tie_tolerance : float
    elapsed : float
        Seconds.
    """

    support: tuple[int, ...]
    objective: float
    local_optimum: bool
    verdict: str
    improving: tuple[Exchange, ...]
    n_improving: int
    alternatives: tuple[Exchange, ...]
    best: Exchange | None
    n_exchanges: int
    tie_tolerance: float
    elapsed: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "support": list(self.support),
            "objective": _num(self.objective),
            "local_optimum": self.local_optimum,
            "verdict": self.verdict,
            "improving": [e.to_dict() for e in self.improving],
            "n_improving": self.n_improving,
            "alternatives": [e.to_dict() for e in self.alternatives],
            "best": self.best.to_dict() if self.best is not None else None,
            "n_exchanges": self.n_exchanges,
            "tie_tolerance": self.tie_tolerance,
            "elapsed": self.elapsed,
            "events": [e.to_dict() for e in self.events()],
        }

    def events(self, start: int = 0) -> list[Event]:
        """The certificate in the trace's vocabulary: one ``check`` event per exchange it
        names (``feature`` would enter, ``feature_out`` leave; ``gain`` is the objective change
        the exchange would make, tested against ``threshold`` 0; nothing is applied), the
        verdict as the reason of the first. ``start`` numbers them on from a run's trace
        (``cert.events(len(result.trace))``)."""
        rec = Recorder()
        named = self.improving or ((self.best,) if self.best is not None else ())
        k = len(self.support)
        for i, ex in enumerate(named):
            rec.checked(
                ex.feature_in,
                feature_out=ex.feature_out,
                objective=self.objective,
                support_size=k,
                cost=-ex.gain,
                threshold=0.0,
                info={"objective_after": ex.objective},
                reason=self.verdict if i == 0 else "another improving exchange",
            )
        return [replace(e, step=start + e.step) for e in rec.events]


@dataclass(frozen=True)
class FeatureVerdict:
    """Why not this feature? (or, for a selected one: why this feature?)

    Attributes
    ----------
    feature : int
    selected : bool
    objective : float
        Q of the answer being explained.
    best : Exchange or None
        Selected feature: the best exchange that takes it out (the best replacement for it).
        Unselected: the best exchange that brings it in (the feature it should replace).
        None when there is none (k = 0, or every feature selected).
    cost : float or None
        ``best.objective - objective``: what the best such exchange costs (negative: it
        improves, the answer is not a local optimum under swaps).
    alternatives : tuple of Exchange
        Exchanges involving the feature within ``tie_tolerance`` x |Q| of the answer's Q, best
        first: equally good alternatives.
    change_alone : float or None
        Selected: the objective increase of removing it and refitting the k - 1 others.
        Unselected: the objective decrease of adding it (k + 1 features).
    explanation : str
    """

    feature: int
    selected: bool
    objective: float
    best: Exchange | None
    cost: float | None
    alternatives: tuple[Exchange, ...]
    change_alone: float | None
    explanation: str
    tie_tolerance: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "feature": self.feature,
            "selected": self.selected,
            "objective": _num(self.objective),
            "best": self.best.to_dict() if self.best is not None else None,
            "cost": _num(self.cost),
            "alternatives": [e.to_dict() for e in self.alternatives],
            "change_alone": _num(self.change_alone),
            "explanation": self.explanation,
            "tie_tolerance": self.tie_tolerance,
        }


# --------------------------------------------------------------------------- on an active set


def _improve_tol(value: float) -> float:
    return IMPROVE_TOL * max(abs(value), 1e-300)


def _exact(objective: Objective, state: ActiveSet, out: int, into: int) -> Exchange:
    """The exchange refitted from scratch (the table's value checked by an independent fit)."""
    new = fit(objective, [j for j in state.support if j != out] + [into])
    return Exchange(int(out), int(into), float(new.value), float(state.value - new.value))


def _pairs(state: ActiveSet, table: np.ndarray, mask: np.ndarray, limit: int) -> list[Exchange]:
    """The ``limit`` exchanges of smallest table value where ``mask`` holds, refitted."""
    flat = np.flatnonzero(mask.ravel())
    if flat.size == 0:
        return []
    values = table.ravel()[flat]
    order = flat[np.argsort(values, kind="stable")[:limit]]
    d = table.shape[1]
    out = []
    for f in order:
        p, j = divmod(int(f), d)
        out.append(_exact(state.objective, state, state.support[p], j))
    return sorted(out, key=lambda e: e.objective)


def certify_state(
    state: ActiveSet,
    *,
    tie_tolerance: float = DEFAULT_TIE_TOL,
    max_listed: int = DEFAULT_MAX_LISTED,
    table: np.ndarray | None = None,
) -> Certificate:
    """The swap certificate of the support ``state`` is fitted on."""
    support = tuple(sorted(int(j) for j in state.support))
    base = float(state.value)
    k, d = len(support), state.objective.n_features
    if k == 0 or k == d:
        verdict = "no exchange is possible (" + (
            "no feature selected)" if k == 0 else "every feature selected)"
        )
        return Certificate(support, base, True, verdict, (), 0, (), None, 0, tie_tolerance)
    if table is None:
        table = state.exchange_values()
    valid = np.isfinite(table)
    tol = _improve_tol(base)
    improving_mask = valid & (table < base - tol)
    n_improving = int(improving_mask.sum())
    improving = [e for e in _pairs(state, table, improving_mask, max_listed) if e.gain > tol]
    tie_mask = valid & ~improving_mask & (table <= base + tie_tolerance * abs(base))
    alternatives = _pairs(state, table, tie_mask, max_listed)
    best = improving[0] if improving else _pairs(state, table, valid, 1)[0]
    if improving:
        first = improving[0]
        verdict = (
            f"{n_improving} single exchange{'s' if n_improving > 1 else ''} lower the objective; "
            f"the best takes out feature {first.feature_out} for feature {first.feature_in}: "
            f"{first.objective:.6g} instead of {base:.6g} ({100 * first.relative_gain:.3g}% lower)"
        )
    else:
        verdict = LOCAL_OPTIMUM
        n_improving = 0
    return Certificate(
        support,
        base,
        not improving,
        verdict,
        tuple(improving),
        n_improving,
        tuple(alternatives),
        best,
        int(valid.sum()),
        tie_tolerance,
    )


def why_not_state(
    state: ActiveSet,
    feature: int,
    *,
    tie_tolerance: float = DEFAULT_TIE_TOL,
    max_listed: int = DEFAULT_MAX_LISTED,
    table: np.ndarray | None = None,
) -> FeatureVerdict:
    """Why ``feature`` is (not) in the support ``state`` is fitted on."""
    base = float(state.value)
    d = state.objective.n_features
    if not 0 <= feature < d:
        raise ValueError(f"feature must be 0..{d - 1}, got {feature}")
    selected = feature in state.support
    k = len(state.support)
    if k == 0 or k == d:
        change = _change_alone(state, feature, selected)
        text = "no exchange is possible with " + ("no feature" if k == 0 else "every feature")
        return FeatureVerdict(
            feature, selected, base, None, None, (), change, text + " selected", tie_tolerance
        )
    if table is None:
        table = state.exchange_values()
    mask = np.zeros_like(table, dtype=bool)
    if selected:
        mask[state.support.index(feature), :] = True
    else:
        mask[:, feature] = True
    mask &= np.isfinite(table)
    best = _pairs(state, table, mask, 1)[0]
    ties = mask & (np.abs(table - base) <= tie_tolerance * abs(base))
    alternatives = tuple(_pairs(state, table, ties, max_listed))
    cost = best.objective - base
    change = _change_alone(state, feature, selected)
    rel = 100 * cost / max(abs(base), 1e-300)
    if selected:
        text = (
            f"feature {feature} is selected; its best replacement is feature {best.feature_in} "
            f"(objective {best.objective:.6g}, {_signed(rel)} against {base:.6g})"
        )
    else:
        text = (
            f"feature {feature} is not selected; the best exchange bringing it in takes out "
            f"feature {best.feature_out} (objective {best.objective:.6g}, {_signed(rel)} "
            f"against {base:.6g})"
        )
    if cost < -_improve_tol(base):
        text += ": that exchange improves the answer"
    elif alternatives:
        text += f"; {len(alternatives)} equally good alternative(s) within {tie_tolerance:g}"
    return FeatureVerdict(
        feature, selected, base, best, cost, alternatives, change, text, tie_tolerance
    )


def _signed(percent: float) -> str:
    return f"{percent:.3g}% {'higher' if percent >= 0 else 'lower'}".replace("-", "")


def _change_alone(state: ActiveSet, feature: int, selected: bool) -> float | None:
    trial = state.copy()
    if selected:
        return float(trial.remove(feature))
    try:
        return float(trial.add(feature))
    except CollinearFeature:
        return 0.0


def polish_state(
    state: ActiveSet, rec: Recorder, *, max_swaps: int | None = None
) -> tuple[ActiveSet, str, int]:
    """Apply the best improving exchange until none improves; one ``swap`` event each, then a
    ``check`` event naming the best remaining exchange (refused: it does not lower Q).

    Returns the polished state, why polishing ended, and the number of exchanges made.
    """
    k, d = len(state.support), state.objective.n_features
    budget = max_swaps if max_swaps is not None else 10 * max(k, 1) + 10
    if k == 0 or k == d:
        return state, "polish: no exchange possible", 0
    for n in range(budget):
        table = state.exchange_values()
        if not np.isfinite(table).any():
            return state, "polish: no exchange possible", n
        flat = int(np.nanargmin(table))
        p, j = divmod(flat, d)
        out = state.support[p]
        predicted = float(table.ravel()[flat])
        new = state.copy()
        new.remove(out)
        improved = False
        try:
            new.add(j)
            improved = new.value < state.value - _improve_tol(state.value)
        except CollinearFeature:
            pass
        if not improved:
            rec.checked(
                j,
                feature_out=out,
                objective=state.value,
                support_size=k,
                cost=predicted - state.value,
                threshold=0.0,
                reason=f"polish: {LOCAL_OPTIMUM}",
            )
            return state, f"polish: {n} exchange(s), then {LOCAL_OPTIMUM}", n
        gain = state.value - new.value
        state = new
        rec.swapped(
            j,
            out,
            objective=state.value,
            support_size=k,
            gain=gain,
            score=gain,
            threshold=0.0,
            info={"polish": 1.0},
        )
    return state, f"polish: stopped after max {budget} exchanges", budget


def _num(x: float | None) -> float | str | None:
    if x is None:
        return None
    x = float(x)
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
