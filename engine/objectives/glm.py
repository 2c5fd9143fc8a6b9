"""Generic objective for smooth convex losses of a linear prediction.

    Q(w, b) = (1/n) sum_i L(x_i.w + b, y_i) + (lam/2) ||w||^2,

with an unpenalised intercept b (Shalev-Shwartz, Srebro & Zhang 2010, Equation (1.1) with the
empirical distribution, plus the l2 term of their Section 3). A :class:`SmoothLoss` supplies
L, L' and L'' as vectorised functions of the prediction z; this module does the rest of the
:class:`~engine.objectives.base.Objective` / :class:`~engine.objectives.base.ActiveSet`
interface, so a new loss (the smoothed hinge and absolute losses of ``smoothed.py``) is only
its three formulas.

Refits are warm-started damped Newton on (w_S, b) in Levenberg-Marquardt form: the step solves
(H + mu I) d = g. Losses such as the smoothed hinge have L'' = 0 on whole half-lines, so H can
be singular (every sample in a linear or flat piece, lam = 0); the ridge mu keeps the system
solvable. mu starts tiny (1e-12 x a bound on the curvature, so Newton's quadratic convergence
is kept where H is regular), grows tenfold whenever the step fails the Armijo test and shrinks
tenfold after every accepted step. Once mu exceeds the largest curvature (bounded by the trace
bound ``scale``) the step is a gradient step that the Armijo test must accept, so the loop
cannot stall in exact arithmetic; if it still fails, rounding is all that is left and we stop.

FoBa-obj's forward score needs min_a Q(w + a e_j) for every candidate j. The 1-D problems are
convex with a piecewise-constant second derivative (for the smoothed losses), so plain Newton
can jump across pieces and even fail to exist (L'' = 0); we run a safeguarded Newton iteration
on all coordinates at once: Newton inside a bracket kept by the derivative's sign, bisection
when Newton leaves the bracket or the bracket stops shrinking, and step doubling on an open
bracket where the curvature vanishes (as ``coordinate_newton.py`` does for the log-loss).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.linalg import LinAlgError, get_lapack_funcs

from .base import ActiveSet, Objective
from .coordinate_newton import Columns
from .design import Design

_GRAD_TOL = 1e-10  # refit: stop when every partial derivative is below this
_MAX_NEWTON = 200
_MU_MIN = 1e-12  # relative to the curvature bound: the "tiny ridge" of a singular Hessian
_MU_MAX = 1e3  # relative: past it the step is far shorter than 1/L, only rounding can fail
_ARMIJO = 1e-4
# Refit chord steps: after an undamped Newton step (mu <= _CHORD_MU x the curvature bound), the
# next steps reuse its Cholesky factor while each cuts the largest |gradient| by _CHORD_RATE or
# more (else a fresh Hessian is built). Near the optimum of a refit that added or removed one
# feature, the Hessian barely moves. Measured (bench/refit_check.py, 240 logistic FoBa and
# Lasso-refit runs): Hessian builds 19911 -> 12851, the same supports and step counts,
# objectives within 1e-15 relative (every refit still stops on |gradient| <= _GRAD_TOL). A
# looser rate (0.25) halved the Hessians but took so many chord steps that whole runs got
# slower at k = 40-50; at 0.05 foba-obj runs took 0.87-0.97x the time of Newton-only refits.
_CHORD_MU = 1e-9
_CHORD_RATE = 0.05

_COORD_TOL = 1e-12

_SHIFT_TOL = 1e-13  # intercept re-optimisation in deletion costs: |dQ/db| below this
_SHIFT_MAX_ITER = 50
_COORD_MAX_ITER = 100


class SmoothLoss(ABC):
    """A convex loss L(z, y) of the prediction z, with its first two derivatives in z.

    Every method takes arrays z and y of broadcastable shapes and works elementwise. L'' may be
    piecewise constant (and zero on pieces); it need only be a valid second derivative away from
    finitely many kinks.

    Attributes
    ----------
    name : str
    smoothness : float
        sup_z L''(z, y): the loss is ``smoothness``-smooth in the sense of Definition 1.2 of
        Shalev-Shwartz, Srebro & Zhang (2010). Used for curvature bounds (refit damping, the
        Frank-Wolfe step size).
    """

    name: str = ""
    smoothness: float = 1.0

    @abstractmethod
    def value(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """L(z, y), elementwise."""

    @abstractmethod
    def derivative(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """dL/dz, elementwise."""

    @abstractmethod
    def curvature(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """d^2L/dz^2, elementwise (>= 0)."""

    def initial_intercept(self, y: np.ndarray) -> float:
        """A starting point for the intercept-only fit (any value works; a good one saves
        Newton iterations)."""
        return 0.0


class GLMObjective(Objective):
    """Mean loss of the linear prediction plus (lam/2)||w||^2, intercept unpenalised.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n_samples, n_features)
    y : ndarray, shape (n_samples,)
        Targets as the loss reads them (e.g. labels already mapped to -1/+1).
    loss : SmoothLoss
    lam : float, default 0.0
        Ridge weight.
    fit_intercept : bool, default True
    standardize : bool, default False
        Columns divided by their scales inside the products (``Design``); only for losses
        whose forward scores read the scales too (``Logistic``, ``folds_scaling``).
    """

    capabilities = frozenset({"linear"})

    def __init__(
        self,
        X,
        y,
        loss: SmoothLoss,
        *,
        lam: float = 0.0,
        fit_intercept: bool = True,
        standardize: bool = False,
    ) -> None:
        if not np.isfinite(lam) or lam < 0:
            raise ValueError(f"lam must be a finite number >= 0, got {lam}")
        # The scale as engine.select's scaled copy had it: the standard deviation with an
        # intercept (which absorbs the centring), else the root mean square.
        self.design = Design(X, center=False, standardize=standardize, scale_centered=fit_intercept)
        self.n_samples, self.n_features = self.design.n_samples, self.design.n_features
        y = np.asarray(y, dtype=np.float64).ravel()
        if y.shape[0] != self.n_samples:
            raise ValueError(f"y has {y.shape[0]} entries but X has {self.n_samples} rows")
        self.y = y
        self.loss = loss
        self.lam = float(lam)
        self.fit_intercept = fit_intercept
        self.columns = Columns(self.design)

    # ----------------------------------------------------------------- anywhere
    def _eta(self, coef: np.ndarray, intercept: float) -> np.ndarray:
        return self.design.dense_matvec(np.asarray(coef, dtype=float)) + intercept

    def value(self, coef, intercept: float = 0.0) -> float:
        coef = np.asarray(coef, dtype=float)
        eta = self._eta(coef, intercept)
        return mean_loss(self.loss, eta, self.y) + 0.5 * self.lam * float(coef @ coef)

    def gradient(self, coef, intercept: float = 0.0) -> tuple[np.ndarray, float]:
        coef = np.asarray(coef, dtype=float)
        u = self.loss.derivative(self._eta(coef, intercept), self.y) / self.n_samples
        return self.design.rmatvec(u) + self.lam * coef, float(u.sum())

    def l1_smoothness(self) -> float:
        """A constant beta_1 with Q(w + u) <= Q(w) + <grad, u> + (beta_1/2) ||u||_1^2.

        For any PSD H, u'Hu <= max_j H_jj ||u||_1^2 (|H_ij| <= sqrt(H_ii H_jj)), and
        H_jj <= smoothness(L) * mean_i x_ij^2 + lam everywhere. With the intercept minimised
        out, the Hessian in w only decreases (a Schur complement), so the bound stays valid.
        On data in [-1, 1]^d this is at most the paper's beta (Algorithm 2).
        """
        sq = self.design.sq_norms
        top = float(sq.max()) if sq.size else 0.0
        return self.loss.smoothness * top / self.n_samples + self.lam

    def start(self) -> GLMActiveSet:
        return GLMActiveSet(self)


def mean_loss(loss: SmoothLoss, eta: np.ndarray, y: np.ndarray) -> float:
    # sum / n is what ndarray.mean computes (the same pairwise sum, then one division), without
    # its Python-level wrapper: a refit calls this several times (issue 22).
    return float(loss.value(eta, y).sum() / eta.shape[0])


class GLMActiveSet(ActiveSet):
    """The model refitted on a support: (w_S, b), the prediction eta = X_S w_S + b, Q there."""

    objective: GLMObjective
    support: list[int]

    def __init__(self, objective: GLMObjective) -> None:
        self.objective = objective
        self.design = objective.design
        n = objective.n_samples
        self.support = []
        self._cols = np.empty((0, n))  # row p = column of support[p]; replaced, never mutated
        self._w = np.zeros(0)
        self._b = objective.loss.initial_intercept(objective.y) if objective.fit_intercept else 0.0
        self.eta = np.full(n, self._b)
        # (feature, its best one-coordinate weight, the eta it was found at): where the refit
        # that adds that feature next starts, closer to the optimum than w_j = 0.
        self._entering: tuple[int, float, np.ndarray] | None = None
        self.value = self._objective_at(self.eta, self._w)
        if objective.fit_intercept:
            self._refit()

    @property
    def intercept(self) -> float:
        return self._b

    def _objective_at(self, eta: np.ndarray, w: np.ndarray) -> float:
        obj = self.objective
        return mean_loss(obj.loss, eta, obj.y) + 0.5 * obj.lam * float(w @ w)

    # ----------------------------------------------------------------- refit
    def _refit(self) -> None:
        obj = self.objective
        fit = damped_newton(
            self._cols, obj.y, obj.loss, obj.lam, obj.fit_intercept, self._w, self._b
        )
        self._w, self._b, self.eta, self.value = fit.w, fit.b, fit.eta, fit.value

    def add(self, j: int) -> float:
        if j in self.support:
            raise ValueError(f"feature {j} is already selected")
        old = self.value
        self._cols = np.vstack([self._cols, self.design.column(j)])
        # Warm start: the current optimum with w_j at the scoring's best move along j (one
        # Newton step in five saved on logistic FoBa-obj), else w_j = 0.
        hint = self._entering
        start = hint[1] if hint is not None and hint[0] == j and hint[2] is self.eta else 0.0
        self._w = np.append(self._w, start)
        self.support.append(j)
        self._refit()
        return old - self.value

    def remove(self, j: int) -> float:
        old = self.value
        p = self.support.index(j)
        self._cols = np.delete(self._cols, p, axis=0)
        self._w = np.delete(self._w, p)  # warm start: the other weights as they are
        del self.support[p]
        self._refit()
        return self.value - old

    def copy(self) -> GLMActiveSet:
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.support = list(self.support)
        new._w, new.eta = self._w.copy(), self.eta.copy()
        return new  # _cols is replaced on every change, never modified in place

    # ----------------------------------------------------------------- scores
    def _pred_gradient(self) -> np.ndarray:
        """dQ/d(eta_i) = L'(eta_i, y_i) / n."""
        obj = self.objective
        return obj.loss.derivative(self.eta, obj.y) / obj.n_samples

    def gradient(self) -> np.ndarray:
        return self.design.rmatvec(self._pred_gradient()) + self.objective.lam * self.coef

    def quadratic_scores(self) -> np.ndarray:
        # Shalev-Shwartz et al. Sec. 2.3: min_a ||a x_j - g||^2 with g = dQ/d(predictions),
        # scaled as for the other objectives (the exact drop for a quadratic loss).
        c = self.design.rmatvec(self._pred_gradient())
        sq = self.design.sq_norms
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(sq > 0, c * c / (2 * sq / self.objective.n_samples), 0.0)
        s[self.support] = 0.0
        return s

    def coordinate_drops(self) -> np.ndarray:
        """Exact min over alpha of Q(w + alpha e_j), every candidate at once."""
        obj = self.objective
        drops = glm_coordinate_drops(obj.columns, self.eta, obj.y, obj.loss, obj.lam)
        drops[self.support] = 0.0
        return drops

    def deletion_costs(self) -> np.ndarray:
        """min_b Q(w - w_j e_j, b) - Q(w, b) for every selected j: the other coefficients held,
        the unpenalised intercept re-optimised (as least squares profiles it out)."""
        obj = self.objective
        if not self.support:
            return np.zeros(0)
        moved = self.eta[None, :] - self._cols * self._w[:, None]  # (k, n): w_j -> 0
        y = obj.y[None, :]
        if obj.fit_intercept:

            def mean_of(fn):
                return lambda shift: fn(moved + shift[:, None], y).mean(axis=1)

            dval, dcurv = mean_of(obj.loss.derivative), mean_of(obj.loss.curvature)
            shift = intercept_shifts(
                mean_of(obj.loss.value), lambda s: (dval(s), dcurv(s)), len(self.support)
            )
            moved = moved + shift[:, None]
        base = obj.loss.value(self.eta, obj.y)[None, :]
        change = (obj.loss.value(moved, y) - base).mean(axis=1)
        return change - 0.5 * obj.lam * self._w**2


