"""Smooth GLM losses over rows read in chunks: tables larger than memory (issue 28).

:class:`StreamedGLM` is :class:`~engine.objectives.glm.GLMObjective` (a :class:`SmoothLoss`
of the linear prediction, lam, intercept, standardisation) on a
:class:`~engine.rows.RowSource`: it never holds an n-length vector. Every quantity is a sum
over rows, accumulated chunk by chunk; a chunk's linear predictor is recomputed from the
active columns in each pass (the support is short, so this costs little next to reading).
The iterations are the in-memory objective's (``glm.safeguarded_minimisers``,
``glm.intercept_shifts``, the steps of ``glm.damped_newton``), so the numbers are equal up to
the rounding of sums taken in another order. :class:`StreamedSmoothedHinge` and
:class:`StreamedSmoothedAbsolute` are ``smoothed.py``'s objectives;
``streamed_logistic.StreamedLogistic`` specialises the forward and backward scores to the
log-loss's bounds.

What a pass is, per operation (``engine.rows.PassCount`` counts them):

* construction: one full-width pass for n, the column sums and squares (the scales, as
  ``engine.select`` computes them), max |x_ij| and the targets (the two labels, or the
  regression target's sum);
* a refit: one pass over the support per Newton evaluation; each pass gives the value, the
  gradient and the Hessian at a point, so a trial step's evaluation is also the next step's
  gradient;
* FoBa-gdt / OMP's forward step: one full-width pass (the gradient);
* FoBa-obj's forward step (generic): one pass over the columns still iterating per
  safeguarded Newton iteration of ``coordinate_minimisers`` (the first one full-width), and
  one over the columns whose last step moved, for the drop at the minimiser. The argmax
  (``best_candidate``) stops iterating a column once convexity bounds its drop below the
  best one reached: the same winner and drop, a third to half the passes of the iteration;
* deletion costs (generic): one pass over the support per evaluation of the intercept's
  shifts in ``intercept_shifts`` (a pass gives the value and both derivatives, so an accepted
  trial is also the next iteration's slope), one without an intercept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import ClassVar

import numpy as np
from scipy.linalg import LinAlgError

from ..rows import CountedRows, PassCount, RowSource
from .base import ActiveSet, Objective
from .glm import (
    _ARMIJO,
    _CHORD_MU,
    _CHORD_RATE,
    _GRAD_TOL,
    _MAX_NEWTON,
    _MU_MAX,
    _MU_MIN,
    SmoothLoss,
    _cho_factor,
    _cho_solve,
    intercept_shifts,
    safeguarded_minimisers,
)
from .smoothed import SmoothedAbsoluteLoss, SmoothedHingeLoss

Pass = Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]

# best_candidate's pruning: a column stays while its bound on the drop is within this share
# of (best drop + |Q|) of the best drop reached; far above the rounding of the sums.
_PRUNE_SLACK = 1e-9


class StreamedGLM(Objective):
    """Mean ``loss`` of the linear prediction plus (lam/2)||w||^2 over a row source, as
    ``GLMObjective`` defines it.

    Parameters
    ----------
    rows : RowSource
        The table. Its labels: exactly two distinct values (``two_labels``: the larger in sort
        order positive, mapped by :meth:`_targets`) or finite numbers.
    loss : SmoothLoss
    lam, fit_intercept
        As :class:`~engine.objectives.glm.GLMObjective`.
    standardize : bool
        Columns divided by ``engine.select``'s scales (the standard deviation with an
        intercept, the root mean square without) inside every pass.
    checkpoint : callable, optional
        Called before every chunk (a recorder's ``checkpoint``: cancellation inside a pass).
    """

    name = "glm"
    capabilities = frozenset()  # no design matrix in memory: only the greedy seam
    two_labels: ClassVar[bool] = False
    loss_title: ClassVar[str] = "this loss"  # for the labels' error message

    def __init__(
        self,
        rows: RowSource,
        loss: SmoothLoss,
        *,
        lam: float = 0.0,
        fit_intercept: bool = True,
        standardize: bool = False,
        checkpoint: Callable[[], None] | None = None,
    ) -> None:
        if not np.isfinite(lam) or lam < 0:
            raise ValueError(f"lam must be a finite number >= 0, got {lam}")
        self.rows = CountedRows(rows, checkpoint)
        self.lam = float(lam)
        self.fit_intercept = fit_intercept
        self.loss = loss
        self._first_pass(standardize, fit_intercept)

    @property
    def passes(self) -> PassCount:
        return self.rows.count

    def _first_pass(self, standardize: bool, centered: bool) -> None:
        """n, the scales, max |x_ij| and the targets' statistics: one pass."""
        d = self.rows.n_features
        n = 0
        col_sum, raw_sq, absmax = np.zeros(d), np.zeros(d), np.zeros(d)
        counts: dict[object, int] = {}
        y_sum = 0.0
        for X, y in self.rows.read(None):
            bad = ~np.isfinite(X)
            if bad.any():
                i, j = np.argwhere(bad)[0]
                raise ValueError(f"X contains NaN or infinite values (row {n + i}, column {j})")
            if not self.two_labels:
                y_sum += self._check_target(y, n)
            n += X.shape[0]
            col_sum += X.sum(axis=0)
            raw_sq += np.einsum("ij,ij->j", X, X)
            if X.shape[0]:
                absmax = np.maximum(absmax, np.abs(X).max(axis=0))
            if self.two_labels:
                values, c = np.unique(np.asarray(y), return_counts=True)
                for v, m in zip(values.tolist(), c.tolist(), strict=True):
                    counts[v] = counts.get(v, 0) + m
                if len(counts) > 2:
                    break  # the message below; no need to read on
        if self.two_labels:
            classes = np.unique(np.asarray(list(counts)))
            if len(classes) != 2:
                raise ValueError(
                    f"{self.loss_title} needs exactly two distinct labels in y, found "
                    f"{len(classes)}: {classes[:5].tolist()}"
                )
            self.classes_ = classes
        if n < 2 or d < 1:
            raise ValueError(f"need at least 2 samples and 1 feature, got n = {n}, d = {d}")
        self.n_samples, self.n_features = n, d
        self.t_mean = counts[self.classes_[1].item()] / n if self.two_labels else y_sum / n
        self.scale: np.ndarray | None = None
        self.inv = np.ones(d)
        if standardize:
            from ..scaling import scale_from_sums

            self.scale = scale_from_sums(raw_sq / n, col_sum / n, centered=centered)
            self.inv = 1.0 / self.scale
        self.sq_norms = raw_sq * self.inv**2
        self.absmax = absmax * self.inv

    @staticmethod
    def _check_target(y: np.ndarray, before: int) -> float:
        """A numeric target's chunk: finite numbers, their sum."""
        try:
            v = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("y must be numeric for a regression loss") from None
        bad = ~np.isfinite(v)
        if bad.any():
            row = before + int(bad.argmax())
            raise ValueError(f"y contains NaN or infinite values (row {row})")
        return float(v.sum())

    def initial_intercept(self) -> float:
        """Where the intercept-only refit starts (``SmoothLoss.initial_intercept``'s role)."""
        return 0.0

    def _targets(self, y: np.ndarray) -> np.ndarray:
        """A chunk's labels as the loss reads them."""
        if self.two_labels:
            return np.where(np.asarray(y) == self.classes_[1], 1.0, -1.0)
        return np.asarray(y, dtype=np.float64)

    def pointwise(
        self, eta: np.ndarray, t: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """L, L' and L'' at the rows' predictions."""
        loss = self.loss
        return loss.value(eta, t), loss.derivative(eta, t), loss.curvature(eta, t)

    # ----------------------------------------------------------------- passes
    def read(
        self, support: Sequence[int], extra: Sequence[int] | None, w: np.ndarray, b: float
    ) -> Pass:
        """One pass over ``support`` then ``extra`` (every column for None). Per chunk: the
        support's columns, the linear predictor, the targets and the block of ``extra``, the
        columns scaled as the design."""
        k = len(support)
        columns = None if extra is None else [*support, *extra]
        inv = self.inv if columns is None else self.inv[columns]
        for X, y in self.rows.read(columns):
            X = X * inv
            A = X[:, list(support)] if columns is None else X[:, :k]
            eta = A @ w + b if k else np.full(X.shape[0], float(b))
            yield A, eta, self._targets(y), (X if columns is None else X[:, k:])

    # ----------------------------------------------------------------- anywhere
    def value(self, coef: np.ndarray, intercept: float = 0.0) -> float:
        coef = np.asarray(coef, dtype=float)
        on = np.flatnonzero(coef).tolist()
        total = 0.0
        for _, eta, t, _ in self.read(on, [], coef[on], intercept):
            total += float(self.loss.value(eta, t).sum())
        return total / self.n_samples + 0.5 * self.lam * float(coef @ coef)

    def gradient(self, coef: np.ndarray, intercept: float = 0.0) -> tuple[np.ndarray, float]:
        coef = np.asarray(coef, dtype=float)
        on = np.flatnonzero(coef).tolist()
        g, gb = self.full_gradient(on, coef[on], intercept)
        return g + self.lam * coef, gb

    def full_gradient(
        self, support: Sequence[int], w: np.ndarray, b: float
    ) -> tuple[np.ndarray, float]:
        """(X.T L' / n, sum(L') / n) with the scaling: one full-width pass."""
        g = np.zeros(self.n_features)
        gb = 0.0
        for _, eta, t, X in self.read(support, None, w, b):
            u = self.loss.derivative(eta, t)
            g += X.T @ u
            gb += float(u.sum())
        return g / self.n_samples, gb / self.n_samples

    def start(self) -> StreamedGLMActiveSet:
        return StreamedGLMActiveSet(self)


class _StreamedSmoothed(StreamedGLM):
    """A smoothed loss of ``engine.objectives.smoothed`` on rows: its loss made from ``beta``."""

    loss_type: ClassVar[type[SmoothedHingeLoss] | type[SmoothedAbsoluteLoss]]

    def __init__(
        self,
        rows: RowSource,
        *,
        beta: float = 10.0,
        lam: float = 0.0,
        fit_intercept: bool = True,
        standardize: bool = False,
        checkpoint: Callable[[], None] | None = None,
    ) -> None:
        loss = self.loss_type(beta)
        super().__init__(
            rows,
            loss,
            lam=lam,
            fit_intercept=fit_intercept,
            standardize=standardize,
            checkpoint=checkpoint,
        )
        self.beta = loss.beta


class StreamedSmoothedHinge(_StreamedSmoothed):
    """``smoothed.SmoothedHinge`` on rows: labels s = +1 for the larger of two values."""

    name = "smoothed_hinge"
    two_labels = True
    loss_title = "the hinge loss"
    loss_type = SmoothedHingeLoss


class StreamedSmoothedAbsolute(_StreamedSmoothed):
    """``smoothed.SmoothedAbsolute`` (Huber) on rows: a numeric target."""

    name = "smoothed_absolute"
    loss_type = SmoothedAbsoluteLoss

    def initial_intercept(self) -> float:
        # The in-memory loss starts at the median, which needs the column in memory (or a
        # pass per bisection step); the mean is one sum of the first pass, and the refit ends
        # at the same optimum either way (|gradient| <= _GRAD_TOL).
        return float(self.t_mean)


class StreamedGLMActiveSet(ActiveSet):
    """(w_S, b) refitted on a support, Q there; no n-length state (the predictor is recomputed
    from the support's columns in every pass)."""

    objective: StreamedGLM
    support: list[int]

    def __init__(self, objective: StreamedGLM) -> None:
        self.objective = objective
        self.support = []
        self._w = np.zeros(0)
        self._b = objective.initial_intercept() if objective.fit_intercept else 0.0
        self.value = np.nan
        self._version = 0  # bumped on every refit: a stale entering hint is not used
        # (feature, its best one-coordinate weight, the refit it was found at): where the
        # refit that adds it starts (set by the scores that find that weight).
        self._entering: tuple[int, float, int] | None = None
        self._refit()

    @property
    def intercept(self) -> float:
        return self._b

    # ----------------------------------------------------------------- refit
    def _evaluate(self, w: np.ndarray, b: float) -> tuple[float, np.ndarray, np.ndarray]:
        """Q, its gradient and Hessian in (w_S, b) at (w, b): one pass over the support."""
        obj = self.objective
        k, fit_b = len(self.support), obj.fit_intercept
        q = k + fit_b
        total = 0.0
        g, H = np.zeros(q), np.zeros((q, q))
        for A, eta, t, _ in obj.read(self.support, [], w, b):
            v, u, dd = obj.pointwise(eta, t)
            total += float(v.sum())
            if k:
                Ad = A * dd[:, None]
                g[:k] += A.T @ u
                H[:k, :k] += Ad.T @ A
                if fit_b:
                    H[:k, k] += Ad.sum(axis=0)
            if fit_b:
                g[k] += u.sum()
                H[k, k] += dd.sum()
        n = obj.n_samples
        g /= n
        H /= n
        g[:k] += obj.lam * w
        H[:k, :k].flat[:: k + 1] += obj.lam
        if fit_b:
            H[k, :k] = H[:k, k]
        return total / n + 0.5 * obj.lam * float(w @ w), g, H

    def _refit(self) -> None:
        """``glm.damped_newton`` with every evaluation a pass (same steps, same tests)."""
        obj = self.objective
        k, fit_b = len(self.support), obj.fit_intercept
        w, b = self._w.copy(), self._b
        f, g, H = self._evaluate(w, b)
        self._version += 1
        if k + fit_b == 0:
            self.value = f
            return
        scale = obj.loss.smoothness * (float(obj.sq_norms[self.support].sum()) / obj.n_samples)
        scale = max(scale + obj.loss.smoothness * fit_b + obj.lam, 1e-300)
        mu = _MU_MIN * scale
        chord = None
        g_prev = np.inf
        eye = np.eye(k + fit_b)
        for _ in range(_MAX_NEWTON):
            g_max = float(np.max(np.abs(g)))
            if g_max <= _GRAD_TOL:
                break
            if chord is not None and g_max <= _CHORD_RATE * g_prev:
                d = _cho_solve(chord, g)
                wn, bn = _stepped(w, b, d, k, fit_b)
                fn, gn, Hn = self._evaluate(wn, bn)
                if fn <= f - _ARMIJO * float(g @ d):
                    w, b, f, g, H = wn, bn, fn, gn, Hn
                    g_prev = g_max
                    continue
            chord = None
            step = None
            while mu <= _MU_MAX * scale:
                try:
                    factor = _cho_factor(H + mu * eye)
                    d = _cho_solve(factor, g)
                except LinAlgError:
                    mu *= 10.0
                    continue
                wn, bn = _stepped(w, b, d, k, fit_b)
                fn, gn, Hn = self._evaluate(wn, bn)
                if fn <= f - _ARMIJO * float(g @ d):
                    step = (wn, bn, fn, gn, Hn, max(mu / 10.0, _MU_MIN * scale), factor)
                    break
                mu *= 10.0
            if step is None:
                break  # no decrease left at machine precision
            wn, bn, fn, gn, Hn, mu_next, factor = step
            done = f - fn <= 1e-15 * max(1.0, abs(f))
            w, b, f, g, H = wn, bn, fn, gn, Hn
            chord = factor if mu <= _CHORD_MU * scale else None
            mu = mu_next
            g_prev = g_max
            if done:
                break
        self._w, self._b, self.value = w, float(b), f

    def add(self, j: int) -> float:
        if j in self.support:
            raise ValueError(f"feature {j} is already selected")
        old = self.value
        hint = self._entering
        fresh = hint is not None and hint[0] == j and hint[2] == self._version
        self._w = np.append(self._w, hint[1] if fresh and hint is not None else 0.0)
        self.support.append(j)
        self._refit()
        return old - self.value

    def remove(self, j: int) -> float:
        old = self.value
        p = self.support.index(j)
        self._w = np.delete(self._w, p)
        del self.support[p]
        self._refit()
        return self.value - old

    def copy(self) -> StreamedGLMActiveSet:
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.support = list(self.support)
        new._w = self._w.copy()
        return new

    # ----------------------------------------------------------------- scores
    def gradient(self) -> np.ndarray:
        obj = self.objective
        g, _ = obj.full_gradient(self.support, self._w, self._b)
        return g + obj.lam * self.coef

    def quadratic_scores(self) -> np.ndarray:
        obj = self.objective
        c, _ = obj.full_gradient(self.support, self._w, self._b)
        sq = obj.sq_norms
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(sq > 0, c * c / (2 * sq / obj.n_samples), 0.0)
        s[self.support] = 0.0
        return s

    def coordinate_drops(self) -> np.ndarray:
        """``glm.glm_coordinate_drops`` for the unselected features: the iteration of
        ``coordinate_minimisers``, a pass over the columns still iterating per step; each
        pass also gives the objective change at the weights it was made at, so only the
        columns whose last step moved are read once more."""
        d = self.objective.n_features
        cand = np.setdiff1d(np.arange(d), self.support)
        drops = np.zeros(d)
        drops[cand] = self._drops(cand, prune=False)
        return drops

    def best_candidate(self, rule: str, excluded: set[int]) -> tuple[int, float]:
        """The argmax of ``coordinate_drops`` for ``obj`` (lowest index on ties), iterating
        only the columns that can still be it: a column whose drop is bounded below the best
        one found so far stops (fewer passes, the same winner and drop)."""
        if rule != "obj":
            return super().best_candidate(rule, excluded)
        d = self.objective.n_features
        cand = np.setdiff1d(np.arange(d), [*self.support, *excluded])
        drops = np.zeros(d)
        drops[cand] = self._drops(cand, prune=True)  # exact where it can be the largest
        j = int(np.argmax(drops))
        return j, float(drops[j])

    def _drops(self, cand: np.ndarray, *, prune: bool) -> np.ndarray:
        """The drops of the columns ``cand`` (exact; with ``prune``, exact only for those
        that may be the largest, a lower bound for the others).

        Pruning: phi_j is convex, so its tangents at the bracket's ends (the last points
        with phi' < 0 and phi' > 0) bound min phi_j from below, and every evaluated point
        bounds it from above; a column whose upper bound on the drop is below the largest
        drop reached (less a slack far above the sums' rounding) cannot be the argmax."""
        obj = self.objective
        n, lam, loss = obj.n_samples, obj.lam, obj.loss
        m = cand.size
        if m == 0:
            return np.zeros(0)
        change, at = np.zeros(m), np.full(m, np.nan)
        # Each column's bracket ends as (weight, phi - phi(0), phi') at the last evaluation
        # with phi' < 0 (lo) and phi' > 0 (hi); the best drop reached by each column.
        ends = {side: [np.full(m, np.nan), np.zeros(m), np.zeros(m)] for side in ("lo", "hi")}
        reached = np.zeros(m)
        pruned = np.zeros(m, dtype=bool)

        def changes(
            work: np.ndarray, aw: np.ndarray, slopes: bool
        ) -> tuple[np.ndarray, np.ndarray]:
            g, h, c = np.zeros(work.size), np.zeros(work.size), np.zeros(work.size)
            cols = None if work.size + len(self.support) >= obj.n_features else cand[work]
            for _, eta, t, x in obj.read(self.support, None if cols is None else cols.tolist(),
                                         self._w, self._b):  # fmt: skip
                if cols is None:
                    x = x[:, cand[work]]
                z = eta[:, None] + aw[None, :] * x
                tt = t[:, None]
                if slopes:
                    g += np.einsum("ij,ij->j", x, loss.derivative(z, tt))
                    h += np.einsum("ij,ij->j", x * x, loss.curvature(z, tt))
                c += (loss.value(z, tt) - loss.value(eta, t)[:, None]).sum(axis=0)
            change[work] = c / n + 0.5 * lam * aw * aw
            at[work] = aw
            reached[work] = np.maximum(reached[work], -change[work])
            g, h = g / n + lam * aw, h / n + lam
            for side, on in (("lo", g < 0), ("hi", g > 0)):
                for arr, v in zip(ends[side], (aw, change[work], g), strict=True):
                    arr[work[on]] = v[on]
            return g, h

        def keep(work: np.ndarray) -> np.ndarray:
            (x_lo, f_lo, g_lo), (x_hi, f_hi, g_hi) = (
                [arr[work] for arr in ends[side]] for side in ("lo", "hi")
            )
            best = float(reached.max())
            closed = np.isfinite(x_lo) & np.isfinite(x_hi)
            with np.errstate(divide="ignore", invalid="ignore"):
                cross = (f_hi - f_lo + g_lo * x_lo - g_hi * x_hi) / (g_lo - g_hi)
                upper = -(f_lo + g_lo * (cross - x_lo))  # the tangents' meeting point
            slack = _PRUNE_SLACK * (best + abs(self.value))
            out = closed & (upper < best - slack)
            pruned[work[out]] = True
            return ~out

        h_cap = loss.smoothness * obj.sq_norms[cand] / n + lam  # >= phi'' everywhere
        a = safeguarded_minimisers(
            lambda work, aw: changes(work, aw, True), h_cap, keep if prune else None
        )
        moved = np.flatnonzero((a != at) & ~pruned)
        if moved.size:
            changes(moved, a[moved], False)
        return np.where(pruned, reached, np.maximum(-change, 0.0))

    def deletion_costs(self) -> np.ndarray:
        """``GLMActiveSet.deletion_costs``: the intercept re-optimised by ``intercept_shifts``,
        each evaluation a pass over the support that gives its value and both derivatives."""
        obj = self.objective
        k = len(self.support)
        if k == 0:
            return np.zeros(0)
        n, w, loss = obj.n_samples, self._w, obj.loss
        last: list[tuple[np.ndarray, ...]] = []  # the last shifts evaluated, and their sums

        def at(s: np.ndarray) -> tuple[np.ndarray, ...]:
            if last and np.array_equal(last[0][0], s):
                return last[0]
            v, dv, cv, ch = np.zeros(k), np.zeros(k), np.zeros(k), np.zeros(k)
            for A, eta, t, _ in obj.read(self.support, [], w, self._b):
                moved = eta[:, None] - A * w[None, :] + s[None, :]  # w_j -> 0, shifted
                tt = t[:, None]
                lv = loss.value(moved, tt)
                v += lv.sum(axis=0)
                dv += loss.derivative(moved, tt).sum(axis=0)
                cv += loss.curvature(moved, tt).sum(axis=0)
                ch += (lv - loss.value(eta, t)[:, None]).sum(axis=0)
            last[:] = [(s.copy(), v / n, dv / n, cv / n, ch / n)]
            return last[0]

        shift = np.zeros(k)
        if obj.fit_intercept:
            shift = intercept_shifts(lambda s: at(s)[1], lambda s: (at(s)[2], at(s)[3]), k)
        return at(shift)[4] - 0.5 * obj.lam * w**2


def _stepped(
    w: np.ndarray, b: float, d: np.ndarray, k: int, fit_b: bool
) -> tuple[np.ndarray, float]:
    return w - d[:k], (b - float(d[k])) if fit_b else b
