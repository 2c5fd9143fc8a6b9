"""Logistic regression over rows read in chunks: tables larger than memory (issue 28).

:class:`StreamedLogistic` is the in-memory :class:`~engine.objectives.logistic.Logistic`
(same lam, intercept, standardisation, forward scores, deletion costs) on a
:class:`~engine.rows.RowSource`: it never holds an n-length vector. Every quantity is a sum
over rows, accumulated chunk by chunk; a chunk's linear predictor is recomputed from the
active columns in each pass (the support is short, so this costs little next to reading).

What a pass is, per operation (``engine.rows.PassCount`` counts them):

* construction: one full-width pass for n, the column sums and squares (the scales, as
  ``Design`` computes them), max |x_ij| (the coordinate bounds) and the two labels. The
  statistics pass of the app has the sums but neither the labels nor the maxima, so the
  objective takes its own first pass rather than a second source of truth;
* a refit: one pass over the support per Newton evaluation; each pass gives the value, the
  gradient and the Hessian at a point, so a trial step's evaluation is also the next step's
  gradient (the iteration of ``glm.damped_newton``, same tolerances);
* FoBa-gdt / OMP's forward step: one full-width pass (the gradient);
* FoBa-obj's forward step: one full-width pass for the gradient and curvature of every
  coordinate (the bounds of ``coordinate_bounds``), then the exact drops of the short list,
  one pass over those columns (and the support) per Newton iteration of
  ``coordinate_newton.logistic_coordinate_moves``;
* deletion costs: one pass over the support per Newton iteration of the intercept's shift
  (``logistic._intercept_shifts``), one without an intercept.

The numbers equal the in-memory objective's up to the rounding of sums taken in another order,
so the algorithms (which talk to the ``Objective``/``ActiveSet`` seam only) make the same
choices and emit the same trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np
from scipy.linalg import LinAlgError
from scipy.special import expit

from ..rows import CountedRows, PassCount, RowSource
from .base import ActiveSet, Objective
from .coordinate_bounds import (
    _FIRST_BATCH,
    _upper_bounds,
    closed_form_bounds,
    self_concordant_decrease,
)
from .coordinate_newton import _MAX_ITER as _COORD_MAX_ITER
from .coordinate_newton import _TOL as _COORD_TOL
from .coordinate_newton import loss_change
from .glm import (
    _ARMIJO,
    _CHORD_MU,
    _CHORD_RATE,
    _GRAD_TOL,
    _MAX_NEWTON,
    _MU_MAX,
    _MU_MIN,
    _cho_factor,
    _cho_solve,
)
from .logistic import _BOUND_SLACK, _SHIFT_MAX_ITER, LogLoss

# Relative slack below the largest lower bound on the drops: far above its rounding.
_FLOOR_SLACK = 1e-9

Chunks = Iterator[tuple[np.ndarray, np.ndarray]]


class StreamedLogistic(Objective):
    """Mean log-loss plus (lam/2)||w||^2 over a row source, as ``Logistic`` defines it.

    Parameters
    ----------
    rows : RowSource
        The table; labels with exactly two distinct values, the larger (in sort order) positive.
    lam, fit_intercept, standardize
        As :class:`~engine.objectives.logistic.Logistic`.
    checkpoint : callable, optional
        Called before every chunk (a recorder's ``checkpoint``: cancellation inside a pass).
    """

    name = "logistic"
    capabilities = frozenset()  # no design matrix in memory: only the greedy seam

    def __init__(
        self,
        rows: RowSource,
        *,
        lam: float = 1e-4,
        fit_intercept: bool = True,
        standardize: bool = False,
        checkpoint: Callable[[], None] | None = None,
    ) -> None:
        if not np.isfinite(lam) or lam < 0:
            raise ValueError(f"lam must be a finite number >= 0, got {lam}")
        self.rows = CountedRows(rows, checkpoint)
        self.lam = float(lam)
        self.fit_intercept = fit_intercept
        self.loss = LogLoss()
        self._first_pass(standardize, fit_intercept)

    @property
    def passes(self) -> PassCount:
        return self.rows.count

    def _first_pass(self, standardize: bool, centered: bool) -> None:
        """n, the scales, max |x_ij|, the classes and the share of positives: one pass."""
        d = self.rows.n_features
        n = 0
        col_sum, raw_sq, absmax = np.zeros(d), np.zeros(d), np.zeros(d)
        counts: dict[object, int] = {}
        for X, y in self.rows.read(None):
            bad = ~np.isfinite(X)
            if bad.any():
                i, j = np.argwhere(bad)[0]
                raise ValueError(f"X contains NaN or infinite values (row {n + i}, column {j})")
            n += X.shape[0]
            col_sum += X.sum(axis=0)
            raw_sq += np.einsum("ij,ij->j", X, X)
            if X.shape[0]:
                absmax = np.maximum(absmax, np.abs(X).max(axis=0))
            values, c = np.unique(np.asarray(y), return_counts=True)
            for v, m in zip(values.tolist(), c.tolist(), strict=True):
                counts[v] = counts.get(v, 0) + m
            if len(counts) > 2:
                break  # the message below; no need to read on
        classes = np.unique(np.asarray(list(counts)))
        if len(classes) != 2:
            raise ValueError(
                f"logistic loss needs exactly two distinct labels in y, found "
                f"{len(classes)}: {classes[:5].tolist()}"
            )
        if n < 2 or d < 1:
            raise ValueError(f"need at least 2 samples and 1 feature, got n = {n}, d = {d}")
        self.classes_ = classes
        self.n_samples, self.n_features = n, d
        self.t_mean = counts[classes[1].item()] / n
        self.scale: np.ndarray | None = None
        self.inv = np.ones(d)
        if standardize:
            from ..scaling import scale_from_sums

            self.scale = scale_from_sums(raw_sq / n, col_sum / n, centered=centered)
            self.inv = 1.0 / self.scale
        self.sq_norms = raw_sq * self.inv**2
        self.absmax = absmax * self.inv

    # ----------------------------------------------------------------- passes
    def read(
        self, support: Sequence[int], extra: Sequence[int] | None, w: np.ndarray, b: float
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """One pass over ``support`` then ``extra`` (every column for None). Per chunk: the
        support's columns, the linear predictor, the 0/1 labels and the block of ``extra``,
        the columns scaled as the design (``Logistic``'s ``standardize``)."""
        k = len(support)
        columns = None if extra is None else [*support, *extra]
        inv = self.inv if columns is None else self.inv[columns]
        for X, y in self.rows.read(columns):
            X = X * inv
            A = X[:, list(support)] if columns is None else X[:, :k]
            eta = A @ w + b if k else np.full(X.shape[0], float(b))
            yield A, eta, self._labels(y), (X if columns is None else X[:, k:])

    def _labels(self, y: np.ndarray) -> np.ndarray:
        return (np.asarray(y) == self.classes_[1]).astype(np.float64)

    # ----------------------------------------------------------------- anywhere
    def value(self, coef: np.ndarray, intercept: float = 0.0) -> float:
        coef = np.asarray(coef, dtype=float)
        on = np.flatnonzero(coef).tolist()
        total = 0.0
        for _, eta, t, _ in self.read(on, [], coef[on], intercept):
            total += float((np.logaddexp(0.0, eta) - t * eta).sum())
        return total / self.n_samples + 0.5 * self.lam * float(coef @ coef)

    def gradient(self, coef: np.ndarray, intercept: float = 0.0) -> tuple[np.ndarray, float]:
        coef = np.asarray(coef, dtype=float)
        on = np.flatnonzero(coef).tolist()
        g, gb = self._full_gradient(on, coef[on], intercept)
        return g + self.lam * coef, gb

    def _full_gradient(self, support, w, b) -> tuple[np.ndarray, float]:
        """(X.T (p - t) / n, sum(p - t) / n) with the scaling: one full-width pass."""
        g = np.zeros(self.n_features)
        gb = 0.0
        for _, eta, t, X in self.read(support, None, w, b):
            u = expit(eta) - t
            g += X.T @ u
            gb += float(u.sum())
        return g / self.n_samples, gb / self.n_samples

    def start(self) -> StreamedLogisticActiveSet:
        return StreamedLogisticActiveSet(self)


class StreamedLogisticActiveSet(ActiveSet):
    """(w_S, b) refitted on a support, Q there; no n-length state (the predictor is recomputed
    from the support's columns in every pass)."""

    objective: StreamedLogistic
    support: list[int]

    def __init__(self, objective: StreamedLogistic) -> None:
        self.objective = objective
        self.support = []
        self._w = np.zeros(0)
        self._b = self._start_intercept()
        self.value = np.nan
        self._version = 0  # bumped on every refit: a stale entering hint is not used
        self._entering: tuple[int, float, int] | None = None
        self._refit()

    def _start_intercept(self) -> float:
        obj = self.objective
        if not obj.fit_intercept:
            return 0.0
        # LogLoss.initial_intercept from the share of positives (the log-odds).
        p = float(np.clip(obj.t_mean, 1e-300, 1 - 1e-16))
        return float(np.log(p) - np.log1p(-p))

    @property
    def coef(self) -> np.ndarray:
        w = np.zeros(self.objective.n_features)
        w[self.support] = self._w
        return w

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
            p = expit(eta)
            total += float((np.logaddexp(0.0, eta) - t * eta).sum())
            u, dd = p - t, p * (1.0 - p)
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

    def copy(self) -> StreamedLogisticActiveSet:
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.support = list(self.support)
        new._w = self._w.copy()
        return new

    # ----------------------------------------------------------------- scores
    def gradient(self) -> np.ndarray:
        obj = self.objective
        g, _ = obj._full_gradient(self.support, self._w, self._b)
        return g + obj.lam * self.coef

    def quadratic_scores(self) -> np.ndarray:
        obj = self.objective
        c, _ = obj._full_gradient(self.support, self._w, self._b)
        sq = obj.sq_norms
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(sq > 0, c * c / (2 * sq / obj.n_samples), 0.0)
        s[self.support] = 0.0
        return s

    def coordinate_drops(self) -> np.ndarray:
        """Exact min over alpha of Q(w + alpha e_j) for every feature: one pass over every
        column per Newton iteration."""
        drops, _ = self._moves(np.arange(self.objective.n_features))
        drops[self.support] = 0.0
        return drops

    def best_candidate(self, rule: str, excluded: set[int]) -> tuple[int, float]:
        """As ``LogisticActiveSet.best_candidate``: for ``obj``, the bounds of
        ``coordinate_bounds.best_coordinate_drop`` from one full pass, then the exact drops of
        the short list (passes reading its columns only)."""
        if rule != "obj":
            return super().best_candidate(rule, excluded)
        obj = self.objective
        mask = obj.sq_norms > 0
        mask[self.support] = False
        if excluded:
            mask[list(excluded)] = False
        cand = np.flatnonzero(mask)
        if cand.size == 0:
            return 0, 0.0
        g_all, h_all = self._gradient_and_curvature()
        g, h, M = g_all[cand], h_all[cand], obj.absmax[cand]
        estimate = g * g / (2.0 * (h + obj.lam))
        order = np.argsort(-estimate, kind="stable")
        # One round of exact solves instead of coordinate_bounds' two (each round is a pass
        # per Newton iteration): the curvature bound S_j/4 + lam gives every drop a lower
        # bound, so no candidate whose upper bound is below the largest lower bound can win;
        # the rest, with the Newton estimate's first batch, hold the argmax of the drops.
        curvature = obj.loss.smoothness * obj.sq_norms[cand] / obj.n_samples + obj.lam
        floor = float(np.max(g * g / (2.0 * curvature))) * (1.0 - _FLOOR_SLACK)
        rest = order[_FIRST_BATCH:]
        rest = rest[closed_form_bounds(np.abs(g[rest]), h[rest], M[rest], obj.lam) >= floor]
        rest = rest[_upper_bounds(np.abs(g[rest]), h[rest], M[rest], obj.lam) >= floor]
        short = np.concatenate([order[:_FIRST_BATCH], rest])
        exact = _solved(short, self._moves(cand[short]))
        i = max(exact, key=lambda pos: (exact[pos][0], -pos))
        drop, move = exact[i]
        j = int(cand[i])
        self._entering = (j, move, self._version)
        return j, float(drop)

    def _gradient_and_curvature(self) -> tuple[np.ndarray, np.ndarray]:
        """X.T (p - t) / n and (X o X).T p(1 - p) / n, scaled: one full-width pass."""
        obj = self.objective
        g, h = np.zeros(obj.n_features), np.zeros(obj.n_features)
        for _, eta, t, X in obj.read(self.support, None, self._w, self._b):
            p = expit(eta)
            g += X.T @ (p - t)
            h += np.einsum("ij,ij,i->j", X, X, p * (1.0 - p))
        return g / obj.n_samples, h / obj.n_samples

    def _moves(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(drops, minimising weights) of the columns ``idx`` (weight 0 now), by the safeguarded
        Newton iteration of ``logistic_coordinate_moves``: one pass per iteration over the
        columns still iterating. Each pass also gives the objective change at the weights it
        was made at, so no pass is needed after the last step (a converged step moves the
        objective by far less than its rounding)."""
        obj = self.objective
        n, lam = obj.n_samples, obj.lam
        m = len(idx)
        a, change = np.zeros(m), np.zeros(m)
        lo, hi = np.full(m, -np.inf), np.full(m, np.inf)
        work = np.arange(m)
        for it in range(_COORD_MAX_ITER + 1):
            aw = a[work]
            g, h, c = np.zeros(work.size), np.zeros(work.size), np.zeros(work.size)
            for _, eta, t, x in obj.read(self.support, idx[work].tolist(), self._w, self._b):
                p_row = expit(eta)[:, None]
                z = aw[None, :] * x
                p = p_row if it == 0 else expit(eta[:, None] + z)
                g += np.einsum("ij,ij->j", x, p - t[:, None])
                h += np.einsum("ij,ij->j", x * x, p * (1.0 - p))
                c += loss_change(p_row, z, t[:, None]).sum(axis=0)
            change[work] = c / n + 0.5 * lam * aw * aw
            if it == _COORD_MAX_ITER:
                break  # the budget's last weights, evaluated: as the in-memory objective
            g = g / n + lam * aw
            h = h / n + lam
            lw = np.where(g < 0, aw, lo[work])
            hw = np.where(g > 0, aw, hi[work])
            lo[work], hi[work] = lw, hw
            new = aw - g / np.maximum(h, 1e-300)
            outside = ((new < lw) | (new > hw)) & np.isfinite(lw) & np.isfinite(hw)
            with np.errstate(invalid="ignore"):  # -inf + inf where g = 0: not selected
                new = np.where(outside, 0.5 * (lw + hw), new)
            a[work] = np.where(g == 0, aw, new)
            going = (np.abs(g) > _COORD_TOL) & (np.abs(new - aw) > _COORD_TOL * (1.0 + np.abs(aw)))
            if not going.all():
                work = work[going]
                if work.size == 0:
                    break
        return np.maximum(-change, 0.0), a

    def deletion_costs(self) -> np.ndarray:
        """``LogisticActiveSet.deletion_costs``: the intercept re-optimised by the Newton
        iteration of ``logistic._intercept_shifts``, one pass over the support per iteration."""
        return self._deletion_costs_at(np.arange(len(self.support)))

    def _deletion_costs_at(
        self, pos: np.ndarray, at_zero: tuple[np.ndarray, ...] | None = None
    ) -> np.ndarray:
        """Exact deletion costs of the selected features at positions ``pos``. Each pass also
        gives the loss change at its shifts, which is the answer once every shift has
        converged (``_intercept_shifts`` returns the shifts it last evaluated). ``at_zero``:
        the sums of q, q(1 - q) and the loss change at shift 0, when a pass already has them
        (``cheapest_deletion``): the iteration's first pass."""
        obj = self.objective
        m = len(pos)
        if m == 0:
            return np.zeros(0)
        n, w = obj.n_samples, self._w[pos]
        s = np.zeros(m)
        done = np.zeros(m, dtype=bool)
        for it in range(_SHIFT_MAX_ITER + 1):
            if it == _SHIFT_MAX_ITER:
                s = np.where(done, s, 0.0)  # not converged: the intercept held
            q_sum, qq_sum, c = np.zeros(m), np.zeros(m), np.zeros(m)
            if it == 0 and at_zero is not None:
                q_sum, qq_sum, c = at_zero
            for A, eta, t, _ in self._shift_pass(it == 0 and at_zero is not None):
                p = expit(eta)[:, None]
                z = -(A[:, pos] * w[None, :])
                if obj.fit_intercept:
                    pe = p * np.exp(np.clip(z, -700.0, 700.0))
                    qe = pe * np.exp(s)[None, :]
                    q = qe / (1.0 - p + qe)
                    q_sum += q.sum(axis=0)
                    qq_sum += (q * (1.0 - q)).sum(axis=0)
                c += loss_change(p, z + s[None, :], t[:, None]).sum(axis=0)
            if not obj.fit_intercept or it == _SHIFT_MAX_ITER:
                break
            g = q_sum / n - obj.t_mean
            h = qq_sum / n
            with np.errstate(divide="ignore", invalid="ignore"):
                left = np.where(h > 0, g * g / (2.0 * h), np.where(g == 0, 0.0, np.inf))
            done = left <= 1e-18
            if done.all():
                break
            step = np.where(done, 0.0, -g / np.where(h > 0, h, 1.0))
            s = s + np.clip(step, -1.0, 1.0)
        return c / n - 0.5 * obj.lam * w**2

    def _shift_pass(self, skip: bool) -> Iterator[tuple[np.ndarray, ...]]:
        """A pass over the support, or nothing when the sums are already known."""
        if skip:
            return iter(())
        return self.objective.read(self.support, [], self._w, self._b)

    def cheapest_deletion(self) -> tuple[int, float]:
        """``LogisticActiveSet.cheapest_deletion``'s bounds from one pass (the cost with the
        intercept held, and what re-optimising it can take off), then the exact costs of the
        features the bounds leave in: a shift that moves far (deleting a strong feature) takes
        many clipped Newton steps, a pass each, and such a feature is rarely the cheapest."""
        obj = self.objective
        k = len(self.support)
        if k == 0 or not obj.fit_intercept:
            return super().cheapest_deletion()
        n, w = obj.n_samples, self._w
        held_sum, zt, q_sum, qq_sum = np.zeros(k), np.zeros(k), np.zeros(k), np.zeros(k)
        safe = np.ones(k, dtype=bool)
        for A, eta, t, _ in obj.read(self.support, [], w, self._b):
            z = -(A * w[None, :])
            p = expit(eta)[:, None]
            pem = p * np.expm1(np.minimum(z, 700.0))
            inner = 1.0 + pem
            safe &= np.all(inner > 1e-6, axis=0)
            with np.errstate(divide="ignore", invalid="ignore"):
                held_sum += np.log1p(pem).sum(axis=0)
                q = (p + pem) / inner
            zt += t @ z
            q_sum += q.sum(axis=0)
            qq_sum += (q * (1.0 - q)).sum(axis=0)
        if not safe.any():
            return super().cheapest_deletion()
        held = held_sum / n - zt / n - 0.5 * obj.lam * w**2
        g, h = q_sum / n - obj.t_mean, qq_sum / n
        lower = np.where(safe, held - self_concordant_decrease(g, h), -np.inf)
        top = float(held[safe].min())
        slack = _BOUND_SLACK * (abs(top) + abs(self.value))
        pos = np.flatnonzero(lower <= top + slack)
        # Near the log-loss's saturation the held sums are not to be trusted: a fresh pass.
        at_zero = (q_sum[pos], qq_sum[pos], held_sum[pos] - zt[pos]) if safe[pos].all() else None
        exact = self._deletion_costs_at(pos, at_zero)
        i = int(np.argmin(exact))  # pos is sorted: ties go to the lowest position
        return int(pos[i]), float(exact[i])


def _stepped(
    w: np.ndarray, b: float, d: np.ndarray, k: int, fit_b: bool
) -> tuple[np.ndarray, float]:
    return w - d[:k], (b - float(d[k])) if fit_b else b


def _solved(
    pos: np.ndarray, moves: tuple[np.ndarray, np.ndarray]
) -> dict[int, tuple[float, float]]:
    """position -> (exact drop, minimising weight)."""
    drops, steps = moves
    return {int(i): (float(d), float(a)) for i, d, a in zip(pos, drops, steps, strict=True)}