def intercept_shifts(value, slope, k: int) -> np.ndarray:
    """argmin_s phi_j(s) for k convex 1-D functions at once (the intercept re-optimised in a
    deletion cost), by Newton from s = 0 with step halving until phi decreases.

    ``value`` maps shifts of shape (k,) to phi; ``slope`` maps them to (phi', phi''). Where
    phi'' vanishes (a loss flat or linear there) the step is a gradient step with unit
    curvature, accepted only when phi decreases, like every step; a shift that cannot be
    improved stays where it is, so phi(s) <= phi(0) always: the cost never exceeds the one with
    the intercept held. Converged when the Newton decrease left is below phi's rounding.
    """
    s = np.zeros(k)
    f = value(s)
    live = np.ones(k, dtype=bool)
    for _ in range(_SHIFT_MAX_ITER):
        g, h = slope(s)
        # Done when the Newton decrease left, g^2 / 2h, is below the rounding of phi itself
        # (phi's change could not even be seen), or phi' is negligible.
        with np.errstate(divide="ignore", invalid="ignore"):
            left = np.where(h > 0, g * g / (2.0 * h), np.inf)
        live &= (np.abs(g) > _SHIFT_TOL) & (left > 1e-17 * (1.0 + np.abs(f)))
        if not live.any():
            break
        step = np.where(live, -g / np.where(h > 1e-300, h, 1.0), 0.0)
        accepted = np.zeros(k, dtype=bool)
        for _ in range(40):
            trial = s + step
            f_trial = value(trial)
            ok = live & ~accepted & (f_trial <= f)
            s = np.where(ok, trial, s)
            f = np.where(ok, f_trial, f)
            accepted |= ok
            pending = live & ~accepted
            if not pending.any():
                break
            step = np.where(pending, 0.5 * step, 0.0)
        live &= accepted
    return s


