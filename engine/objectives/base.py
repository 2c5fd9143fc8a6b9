"""What an algorithm may ask of an objective.

An :class:`Objective` holds the data and knows the loss. Its :meth:`Objective.start` returns an
:class:`ActiveSet`: the model restricted to a support, kept at its optimum on that support (the
papers' ``w_hat(F)``), with whatever factorisations make the next step cheap. Algorithms only
talk to these two interfaces, so every algorithm works with every objective.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

import numpy as np

if TYPE_CHECKING:
    from .design import Design

FORWARD_RULES = ("obj", "gdt", "quad", "refit")


class CollinearFeature(ValueError):
    """The feature lies in the span of the support: adding it cannot change the fit."""


class Objective(ABC):
    """A smooth convex loss Q(coef, intercept) over a fixed data set.

    ``capabilities`` declares what the objective offers beyond this interface (the keys of
    ``engine.registry.CAPABILITIES``); algorithms state which they need and
    ``engine.check_config`` compares the two, so no algorithm asks for an objective by name.
    An objective with ``"linear"`` is a linear model over the columns of a matrix and has
    ``design`` (that matrix), ``y`` (the targets as its loss reads them) and ``lam`` (its ridge
    weight, 0 without one).
    """

    name: str = ""
    capabilities: ClassVar[frozenset[str]] = frozenset()
    n_samples: int
    n_features: int
    fit_intercept: bool
    design: Design
    y: np.ndarray
    lam: float = 0.0

    @abstractmethod
    def value(self, coef: np.ndarray, intercept: float = 0.0) -> float:
        """Q at an arbitrary point (used by tests and by methods that do not keep a support)."""

    @abstractmethod
    def gradient(self, coef: np.ndarray, intercept: float = 0.0) -> tuple[np.ndarray, float]:
        """(dQ/dcoef, dQ/dintercept) at an arbitrary point."""

    @abstractmethod
    def start(self) -> ActiveSet:
        """The model on the empty support (intercept fitted when there is one)."""

    def l1_smoothness(self) -> float | None:
        """beta with Q(w + u) <= Q(w) + <grad, u> + (beta/2) ||u||_1^2 everywhere, when the
        objective can state it (Frank-Wolfe's closed-form step); None otherwise."""
        return None

    def fit_support(self, support) -> ActiveSet:
        """The model refitted on ``support``."""
        state = self.start()
        for j in support:
            state.add(int(j))
        return state


class ActiveSet(ABC):
    """The objective minimised over the coefficients of a support.

    Attributes
    ----------
    support : list of int
        Selected features in order of entry.
    value : float
        Q(w_hat(support)).
    """

    objective: Objective
    if TYPE_CHECKING:
        # Read-only to the algorithms: an active set may derive it (least squares keeps it in
        # its Cholesky block); those that store it declare ``support: list[int]``.
        @property
        def support(self) -> list[int]: ...

    value: float
    # The weights on the support, in its order; every active set keeps them so.
    _w: np.ndarray

    # ----------------------------------------------------------------- state
    @property
    def coef(self) -> np.ndarray:
        """Full coefficient vector, shape (n_features,), zero off the support."""
        w = np.zeros(self.objective.n_features)
        w[self.support] = self._w
        return w

    @property
    @abstractmethod
    def intercept(self) -> float:
        """The unpenalised intercept (0 when the objective fits none)."""

    @property
    def dense_params(self) -> dict[str, np.ndarray] | None:
        """Parameters refitted on every support but never selected, beyond the intercept (the
        CRF's label biases and transitions). None when there are none."""
        return None

    @abstractmethod
    def add(self, j: int) -> float:
        """Add feature j, refit on the new support; return the objective decrease."""

    @abstractmethod
    def remove(self, j: int) -> float:
        """Remove feature j, refit; return the objective increase."""

    # ----------------------------------------------------------------- scores
    @abstractmethod
    def gradient(self) -> np.ndarray:
        """dQ/dcoef at the current point, shape (n_features,)."""

    @abstractmethod
    def coordinate_drops(self) -> np.ndarray:
        """Q(w) - min_alpha Q(w + alpha e_j) for every feature (FoBa-obj's goodness).

        Shape (n_features,); 0 for selected features.
        """

    @abstractmethod
    def quadratic_scores(self) -> np.ndarray:
        """Shalev-Shwartz et al. Section 2.3 rule: the drop of the quadratic model
        ``min_alpha ||alpha x_j - g||^2`` with g the gradient with respect to the predictions,
        i.e. ``(x_j . g)^2 / ||x_j||^2`` up to a constant factor. 0 for selected features."""

    @abstractmethod
    def deletion_costs(self) -> np.ndarray:
        """Q(w - w_j e_j) - Q(w) for every selected j, aligned with ``support``; no refit
        (FoBa's backward criterion in both papers' algorithm boxes)."""

    def cheapest_deletion(self) -> tuple[int, float]:
        """(position in ``support``, cost) of the smallest of ``deletion_costs`` (lowest position
        on ties), for a non-empty support.

        Objectives whose costs are expensive override it with bounds that rule most features out
        without their exact cost; the answer must equal the argmin of ``deletion_costs``.
        """
        costs = self.deletion_costs()
        p = int(np.argmin(costs))
        return p, float(costs[p])

    def forward_scores(self, rule: str) -> np.ndarray:
        """Goodness of every feature under ``rule`` (0 for selected features)."""
        if rule == "obj":
            return self.coordinate_drops()
        if rule == "gdt":
            g = np.abs(self.gradient())
            g[self.support] = 0.0
            return g
        if rule == "quad":
            return self.quadratic_scores()
        if rule == "refit":
            return self.refit_gains()
        raise ValueError(f"unknown forward rule {rule!r}; allowed: {FORWARD_RULES}")

    def best_candidate(self, rule: str, excluded: set[int]) -> tuple[int, float]:
        """The best feature to add under ``rule`` and its score, skipping ``excluded``.

        Objectives that can find the argmax without scoring every feature override it; the
        answer must equal the argmax of ``forward_scores`` (lowest index on ties).
        """
        scores = self.forward_scores(rule)
        if excluded:
            scores[list(excluded)] = 0.0
        j = int(np.argmax(scores))
        return j, float(scores[j])

    def refit_gains(self) -> np.ndarray:
        """Objective decrease of the full refit on support + {j}, for every j (0 if selected).

        Generic version: one warm-started refit per candidate. Objectives with algebra that
        gives all of them at once override it.
        """
        gains = np.zeros(self.objective.n_features)
        base = self.value
        for j in range(self.objective.n_features):
            if j in self._support_set():
                continue
            trial = self.copy()
            try:
                trial.add(j)
            except CollinearFeature:
                continue
            gains[j] = base - trial.value
        return gains

    def refit_deletion_costs(self) -> np.ndarray:
        """Objective increase of the refit on support - {j}, for every selected j (aligned with
        ``support``). Generic version: one warm-started refit per selected feature."""
        costs = np.empty(len(self.support))
        for p, j in enumerate(list(self.support)):
            trial = self.copy()
            trial.remove(j)
            costs[p] = trial.value - self.value
        return costs

    def exchange_values(self) -> np.ndarray:
        """Objective of the refit after exchanging ``support[p]`` for feature ``j``, shape
        (len(support), n_features); NaN where ``j`` is already selected.

        Generic version: for every selected feature, one refit without it, then the exact
        refit gains of every candidate from there (``refit_gains``: one batched solve for the
        objectives that have one). Least squares overrides it with rank-one algebra on the
        factorisation it keeps.
        """
        d = self.objective.n_features
        out = np.full((len(self.support), d), np.nan)
        selected = list(self.support)
        for p, s in enumerate(selected):
            trial = self.copy()
            trial.remove(s)
            out[p] = trial.value - trial.refit_gains()
        out[:, selected] = np.nan
        return out

    @abstractmethod
    def copy(self) -> ActiveSet:
        """An independent copy (for trial moves)."""

    def _support_set(self) -> set[int]:
        return set(self.support)
