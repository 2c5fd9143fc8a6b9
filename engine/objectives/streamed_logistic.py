"""Logistic regression over rows read in chunks: tables larger than memory (issue 28).

:class:`StreamedLogistic` is the in-memory :class:`~engine.objectives.logistic.Logistic`
(same lam, intercept, standardisation, forward scores, deletion costs) on a
:class:`~engine.rows.RowSource`: the log-loss case of
:class:`~engine.objectives.streamed_glm.StreamedGLM`, whose pass reader, first pass, refit
(one pass per Newton evaluation) and gradient passes it uses as they are. What it adds are the
log-loss's bounds, which leave few exact solves (each a pass per Newton iteration):

* FoBa-obj's forward step: one full-width pass for the gradient and curvature of every
  coordinate (the bounds of ``coordinate_bounds``), then the exact drops of the short list,
  one pass over those columns (and the support) per Newton iteration of
  ``coordinate_newton.logistic_coordinate_moves``;
* deletion costs: one pass over the support per Newton iteration of the intercept's shift
  (``logistic._intercept_shifts``), one without an intercept; the cheapest one from one pass
  of bounds and the exact costs of the features they leave in.

The numbers equal the in-memory objective's up to the rounding of sums taken in another order,
so the algorithms (which talk to the ``Objective``/``ActiveSet`` seam only) make the same
choices and emit the same trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from scipy.special import expit

from ..rows import RowSource
from .coordinate_bounds import _FIRST_BATCH, _solved, _upper_bounds, closed_form_bounds
from .coordinate_newton import _MAX_ITER as _COORD_MAX_ITER
from .coordinate_newton import BOUND_SLACK, bracketed_newton_step, loss_change
from .logistic import _SHIFT_MAX_ITER, LogLoss, deletion_screen, deletion_screen_sums
from .streamed_glm import StreamedGLM, StreamedGLMActiveSet


class StreamedLogistic(StreamedGLM):
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
    two_labels = True
    loss_title = "logistic loss"

    def __init__(
        self,
        rows: RowSource,
        *,
        lam: float = 1e-4,
        fit_intercept: bool = True,
        standardize: bool = False,
        checkpoint: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(
            rows,
            LogLoss(),
            lam=lam,
            fit_intercept=fit_intercept,
            standardize=standardize,
            checkpoint=checkpoint,
        )

    def _targets(self, y: np.ndarray) -> np.ndarray:
        return (np.asarray(y) == self.classes_[1]).astype(np.float64)

    def initial_intercept(self) -> float:
        # LogLoss.initial_intercept from the share of positives (the log-odds).
        p = float(np.clip(self.t_mean, 1e-300, 1 - 1e-16))
        return float(np.log(p) - np.log1p(-p))

    def pointwise(
        self, eta: np.ndarray, t: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p = expit(eta)  # once for both derivatives
        return np.logaddexp(0.0, eta) - t * eta, p - t, p * (1.0 - p)

    def start(self) -> StreamedLogisticActiveSet:
        return StreamedLogisticActiveSet(self)


class StreamedLogisticActiveSet(StreamedGLMActiveSet):
    """The generic streamed active set with the log-loss's forward and backward scores: the
    bounds of ``coordinate_bounds`` and ``LogisticActiveSet.cheapest_deletion``, which leave
    few exact solves (each a pass per Newton iteration)."""

    objective: StreamedLogistic

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
        floor = float(np.max(g * g / (2.0 * curvature))) * (1.0 - BOUND_SLACK)
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
            a[work], going = bracketed_newton_step(aw, g, h, lo, hi, work)
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
        intercept held, and what re-optimising it can take off: ``deletion_screen_sums`` per
        chunk, added), then the exact costs of the features the bounds leave in: a shift that
        moves far (deleting a strong feature) takes many clipped Newton steps, a pass each, and
        such a feature is rarely the cheapest."""
        obj = self.objective
        k = len(self.support)
        if k == 0 or not obj.fit_intercept:
            return super().cheapest_deletion()
        n, w = obj.n_samples, self._w
        totals = [np.zeros(k) for _ in range(4)]  # held_sum, zt, q_sum, qq_sum
        safe = np.ones(k, dtype=bool)
        for A, eta, t, _ in obj.read(self.support, [], w, self._b):
            if not len(eta):
                continue  # nothing to add, and no maximum to take
            # The chunk's block transposed to the screen's (k, rows), contiguous: chunk-sized
            z = np.empty((k, len(eta)))
            np.multiply(A.T, (-w)[:, None], out=z)
            *sums, chunk_safe = deletion_screen_sums(z, expit(eta), t)
            for total, part in zip(totals, sums, strict=True):
                total += part
            safe &= chunk_safe
        held_sum, zt, q_sum, qq_sum = totals
        screen = deletion_screen(
            (held_sum, zt, q_sum, qq_sum, safe), n, obj.t_mean, obj.lam, w, self.value
        )
        if screen is None:
            return super().cheapest_deletion()
        pos = screen[0]
        # The held sums are the exact routine's first pass (their logs of products round to
        # ~1e-16 a sample, as loss_change does), except near the log-loss's saturation, where
        # they are not to be trusted: a fresh pass.
        at_zero = (q_sum[pos], qq_sum[pos], held_sum[pos] - zt[pos]) if safe[pos].all() else None
        exact = self._deletion_costs_at(pos, at_zero)
        i = int(np.argmin(exact))  # pos is sorted: ties go to the lowest position
        return int(pos[i]), float(exact[i])