# --------------------------------------------------------------------------- refit


class RefitResult:
    """Outcome of :func:`damped_newton`."""

    __slots__ = ("b", "eta", "iterations", "value", "w")

    def __init__(self, w: np.ndarray, b: float, eta: np.ndarray, value: float, it: int) -> None:
        self.w, self.b, self.eta, self.value, self.iterations = w, b, eta, value, it


def damped_newton(
    A: np.ndarray,
    y: np.ndarray,
    loss: SmoothLoss,
    lam: float,
    fit_b: bool,
    w: np.ndarray,
    b: float,
) -> RefitResult:
    """Minimise Q over (w_S, b) from (w, b) by Levenberg-Marquardt-damped Newton.

    Parameters
    ----------
    A : ndarray, shape (k, n_samples)
        The support's columns, one per row.
    y : ndarray, shape (n_samples,)
    loss : SmoothLoss
    lam : float
    fit_b : bool
        Optimise the intercept too (else it stays at ``b``).
    w : ndarray, shape (k,)
        Starting weights (warm start).
    b : float
        Starting intercept.
    """
    k, n = A.shape
    w = np.array(w, dtype=float)
    eta = (w @ A if k else np.zeros(n)) + b
    f = mean_loss(loss, eta, y) + 0.5 * lam * float(w @ w)
    if k + fit_b == 0:
        return RefitResult(w, float(b), eta, f, 0)
    # Trace bound on the largest Hessian eigenvalue anywhere: the curvature scale of mu.
    scale = loss.smoothness * (float(np.einsum("ij,ij->", A, A)) / n + fit_b) + lam
    scale = max(scale, 1e-300)
    mu = _MU_MIN * scale
    iterations = 0
    chord = None  # the last undamped Newton step's Cholesky factor, reused while it converges
    g_prev = np.inf
    for _ in range(_MAX_NEWTON):
        g = _gradient(A, y, loss, lam, fit_b, w, eta)
        g_max = float(np.abs(g).max())
        if g_max <= _GRAD_TOL:
            break  # most refits end here: the Hessian is built only for a step
        if chord is not None and g_max <= _CHORD_RATE * g_prev:
            # Chord step: the factor of the last Newton step, no new Hessian. Accepted only on
            # the Armijo test; the stopping rule is still |gradient| <= _GRAD_TOL, so the
            # refit ends at the same optimum as with a fresh Hessian every step.
            trial = _chord_step(A, y, loss, lam, fit_b, (w, b, eta, f), g, chord)
            if trial is not None:
                w, b, eta, f = trial
                g_prev = g_max
                iterations += 1
                continue
        chord = None
        H = _hessian(A, y, loss, lam, fit_b, eta)
        step = _damped_step(A, y, loss, lam, fit_b, (w, b, eta, f), g, H, mu, scale)
        if step is None:
            break  # no decrease left at machine precision
        w_new, b_new, eta_new, f_new, mu_next, factor = step
        done = f - f_new <= 1e-15 * max(1.0, abs(f))
        w, b, eta, f = w_new, b_new, eta_new, f_new
        # Reuse the factor only when the step was (nearly) undamped Newton: near the optimum.
        chord = factor if mu <= _CHORD_MU * scale else None
        mu = mu_next
        g_prev = g_max
        iterations += 1
        if done:
            break
    return RefitResult(w, float(b), eta, f, iterations)


