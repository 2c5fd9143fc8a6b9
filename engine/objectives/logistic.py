"""L2-regularised logistic regression (Liu, Fujimaki & Ye 2014, Appendix D.1).

    Q(w, b) = (1/n) sum_i log(1 + exp(-s_i (x_i.w + b))) + (lambda/2) ||w||^2,

with s_i in {-1, +1} from any two distinct labels and an unpenalised intercept b. Refits are
warm-started damped Newton on (w_S, b). FoBa-obj's forward score, the exact one-coordinate
minimisation, runs a safeguarded Newton iteration on every candidate coordinate at once; with a
sparse X only the stored entries are touched (the zeros of a column do not move with it).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lstsq
from scipy.special import expit

from ..registry import ObjectiveSpec, Param, register_objective
from .base import ActiveSet, Objective
from .coordinate_bounds import ColumnStats, best_coordinate_drop
from .coordinate_newton import Columns, logistic_coordinate_drops
from .design import Design
from .logistic_refit import logistic_refit_gains

_NEWTON_TOL = 1e-10
_NEWTON_MAX_ITER = 100


def _loss(eta: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Per-sample log-loss with labels t in {0, 1}: log(1 + e^eta) - t eta."""
    return np.logaddexp(0.0, eta) - t * eta


def _loss_change(eta: np.ndarray, delta: np.ndarray, t: np.ndarray) -> np.ndarray:
    """loss(eta + delta) - loss(eta), elementwise, without cancellation against the total."""
    return np.logaddexp(0.0, eta + delta) - np.logaddexp(0.0, eta) - t * delta


class Logistic(Objective):
    """Mean log-loss plus (lam/2)||w||^2.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n_samples, n_features)
    y : array-like, shape (n_samples,)
        Exactly two distinct values; the larger (in sort order) is the positive class.
    lam : float, default 1e-4
        Ridge weight (the paper's UCI setting; 0.01 in its synthetic study).
    fit_intercept : bool, default True
    """

    name = "logistic"

    def __init__(self, X, y, *, lam: float = 1e-4, fit_intercept: bool = True) -> None:
        if not np.isfinite(lam) or lam < 0:
            raise ValueError(f"lam must be a finite number >= 0, got {lam}")
        self.design = Design(X, center=False)
        self.n_samples, self.n_features = self.design.n_samples, self.design.n_features
        y = np.asarray(y).ravel()
        if y.shape[0] != self.n_samples:
            raise ValueError(f"y has {y.shape[0]} entries but X has {self.n_samples} rows")
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(
                f"logistic loss needs exactly two distinct labels in y, found "
                f"{len(self.classes_)}: {self.classes_[:5].tolist()}"
            )
        self.t = (y == self.classes_[1]).astype(np.float64)
        self.lam = float(lam)
        self.fit_intercept = fit_intercept
        self.columns = Columns(self.design)
        self.column_stats = ColumnStats(self.columns, self.design)

    def value(self, coef, intercept: float = 0.0) -> float:
        coef = np.asarray(coef, dtype=float)
        eta = np.asarray(self.design.X @ coef).ravel() + intercept
        return float(_loss(eta, self.t).mean()) + 0.5 * self.lam * float(coef @ coef)

    def gradient(self, coef, intercept: float = 0.0) -> tuple[np.ndarray, float]:
        coef = np.asarray(coef, dtype=float)
        eta = np.asarray(self.design.X @ coef).ravel() + intercept
        u = (expit(eta) - self.t) / self.n_samples
        return self.design.rmatvec(u) + self.lam * coef, float(u.sum())

    def start(self) -> LogisticActiveSet:
        return LogisticActiveSet(self)


