"""Exact one-coordinate minimisation of the logistic objective for many coordinates at once.

FoBa-obj's forward score for candidate j is Q(w) - min_a Q(w + a e_j). Each such problem is a
1-D strictly convex minimisation; we solve all of them together with a safeguarded Newton
iteration (Newton inside a bracket that the gradient's sign maintains, bisection when Newton
leaves it), so no objective values are compared during the iteration: rounding noise in such
comparisons is what makes line searches stall near the optimum. Coordinates drop out of the
working set as they converge, and the objective is evaluated once, at the end.

With a sparse X only the stored entries of a column move with its coordinate; zeros leave the
per-sample loss unchanged and drop out of every difference.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from .design import Design

_TOL = 1e-12
# Relative slack on every bound that screens logistic candidates (the forward drops' upper
# bounds and floors here and in coordinate_bounds, the deletion screen in logistic, the
# streamed floors): far above the bounds' rounding, far below a gap that decides a selection.
BOUND_SLACK = 1e-9
_MAX_ITER = 60


class Columns:
    """Columns ``idx`` of X as entries: a dense block, or the stored entries of a CSC matrix.

    ``x`` holds the raw entries of X; a standardised design's column j is x_j * inv[j]
    (``inv`` = 1 / its scale, None without scaling), applied by the logistic kernels to the
    per-column moves and sums rather than to a scaled copy of X.
    """

    # The entries' rows and columns; both None for a dense block.
    rows: np.ndarray | None
    cols: np.ndarray | None
    inv: np.ndarray | None

    def __init__(self, design: Design) -> None:
        # All columns, without copying X: scoring the few selected ones too is cheaper than
        # copying the rest, and the caller discards their values.
        self.m = design.n_features
        self.inv = None if design.scale is None else 1.0 / design.scale
        if design.sparse:
            X = design.X
            self.x, self.rows = X.data, X.indices
            self.cols = np.repeat(np.arange(self.m), np.diff(X.indptr))
        else:
            self.x = design.X
            self.rows = self.cols = None

    def subset(self, keep: np.ndarray) -> Columns:
        """Keep the view's columns at positions ``keep``."""
        new = Columns.__new__(Columns)
        new.m = len(keep)
        new.inv = None if self.inv is None else self.inv[keep]
        if self.cols is None:
            new.x, new.rows, new.cols = self.x[:, keep], None, None
        else:
            assert self.rows is not None  # None together with cols
            pos = np.full(self.m, -1)
            pos[keep] = np.arange(len(keep))
            mask = pos[self.cols] >= 0
            new.x, new.rows, new.cols = self.x[mask], self.rows[mask], pos[self.cols[mask]]
        return new

    def at_rows(self, v: np.ndarray) -> np.ndarray:
        return v[:, None] if self.rows is None else v[self.rows]

    def at_cols(self, a: np.ndarray) -> np.ndarray:
        return a[None, :] if self.cols is None else a[self.cols]

    def dot_cols(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Per column, the sum over its entries of u * v (both shaped like ``x``)."""
        if self.cols is None:
            return np.einsum("ij,ij->j", u, v)
        return np.bincount(self.cols, weights=u * v, minlength=self.m)

    def colsum(self, v: np.ndarray) -> np.ndarray:
        if self.cols is None:
            return v.sum(axis=0)
        return np.bincount(self.cols, weights=v, minlength=self.m)


def logistic_coordinate_drops(
    cols: Columns, eta: np.ndarray, t: np.ndarray, lam: float
) -> np.ndarray:
    """Objective drop of the best move along each coordinate, assuming its weight is 0.

    As :func:`logistic_coordinate_moves`, without the moves.
    """
    return logistic_coordinate_moves(cols, eta, t, lam)[0]


def logistic_coordinate_moves(
    cols: Columns,
    eta: np.ndarray,
    t: np.ndarray,
    lam: float,
    at_zero: tuple[np.ndarray, np.ndarray] | None = None,
    prune: tuple[float, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Objective drop of the best move along each coordinate, and that move.

    Parameters
    ----------
    cols : Columns
        ``Columns(design)`` of the uncentred design (build once per data set).
    eta : ndarray, shape (n_samples,)
        Current linear predictor X w + b.
    t : ndarray, shape (n_samples,)
        Labels in {0, 1}.
    lam : float
        Ridge weight.
    at_zero : (ndarray, ndarray), optional
        The columns' mean x (p - t) and mean x^2 p (1 - p) at eta (with the design's scaling),
        when the caller has them already: the first iteration's derivatives, not recomputed.
    prune : (float, ndarray), optional
        (floor, M) for a caller after the argmax only, with floor <= the largest drop and M the
        columns' max |x_ij| (scaled): after the first Newton step, a column whose drop is
        provably below the floor and below another column's stops, and gets drop -inf.

    Returns
    -------
    drops : ndarray, shape (n_features,), >= 0
        Meaningless for features whose weight is not 0 (the selected ones): discard those.
    moves : ndarray, shape (n_features,)
        The minimising weight a_j of each coordinate (a refit that adds j starts there).
    """
    n = eta.shape[0]
    m = cols.m
    p_row = expit(eta)
    a = np.zeros(m)
    lo = np.full(m, -np.inf)  # gradient < 0 at lo: the minimiser lies above
    hi = np.full(m, np.inf)
    work = np.arange(m)  # positions still iterating
    view = cols
    x, xx, er, tr, scales = _per_view(view, eta, t)
    pruned = np.zeros(m, dtype=bool)
    survivors = cols
    for it in range(_MAX_ITER):
        aw = a[work]
        if it == 0 and at_zero is not None:
            # The caller's BLAS products: the same numbers up to rounding, one pass fewer.
            g, h = at_zero[0] + lam * aw, at_zero[1] + lam
        else:
            if it == 0:  # every coordinate starts at 0
                p = view.at_rows(p_row)
            else:  # sigmoid(eta + a x): one exponential per entry
                z = view.at_cols(aw if scales is None else aw * scales[0]) * x
                p = expit(er + z)
            g = view.dot_cols(x, p - tr) / n
            h = view.dot_cols(xx, p * (1.0 - p)) / n
            if scales is not None:
                g *= scales[0]
                h *= scales[1]
            g += lam * aw
            h += lam
        if it == 1 and prune is not None:
            # Drops bracketed after one step: at least phi(0) - phi(a), at most that plus what
            # self-concordance lets the rest of the move take (phi'' >= h e^{-M|s|} from a).
            # Most columns are out here, before the iterations that converge them (issue 22).
            lower = -(view.colsum(loss_change(view.at_rows(p_row), z, tr)) / n + 0.5 * lam * aw**2)
            Mw = prune[1][work]
            upper = lower + self_concordant_decrease(g * Mw, h) / (Mw * Mw)
            floor = max(prune[0], float(lower.max())) * (1.0 - BOUND_SLACK)
            out = upper < floor
            if out.any():
                pruned[work[out]] = True
                keep = np.flatnonzero(~out)
                aw, g, h, work = aw[keep], g[keep], h[keep], work[keep]
                view = view.subset(keep)
                x, xx, er, tr, scales = _per_view(view, eta, t)
                survivors = view  # the columns not pruned, in order: the final drops' view
        a[work], going = bracketed_newton_step(aw, g, h, lo, hi, work)
        if not going.all():
            keep = np.flatnonzero(going)
            if keep.size == 0:
                break
            work = work[keep]
            view = view.subset(keep)
            x, xx, er, tr, scales = _per_view(view, eta, t)
    drops = np.full(m, -np.inf)  # a pruned column's: below another's, so never the argmax
    kept = np.flatnonzero(~pruned)
    drops[kept] = np.maximum(-objective_change(survivors, a[kept], p_row, t, lam, n), 0.0)
    return drops, a


_Scales = tuple[np.ndarray, np.ndarray] | None


def _per_view(
    view: Columns, eta: np.ndarray, t: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, _Scales]:
    """What every Newton iteration of ``logistic_coordinate_moves`` reads, gathered once per
    view (rebuilt only when coordinates leave the working set), so an iteration is a handful of
    passes: the entries, their squares, the rows' eta and labels, and the columns' scales with
    their squares (None without scaling)."""
    inv = view.inv
    scales = None if inv is None else (inv, inv * inv)
    return view.x, view.x * view.x, view.at_rows(eta), view.at_rows(t), scales


def bracketed_newton_step(
    aw: np.ndarray,
    g: np.ndarray,
    h: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    work: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """One safeguarded Newton step of the coordinates ``work`` (weights ``aw``, derivatives
    ``g`` and ``h`` there): their brackets ``lo``/``hi`` narrowed in place, a step leaving
    the bracket replaced by its midpoint. Returns the new weights and which coordinates go on
    iterating. The in-memory objective and the streamed one (``streamed_logistic``) step the
    same way, so they reach the same weights."""
    lw = np.where(g < 0, aw, lo[work])
    hw = np.where(g > 0, aw, hi[work])
    lo[work], hi[work] = lw, hw
    # g = 0 gives new = aw exactly (a zero step), so such a coordinate stays where it is.
    new = aw - g / np.maximum(h, 1e-300)
    # Newton can only leave the bracket on a finite side; a step lost to rounding lands on
    # the bracket's end and is not "outside". The test is written for the common case (no
    # step leaves: one comparison per side), since this runs on a handful of coordinates
    # per iteration, where numpy's per-call cost is the whole cost (issue 22).
    leave = (new < lw) | (new > hw)
    if leave.any():
        outside = leave & np.isfinite(lw) & np.isfinite(hw)
        with np.errstate(invalid="ignore"):  # -inf + inf where a side is open: not selected
            new = np.where(outside, 0.5 * (lw + hw), new)
    going = (np.abs(g) > _TOL) & (np.abs(new - aw) > _TOL * (1.0 + np.abs(aw)))
    return new, going


def loss_change(p: np.ndarray, z: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Per-sample log-loss change loss(eta + z) - loss(eta), given p = sigmoid(eta).

    loss(eta + z) - loss(eta) = log(1 - p + p e^z) - t z, written as
    z+ + log(1 - q + q e^-|z|) with q = p for z <= 0 and 1 - p for z > 0: it cannot overflow,
    and its rounding is 1e-16 absolute per sample, far below any difference that can decide a
    selection (numpy's exp and log are vectorised, its expm1 and log1p are not).
    """
    q = np.where(z > 0, 1.0 - p, p)
    e = np.abs(z)
    np.negative(e, out=e)
    np.exp(e, out=e)  # e^-|z|, in one buffer (fewer temporaries: issue 22)
    e *= q
    inner = 1.0 - q
    inner += e
    if inner.all():
        log_inner = np.log(inner, out=inner)
    else:
        # inner = 0 only when q = 1 (p saturated at 0 or 1) and e^-|z| underflowed: then the
        # log is exactly -|z|.
        with np.errstate(divide="ignore"):
            log_inner = np.where(inner == 0.0, -np.abs(z), np.log(inner))
    log_inner += np.maximum(z, 0.0)
    log_inner -= t * z
    return log_inner


def self_concordant_decrease(g: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Upper bounds on phi(0) - min_s phi(s) for convex phi with phi'(0) = g, phi''(0) = h and
    |phi'''| <= phi'' (a mean of log-losses of predictions moved by s).

    Self-concordance gives phi''(s) >= h e^-|s|, so phi(s) >= phi(0) + g s + h (e^-|s| + |s| -
    1), whose minimum is phi(0) - h f(r), r = |g| / h, f(r) = r + (1 - r) log(1 - r) =
    sum_{k>=2} r^k / (k (k-1)); +inf when r >= 1 (the bound does not stop the move). For
    small r the series' bound r^2/2 + r^3 / (6 (1 - r)) replaces the formula's cancellation.
    A move along a column with |x_i| <= M: pass g M and divide the bound by M^2.
    """
    # Written for the common case, every h > 0 and r < 1e-2 nowhere or rarely: the formula on
    # every entry, the series patched in where it applies; the result is the same either way,
    # but this runs on a handful of values per forward step, where numpy's per-call cost is the
    # whole cost (issue 22).
    curved = bool((h > 0).all())
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.abs(g) / h
        if not curved:  # no curvature: nothing stops the move
            r = np.where(h > 0, r, np.inf)
        f = r + (1.0 - r) * np.log1p(-r)  # NaN where r >= 1: replaced by inf below
        small = r < 1e-2
        if small.any():
            rs = r[small]
            f[small] = 0.5 * rs * rs + rs**3 / (6.0 * (1.0 - rs))
        bound = h * f * (1.0 + BOUND_SLACK)
    bound[~(r < 1.0)] = np.inf
    # g = 0 with h > 0 gives 0 above (r = 0, a series of 0); without curvature, say so here.
    return bound if curved else np.where(g == 0.0, 0.0, bound)


def objective_change(
    cols: Columns, a: np.ndarray, p_row: np.ndarray, t: np.ndarray, lam: float, n: int
) -> np.ndarray:
    """Q(w + a_j e_j) - Q(w) per column, from per-entry loss differences."""
    z = cols.at_cols(a if cols.inv is None else a * cols.inv) * cols.x
    diff = loss_change(cols.at_rows(p_row), z, cols.at_rows(t))
    return cols.colsum(diff) / n + 0.5 * lam * a * a