def _gradient(
    A: np.ndarray,
    y: np.ndarray,
    loss: SmoothLoss,
    lam: float,
    fit_b: bool,
    w: np.ndarray,
    eta: np.ndarray,
) -> np.ndarray:
    """Gradient of Q in (w_S, b), shape (q,), q = k + fit_b."""
    k, n = A.shape
    u = loss.derivative(eta, y) / n
    g = np.empty(k + fit_b)
    g[:k] = A @ u + lam * w
    if fit_b:
        g[k] = u.sum()
    return g


def _hessian(
    A: np.ndarray, y: np.ndarray, loss: SmoothLoss, lam: float, fit_b: bool, eta: np.ndarray
) -> np.ndarray:
    """Hessian of Q in (w_S, b), shape (q, q), q = k + fit_b."""
    k, n = A.shape
    # H = S S^T with S = [A; 1] sqrt(D): numpy hands a product of an array with its own
    # transpose to BLAS syrk, half the flops of (A D) A^T, and the intercept's row and column
    # come in the same call (issue 22: 60-75 us instead of 130-150 us at k = 55, n = 600).
    # The curvature is >= 0, so the square root is real.
    root = np.sqrt(loss.curvature(eta, y) / n)
    S = np.empty((k + fit_b, n))
    np.multiply(A, root, out=S[:k])
    if fit_b:
        S[k] = root
    H = S @ S.T
    H[:k, :k].flat[:: k + 1] += lam
    return H


