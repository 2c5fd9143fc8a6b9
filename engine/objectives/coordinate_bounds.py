"""The exact best one-coordinate move for logistic loss, without solving every coordinate.

FoBa-obj needs only the argmax (and its value) of the one-coordinate drops
D_j = -min_a phi_j(a), phi_j(a) = Q(w + a e_j) - Q(w). Solving all d 1-D problems costs several
exponentials per entry of X; bounding them costs two matrix-vector products:

* lower bound (curvature <= S_j/4 + lam, S_j = mean x_ij^2): D_j >= g_j^2 / (2 (S_j/4 + lam));
* upper bound: the log-loss psi(z) = log(1 + e^z) satisfies |psi'''| <= psi'' (self-concordance
  in the sense of Bach 2010), so each sample's curvature along coordinate j decays at most like
  exp(-|x_ij| |a|), and phi_j''(a) >= h_j exp(-M_j |a|) + lam with h_j = phi_j''(0) - lam and
  M_j = max_i |x_ij|. Integrating twice bounds phi_j below by
      psi_j(a) = g_j a + h_j (exp(-M_j|a|) + M_j|a| - 1) / M_j^2 + lam a^2 / 2,
  so D_j <= -min psi_j, a 1-D problem in closed-form pieces costing O(1) per feature.

No candidate whose upper bound is below a lower bound of another's drop can win. The largest
lower bound comes from the bounds of :func:`lower_bounds` and from the drop at the Newton step
of the few best Newton estimates g^2 / (2 phi''(0)), evaluated exactly; the candidates whose
upper bound reaches it are solved together, and after their first Newton step those whose drop
is then provably below another's stop (``logistic_coordinate_moves``' ``prune``): on logistic
FoBa-obj at 600 x 200 about 10 candidates take that step and one is solved to the end, where
solving the Newton estimate's best 8, then every candidate whose upper bound reached the best
of them, took two rounds of about 5 columns each to convergence (issue 22). The returned argmax
and drop are exactly those of the full computation.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from .coordinate_newton import (
    BOUND_SLACK,
    Columns,
    logistic_coordinate_moves,
    objective_change,
    self_concordant_decrease,
)

_FIRST_BATCH = 8
_PROBES = 2  # Newton steps evaluated exactly for the lower bound
# Closed-form short lists of up to this many entries (columns x samples) go to the solve
# without _upper_bounds' Newton iteration, which costs ~0.15 ms whatever n is, while the
# columns it would remove cost the solve's first step about in proportion to their entries,
# and the solve's own pruning after that step removes them either way. On problem (e) (n =
# 600) it kept 9.85 of 9.89 columns a step; on (d) (n = 100, lists of 17-39 columns at the
# first steps) skipping it made FoBa-obj 2-6% faster (issue 22).
_SKIP_UPPER_ENTRIES = 16 * 600
_ONE_ROUND_MAX = 32  # short lists longer than this: two rounds (bounds too weak to pay)
_BOUND_ITER = 100
_SQUARES_MAX_ENTRIES = 1_000_000  # a dense X up to 8 MB keeps a copy of its squares


class ColumnStats:
    """Per-column constants the bounds need, computed once per data set."""

    def __init__(self, columns: Columns, design) -> None:
        self.columns = columns
        self.design = design
        X = design.X
        if design.sparse:
            self.X_sq = X.multiply(X).tocsc()
            absmax = np.zeros(design.n_features)
            assert columns.cols is not None  # the entries of a sparse design
            np.maximum.at(absmax, columns.cols, np.abs(columns.x))
            self.absmax = absmax
        else:
            # A small dense X keeps its squares: one BLAS product per forward step instead of a
            # three-operand einsum (3x faster at 100 x 500). A large one is not copied (memory).
            self.X_sq = X * X if X.size <= _SQUARES_MAX_ENTRIES else None
            # max |x_ij| from the column maxima and minima: np.abs(X) would be a copy of X.
            self.absmax = np.maximum(X.max(axis=0), -X.min(axis=0))
        # A standardised design folds its column scales into the products (Design): so do the
        # bounds, on the raw entries, instead of a scaled copy of X.
        self.inv = columns.inv
        if self.inv is not None:
            self.absmax = self.absmax * self.inv

    def sq_rmatvec(self, v: np.ndarray) -> np.ndarray:
        """(X o X).T @ v, with the design's column scaling."""
        if self.X_sq is not None:
            out = np.asarray(self.X_sq.T @ v).ravel()
        else:
            out = np.einsum("ij,ij,i->j", self.design.X, self.design.X, v)
        return out if self.inv is None else out * (self.inv * self.inv)


