"""Sparse group hard thresholding: ISTA / FISTA with an exact projection (Xiang et al. 2014).

Xiang, Yang & Ye, "Simultaneous Feature and Feature Group Selection through Hard Thresholding"
(KDD 2014). Problem (1): minimise Q(w, b) subject to at most ``s1`` nonzero coefficients lying in
at most ``s2`` groups. Algorithm 1 (ISTA) iterates ``w <- SGHT(w - grad Q(w) / L)`` with a line
search on L; Algorithm 2 (FISTA) takes the same step from an extrapolated point. SGHT, the
projection onto the constraint set (Eq. 2), is solved exactly by the dynamic program of
Algorithms 3-4 (:mod:`engine.projections`).

Registered algorithms
---------------------
``sght`` both budgets (``s1`` features, ``s2`` groups; k stands for s1 when s1 is not given).
``iht``  the feature budget only (k = s1): iterative hard thresholding (Blumensath & Davies
         2009), the projection keeping the k largest entries (Lemma 1).
``ght``  the group budget only (``s2`` groups): group hard thresholding, keeping the s2 groups
         of largest l2 norm (Lemma 1).

Variants (Table 1)
------------------
========  ==========  =========  ==========================
variant   iteration   initial L  line search
========  ==========  =========  ==========================
ISTA      Algorithm 1 BB         sufficient decrease (4)
ISTA-L    Algorithm 1 BB         Lipschitz (3)
FISTA     Algorithm 2 BB         Lipschitz (3)
FISTA-C   Algorithm 2 constant   Lipschitz (3)
========  ==========  =========  ==========================

Implementation choices (the paper leaves them open):

* **Scale of L.** ``L0`` is the largest diagonal entry of the Hessian at the start (one gradient
  difference along the column of largest norm: exact for least squares, a secant for
  logistic). It is the first iteration's L and the constant of FISTA-C. The paper's BB rule
  ``L = max(1, alpha)`` only keeps L positive (on its unnormalised data alpha is of the order of
  n), so the floor here is ``1e-3 L0``; a floor of ``L0`` would clip nearly every BB value and
  make BB the constant rule (and, measured, recover fewer true groups).
* **Intercept.** The unpenalised intercept b is an unconstrained coordinate: it takes the same
  gradient step ``b - dQ/db / L`` as the coefficients, inside the line search (the projection
  leaves it alone, so the iteration is projected gradient on (w, b) over C x R and the criteria
  (3)/(4) hold for the pair). It starts at its optimum on the empty support.
* **Stopping.** The relative objective change ``|Q_prev - Q| / |Q_prev| <= tol``, or the
  gradient mapping ``||L (x_new - u)||_2 <= tol ||grad Q(x0)||_2`` (the gradient itself does
  not vanish at a constrained optimum; the gradient mapping does, at fixed points of the
  iteration), or ``max_iter``. An iterate's objective is recorded before the refit.
* **FISTA safeguard.** Hard thresholding makes the problem nonconvex and FISTA non-monotone;
  when an iteration raises the objective the momentum restarts (beta = 0 next iteration: the
  search point is the iterate; Algorithm 2 itself has no restart, it returns when the objective
  stops decreasing).
* **Default variant.** FISTA, as the paper recommends: on the Section 5.3 problems (20 seeds
  each) it needed the fewest iterations and recovered the true groups in 19/20 (case 1) and
  15/20 (case 2) runs; ISTA 20 and 16 with 40% more iterations, ISTA-L 20 and 15, FISTA-C 18
  and 12 (the failures are local minima of the nonconvex problem, not slow convergence).
* **Refit.** After the last iteration the objective is minimised on the final support
  (``Objective.fit_support``), so the returned coef is the optimum on that support: the
  iteration chooses the support, the refit the values. The stop reason says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..objectives import CollinearFeature, Objective
from ..projections import (
    GroupIndex,
    group_hard_threshold_support,
    group_index,
    hard_threshold_support,
    sght,
)
from ..registry import Param, Requirements, register_algorithm
from ..trace import Recorder
from .common import Solution, emit_stop

_PAPER = "Xiang, Yang & Ye 2014"

# variant -> (accelerated, BB initial step, line search criterion)
VARIANTS: dict[str, tuple[bool, bool, str]] = {
    "ISTA": (False, True, "decrease"),
    "ISTA-L": (False, True, "lipschitz"),
    "FISTA": (True, True, "lipschitz"),
    "FISTA-C": (True, False, "lipschitz"),
}
_MAX_BACKTRACKS = 60  # eta^60 >= 2^60 x the initial L: the criterion must hold long before
_BB_FLOOR = 1e-3  # BB values are kept >= 1e-3 L0 (the paper's max(1, alpha); docstring)
_ROUNDING = 1e-12  # relative slack in the line-search inequalities for rounding error

S1 = Param(
    "s1",
    "int",
    None,
    "Feature budget s1: at most s1 nonzero coefficients (default: k). Needs s1 >= s2.",
    minimum=1,
    nullable=True,
)
S2 = Param(
    "s2",
    "int",
    None,
    "Group budget s2: nonzero coefficients in at most s2 groups.",
    minimum=1,
    required=True,
)
VARIANT = Param(
    "variant",
    "str",
    "FISTA",
    "Table 1 of the paper: ISTA (BB step, sufficient decrease (4)), ISTA-L (BB, Lipschitz "
    "(3)), FISTA (accelerated, BB, Lipschitz) or FISTA-C (accelerated, constant step, "
    "Lipschitz).",
    choices=tuple(VARIANTS),
)
MAX_ITER = Param("max_iter", "int", 1000, "Most iterations.", minimum=1)
TOL = Param(
    "tol",
    "float",
    1e-6,
    "Stop when the relative objective change, or the gradient mapping relative to the "
    "initial gradient, falls below tol (Section 5.2).",
    minimum=0.0,
    exclusive_minimum=True,
)
ETA = Param(
    "eta",
    "float",
    2.0,
    "Line search: multiply L by eta until the criterion holds (eta > 1, Algorithm 1).",
    minimum=1.0,
    exclusive_minimum=True,
)
SIGMA = Param(
    "sigma",
    "float",
    1e-5,
    "delta of the sufficient decrease criterion (4), used by the ISTA variant; in (0, 1), "
    "larger values demand more decrease (shorter steps).",
    minimum=0.0,
    maximum=0.99,
    exclusive_minimum=True,
)
REFIT = Param(
    "refit",
    "bool",
    True,
    "Refit the objective on the final support (the coefficients are then optimal there).",
)
COMMON_PARAMS = (VARIANT, MAX_ITER, TOL, ETA, SIGMA, REFIT)


# --------------------------------------------------------------------------- constraint


@dataclass(frozen=True)
class Constraint:
    """The feasible set: which projection, with which budgets.

    Attributes
    ----------
    kind : {"sght", "iht", "ght"}
    s1 : int or None
        Feature budget (None for ght).
    s2 : int or None
        Group budget (None for iht).
    index : GroupIndex or None
        The groups (None for iht).
    """

    kind: str
    s1: int | None
    s2: int | None
    index: GroupIndex | None

    def support(self, v: np.ndarray) -> np.ndarray:
        """Indices kept by the projection of v (shape (p,)), sorted."""
        if self.kind == "iht":
            assert self.s1 is not None
            return hard_threshold_support(v, self.s1)
        assert self.index is not None and self.s2 is not None  # "ght" and "sght" have groups
        if self.kind == "ght":
            return group_hard_threshold_support(v, self.index, self.s2)
        assert self.s1 is not None
        return sght(v, self.index, self.s1, self.s2).support

    def describe(self) -> str:
        parts = [f"s1 = {self.s1}"] if self.s1 is not None else []
        parts += [f"s2 = {self.s2}"] if self.s2 is not None else []
        return ", ".join(parts)


def _groups_index(groups: np.ndarray, n_features: int) -> GroupIndex:
    groups = np.asarray(groups)
    if groups.shape != (n_features,):
        raise ValueError(
            f"groups must give one label per feature: got {groups.size} labels for "
            f"{n_features} features"
        )
    return group_index(groups)


def _check_s2(s2: int, index: GroupIndex) -> None:
    if s2 > index.n_groups:
        raise ValueError(
            f"parameter 's2' must be at most the number of groups ({index.n_groups}), got {s2}"
        )


def sght_constraint(
    n_features: int, groups: np.ndarray, k: int | None, s1: int | None, s2: int
) -> Constraint:
    """Validate the budgets of ``sght`` (k stands for s1 when s1 is not given)."""
    if s1 is None:
        if k is None:
            raise ValueError("algorithm 'sght' needs the feature budget: give s1 (or k)")
        s1 = k
    elif k is not None and k != s1:
        raise ValueError(f"parameter 's1' = {s1} contradicts k = {k}; give one of them")
    if s1 > n_features:
        raise ValueError(f"parameter 's1' must be at most n_features = {n_features}, got {s1}")
    index = _groups_index(groups, n_features)
    _check_s2(s2, index)
    if s1 < s2:
        raise ValueError(
            f"parameter 's1' ({s1}) must be at least s2 ({s2}): every selected group holds a "
            "selected feature"
        )
    return Constraint("sght", s1, s2, index)


# --------------------------------------------------------------------------- iteration


@dataclass(frozen=True)
class SghtConfig:
    """Options of one run (see the module docstring)."""

    accelerated: bool
    bb: bool
    criterion: str
    max_iter: int
    tol: float
    eta: float
    sigma: float
    refit: bool

    @classmethod
    def of(cls, variant: str, **options) -> SghtConfig:
        accelerated, bb, criterion = VARIANTS[variant]
        return cls(accelerated, bb, criterion, **options)


class Smooth:
    """Q as a function of the stacked point ``x = (w, b)``, shape (p + 1,).

    Without an intercept, b stays 0 (its gradient component is reported as 0).
    """

    def __init__(self, objective: Objective) -> None:
        self.objective = objective
        self.p = objective.n_features
        self.fit_intercept = bool(objective.fit_intercept)

    def value(self, x: np.ndarray) -> float:
        return float(self.objective.value(x[: self.p], float(x[self.p])))

    def gradient(self, x: np.ndarray) -> np.ndarray:
        gw, gb = self.objective.gradient(x[: self.p], float(x[self.p]))
        return np.append(gw, gb if self.fit_intercept else 0.0)

    def start(self) -> np.ndarray:
        """Zero coefficients, the intercept at its optimum on the empty support."""
        x = np.zeros(self.p + 1)
        x[self.p] = self.objective.start().intercept if self.fit_intercept else 0.0
        return x

    def curvature_scale(self, x: np.ndarray, g: np.ndarray) -> float:
        """L0: the largest diagonal Hessian entry, probed along the column of largest norm.

        One gradient difference; exact for least squares (``||x_j||^2 / n``), a secant for
        other losses. Falls back to ``||x_j||^2 / n`` when the loss is flat there.
        """
        design = self.objective.design
        n = self.objective.n_samples
        raw_sq = design.sq_norms + n * design.mean**2  # uncentred: the intercept is explicit
        j = int(np.argmax(raw_sq))
        if raw_sq[j] <= 0.0:
            return 1.0
        h = 1.0 / np.sqrt(raw_sq[j] / n)  # moves the predictions by O(1)
        probe = x.copy()
        probe[j] += h
        c = (self.gradient(probe)[j] - g[j]) / h
        return float(c) if np.isfinite(c) and c > 0.0 else float(raw_sq[j] / n)


@dataclass
class Step:
    """An accepted step: the new point, its objective, the L used and the line search count."""

    x: np.ndarray
    value: float
    L: float
    L_init: float  # the BB or constant value the line search started from
    backtracks: int
    mapping_norm: float  # ||L (x - u)||_2, the gradient mapping at the search point u


def project(x: np.ndarray, constraint: Constraint, p: int) -> np.ndarray:
    """(SGHT(w), b): the projection onto (constraint set) x R."""
    out = np.zeros_like(x)
    keep = constraint.support(x[:p])
    out[keep] = x[keep]
    out[p] = x[p]
    return out


def line_search(
    f: Smooth,
    constraint: Constraint,
    config: SghtConfig,
    u: np.ndarray,
    fu: float,
    gu: np.ndarray,
    x_prev: np.ndarray,
    f_prev: float,
    L: float,
) -> Step | None:
    """Lines 4-7 of Algorithms 1-2: ``x = SGHT(u - grad / L)``, L multiplied by eta until the
    criterion holds.

    Parameters
    ----------
    f : Smooth
    constraint : Constraint
    config : SghtConfig
        ``criterion`` "lipschitz" is Eq. (3), at the search point u; "decrease" is Eq. (4),
        against the previous iterate (ISTA only, where u is that iterate).
    u : ndarray, shape (p + 1,)
        Search point (the iterate for ISTA, the extrapolated point for FISTA).
    fu : float
        Q(u).
    gu : ndarray, shape (p + 1,)
        grad Q(u).
    x_prev : ndarray, shape (p + 1,)
        The previous iterate.
    f_prev : float
        Q(x_prev).
    L : float
        Initial L (BB or constant).

    Returns
    -------
    Step or None
        None when the criterion still fails after ``_MAX_BACKTRACKS`` increases.
    """
    L_init = L
    for backtracks in range(_MAX_BACKTRACKS + 1):
        x = project(u - gu / L, constraint, f.p)
        fx = f.value(x)
        d = x - u
        if config.criterion == "lipschitz":
            bound = fu + float(gu @ d) + 0.5 * L * float(d @ d)
            slack = _ROUNDING * max(abs(fu), abs(bound))
        else:
            dx = x - x_prev
            bound = f_prev - 0.5 * L * config.sigma * float(dx @ dx)
            slack = _ROUNDING * abs(f_prev)
        if fx <= bound + slack:
            return Step(x, fx, L, L_init, backtracks, L * float(np.linalg.norm(d)))
        L *= config.eta
    return None


def bb_estimate(dx: np.ndarray, dg: np.ndarray) -> float | None:
    """Barzilai-Borwein: ``argmin_a ||a dx - dg|| = dg.dx / ||dx||^2`` (Section 2.1)."""
    dxx = float(dx @ dx)
    if dxx <= 0.0:
        return None
    a = float(dg @ dx) / dxx
    return a if np.isfinite(a) else None


class Events:
    """Emits add/remove events for support changes and one iterate event per iteration."""

    def __init__(self, rec: Recorder, p: int) -> None:
        self.rec = rec
        self.p = p
        self.support = np.empty(0, dtype=np.intp)

    def iteration(self, m: int, step: Step) -> None:
        new = np.flatnonzero(step.x[: self.p])
        size = len(self.support)
        for j in np.setdiff1d(self.support, new, assume_unique=True):
            size -= 1
            self.rec.removed(j, objective=step.value, support_size=size)
        for j in np.setdiff1d(new, self.support, assume_unique=True):
            size += 1
            self.rec.added(
                j,
                objective=step.value,
                support_size=size,
                score=abs(float(step.x[j])),  # what the projection ranked it by
            )
        self.support = new
        self.rec.iterated(
            objective=step.value,
            support_size=len(new),
            info={
                "iteration": float(m),
                "step": 1.0 / step.L,
                "L": step.L,
                "L_init": step.L_init,
                "backtracks": float(step.backtracks),
                "gradient_mapping": step.mapping_norm,
            },
        )


def iterate(
    objective: Objective, rec: Recorder, constraint: Constraint, config: SghtConfig
) -> tuple[np.ndarray, float, str]:
    """Algorithm 1 (ISTA) or Algorithm 2 (FISTA) from w = 0.

    Returns
    -------
    x : ndarray, shape (p + 1,)
        The last iterate (w, b).
    value : float
        Q at x.
    reason : str
        Why the iteration stopped.
    """
    f = Smooth(objective)
    events = Events(rec, f.p)
    x = f.start()
    fx = f.value(x)
    gx = f.gradient(x)
    L0 = f.curvature_scale(x, gx)
    g0_norm = float(np.linalg.norm(gx))
    x_old = x.copy()  # x^{m-2} for the extrapolation
    a_old, a = 0.0, 1.0  # alpha^{m-2}, alpha^{m-1} of Algorithm 2
    last_point, last_grad = x, gx  # where the gradient was last evaluated (for BB)
    L = L0
    for m in range(1, config.max_iter + 1):
        beta = (a_old - 1.0) / a if config.accelerated else 0.0
        if beta != 0.0:
            u = x + beta * (x - x_old)
            fu, gu = f.value(u), f.gradient(u)
        else:  # ISTA, or FISTA's first step and restarts: the search point is the iterate
            u, fu = x, fx
            gu = gx if m == 1 or not config.accelerated else f.gradient(x)
        if m > 1:
            L = _initial_L(config, L0, u - last_point, gu - last_grad)
        last_point, last_grad = u, gu
        step = line_search(f, constraint, config, u, fu, gu, x, fx, L)
        if step is None:
            return x, fx, f"the line search found no step after {_MAX_BACKTRACKS} increases of L"
        x_old, x, f_prev, fx = x, step.x, fx, step.value
        events.iteration(m, step)
        a_old, a = a, 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * a * a))
        if config.accelerated and fx > f_prev:
            # Restart: the next extrapolation is beta = (1 - 1) / 1 = 0, the search point the
            # iterate itself (not Algorithm 2's initial alpha^{-1} = 0, which would give
            # beta = -1 and roll the search point back to the previous iterate).
            a_old, a = 1.0, 1.0
        reason = _converged(f_prev, fx, step.mapping_norm, g0_norm, config.tol, m)
        if reason:
            return x, fx, reason
        if not config.accelerated:
            gx = f.gradient(x)  # ISTA steps from x; FISTA evaluates at the next u instead
    return x, fx, f"reached max_iter = {config.max_iter} iterations"


def _initial_L(config: SghtConfig, L0: float, dx: np.ndarray, dg: np.ndarray) -> float:
    if not config.bb:
        return L0
    a = bb_estimate(dx, dg)
    return L0 if a is None else max(_BB_FLOOR * L0, a)  # the paper's max(1, alpha)


def _converged(
    f_prev: float, fx: float, mapping: float, g0: float, tol: float, m: int
) -> str | None:
    change = abs(f_prev - fx) / max(abs(f_prev), np.finfo(float).tiny)
    if change <= tol:
        return f"relative objective change {change:.3g} <= tol = {tol:g} after {m} iterations"
    if mapping <= tol * g0:
        return f"gradient mapping {mapping:.3g} <= tol x initial gradient norm after {m} iterations"
    return None


# --------------------------------------------------------------------------- driver


def run(
    objective: Objective, rec: Recorder, constraint: Constraint, config: SghtConfig
) -> Solution:
    """Iterate, then refit on the final support (unless ``refit`` is off); emit ``stop``.

    Parameters
    ----------
    objective : Objective
    rec : Recorder
    constraint : Constraint
    config : SghtConfig

    Returns
    -------
    Solution
        coef of shape (n_features,), zero off the support; the refitted optimum on the support,
        or the last iterate when the refit is off or the support is collinear.
    """
    x, value, reason = iterate(objective, rec, constraint, config)
    p = objective.n_features
    support = np.flatnonzero(x[:p])
    coef, intercept = x[:p].copy(), float(x[p])
    state = None
    if not config.refit:
        reason += "; not refitted (refit = false): the last iterate"
    else:
        try:
            state = objective.fit_support(support)
        except CollinearFeature:
            reason += "; the final support is collinear, so the last iterate is returned unrefitted"
        else:
            coef, intercept, value = state.coef, state.intercept, state.value
            reason += f"; refitted on the final support ({len(support)} features)"
    reason += f" [{constraint.describe()}]"
    if state is not None:
        emit_stop(rec, state, reason)
    else:
        rec.stopped(reason, objective=value, support_size=len(support))
    return Solution(support, coef, intercept, objective=value, stop_reason=reason)


def _config(
    variant: str, max_iter: int, tol: float, eta: float, sigma: float, refit: bool
) -> SghtConfig:
    return SghtConfig.of(variant, max_iter=max_iter, tol=tol, eta=eta, sigma=sigma, refit=refit)


_GROUPED = Requirements(capabilities=frozenset({"linear"}), groups=True)


@register_algorithm(
    name="sght",
    title="Sparse group hard thresholding",
    summary="Projected gradient (ISTA or FISTA) onto at most s1 features in at most s2 groups; "
    "the projection is solved exactly by dynamic programming. Refits on the final support.",
    reference=f"{_PAPER}, Algorithms 1-4 and Table 1",
    params=(S1, S2, *COMMON_PARAMS),
    k="optional",
    family="hard-thresholding",
    requires=_GROUPED,
)
def sght_algorithm(
    objective: Objective,
    rec: Recorder,
    *,
    k: int | None,
    rng: np.random.Generator,
    groups: np.ndarray,
    s1: int | None,
    s2: int,
    variant: str,
    max_iter: int,
    tol: float,
    eta: float,
    sigma: float,
    refit: bool,
) -> Solution:
    """Sparse group hard thresholding (module docstring); k is s1 when s1 is not given."""
    constraint = sght_constraint(objective.n_features, groups, k, s1, s2)
    return run(objective, rec, constraint, _config(variant, max_iter, tol, eta, sigma, refit))


@register_algorithm(
    name="iht",
    title="Iterative hard thresholding",
    summary="Projected gradient (ISTA or FISTA) onto at most k nonzero coefficients (keep the "
    "k largest). Refits on the final support.",
    reference=f"Blumensath & Davies 2009; {_PAPER}, Lemma 1 and Table 1",
    params=COMMON_PARAMS,
    k="required",
    family="hard-thresholding",
    requires=Requirements(capabilities=frozenset({"linear"})),
)
def iht_algorithm(
    objective: Objective,
    rec: Recorder,
    *,
    k: int,
    rng: np.random.Generator,
    variant: str,
    max_iter: int,
    tol: float,
    eta: float,
    sigma: float,
    refit: bool,
) -> Solution:
    """Iterative hard thresholding: the feature budget of SGHT alone, s1 = k."""
    constraint = Constraint("iht", k, None, None)
    return run(objective, rec, constraint, _config(variant, max_iter, tol, eta, sigma, refit))


@register_algorithm(
    name="ght",
    title="Group hard thresholding",
    summary="Projected gradient (ISTA or FISTA) onto at most s2 nonzero groups (keep the s2 "
    "groups of largest norm). Refits on the final support.",
    reference=f"{_PAPER}, Lemma 1 and Table 1",
    params=(S2, *COMMON_PARAMS),
    k="unused",
    family="hard-thresholding",
    requires=_GROUPED,
)
def ght_algorithm(
    objective: Objective,
    rec: Recorder,
    *,
    k: None,
    rng: np.random.Generator,
    groups: np.ndarray,
    s2: int,
    variant: str,
    max_iter: int,
    tol: float,
    eta: float,
    sigma: float,
    refit: bool,
) -> Solution:
    """Group hard thresholding: the group budget of SGHT alone."""
    index = _groups_index(groups, objective.n_features)
    _check_s2(s2, index)
    constraint = Constraint("ght", None, s2, index)
    return run(objective, rec, constraint, _config(variant, max_iter, tol, eta, sigma, refit))
