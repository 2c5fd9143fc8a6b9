"""Least squares from sufficient statistics: Q(w, b) = (1/(2n)) ||y - X w - b||^2 without X.

The same loss as :class:`~engine.objectives.least_squares.LeastSquares`, and the same
quantities for every score, computed from the Gram matrix G = Xc'Xc, the vector c = Xc'yc and
s = yc'yc (centred with an intercept, raw without one) of
:class:`~engine.statistics.SufficientStatistics` instead of from the rows:

* the residual's correlations ``Xc'r = c - G[:, S] w`` (gradient, FoBa-obj's drops);
* the loss at the support's optimum ``(s - ||L^-1 c_S||^2) / (2n)`` with L the Cholesky factor
  of G_SS;
* the exact refit gains of forward stepwise with ``||P_S x_j||^2 = ||L^-1 G[S, j]||^2``.

So a selection costs O(d k^2) per step whatever n is. It has no rows: it offers
``"quadratic"`` but not ``"linear"`` (no design matrix for the Lasso's scikit-learn solvers,
Frank-Wolfe, hard thresholding or group OMP) and not ``"l1-path"``.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cholesky, solve_triangular

from ..statistics import SufficientStatistics
from .base import ActiveSet, CollinearFeature, Objective

# As in least_squares: a feature keeping less than this fraction of its squared norm off the
# support's span is collinear with it.
_COLLINEAR_TOL = 1e-10
_CONSTANT_TOL = 1e-20


class GramLeastSquares(Objective):
    """Least squares over the statistics of a table.

    Parameters
    ----------
    stats : SufficientStatistics
    fit_intercept : bool, default True
    scale : ndarray, shape (n_features,), optional
        Column j of the problem is column j of the data divided by ``scale[j]``
        (``engine.select``'s standardisation).
    """

    name = "least_squares"
    capabilities = frozenset({"quadratic"})

    def __init__(
        self,
        stats: SufficientStatistics,
        *,
        fit_intercept: bool = True,
        scale: np.ndarray | None = None,
    ) -> None:
        if stats.n < 1:
            raise ValueError("the statistics hold no rows")
        self.stats = stats
        self.n_samples = int(stats.n)
        self.n_features = stats.n_features
        self.fit_intercept = fit_intercept
        n = self.n_samples
        inv = 1.0 / np.asarray(scale, dtype=np.float64) if scale is not None else None
        mean = stats.mean * inv if inv is not None else stats.mean.copy()
        gram = stats.xx * np.outer(inv, inv) if inv is not None else stats.xx.copy()
        xy = stats.xy * inv if inv is not None else stats.xy.copy()
        # The data's own mean, used by value() and gradient() at arbitrary points.
        self.data_mean = mean
        self.data_y_mean = float(stats.y_mean)
        self._centred_gram, self._centred_xy, self._centred_yy = gram, xy, float(stats.yy)
        raw_sq = np.diag(gram) + n * mean**2
        if fit_intercept:
            self.mean, self.y_mean = mean, float(stats.y_mean)
            self.gram, self.xy, self.yy = gram, xy, float(stats.yy)
            sq = np.diag(gram).copy()
        else:
            self.mean, self.y_mean = np.zeros(self.n_features), 0.0
            self.gram = gram + n * np.outer(mean, mean)
            self.xy = xy + n * mean * stats.y_mean
            self.yy = float(stats.yy + n * stats.y_mean**2)
            sq = np.diag(self.gram).copy()
        # A constant column: its centred square is rounding. The statistics are centred per
        # chunk, so that rounding is ~1e-32 of the raw square, not the 1e-16 of raw sums that
        # least_squares.Design must allow for (it zeroes spreads below 1e-6 of the mean);
        # here only spreads below 1e-10 of the mean count as constant.
        sq = np.maximum(sq, 0.0)
        sq[sq <= _CONSTANT_TOL * np.maximum(raw_sq, 1e-300)] = 0.0
        self.sq_norms = sq

    def _shift(self, coef: np.ndarray, intercept: float) -> float:
        """The residual's mean ybar - xbar'w - b (constant part of y - Xw - b)."""
        return self.data_y_mean - float(self.data_mean @ coef) - intercept

    def value(self, coef, intercept: float = 0.0) -> float:
        w = np.asarray(coef, dtype=float)
        g, c = self._centred_gram, self._centred_xy
        centred = self._centred_yy - 2 * float(c @ w) + float(w @ g @ w)
        delta = self._shift(w, intercept)
        return max(centred, 0.0) / (2 * self.n_samples) + delta * delta / 2

    def gradient(self, coef, intercept: float = 0.0) -> tuple[np.ndarray, float]:
        w = np.asarray(coef, dtype=float)
        n = self.n_samples
        delta = self._shift(w, intercept)
        xr = self._centred_xy - self._centred_gram @ w + n * self.data_mean * delta
        return -xr / n, -delta

    def l1_smoothness(self) -> float:
        sq = self.sq_norms
        return (float(sq.max()) if sq.size else 0.0) / self.n_samples

    def start(self) -> GramActiveSet:
        return GramActiveSet(self)


class GramActiveSet(ActiveSet):
    objective: GramLeastSquares

    def __init__(self, objective: GramLeastSquares) -> None:
        self.objective = objective
        self.support: list[int] = []
        self._chol = np.zeros((0, 0))  # lower Cholesky factor of G_SS
        self._w = np.zeros(0)
        self._corr = objective.xy.copy()  # Xc'r for every feature
        self.value = objective.yy / (2 * objective.n_samples)

    # ----------------------------------------------------------------- state
    @property
    def k(self) -> int:
        return len(self.support)

    @property
    def intercept(self) -> float:
        if not self.objective.fit_intercept:
            return 0.0
        return self.objective.y_mean - float(self.objective.mean[self.support] @ self._w)

    def _refresh(self) -> float:
        obj = self.objective
        old = self.value
        if self.k:
            z = solve_triangular(self._chol, obj.xy[self.support], lower=True, check_finite=False)
            self._w = solve_triangular(self._chol, z, lower=True, trans="T", check_finite=False)
            self._corr = obj.xy - obj.gram[:, self.support] @ self._w
            explained = float(z @ z)
        else:
            self._w = np.zeros(0)
            self._corr = obj.xy.copy()
            explained = 0.0
        self.value = max(obj.yy - explained, 0.0) / (2 * obj.n_samples)
        return old - self.value

    def add(self, j: int) -> float:
        if j in self.support:
            raise ValueError(f"feature {j} is already selected")
        obj = self.objective
        k = self.k
        g = obj.gram[self.support, j]
        xx = float(obj.gram[j, j])
        l = solve_triangular(self._chol, g, lower=True, check_finite=False) if k else g
        d2 = xx - float(l @ l)
        if xx <= 0.0 or obj.sq_norms[j] == 0.0 or d2 <= _COLLINEAR_TOL * xx:
            raise CollinearFeature(f"feature {j} is (numerically) in the span of the support")
        chol = np.zeros((k + 1, k + 1))
        chol[:k, :k] = self._chol
        chol[k, :k] = l
        chol[k, k] = np.sqrt(d2)
        self._chol = chol
        self.support.append(int(j))
        return self._refresh()

    def remove(self, j: int) -> float:
        self.support.remove(j)
        s = self.support
        self._chol = (
            cholesky(self.objective.gram[np.ix_(s, s)], lower=True, check_finite=False)
            if s
            else np.zeros((0, 0))
        )
        return -self._refresh()

    def copy(self) -> GramActiveSet:
        new = GramActiveSet.__new__(GramActiveSet)
        new.objective = self.objective
        new.support = list(self.support)
        new._chol = self._chol.copy()
        new._w = self._w.copy()
        new._corr = self._corr.copy()
        new.value = self.value
        return new

    # ----------------------------------------------------------------- scores
    def gradient(self) -> np.ndarray:
        return -self._corr / self.objective.n_samples

    def coordinate_drops(self) -> np.ndarray:
        c = self._corr
        sq = self.objective.sq_norms
        with np.errstate(divide="ignore", invalid="ignore"):
            drops = np.where(sq > 0, c * c / (2 * self.objective.n_samples * sq), 0.0)
        drops[self.support] = 0.0
        return drops

    def quadratic_scores(self) -> np.ndarray:
        return self.coordinate_drops()

    def deletion_costs(self) -> np.ndarray:
        w = self._w
        c = self._corr[self.support]
        sq = np.diag(self.objective.gram)[self.support]
        return (2 * w * c + w * w * sq) / (2 * self.objective.n_samples)

    def refit_deletion_costs(self) -> np.ndarray:
        k = self.k
        if k == 0:
            return np.zeros(0)
        inv_l = solve_triangular(self._chol, np.eye(k), lower=True, check_finite=False)
        g_inv_diag = np.einsum("ij,ij->j", inv_l, inv_l)
        return self._w**2 / (2 * self.objective.n_samples * g_inv_diag)

    def refit_gains(self) -> np.ndarray:
        """Exact gain of the refit on support + {j}: (x_j.r)^2 / (2n ||P_perp x_j||^2)."""
        obj = self.objective
        sq = obj.sq_norms
        if self.k:
            t = solve_triangular(
                self._chol, obj.gram[self.support, :], lower=True, check_finite=False
            )
            perp = sq - np.einsum("ij,ij->j", t, t)
        else:
            perp = sq
        c = self._corr
        with np.errstate(divide="ignore", invalid="ignore"):
            gains = np.where(perp > _COLLINEAR_TOL * sq, c * c / (2 * obj.n_samples * perp), 0.0)
        gains[self.support] = 0.0
        return gains