def best_coordinate_drop(
    stats: ColumnStats, eta: np.ndarray, t: np.ndarray, lam: float, candidates: np.ndarray
) -> tuple[int, float, float, int]:
    """(feature, exact drop, its minimising weight, number of candidates solved exactly) of the
    best candidate."""
    n = eta.shape[0]
    p = expit(eta)
    g = stats.design.rmatvec(p - t)[candidates] / n
    h = stats.sq_rmatvec(p * (1.0 - p))[candidates] / n
    M = stats.absmax[candidates]
    ag = np.abs(g)
    estimate = g * g / (2.0 * (h + lam))  # the Newton estimate of each drop
    # The largest lower bound (module docstring): the drops at the probes' Newton steps are
    # within a few per cent of their exact drops, far tighter than the bounds (they halve the
    # short list) for one pass over two columns. lower_bounds never beat them on problems (d)
    # and (e) of bench/engine_speed.py (1.3x to 17x below, issue 22), so they are asked only
    # when the probes found no decrease (a Newton step that overshot uphill): any floor at or
    # below the best drop gives the same answer, a higher one only a shorter list.
    top = np.argsort(-estimate, kind="stable")[:_PROBES]
    step = -g[top] / (h[top] + lam)
    change = objective_change(stats.columns.subset(candidates[top]), step, p, t, lam, n)
    floor = float((-change).max())
    if not floor > 0.0:  # NaN too: max keeps the bound, as before
        sq = stats.design.sq_norms[candidates] / n
        floor = max(float(lower_bounds(ag, h, M, sq, lam).max()), floor)
    floor *= 1.0 - BOUND_SLACK
    short = np.flatnonzero(closed_form_bounds(ag, h, M, lam) >= floor)
    upper = None
    if short.size > _ONE_ROUND_MAX or short.size * n > _SKIP_UPPER_ENTRIES:
        upper = _upper_bounds(ag[short], h[short], M[short], lam)
        keep = upper >= floor
        short, upper = short[keep], upper[keep]
    if short.size <= _ONE_ROUND_MAX:
        at_zero = (g[short], h[short])
        moves = _solve(stats, eta, t, lam, candidates[short], at_zero, (floor, M[short]))
        solved = np.isfinite(moves[0])  # the others were pruned: below the floor
        exact = _solved(short[solved], (moves[0][solved], moves[1][solved]))
    else:  # weak lower bounds (drops near 0): the Newton estimate's best first, then the rest
        order = np.argsort(-estimate[short], kind="stable")
        first = short[order[:_FIRST_BATCH]]
        exact = _solved(first, _solve(stats, eta, t, lam, candidates[first]))
        best = max(drop for drop, _ in exact.values())
        rest = order[_FIRST_BATCH:]
        assert upper is not None  # short > _ONE_ROUND_MAX: computed above
        contenders = short[rest[upper[rest] >= best]]
        if contenders.size:
            exact.update(_solved(contenders, _solve(stats, eta, t, lam, candidates[contenders])))
    # ties: the lowest position, as argmax
    i = max(exact, key=lambda pos: (exact[pos][0], -pos))
    drop, move = exact[i]
    return int(candidates[i]), float(drop), float(move), len(exact)


def lower_bounds(
    g: np.ndarray, h: np.ndarray, M: np.ndarray, S: np.ndarray, lam: float
) -> np.ndarray:
    """Lower bounds on the one-coordinate drops D_j, for |g_j|, h_j and M_j as in the module
    docstring and S_j = mean x_ij^2: the larger of two.

    * The log-loss is 1/4-smooth: phi_j'' <= S_j/4 + lam, so D_j >= g^2 / (2 (S_j/4 + lam)).
    * Self-concordance the other way: phi_j''(a) <= h e^{M|a|} + lam, so phi_j lies below
      g a + h (e^{M|a|} - M|a| - 1)/M^2 + lam a^2/2; at the step s = log(1 + r)/M, r = |g|M/h
      (where the first two terms are least), the drop is at least
      (h/M^2) ((1 + r) log(1 + r) - r) - lam s^2/2.
    """
    smooth = g * g / (2.0 * (0.25 * S + lam))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ok = (h > 0) & (M > 0)
        Ms = np.where(ok, M, 1.0)
        r = np.where(ok, g * Ms / np.where(ok, h, 1.0), 0.0)
        s = np.log1p(r) / Ms
        # (1 + r) log(1 + r) - r = r^2/2 - r^3/6 + r^4/12 - ...: alternating and decreasing
        # for r < 1, so its first two terms bound it below where the formula cancels.
        f = np.where(r < 1e-3, r * r * (0.5 - r / 6.0), (1.0 + r) * np.log1p(r) - r)
        sc = np.where(ok, h * f / (Ms * Ms) - 0.5 * lam * s * s, 0.0)
    return np.maximum(np.maximum(smooth, np.where(np.isfinite(sc), sc, 0.0)), 0.0)


