"""Full-refit gains of every candidate at once, for logistic loss (forward stepwise).

Forward stepwise needs, for every candidate j, min Q over the support plus j. One warm-started
Newton refit per candidate costs a (k+2)-dimensional Hessian per candidate per iteration. All
candidates share the support block of that Hessian, so we solve them together: Newton on each
candidate's own coordinate, eliminated against the support block (a Schur complement), with the
support block frozen at the current optimum (a chord iteration) and every gradient exact. The
iteration therefore converges to each candidate's exact refit; it converges linearly, and fast
because adding one feature barely moves the support's curvature. A candidate that does not
converge in the budget is refitted on its own by the caller, so every gain is exact.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit

from .coordinate_newton import loss_change

_TOL = 1e-10
_MAX_ITER = 60
_CHUNK_ENTRIES = 2_000_000  # n x (candidates per chunk): bounds the working memory


def logistic_refit_gains(
    columns,
    support_cols: np.ndarray,
    w: np.ndarray,
    eta: np.ndarray,
    t: np.ndarray,
    lam: float,
    fit_intercept: bool,
    candidates: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact refit gains for ``candidates``.

    Parameters
    ----------
    columns : callable
        ``columns(idx)`` -> dense (n_samples, len(idx)) block of X.
    support_cols : ndarray, shape (k, n_samples)
        The support's columns, at its optimum ``w`` (with the intercept inside ``eta``).
    eta : ndarray, shape (n_samples,)
        Linear predictor at the current optimum.

    Returns
    -------
    gains : ndarray, shape (len(candidates),)
    converged : ndarray of bool, shape (len(candidates),)
        False where the caller must refit the candidate on its own.
    """
    n = eta.shape[0]
    k = support_cols.shape[0]
    B = np.vstack([support_cols, np.ones(n)]) if fit_intercept else support_cols
    q = B.shape[0]
    reg = np.r_[np.full(k, lam), np.zeros(q - k)]
    p0 = expit(eta)
    H = (B * (p0 * (1 - p0) / n)) @ B.T + np.diag(reg) if q else np.zeros((0, 0))
    H_f = cho_factor(H) if q else None
    gains = np.zeros(len(candidates))
    converged = np.zeros(len(candidates), dtype=bool)
    step = max(1, _CHUNK_ENTRIES // max(n, 1))
    for lo in range(0, len(candidates), step):
        sl = slice(lo, lo + step)
        gains[sl], converged[sl] = _chunk(columns(candidates[sl]), B, w, reg, p0, t, lam, H_f, k)
    return gains, converged


def _chunk(C, B, w, reg, p0, t, lam, H_f, k):
    n, m = C.shape
    q = B.shape[0]
    dtheta = np.zeros((q, m))  # change of (w_S, b) per candidate
    alpha = np.zeros(m)
    t_col, p_col = t[:, None], p0[:, None]
    theta0 = np.r_[w, np.zeros(q - k)][:, None]
    done = np.zeros(m, dtype=bool)
    for _ in range(_MAX_ITER):
        Z = B.T @ dtheta + C * alpha  # change of the linear predictor, (n, m)
        u = np.exp(np.clip(Z, -700.0, 700.0))
        P = p_col * u / (1.0 - p_col + p_col * u)
        R = (P - t_col) / n
        g_theta = B @ R + reg[:, None] * (theta0 + dtheta)
        g_alpha = np.einsum("ij,ij->j", C, R) + lam * alpha
        err = np.maximum(np.abs(g_alpha), np.abs(g_theta).max(axis=0, initial=0.0))
        done = err <= _TOL
        if done.all():
            break
        Dm = P * (1.0 - P) / n
        DC = Dm * C
        h_theta_alpha = B @ DC
        h_alpha = np.einsum("ij,ij->j", C, DC) + lam
        if q:
            Hi_h = cho_solve(H_f, h_theta_alpha)
            Hi_g = cho_solve(H_f, g_theta)
            schur = h_alpha - np.einsum("ij,ij->j", h_theta_alpha, Hi_h)
            d_alpha = (g_alpha - np.einsum("ij,ij->j", h_theta_alpha, Hi_g)) / schur
            d_theta = Hi_g - Hi_h * d_alpha
        else:
            d_alpha, d_theta = g_alpha / h_alpha, np.zeros((0, m))
        keep = ~done
        alpha = np.where(keep, alpha - d_alpha, alpha)
        dtheta = np.where(keep, dtheta - d_theta, dtheta)
    Z = B.T @ dtheta + C * alpha
    wk = theta0[:k]
    reg_change = 0.5 * lam * (((wk + dtheta[:k]) ** 2).sum(axis=0) - float((wk**2).sum()))
    change = loss_change(p_col, Z, t_col).sum(axis=0) / n + reg_change + 0.5 * lam * alpha**2
    ok = done & np.isfinite(change)
    return np.where(ok, np.maximum(-change, 0.0), 0.0), ok
