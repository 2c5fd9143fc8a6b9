"""Least squares: Q(w, b) = (1/(2n)) ||y - X w - b||^2 (Zhang 2008; Liu et al. 2014 Sec. 4).

With ``fit_intercept`` the intercept is profiled out exactly (least squares on centred columns
and target), so every score below is the exact change of Q with b at its optimum.

The active set keeps the Cholesky factor of the support's Gram matrix, so adding a feature
costs O(n k + k^2), a forward step's scores cost one X^T r product, and the exact full-refit
gain of every candidate (forward stepwise) costs one more product per step by rank-one algebra.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular

from ..registry import ObjectiveSpec, Param, register_objective
from .base import ActiveSet, CollinearFeature, Objective
from .design import Design, SupportBlock

# A feature whose component orthogonal to the support keeps less than this fraction of its
# squared norm adds nothing that rounding error would not swamp.
_COLLINEAR_TOL = 1e-10


class LeastSquares(Objective):
    """Least-squares loss with an unpenalised intercept.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n_samples, n_features)
    y : array-like, shape (n_samples,)
    fit_intercept : bool, default True
    standardize : bool, default False
        Fit on the columns divided by their scales (``engine.scaling.column_scale``), folded
        into the products instead of a scaled copy of X (``Design``); ``design.scale`` holds
        them. ``engine.select(standardize=True)`` asks for it.
    """

    name = "least_squares"
    capabilities = frozenset({"linear", "quadratic", "l1-path", "splicing"})
    folds_scaling = True  # accepts standardize=True (engine.select then copies no X)

    def __init__(self, X, y, *, fit_intercept: bool = True, standardize: bool = False) -> None:
        self.design = Design(X, center=fit_intercept, standardize=standardize)
        self.n_samples, self.n_features = self.design.n_samples, self.design.n_features
        y = np.asarray(y, dtype=np.float64).ravel()
        if y.shape[0] != self.n_samples:
            raise ValueError(f"y has {y.shape[0]} entries but X has {self.n_samples} rows")
        self.fit_intercept = fit_intercept
        self.y = y
        self.y_mean = float(y.mean()) if fit_intercept else 0.0
        self.y_centered = y - self.y_mean

    def value(self, coef, intercept: float = 0.0) -> float:
        r = self.y - self.design.dense_matvec(np.asarray(coef, dtype=float)) - intercept
        return float(r @ r) / (2 * self.n_samples)

    def gradient(self, coef, intercept: float = 0.0) -> tuple[np.ndarray, float]:
        r = self.y - self.design.dense_matvec(np.asarray(coef, dtype=float)) - intercept
        n = self.n_samples
        return -self.design.raw_rmatvec(r) / n, -float(r.sum()) / n

    def l1_smoothness(self) -> float:
        """Per-sample curvature 1 on the (centred) columns it fits on: max_j ||x_j||^2 / n."""
        sq = self.design.sq_norms
        return (float(sq.max()) if sq.size else 0.0) / self.n_samples

    def start(self) -> LeastSquaresActiveSet:
        return LeastSquaresActiveSet(self)


class LeastSquaresActiveSet(ActiveSet):
    objective: LeastSquares

    def __init__(self, objective: LeastSquares) -> None:
        self.objective = objective
        self.design = objective.design
        n = objective.n_samples
        cap = max(1, min(objective.n_features, 16))
        self._block = SupportBlock(self.design)
        self._gram = np.zeros((cap, cap))
        self._chol = np.zeros((cap, cap))  # lower Cholesky factor of the support's Gram
        self._xty = np.zeros(cap)
        self._w = np.zeros(0)
        self.residual = objective.y_centered.copy()
        self.value = self._loss()
        # Orthonormal basis of the support's span, built lazily for forward stepwise.
        self._basis_for: list[int] = []
        self._basis = np.empty((0, n))
        self._proj_sq = np.zeros(objective.n_features)

    # ----------------------------------------------------------------- state
    @property
    def support(self) -> list[int]:
        return self._block.features

    @property
    def k(self) -> int:
        return len(self.support)

    @property
    def intercept(self) -> float:
        if not self.objective.fit_intercept:
            return 0.0
        return self.objective.y_mean - float(self.design.mean[self.support] @ self._w)

    def _loss(self) -> float:
        return float(self.residual @ self.residual) / (2 * self.objective.n_samples)

    def _refresh(self) -> float:
        k = self.k
        old = self.value
        if k:
            self._w = cho_solve((self._chol[:k, :k], True), self._xty[:k], check_finite=False)
            self.residual = self.objective.y_centered - self._block.matvec(self._w)
        else:
            self._w = np.zeros(0)
            self.residual = self.objective.y_centered.copy()
        self.value = self._loss()
        return old - self.value

    def _grow(self) -> None:
        cap = self._gram.shape[0]
        if self.k < cap:
            return
        new = min(2 * cap, self.objective.n_features)
        for name in ("_gram", "_chol"):
            m = np.zeros((new, new))
            m[:cap, :cap] = getattr(self, name)
            setattr(self, name, m)
        xty = np.zeros(new)
        xty[:cap] = self._xty
        self._xty = xty

    def add(self, j: int) -> float:
        if j in self.support:
            raise ValueError(f"feature {j} is already selected")
        x = self.design.column(j)
        k = self.k
        g = self._block.rmatvec(x)
        xx = float(x @ x)
        l = solve_triangular(self._chol[:k, :k], g, lower=True, check_finite=False) if k else g
        d2 = xx - float(l @ l)
        if xx == 0.0 or d2 <= _COLLINEAR_TOL * xx:
            raise CollinearFeature(f"feature {j} is (numerically) in the span of the support")
        self._grow()
        self._block.append(j, x)
        self._gram[k, :k] = self._gram[:k, k] = g
        self._gram[k, k] = xx
        self._chol[k, :k] = l
        self._chol[k, k] = np.sqrt(d2)
        self._xty[k] = x @ self.objective.y_centered
        return self._refresh()

    def remove(self, j: int) -> float:
        p = self.support.index(j)
        k = self.k
        keep = np.r_[0:p, p + 1 : k]
        self._block.delete(p)
        self._gram[: k - 1, : k - 1] = self._gram[np.ix_(keep, keep)]
        self._xty[: k - 1] = self._xty[keep]
        k -= 1
        self._chol[:, :] = 0.0
        if k:
            # A principal submatrix of a positive definite matrix stays positive definite;
            # refactorising (k^3/3) is cheaper than it sounds next to one X^T r at these sizes.
            self._chol[:k, :k] = cholesky(self._gram[:k, :k], lower=True, check_finite=False)
        return -self._refresh()

    def copy(self) -> LeastSquaresActiveSet:
        new = LeastSquaresActiveSet.__new__(LeastSquaresActiveSet)
        new.__dict__.update(self.__dict__)
        for name in ("_gram", "_chol", "_xty", "_w", "residual", "_basis", "_proj_sq"):
            setattr(new, name, getattr(self, name).copy())
        new._block = self._block.copy()
        new._basis_for = list(self._basis_for)
        return new

    # ----------------------------------------------------------------- scores
    def gradient(self) -> np.ndarray:
        return -self.design.rmatvec(self.residual) / self.objective.n_samples

    def coordinate_drops(self) -> np.ndarray:
        c = self.design.rmatvec(self.residual)
        return self._drops_from(c)

    def _drops_from(self, c: np.ndarray) -> np.ndarray:
        sq = self.design.sq_norms
        with np.errstate(divide="ignore", invalid="ignore"):
            drops = np.where(sq > 0, c * c / (2 * self.objective.n_samples * sq), 0.0)
        drops[self.support] = 0.0
        return drops

    def quadratic_scores(self) -> np.ndarray:
        # For a quadratic loss the quadratic model is exact.
        return self.coordinate_drops()

    def deletion_costs(self) -> np.ndarray:
        k = self.k
        w = self._w
        c = self._block.rmatvec(self.residual)
        sq = np.diag(self._gram)[:k]
        return (2 * w * c + w * w * sq) / (2 * self.objective.n_samples)

    def refit_deletion_costs(self) -> np.ndarray:
        # Removing j from a least-squares fit raises the loss by w_j^2 / (2n [G^-1]_jj).
        k = self.k
        if k == 0:
            return np.zeros(0)
        inv_l = solve_triangular(self._chol[:k, :k], np.eye(k), lower=True, check_finite=False)
        g_inv_diag = np.einsum("ij,ij->j", inv_l, inv_l)
        return self._w**2 / (2 * self.objective.n_samples * g_inv_diag)

    def refit_gains(self) -> np.ndarray:
        """Exact gain of the full refit on support + {j}: (x_j.r)^2 / (2n ||P_perp x_j||^2)."""
        self._update_basis()
        c = self.design.rmatvec(self.residual)
        sq = self.design.sq_norms
        perp = sq - self._proj_sq
        with np.errstate(divide="ignore", invalid="ignore"):
            gains = np.where(
                perp > _COLLINEAR_TOL * sq, c * c / (2 * self.objective.n_samples * perp), 0.0
            )
        gains[self.support] = 0.0
        return gains

    def exchange_values(self) -> np.ndarray:
        """Objective after exchanging ``support[p]`` for ``j``, refitted, for every pair at once.

        With G the support's Gram matrix (its Cholesky factor is kept), H = G^-1, C = X_S^T X
        and M = H C: dropping s raises Q by w_s^2 / (2n H_ss) and moves the residual by
        w_s z_s with z_s = X_S H e_s / H_ss; candidate j then gains
        (x_j.r + w_s M_sj / H_ss)^2 / (2n (||P_perp x_j||^2 + M_sj^2 / H_ss)). Cost: k + 1
        products X^T v and O(k^2 d), against k refits and k batches of refit gains.
        """
        k, d, n = self.k, self.objective.n_features, self.objective.n_samples
        out = np.full((k, d), np.nan)
        if k == 0:
            return out
        chol = self._chol[:k, :k]
        C = np.vstack([self.design.rmatvec(self.design.column(s)) for s in self.support])
        M = cho_solve((chol, True), C, check_finite=False)
        inv_l = solve_triangular(chol, np.eye(k), lower=True, check_finite=False)
        h = np.einsum("ij,ij->j", inv_l, inv_l)  # diag(H)
        a = self.design.rmatvec(self.residual)
        sq = self.design.sq_norms
        perp = np.maximum(sq - np.einsum("ij,ij->j", C, M), 0.0)
        w = self._w[:, None]
        num = a[None, :] + w * M / h[:, None]
        den = perp[None, :] + M * M / h[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            drop = np.where(den > _COLLINEAR_TOL * sq[None, :], num * num / (2 * n * den), 0.0)
        out = self.value + (self._w**2 / (2 * n * h))[:, None] - drop
        out[:, self.support] = np.nan
        return out

    def _update_basis(self) -> None:
        """Extend the orthonormal basis of span(support) and ||Q^T x_j||^2 for every j."""
        if self.support[: len(self._basis_for)] != self._basis_for:
            self._basis_for = []
            self._basis = np.empty((0, self.objective.n_samples))
            self._proj_sq = np.zeros(self.objective.n_features)
        for p in range(len(self._basis_for), self.k):
            q = self.design.column(self.support[p])
            for _ in range(2):  # twice is enough (Kahan-Parlett)
                q -= (self._basis @ q) @ self._basis
            q /= np.linalg.norm(q)
            self._basis = np.vstack([self._basis, q])
            self._basis_for.append(self.support[p])
            self._proj_sq += self.design.rmatvec(q) ** 2


register_objective(
    ObjectiveSpec(
        name="least_squares",
        title="Least squares",
        summary="(1/2n) ||y - Xw - b||^2 with an unpenalised intercept.",
        reference="Zhang 2008; Liu et al. 2014, Section 4",
        factory=LeastSquares,
        params=(Param("fit_intercept", "bool", True, "Fit an unpenalised intercept."),),
        task="regression",
    )
)