def _solved(
    pos: np.ndarray, moves: tuple[np.ndarray, np.ndarray]
) -> dict[int, tuple[float, float]]:
    """position -> (exact drop, minimising weight)."""
    drops, steps = moves
    return {int(i): (float(d), float(a)) for i, d, a in zip(pos, drops, steps, strict=True)}


def _solve(
    stats, eta, t, lam, idx: np.ndarray, at_zero=None, prune=None
) -> tuple[np.ndarray, np.ndarray]:
    return logistic_coordinate_moves(stats.columns.subset(idx), eta, t, lam, at_zero, prune)


def closed_form_bounds(g: np.ndarray, h: np.ndarray, M: np.ndarray, lam: float) -> np.ndarray:
    """Looser upper bounds than :func:`_upper_bounds` at O(1) per feature, no iteration.

    Each drops a term of psi_j: without the ridge, min psi_j >= -(h/M^2) f(|g| M / h) (see
    :func:`self_concordant_decrease`); without the loss's curvature term, min psi_j =
    -g^2/(2 lam). Both terms are >= 0, so either bound holds, and so does the smaller.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        Ms = np.where(M > 0, M, 1.0)
        loss_part = self_concordant_decrease(g * Ms, h) / (Ms * Ms)
        ridge_part = g * g / (2.0 * lam) if lam > 0 else np.full_like(g, np.inf)
    return np.minimum(loss_part, ridge_part) * (1.0 + BOUND_SLACK) + 1e-300


def _upper_bounds(g: np.ndarray, h: np.ndarray, M: np.ndarray, lam: float) -> np.ndarray:
    """max_s>=0 of |g| s - h (e^{-Ms} + Ms - 1)/M^2 - lam s^2/2, per feature (+inf if unbounded).

    The maximiser solves F(s) = h (1 - e^{-Ms})/M + lam s - |g| = 0; F is increasing and
    concave, so Newton from any point left of the root (s = 0, say) climbs to it monotonically
    without overshooting.
    """
    s = np.zeros_like(g)
    unbounded = (lam == 0.0) & (g * M >= h)  # the loss's curvature alone cannot stop the move
    # The features still iterating, gathered once and shrunk as they converge (not gathered
    # and scattered through a mask every iteration: issue 22, 2.5x faster at ~15 features).
    idx = np.flatnonzero(~unbounded & (g > 0))
    gl, hl, Ml = g[idx], h[idx], M[idx]
    # Newton climbs to the root from any point left of it (F <= 0), so start at the largest
    # of three such points instead of 0 (issue 22: 1-3 steps instead of ~10):
    # (|g| - h/M)/lam, where F = -h e^{-Ms}/M (the whole move when the ridge stops it), and one
    # Newton step from the smaller of the roots without the ridge and without the loss's
    # curvature (F >= 0 at both, so the step lands left: F is concave).
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = gl * Ml / hl
        right = np.where(r < 1.0, -np.log1p(-np.minimum(r, 1.0)) / Ml, np.inf)
        start = np.zeros_like(gl)
        if lam > 0:
            right = np.minimum(right, gl / lam)
            start = np.maximum(start, (gl - hl / Ml) / lam)
        e = np.exp(-Ml * right)
        left = right - (hl * (1.0 - e) / Ml + lam * right - gl) / (hl * e + lam)
    sl = np.where(np.isfinite(left), np.maximum(start, left), start)
    sl = np.where(np.isfinite(sl), sl, 0.0)
    for _ in range(_BOUND_ITER):
        if idx.size == 0:
            break
        e = np.exp(-Ml * sl)
        F = hl * (1.0 - e) / Ml + lam * sl - gl
        dF = hl * e + lam
        step = -F / dF
        sl = sl + step
        still = np.abs(step) > 1e-13 * (1.0 + sl)
        if not still.all():
            s[idx[~still]] = sl[~still]
            idx, gl, hl, Ml, sl = idx[still], gl[still], hl[still], Ml[still], sl[still]
    s[idx] = sl  # out of iterations: where they got to
    Ms = M * s
    value = g * s - h * (np.expm1(-Ms) + Ms) / (M * M) - 0.5 * lam * s * s
    value = value * (1.0 + BOUND_SLACK) + 1e-300
    return np.where(unbounded, np.inf, value)
