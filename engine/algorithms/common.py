"""Pieces every algorithm shares: the solution record, the best-k path tracker, event helpers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..objectives import ActiveSet
from ..trace import Recorder


@dataclass
class Solution:
    """What an algorithm returns to ``engine.select``."""

    support: np.ndarray
    coef: np.ndarray
    intercept: float
    objective: float
    stop_reason: str
    dense: dict[str, np.ndarray] | None = None

    @classmethod
    def of(cls, state: ActiveSet, stop_reason: str) -> Solution:
        return cls(
            support=np.array(sorted(state.support), dtype=np.intp),
            coef=state.coef,
            intercept=state.intercept,
            objective=state.value,
            stop_reason=stop_reason,
            dense=state.dense_params,
        )


@dataclass
class _Snapshot:
    value: float
    support: tuple[int, ...]
    coef_on_support: np.ndarray
    intercept: float
    dense: dict[str, np.ndarray] | None


class PathTracker:
    """Remembers the best support of size k along the path (Zhang 2008, Section 4).

    When the path never reaches size k (a threshold stopped it first), the best support of the
    largest size below k that it did reach stands in.
    """

    def __init__(self, k: int | None, n_features: int) -> None:
        self.k = k
        self.n_features = n_features
        self.best: dict[int, _Snapshot] = {}

    def observe(self, state: ActiveSet) -> None:
        size = len(state.support)
        if self.k is None or size > self.k:
            return
        cur = self.best.get(size)
        if cur is None or state.value < cur.value:
            self.best[size] = _Snapshot(
                state.value,
                tuple(state.support),
                state.coef[state.support],
                state.intercept,
                state.dense_params,
            )

    def solution(self, state: ActiveSet, reason: str) -> Solution:
        if self.k is None or not self.best:
            return Solution.of(state, reason)
        size = max(self.best)
        snap = self.best[size]
        coef = np.zeros(self.n_features)
        coef[list(snap.support)] = snap.coef_on_support
        if size < self.k:
            reason += (
                f"; the path never reached {self.k} features, returning the best of size {size}"
            )
        return Solution(
            support=np.array(sorted(snap.support), dtype=np.intp),
            coef=coef,
            intercept=snap.intercept,
            objective=snap.value,
            stop_reason=reason,
            dense=snap.dense,
        )


def candidate_mask(state: ActiveSet) -> np.ndarray:
    mask = np.ones(state.objective.n_features, dtype=bool)
    mask[state.support] = False
    return mask


def emit_stop(rec: Recorder, state: ActiveSet, reason: str) -> None:
    rec.stopped(reason, objective=state.value, support_size=len(state.support))


def tiny_gain(initial_value: float) -> float:
    """Objective decreases below this (relative to Q at the start) are rounding noise."""
    return 1e-13 * max(abs(initial_value), 1e-300)


def default_max_steps(k: int | None, n_features: int) -> int:
    """Zhang's path length: five times the target sparsity; otherwise a safety cap."""
    return 5 * k if k is not None else 100 * n_features + 1000


PATH_ENDS = ("auto", "zhang", "sparsity")


def auto_margin(k: int) -> int:
    """How far past k the ``path_end="auto"`` path may grow: max(5, ceil(k / 10)) features.

    Measured (``bench/path_end.py``): where Zhang's answer is not the first size-k support,
    the path had gone at most 3 features past k before coming back to it.
    """
    return max(5, -(-k // 10))


def size_cap(k: int | None, path_end: str) -> int | None:
    """The largest support the path may hold before it stops, under ``path_end`` with target k.

    ``auto``: k + :func:`auto_margin` (k); ``sparsity``: k (the path stops once it holds k
    features after a backward phase); ``zhang``, or no k: None (only the step budget ends it).
    A greedy path checks the cap before each forward step, so it never holds more than the cap.
    """
    if k is None or path_end == "zhang":
        return None
    if path_end == "sparsity":
        return k
    if path_end == "auto":
        return k + auto_margin(k)
    raise ValueError(f"path_end must be one of {', '.join(PATH_ENDS)}, got {path_end!r}")