def _damped_step(
    A: np.ndarray,
    y: np.ndarray,
    loss: SmoothLoss,
    lam: float,
    fit_b: bool,
    point: tuple[np.ndarray, float, np.ndarray, float],
    g: np.ndarray,
    H: np.ndarray,
    mu: float,
    scale: float,
) -> tuple[np.ndarray, float, np.ndarray, float, float, Any] | None:
    """Raise mu until the step -(H + mu I)^-1 g from ``point`` = (w, b, eta, Q) passes the
    Armijo test.

    Returns (w, b, eta, value, next mu, the Cholesky factor of H + mu I used), or None when no
    mu up to ``_MU_MAX * scale`` gives a decrease (rounding: in exact arithmetic mu >= scale
    always does).
    """
    k = A.shape[0]
    w, b, eta, f = point
    eye = np.eye(H.shape[0])
    while mu <= _MU_MAX * scale:
        try:
            # H and g are finite (built from a finite eta): no finiteness scan per solve
            factor = _cho_factor(H + mu * eye)
            d = _cho_solve(factor, g)
        except LinAlgError:
            mu *= 10.0
            continue
        dw = d[:k]
        db = float(d[k]) if fit_b else 0.0
        eta_new = eta - ((dw @ A if k else 0.0) + db)
        w_new = w - dw
        f_new = mean_loss(loss, eta_new, y) + 0.5 * lam * float(w_new @ w_new)
        if f_new <= f - _ARMIJO * float(g @ d):
            return w_new, b - db, eta_new, f_new, max(mu / 10.0, _MU_MIN * scale), factor
        mu *= 10.0
    return None