class LogisticActiveSet(ActiveSet):
    def __init__(self, objective: Logistic) -> None:
        self.objective = objective
        self.design = objective.design
        n = objective.n_samples
        self.support = []
        self._cols = np.empty((0, n))  # row p = column of support[p]
        self._w = np.zeros(0)
        self._b = 0.0
        if objective.fit_intercept:
            p = np.clip(objective.t.mean(), 1e-300, 1 - 1e-16)
            self._b = float(np.log(p) - np.log1p(-p))
        self.eta = np.full(n, self._b)
        self.value = self._objective_at(self.eta, self._w)
        self.newton_iterations = 0

    @property
    def coef(self) -> np.ndarray:
        w = np.zeros(self.objective.n_features)
        w[self.support] = self._w
        return w

    @property
    def intercept(self) -> float:
        return self._b

    def _objective_at(self, eta: np.ndarray, w: np.ndarray) -> float:
        return float(_loss(eta, self.objective.t).mean()) + 0.5 * self.objective.lam * float(w @ w)

    # ----------------------------------------------------------------- refit
    def _refit(self) -> None:
        """Damped Newton on (w_S, b) from the current point."""
        obj = self.objective
        n, lam, t = obj.n_samples, obj.lam, obj.t
        A = self._cols  # (k, n)
        k = A.shape[0]
        fit_b = obj.fit_intercept
        w, b = self._w.copy(), self._b
        eta = w @ A + b if k else np.full(n, b)
        f = self._objective_at(eta, w)
        for _ in range(_NEWTON_MAX_ITER):
            p = expit(eta)
            u = (p - t) / n
            g = np.empty(k + fit_b)
            g[:k] = A @ u + lam * w
            if fit_b:
                g[k] = u.sum()
            if np.max(np.abs(g), initial=0.0) <= _NEWTON_TOL:
                break
            dd = p * (1 - p) / n
            H = np.empty((k + fit_b, k + fit_b))
            Ad = A * dd
            H[:k, :k] = Ad @ A.T
            H[:k, :k].flat[:: k + 1] += lam
            if fit_b:
                H[:k, k] = H[k, :k] = Ad.sum(axis=1)
                H[k, k] = dd.sum()
            step = _solve_psd(H, g)
            dw = step[:k]
            db = step[k] if fit_b else 0.0
            deta = dw @ A + db if k else np.full(n, db)
            slope = -float(g @ step)
            s = 1.0
            for _ in range(40):
                w_new = w - s * dw
                eta_new = eta - s * deta
                f_new = self._objective_at(eta_new, w_new)
                if f_new <= f + 1e-4 * s * slope or f_new <= f:
                    break
                s *= 0.5
            else:
                break  # no decrease possible at machine precision
            done = f - f_new <= 1e-15 * max(1.0, abs(f))
            w, b, eta, f = w_new, b - s * db, eta_new, f_new
            self.newton_iterations += 1
            if done:
                break
        self._w, self._b, self.eta, self.value = w, float(b), eta, f

    def add(self, j: int) -> float:
        if j in self.support:
            raise ValueError(f"feature {j} is already selected")
        old = self.value
        self._cols = np.vstack([self._cols, self.design.column(j)])
        self._w = np.append(self._w, 0.0)
        self.support.append(j)
        self._refit()
        return old - self.value

    def remove(self, j: int) -> float:
        old = self.value
        p = self.support.index(j)
        self._cols = np.delete(self._cols, p, axis=0)
        self._w = np.delete(self._w, p)
        del self.support[p]
        self._refit()
        return self.value - old

    def copy(self) -> LogisticActiveSet:
        new = LogisticActiveSet.__new__(LogisticActiveSet)
        new.__dict__.update(self.__dict__)
        new.support = list(self.support)
        new._w, new.eta = self._w.copy(), self.eta.copy()
        return new  # _cols is never modified in place, sharing it is safe

    # ----------------------------------------------------------------- scores
    def _pred_gradient(self) -> np.ndarray:
        return (expit(self.eta) - self.objective.t) / self.objective.n_samples

    def gradient(self) -> np.ndarray:
        return self.design.rmatvec(self._pred_gradient()) + self.objective.lam * self.coef

    def quadratic_scores(self) -> np.ndarray:
        # Shalev-Shwartz et al. Sec. 2.3: min_a ||a x_j - g||^2 with g = dQ/d(predictions).
        c = self.design.rmatvec(self._pred_gradient())
        sq = self.design.sq_norms
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(sq > 0, c * c / (2 * sq / self.objective.n_samples), 0.0)
        s[self.support] = 0.0
        return s

    def coordinate_drops(self) -> np.ndarray:
        """Exact min over alpha of Q(w + alpha e_j), all candidates at once."""
        obj = self.objective
        drops = logistic_coordinate_drops(obj.columns, self.eta, obj.t, obj.lam)
        drops[self.support] = 0.0
        return drops

    def best_candidate(self, rule: str, excluded: set[int]) -> tuple[int, float]:
        if rule != "obj":
            return super().best_candidate(rule, excluded)
        obj = self.objective
        mask = self.design.sq_norms > 0
        mask[self.support] = False
        if excluded:
            mask[list(excluded)] = False
        cand = np.flatnonzero(mask)
        if cand.size == 0:
            return 0, 0.0
        j, drop, _ = best_coordinate_drop(obj.column_stats, self.eta, obj.t, obj.lam, cand)
        return j, drop

    def refit_gains(self) -> np.ndarray:
        """Exact full-refit gain of every candidate, solved together (see logistic_refit)."""
        obj = self.objective
        gains = np.zeros(obj.n_features)
        cand = np.flatnonzero(self.design.sq_norms > 0)
        cand = cand[~np.isin(cand, self.support)]
        g, ok = logistic_refit_gains(
            self.design.columns,
            self._cols,
            self._w,
            self.eta,
            obj.t,
            obj.lam,
            obj.fit_intercept,
            cand,
        )
        gains[cand] = g
        for j in cand[~ok]:  # did not converge together: refit on its own
            trial = self.copy()
            trial.add(int(j))
            gains[j] = self.value - trial.value
        return gains

    def deletion_costs(self) -> np.ndarray:
        obj = self.objective
        if not self.support:
            return np.zeros(0)
        delta = -(self._cols * self._w[:, None])  # (k, n): eta change when w_j -> 0
        loss = _loss_change(self.eta[None, :], delta, obj.t[None, :]).mean(axis=1)
        return loss - 0.5 * obj.lam * self._w**2


def _solve_psd(H: np.ndarray, g: np.ndarray) -> np.ndarray:
    try:
        return cho_solve(cho_factor(H), g)
    except LinAlgError:
        # lam = 0 with collinear columns: take the minimum-norm Newton direction.
        return lstsq(H, g)[0]


register_objective(
    ObjectiveSpec(
        name="logistic",
        title="Logistic (L2-regularised)",
        summary="Mean log-loss + (lam/2)||w||^2 with an unpenalised intercept; any two labels.",
        reference="Liu et al. 2014, Appendix D.1; Elenberg et al. 2016",
        factory=Logistic,
        params=(
            Param(
                "lam",
                "float",
                1e-4,
                "Ridge weight lambda (1e-4 is Liu et al.'s UCI setting, 0.01 their synthetic).",
                minimum=0.0,
            ),
            Param("fit_intercept", "bool", True, "Fit an unpenalised intercept."),
        ),
        task="classification",
    )
)
