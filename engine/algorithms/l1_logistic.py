"""l1-regularised logistic regression along a path of alphas, warm-started: the Lasso baseline's
logistic solver.

    F(w, b) = (1/n) sum_i [log(1 + e^{eta_i}) - t_i eta_i] + alpha ||w||_1,   eta = X w + b,

with an unpenalised intercept b (scikit-learn's ``liblinear`` penalises it as a synthetic
feature, its ``saga`` converges slowly and warns). An active-set Newton method, exact up to its
tolerances:

* on the working set W (the nonzero coefficients) with their signs s fixed, F is smooth:
  f(w_W, b) + alpha s.w_W. Newton steps (Levenberg-Marquardt damped, Armijo line search) on
  (w_W, b); a step that would carry a coefficient across zero stops at the crossing, and that
  coefficient leaves W (its sign is free again);
* when W is solved (every partial derivative below ``tol`` x alpha), the optimality conditions
  of the features outside W are checked with one ``X.T @ u`` product: |g_j| <= alpha. The
  feature that violates them most enters W at zero with the sign -sign(g_j); from W's optimum
  its Newton direction has that sign, so the next step moves it into its orthant.

The solution at each alpha warm-starts the next, so along a path each alpha costs a few Newton
steps on a k x k system plus one product with X per feature entering. No warnings: a solve that
runs out of iterations is reported to the caller, which says so in the stop reason.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.special import expit

_ARMIJO = 1e-4


class L1Logistic:
    """Warm-started solver of F along decreasing alphas.

    Parameters
    ----------
    design : Design
        The (uncentred) design of a logistic objective.
    t : ndarray, shape (n_samples,)
        Labels in {0, 1}.
    fit_intercept : bool
    tol : float
        Relative KKT tolerance: |dF/dw_j| <= tol * alpha on W, |g_j| <= alpha (1 + tol) off W,
        |dF/db| <= tol * alpha.
    max_iter : int
        Most Newton steps per alpha.
    """

    def __init__(self, design, t: np.ndarray, *, fit_intercept: bool, tol: float, max_iter: int):
        self.design = design
        self.t = np.asarray(t, dtype=np.float64)
        self.n = self.t.shape[0]
        self.fit_b = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.support: list[int] = []
        self.w = np.zeros(0)
        if fit_intercept:
            p = float(np.clip(self.t.mean(), 1e-300, 1 - 1e-16))
            self.b = float(np.log(p) - np.log1p(-p))
        else:
            self.b = 0.0
        self.eta = np.full(self.n, self.b)
        self._cols = np.empty((0, self.n))
        self.unconverged = 0  # alphas whose solve ran out of iterations

    # ----------------------------------------------------------------- state
    def coef(self) -> np.ndarray:
        out = np.zeros(self.design.n_features)
        out[self.support] = self.w
        return out

    def set_point(self, coef: np.ndarray, intercept: float) -> None:
        """Warm start from an arbitrary point (after a bisection moved away)."""
        nz = np.flatnonzero(coef)
        self.support = nz.tolist()
        self.w = coef[nz].astype(np.float64)
        self._cols = self.design.columns(nz).T.copy() if len(nz) else np.empty((0, self.n))
        self.b = float(intercept)
        self._update_eta()

    def _update_eta(self) -> None:
        self.eta = (self.w @ self._cols if self.support else np.zeros(self.n)) + self.b

    def _smooth_value(self, eta: np.ndarray) -> float:
        return float((np.logaddexp(0.0, eta) - self.t * eta).mean())

    # ----------------------------------------------------------------- solve
    def solve(self, alpha: float) -> bool:
        """Minimise F at ``alpha`` from the current point; False if the budget ran out."""
        tol = self.tol
        for _ in range(self.max_iter):
            p = expit(self.eta)
            u = (p - self.t) / self.n
            if self._newton_step(alpha, p, u):
                continue  # W not solved yet
            g = self.design.rmatvec(u)
            g[self.support] = 0.0
            j = int(np.argmax(np.abs(g)))
            if abs(g[j]) <= alpha * (1.0 + tol):
                return True
            self._enter(j)
        self.unconverged += 1
        return False

    def _enter(self, j: int) -> None:
        self.support.append(j)
        self.w = np.append(self.w, 0.0)
        self._cols = np.vstack([self._cols, self.design.column(j)])

    def _leave(self, positions: np.ndarray) -> None:
        keep = np.ones(len(self.support), dtype=bool)
        keep[positions] = False
        self.support = [j for j, k in zip(self.support, keep, strict=True) if k]
        self.w = self.w[keep]
        self._cols = self._cols[keep]

    def _newton_step(self, alpha: float, p: np.ndarray, u: np.ndarray) -> bool:
        """One Newton step on W; False when W is already solved (nothing moved)."""
        A, w = self._cols, self.w
        k = len(w)
        s = np.sign(w)
        zero = s == 0.0  # entered at zero: its sign is that of the direction it must take
        if zero.any():
            gz = A[zero] @ u
            s[zero] = -np.sign(gz)
        q = k + self.fit_b
        g = np.empty(q)
        g[:k] = A @ u + alpha * s
        if self.fit_b:
            g[k] = u.sum()
        if q == 0 or np.max(np.abs(g)) <= self.tol * alpha:
            return False
        dd = p * (1.0 - p) / self.n
        H = np.empty((q, q))
        Ad = A * dd
        H[:k, :k] = Ad @ A.T
        if self.fit_b:
            H[:k, k] = H[k, :k] = Ad.sum(axis=1)
            H[k, k] = dd.sum()
        scale = float(np.trace(H)) + 1e-300
        mu = 1e-12 * scale
        f0 = self._smooth_value(self.eta) + alpha * float(np.abs(w).sum())
        eye = np.eye(q)
        while mu <= 1e3 * scale:
            try:
                d = -cho_solve(cho_factor(H + mu * eye), g)
            except LinAlgError:
                mu *= 10.0
                continue
            dw = d[:k]
            # A coefficient at zero must move into its orthant; one that does not is dropped.
            wrong = zero & (dw * s <= 0.0)
            if wrong.any():
                self._leave(np.flatnonzero(wrong))
                return True
            # Stop at the first zero crossing.
            with np.errstate(divide="ignore", invalid="ignore"):
                cross = np.where((~zero) & (w * dw < 0.0), -w / dw, np.inf)
            t_max = min(1.0, float(cross.min(initial=np.inf)))
            step = t_max
            while step > 1e-12:
                w_new = w + step * dw
                b_new = self.b + (step * d[k] if self.fit_b else 0.0)
                if b_new == self.b and np.array_equal(w_new, w):
                    # The step is below the rounding of the point: it would be accepted (the
                    # objective cannot change) and repeated until max_iter. W is as solved as
                    # doubles can tell (seen: |dF/dw| stuck at 7e-9 alpha on one CPU).
                    return False
                eta_new = w_new @ A + b_new if k else np.full(self.n, b_new)
                # Inside the orthant F is the smooth model with the signs s.
                f_new = self._smooth_value(eta_new) + alpha * float(s @ w_new)
                if f_new <= f0 + _ARMIJO * step * float(g @ d):
                    crossed = step == t_max < 1.0
                    self.w, self.b = w_new, b_new
                    self.eta = eta_new
                    if crossed:
                        at = np.flatnonzero(cross <= t_max * (1 + 1e-12))
                        self.w[at] = 0.0
                        self._leave(at)
                        self._update_eta()
                    return True
                step *= 0.5
            mu *= 10.0
        return False  # no decrease left at machine precision: take W as solved