# LAPACK's Cholesky called directly: scipy's cho_factor / cho_solve wrap the same potrf / potrs
# calls (same arguments, so the same numbers) in batching and array-conversion layers that cost
# more than the factorisation of a refit's (k+1) x (k+1) Hessian (issue 22: 0.1 ms a step).
_POTRF, _POTRS = get_lapack_funcs(("potrf", "potrs"), (np.empty((1, 1)),))


def _cho_factor(M: np.ndarray) -> np.ndarray:
    """Upper Cholesky factor of the finite symmetric ``M`` (as scipy's cho_factor: the lower
    triangle is left as is); LinAlgError when M is not positive definite."""
    c, info = _POTRF(M, lower=False, overwrite_a=False, clean=False)
    if info > 0:
        raise LinAlgError(f"{info}-th leading minor of the array is not positive definite")
    if info < 0:
        raise ValueError(f"illegal value in argument {-info} of potrf")
    return c


def _cho_solve(c: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Solve (c^T c) d = g for an upper factor c from :func:`_cho_factor`."""
    d, info = _POTRS(c, g, lower=False, overwrite_b=False)
    if info != 0:
        raise ValueError(f"illegal value in argument {-info} of potrs")
    return d


def _chord_step(
    A: np.ndarray,
    y: np.ndarray,
    loss: SmoothLoss,
    lam: float,
    fit_b: bool,
    point: tuple[np.ndarray, float, np.ndarray, float],
    g: np.ndarray,
    factor: Any,
) -> tuple[np.ndarray, float, np.ndarray, float] | None:
    """The step -F^-1 g with an earlier Newton step's Cholesky factor F, from ``point`` =
    (w, b, eta, Q): (w, b, eta, value) if it passes the Armijo test, else None."""
    k = A.shape[0]
    w, b, eta, f = point
    d = _cho_solve(factor, g)
    dw = d[:k]
    db = float(d[k]) if fit_b else 0.0
    eta_new = eta - ((dw @ A if k else 0.0) + db)
    w_new = w - dw
    f_new = mean_loss(loss, eta_new, y) + 0.5 * lam * float(w_new @ w_new)
    if f_new <= f - _ARMIJO * float(g @ d):
        return w_new, b - db, eta_new, f_new
    return None


# --------------------------------------------------------------------------- coordinate drops


def glm_coordinate_drops(
    cols: Columns, eta: np.ndarray, y: np.ndarray, loss: SmoothLoss, lam: float
) -> np.ndarray:
    """Q(w) - min_a Q(w + a e_j) for every column, assuming w_j = 0.

    Parameters
    ----------
    cols : Columns
        ``Columns(design)`` of the uncentred design.
    eta : ndarray, shape (n_samples,)
        Current prediction X w + b.
    y : ndarray, shape (n_samples,)
    loss : SmoothLoss
    lam : float

    Returns
    -------
    drops : ndarray, shape (n_features,), >= 0
        Meaningless where w_j != 0 (the selected features): discard those.
    """
    n = eta.shape[0]
    a = coordinate_minimisers(cols, eta, y, loss, lam)
    z = cols.at_rows(eta) + cols.at_cols(a) * cols.x
    # With a sparse X only the stored entries move; the others cancel in the difference.
    diff = loss.value(z, cols.at_rows(y)) - loss.value(cols.at_rows(eta), cols.at_rows(y))
    change = cols.colsum(diff) / n + 0.5 * lam * a * a
    return np.maximum(-change, 0.0)


def coordinate_minimisers(
    cols: Columns, eta: np.ndarray, y: np.ndarray, loss: SmoothLoss, lam: float
) -> np.ndarray:
    """argmin_a phi_j(a), phi_j(a) = (1/n) sum_i L(eta_i + a x_ij, y_i) + (lam/2) a^2, for all j.

    Safeguarded Newton on phi_j' for all columns together; converged columns leave the working
    set. Returns shape (n_features,).
    """
    n = eta.shape[0]
    h_cap = loss.smoothness * cols.colsum(cols.x * cols.x) / n + lam  # >= phi'' everywhere
    view, at = cols, np.arange(cols.m)  # the working columns' view, shrunk with the set

    def slopes(work: np.ndarray, aw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        nonlocal view, at
        if work.size != at.size:  # work is a subsequence of the view's columns
            view, at = view.subset(np.searchsorted(at, work)), work
        yr = view.at_rows(y)
        z = view.at_rows(eta) + view.at_cols(aw) * view.x
        g = view.colsum(view.x * loss.derivative(z, yr)) / n + lam * aw
        h = view.colsum(view.x * view.x * loss.curvature(z, yr)) / n + lam
        return g, h

    return safeguarded_minimisers(slopes, h_cap)


def safeguarded_minimisers(
    slopes: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    h_cap: np.ndarray,
    keep: Callable[[np.ndarray], np.ndarray] | None = None,
) -> np.ndarray:
    """The iteration of :func:`coordinate_minimisers`, given how to evaluate it.

    ``slopes(work, a)`` returns (phi_j'(a_j), phi_j''(a_j)) for the columns ``work`` (indices
    into ``h_cap``, increasing, each call's a subset of the last's) at the weights ``a``;
    ``h_cap`` bounds phi_j'' everywhere. The in-memory objective computes them from its
    columns, ``streamed_glm`` in one pass over the rows. ``keep(work)``, if given, is asked
    after every step which of the columns still iterating are worth it (a caller after the
    argmax only: the others stop where they are).
    """
    m = h_cap.shape[0]
    a = np.zeros(m)
    lo = np.full(m, -np.inf)  # phi' < 0 at lo: the minimiser lies above
    hi = np.full(m, np.inf)  # phi' > 0 at hi
    last_move = np.zeros(m)
    width_before = np.full(m, np.inf)  # bracket width two iterations back
    width_prev = np.full(m, np.inf)
    work = np.arange(m)
    for _ in range(_COORD_MAX_ITER):
        aw = a[work]
        g, h = slopes(work, aw)
        lo[work] = np.where(g < 0, aw, lo[work])
        hi[work] = np.where(g > 0, aw, hi[work])
        width = hi[work] - lo[work]
        # The bracket must halve every two iterations, or the next step bisects.
        slow = width > 0.5 * width_before[work]
        new = _next_point(aw, g, h, lo[work], hi[work], h_cap[work], last_move[work], slow)
        stationary = np.abs(g) <= _COORD_TOL
        new = np.where(stationary, aw, new)  # a bisection step would leave the minimiser
        a[work] = new
        last_move[work] = np.abs(new - aw)
        width_before[work], width_prev[work] = width_prev[work], width
        going = ~stationary & (np.abs(new - aw) > _COORD_TOL * (1.0 + np.abs(aw)))
        if keep is not None:
            going &= keep(work)
        if not going.all():
            left = np.flatnonzero(going)
            if left.size == 0:
                break
            work = work[left]
    return a


def _next_point(
    a: np.ndarray,
    g: np.ndarray,
    h: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    h_cap: np.ndarray,
    last_move: np.ndarray,
    slow: np.ndarray,
) -> np.ndarray:
    """One safeguarded Newton step per coordinate (see the module docstring)."""
    newton_ok = h > 1e-12 * h_cap
    with np.errstate(divide="ignore", invalid="ignore"):
        newton = np.where(newton_ok, a - g / np.where(newton_ok, h, 1.0), np.nan)
        # Open bracket and no curvature: move downhill, at least doubling the last move.
        first = np.where(h_cap > 0, np.abs(g) / h_cap, 1.0)
    expand = a - np.sign(g) * np.maximum(first, 2.0 * last_move)
    closed = np.isfinite(lo) & np.isfinite(hi)
    inside = newton_ok & (newton > lo) & (newton < hi)
    bisect = 0.5 * (np.where(closed, lo, a) + np.where(closed, hi, a))  # no inf - inf
    closed_step = np.where(inside & ~slow, newton, bisect)
    open_step = np.where(newton_ok, newton, expand)
    return np.where(closed, closed_step, open_step)
