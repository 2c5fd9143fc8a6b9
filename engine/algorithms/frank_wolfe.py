"""Forward greedy selection on the l1 ball (Frank-Wolfe) and randomized sparsification.

Shalev-Shwartz, Srebro & Zhang (2010), Section 2:

``frank-wolfe``  Algorithm 2. From w = 0, move towards the vertex -sign(theta_r) B1 e_r of the
    l1 ball, r = argmax_j |theta_j| with theta = grad Q(w), by the closed-form step
    eta = min{1, (<theta, w> + B1 ||theta||_inf) / (4 B1^2 beta)}, until the duality gap
    <theta, w> + B1 ||theta||_inf (an upper bound on Q(w) - min_{||v||_1 <= B1} Q(v)) is at most
    epsilon. The support grows by at most one feature per iteration.
``randomized-sparsification``  Algorithm 1 applied to the l1-constrained optimum w* (computed
    with the same Frank-Wolfe solver run to tolerance): draw k coordinates r_1..r_k with
    P(r = j) = |w*_j| / ||w*||_1 and output (||w*||_1 / k) sum_i sign(w*_{r_i}) e_{r_i}.

Extensions to the paper, all documented where they happen:

* beta is the l1-smoothness of Q, Q(w + u) <= Q(w) + <theta, u> + (beta/2) ||u||_1^2 (the
  paper's beta-smooth loss on data in [-1, 1]^d is the special case). It comes from the
  ``smoothness`` parameter, else from ``objective.l1_smoothness()``, else from the known
  curvature of least squares / logistic loss; for any other objective it is estimated by
  backtracking (doubling an estimate until the quadratic upper bound holds along the step).
* The intercept is unpenalised and unconstrained, so it is not part of the l1 ball: after every
  step it is set to argmin_b Q(w, b) (1-D root finding on dQ/db). Algorithm 2 then runs on the
  profiled objective R(w) = min_b Q(w, b), which is convex, has gradient dQ/dw at (w, b*(w))
  and an l1-smoothness no larger than Q's (its Hessian is a Schur complement of Q's).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

import numpy as np
from scipy.optimize import brentq

from ..objectives import Objective
from ..registry import Param, Requirements, Traits, register_algorithm
from ..trace import Recorder
from .common import Solution

_REL_EPSILON = 1e-3  # default epsilon, relative to Q at the start
# |dQ/db| target, relative to max(1, ||theta||_inf): Q(w, b) is then within ~1e-18 of its
# minimum over b, and theta within ~1e-9 relative of the profiled gradient.
_INTERCEPT_TOL = 1e-9
_RTOL = 4 * np.finfo(float).eps  # brentq's finest relative tolerance
_PAPER = "Shalev-Shwartz, Srebro & Zhang 2010"

RADIUS = Param(
    "B1",
    "float",
    None,
    "Radius of the l1 ball ||w||_1 <= B1 that the method works in (Equation (2.1)); on the "
    "scale of the l1 norm of a good sparse predictor.",
    minimum=0.0,
    exclusive_minimum=True,
    required=True,
)
GAP_EPSILON = Param(
    "epsilon",
    "float",
    None,
    "Stop when the duality gap <grad, w> + B1 ||grad||_inf, a bound on Q(w) minus the l1 "
    "optimum, is at most epsilon (Algorithm 2); default 1e-3 x Q at the start.",
    minimum=0.0,
    exclusive_minimum=True,
    nullable=True,
)
SMOOTHNESS = Param(
    "smoothness",
    "float",
    None,
    "beta of the step size: Q(w+u) <= Q(w) + <grad, u> + beta ||u||_1^2 / 2. Default: a bound "
    "from the data (or a backtracking estimate for objectives without one).",
    minimum=0.0,
    exclusive_minimum=True,
    nullable=True,
)


def _max_iter(default: int) -> Param:
    return Param("max_iter", "int", default, "Most Frank-Wolfe iterations.", minimum=1)


# --------------------------------------------------------------------------- the l1 solver


@dataclass
class Step:
    """One Frank-Wolfe iteration, as reported to the callback of :func:`solve_l1`.

    ``coef`` (shape (n_features,)) and ``intercept`` are the new iterate, ``value`` Q there and
    ``previous`` Q before the step; ``vertex`` is r, ``score`` |theta_r|, ``gap`` the duality
    gap at the previous iterate and ``step`` the step size eta.
    """

    iteration: int
    coef: np.ndarray
    intercept: float
    value: float
    previous: float
    vertex: int
    score: float
    gap: float
    step: float


@dataclass
class L1Solution:
    """Result of :func:`solve_l1`: the last iterate (not refitted on its support)."""

    coef: np.ndarray
    intercept: float
    objective: float
    gap: float
    iterations: int
    stop_reason: str
    smoothness: float | None


def solve_l1(
    objective: Objective,
    radius: float,
    *,
    epsilon: float | None = None,
    max_iter: int = 1000,
    smoothness: float | None = None,
    max_support: int | None = None,
    callback: Callable[[Step], None] | None = None,
) -> L1Solution:
    """Algorithm 2 of Shalev-Shwartz, Srebro & Zhang (2010): min Q(w) s.t. ||w||_1 <= radius.

    Parameters
    ----------
    objective : Objective
        Only ``value``, ``gradient``, ``n_features`` and ``fit_intercept`` are used.
    radius : float
        B1 > 0.
    epsilon : float, optional
        Stop when the duality gap <theta, w> + B1 ||theta||_inf <= epsilon; default
        1e-3 x |Q| at the start.
    max_iter : int
    smoothness : float, optional
        beta of the step size (see the module docstring for the default).
    max_support : int, optional
        Stop instead of taking a step that would give w more than this many nonzeros.
    callback : callable, optional
        Called with a :class:`Step` after every iteration.

    Returns
    -------
    L1Solution
        ``gap`` is the duality gap at the returned iterate when it was computed there (always,
        except after ``max_iter``, where it is the gap before the last step).
    """
    if not radius > 0:
        raise ValueError(f"B1 must be > 0, got {radius}")
    d = objective.n_features
    beta = smoothness if smoothness is not None else objective.l1_smoothness()
    profile = InterceptProfile(objective)
    w = np.zeros(d)
    b, theta = profile(w, 0.0)
    f = objective.value(w, b)
    eps = epsilon if epsilon is not None else _REL_EPSILON * abs(f)
    estimate = _initial_estimate(objective, profile, w, b, theta, radius) if beta is None else 0.0
    gap = np.inf
    for it in range(max_iter):
        r = int(np.argmax(np.abs(theta)))
        gap = float(theta @ w) + radius * abs(float(theta[r]))
        if gap <= eps:
            return L1Solution(
                w, b, f, gap, it, f"duality gap {gap:.4g} <= epsilon = {eps:.4g}", beta
            )
        if max_support is not None and w[r] == 0 and np.count_nonzero(w) >= max_support:
            reason = f"the next vertex would add feature {r} beyond k = {max_support} features"
            return L1Solution(w, b, f, gap, it, reason, beta)
        vertex = np.zeros(d)
        vertex[r] = -np.sign(theta[r]) * radius
        if beta is not None:
            # beta = 0: Q is linear along every edge of the ball, so the full step is best.
            eta = min(1.0, gap / (4.0 * radius**2 * beta)) if beta > 0 else 1.0
            w_new = (1.0 - eta) * w + eta * vertex
            b_new, theta_new = profile(w_new, b)
            f_new = objective.value(w_new, b_new)
        else:
            estimate, eta, w_new, b_new, theta_new, f_new = _backtracking_step(
                objective, profile, w, b, f, vertex, gap, radius, estimate
            )
        if callback is not None:
            callback(Step(it, w_new, b_new, f_new, f, r, abs(float(theta[r])), gap, eta))
        w, b, theta, f = w_new, b_new, theta_new, f_new
    return L1Solution(w, b, f, gap, max_iter, f"max_iter = {max_iter} iterations", beta)


def _initial_estimate(
    objective: Objective,
    profile: InterceptProfile,
    w: np.ndarray,
    b: float,
    theta: np.ndarray,
    radius: float,
) -> float:
    """A first guess of beta for the backtracking fallback: the curvature along a vertex."""
    r = int(np.argmax(np.abs(theta)))
    u = np.zeros_like(w)
    u[r] = 1e-3 * radius
    _, theta_u = profile(w + u, b)
    curv = float((theta_u - theta) @ u) / float(np.abs(u).sum()) ** 2
    return max(curv, 1e-12)


def _backtracking_step(
    objective: Objective,
    profile: InterceptProfile,
    w: np.ndarray,
    b: float,
    f: float,
    vertex: np.ndarray,
    gap: float,
    radius: float,
    estimate: float,
) -> tuple[float, float, np.ndarray, float, np.ndarray, float]:
    """The closed-form step with an estimated beta, doubled until the bound it rests on holds:
    Q(w + eta u) <= Q(w) - eta gap + 2 eta^2 B1^2 beta (||u||_1 <= 2 B1). The estimate first
    shrinks by 10% so it can follow a curvature that decreases along the path."""
    estimate *= 0.9
    while True:
        eta = min(1.0, gap / (4.0 * radius**2 * estimate))
        w_new = (1.0 - eta) * w + eta * vertex
        b_new, theta_new = profile(w_new, b)
        f_new = objective.value(w_new, b_new)
        bound = f - eta * gap + 2.0 * eta**2 * radius**2 * estimate
        if f_new <= bound + 1e-12 * abs(f) or estimate > 1e300:
            return estimate, eta, w_new, b_new, theta_new, f_new
        estimate *= 2.0


class InterceptProfile:
    """b*(w) = argmin_b Q(w, b) and dQ/dw there, by root finding on the increasing dQ/db.

    A secant step with the curvature learned on the previous call (exact at once for least
    squares), expanded until dQ/db changes sign, then Brent's method on the bracket. Every
    evaluation is one ``objective.gradient`` call, whose w-part at the root is returned, so the
    caller's next gradient comes free.
    """

    def __init__(self, objective: Objective) -> None:
        self.objective = objective
        self.curvature = 1.0

    def __call__(self, coef: np.ndarray, b0: float) -> tuple[float, np.ndarray]:
        obj = self.objective
        if not obj.fit_intercept:
            return 0.0, obj.gradient(coef, 0.0)[0]
        seen: dict[float, np.ndarray] = {}

        def dqdb(b: float) -> float:
            gw, gb = obj.gradient(coef, b)
            seen[b] = gw
            return gb

        b, g = float(b0), dqdb(float(b0))
        tol = _INTERCEPT_TOL * max(1.0, float(np.max(np.abs(seen[b]), initial=0.0)))
        move = -g / self.curvature
        for _ in range(200):
            if abs(g) <= tol:
                return b, seen[b]
            b_new = b + move
            g_new = dqdb(b_new)
            slope = (g_new - g) / (b_new - b) if b_new != b else 0.0
            if slope > 0:
                self.curvature = slope
            if g_new == 0 or np.sign(g_new) != np.sign(g):
                return self._bracketed(dqdb, seen, b, b_new, g_new, tol)
            # Same sign: the root lies further on. Secant step (superlinear on a convex-shaped
            # dQ/db); where dQ/db is flat (a linear piece of the loss), double the move.
            move = -g_new / slope if slope > 0 else 2.0 * move
            b, g = b_new, g_new
        return b, seen[b]  # dQ/db never changed sign: Q(w, .) has no minimiser in reach

    @staticmethod
    def _bracketed(
        dqdb: Callable[[float], float],
        seen: dict[float, np.ndarray],
        b_a: float,
        b_b: float,
        g_b: float,
        tol: float,
    ) -> tuple[float, np.ndarray]:
        if abs(g_b) <= tol:
            return b_b, seen[b_b]
        lo, hi = min(b_a, b_b), max(b_a, b_b)
        root = brentq(dqdb, lo, hi, xtol=1e-14 * (1.0 + abs(lo) + abs(hi)), rtol=_RTOL)
        if root not in seen:
            dqdb(root)
        return root, seen[root]


# --------------------------------------------------------------------------- frank-wolfe


class _StepFields(TypedDict):
    """The event fields every event of one Frank-Wolfe step shares."""

    objective: float
    score: float
    info: dict[str, float]


@register_algorithm(
    name="frank-wolfe",
    title="Frank-Wolfe forward greedy (l1 ball)",
    summary="Move towards the l1-ball vertex +-B1 e_j of largest |gradient| with the paper's "
    "closed-form step; stop when the duality gap is below epsilon (or k features would be "
    "exceeded). Returns the iterate itself, not refitted.",
    reference=f"{_PAPER}, Algorithm 2 (Theorem 2.4, Corollary 2.6)",
    params=(RADIUS, GAP_EPSILON, _max_iter(1000), SMOOTHNESS),
    k="optional",
    family="frank-wolfe",
    requires=Requirements(capabilities=frozenset({"linear"})),
    traits=Traits(forward_rule="gdt"),
)
def frank_wolfe(
    objective: Objective,
    rec: Recorder,
    *,
    k: int | None,
    rng: np.random.Generator,
    B1: float,
    epsilon: float | None,
    max_iter: int,
    smoothness: float | None,
) -> Solution:
    """Algorithm 2 with events: ``add`` when the vertex's feature enters the support,
    ``iterate`` otherwise (``remove`` for features a full step eta = 1 zeroes), each with
    info ``step`` (eta) and ``gap`` (the duality gap before the step); then ``stop``.

    With k, the run stops (before the step) when the next vertex would make the support larger
    than k. The result is the last iterate with its profiled intercept, not a refit on its
    support: it lies in the l1 ball and its objective is what the trace shows.
    """
    support: set[int] = set()

    def on_step(step: Step) -> None:
        now = set(np.flatnonzero(step.coef).tolist())
        info = {"step": step.step, "gap": step.gap}
        common: _StepFields = {"objective": step.value, "score": step.score, "info": info}
        for j in sorted(support - now):  # only a full step (eta = 1) leaves the old features
            support.discard(j)
            rec.removed(j, support_size=len(support), **common)
        gain = step.previous - step.value
        if step.vertex in now and step.vertex not in support:
            support.add(step.vertex)
            rec.added(step.vertex, support_size=len(support), gain=gain, **common)
        else:
            rec.iterated(feature=step.vertex, support_size=len(support), gain=gain, **common)

    sol = solve_l1(
        objective,
        B1,
        epsilon=epsilon,
        max_iter=max_iter,
        smoothness=smoothness,
        max_support=k,
        callback=on_step,
    )
    reason = f"{sol.stop_reason}; the iterate itself, not refitted on its support"
    final = np.flatnonzero(sol.coef)
    rec.stopped(
        reason,
        objective=sol.objective,
        support_size=len(final),
        info={"gap": sol.gap, "iterations": float(sol.iterations), "l1_norm": _l1(sol.coef)},
    )
    return Solution(final.astype(np.intp), sol.coef, float(sol.intercept), sol.objective, reason)


def _l1(w: np.ndarray) -> float:
    return float(np.abs(w).sum())


# --------------------------------------------------------------------------- sparsification


def sparsify(w_star: np.ndarray, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 (randomized sparsification, Maurey): k draws from |w*| / ||w*||_1.

    Parameters
    ----------
    w_star : ndarray, shape (n_features,)
        Nonzero vector to sparsify.
    k : int
        Number of draws r_1..r_k.
    rng : numpy.random.Generator

    Returns
    -------
    w : ndarray, shape (n_features,)
        (||w*||_1 / k) sum_i sign(w*_{r_i}) e_{r_i}: at most k nonzeros, ||w||_1 = ||w*||_1,
        E[w] = w*.
    draws : ndarray of int, shape (k,)
        r_1..r_k in the order drawn.
    """
    norm = _l1(w_star)
    if norm == 0:
        raise ValueError("cannot sparsify the zero vector")
    draws = rng.choice(w_star.shape[0], size=k, p=np.abs(w_star) / norm)
    counts = np.bincount(draws, minlength=w_star.shape[0])
    return norm / k * np.sign(w_star) * counts + 0.0, draws  # + 0.0: no -0.0 entries


@register_algorithm(
    name="randomized-sparsification",
    title="Randomized sparsification of the l1 solution",
    summary="Solve the l1-constrained problem (Frank-Wolfe to tolerance), then draw k "
    "coordinates with probability |w*_j| / ||w*||_1 and average their signed vertices; keep "
    "the best of n_repeats draws.",
    reference=f"{_PAPER}, Algorithm 1 (Theorem 2.1, Corollary 2.3)",
    params=(
        RADIUS,
        Param(
            "n_repeats",
            "int",
            10,
            "Independent draws; the one of lowest objective is kept (Theorem 2.1: each draw "
            "succeeds with probability >= 1/2, so ceil(log2(1/delta)) draws fail w.p. <= delta).",
            minimum=1,
        ),
        GAP_EPSILON,
        _max_iter(5000),
        SMOOTHNESS,
    ),
    k="required",
    family="frank-wolfe",
    requires=Requirements(capabilities=frozenset({"linear"})),
)
def randomized_sparsification(
    objective: Objective,
    rec: Recorder,
    *,
    k: int,
    rng: np.random.Generator,
    B1: float,
    n_repeats: int,
    epsilon: float | None,
    max_iter: int,
    smoothness: float | None,
) -> Solution:
    """Algorithm 1 on the Frank-Wolfe solution w*, k draws, best of ``n_repeats``.

    Each draw's intercept is re-fitted (argmin_b Q(w, b), unpenalised), which can only lower
    the objective below Theorem 2.1's Q(w, b*), so the theorem's guarantee carries over.

    The trace replays Algorithm 1 for the kept draw: after draw i the predictor is
    (||w*||_1 / i) w^(i), and the event is ``add`` when r_i is new, ``iterate`` when it repeats
    a coordinate, with that predictor's objective (intercept re-fitted) and info ``draw`` (i),
    ``count`` (times r_i was drawn so far) and ``weight``; the last one is the result. The stop
    event's info describes the l1 solution (``l1_objective``, ``l1_gap``, ``l1_norm``,
    ``l1_support_size``, ``l1_iterations``) and the draws (``kept_draw``, ``draws_mean``,
    ``draws_max``).
    """
    l1 = solve_l1(
        objective,
        B1,
        epsilon=epsilon,
        max_iter=max_iter,
        smoothness=smoothness,
        callback=lambda _step: rec.checkpoint(),  # its iterations record nothing either
    )
    summary = {
        "l1_objective": l1.objective,
        "l1_gap": l1.gap,
        "l1_norm": _l1(l1.coef),
        "l1_support_size": float(np.count_nonzero(l1.coef)),
        "l1_iterations": float(l1.iterations),
    }
    profile = InterceptProfile(objective)
    if summary["l1_norm"] == 0:
        reason = f"the l1 solution is 0 ({l1.stop_reason}): nothing to sample"
        rec.stopped(reason, objective=l1.objective, support_size=0, info=summary)
        return Solution(np.zeros(0, dtype=np.intp), l1.coef, l1.intercept, l1.objective, reason)

    best: _Draw | None = None
    values = []
    for rep in range(n_repeats):
        rec.checkpoint()  # the draws record nothing until the best is known
        w, draws = sparsify(l1.coef, k, rng)
        b, _ = profile(w, l1.intercept)
        values.append(objective.value(w, b))
        if best is None or values[-1] < best.value:
            best = _Draw(rep, draws, w, b, values[-1])
    assert best is not None
    _replay_draws(objective, rec, profile, l1, best)
    summary.update(
        kept_draw=float(best.index), draws_mean=float(np.mean(values)), draws_max=max(values)
    )
    reason = (
        f"kept draw {best.index + 1} of {n_repeats} (k = {k} samples) of the l1 solution "
        f"(||w*||_1 = {summary['l1_norm']:.4g}, {l1.stop_reason})"
    )
    support = np.flatnonzero(best.coef)
    rec.stopped(reason, objective=best.value, support_size=len(support), info=summary)
    return Solution(support.astype(np.intp), best.coef, float(best.intercept), best.value, reason)


@dataclass
class _Draw:
    index: int
    draws: np.ndarray
    coef: np.ndarray
    intercept: float
    value: float


def _replay_draws(
    objective: Objective, rec: Recorder, profile: InterceptProfile, l1: L1Solution, kept: _Draw
) -> None:
    """Emit Algorithm 1's running predictor (||w*||_1 / i) w^(i) for the kept draws."""
    norm = _l1(l1.coef)
    signs = np.sign(l1.coef)
    counts = np.zeros(objective.n_features)
    b = l1.intercept
    for i, r in enumerate(kept.draws.tolist(), start=1):
        counts[r] += 1
        if i < len(kept.draws):
            coef = norm / i * signs * counts
            b, _ = profile(coef, b)
            value = objective.value(coef, b)
        else:  # the kept predictor itself, exactly as scored
            coef, value = kept.coef, kept.value
        info = {"draw": float(i), "count": counts[r], "weight": float(coef[r])}
        size = int(np.count_nonzero(counts))
        if counts[r] == 1:
            rec.added(r, objective=value, support_size=size, info=info)
        else:
            rec.iterated(feature=r, objective=value, support_size=size, info=info)
