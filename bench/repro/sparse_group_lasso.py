"""Sparse group lasso, the baseline of Xiang, Yang & Ye (2014) Tables 3 and 4 that the engine
does not have: least squares plus ``alpha lam ||w||_1 + (1 - alpha) lam sum_g sqrt(p_g) ||w_g||``,
solved by FISTA with its exact proximal map, along a warm-started grid. Bench code: only the
reproduction uses it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def sgl_prox(v: np.ndarray, groups: np.ndarray, t_l1: float, t_group: np.ndarray) -> np.ndarray:
    """Proximal map of ``t_l1 ||w||_1 + sum_g t_group_g ||w_g||_2`` (exact: soft-threshold
    every entry, then shrink every group's l2 norm; Simon et al. 2013, Friedman et al. 2010).

    ``t_group`` holds every group's threshold, shape (n_groups,).
    """
    u = np.sign(v) * np.maximum(np.abs(v) - t_l1, 0.0)
    norms = np.sqrt(np.bincount(groups, weights=u * u, minlength=t_group.size))
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(norms > t_group, 1.0 - t_group / norms, 0.0)
    return u * scale[groups]


def sgl_lambda_max(Xc: np.ndarray, yc: np.ndarray, groups: np.ndarray, alpha: float) -> float:
    """Smallest lambda at which w = 0 solves the sparse group lasso (0 is optimal iff, for every
    group, ``||S(c_g, alpha lam)||_2 <= (1 - alpha) lam sqrt(p_g)`` with ``c = Xc^T yc / n``);
    the left side decreases and the right increases in lam, so each group's root is bisected."""
    c = np.abs(Xc.T @ yc) / Xc.shape[0]
    sizes = np.bincount(groups)
    best = 0.0
    for g in range(sizes.size):
        cg = c[groups == g]
        lo, hi = 0.0, float(cg.max()) / max(alpha, 1e-12) + 1e-12
        if alpha == 0:
            hi = float(np.linalg.norm(cg)) / math.sqrt(sizes[g]) + 1e-12
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            shrunk = np.linalg.norm(np.maximum(cg - alpha * mid, 0.0))
            lo, hi = (mid, hi) if shrunk > (1 - alpha) * mid * math.sqrt(sizes[g]) else (lo, mid)
        best = max(best, hi)
    return best


def sgl_fista(
    Xc: np.ndarray,
    yc: np.ndarray,
    groups: np.ndarray,
    lam: float,
    alpha: float,
    w0: np.ndarray,
    lipschitz: float,
    *,
    tol: float = 1e-6,
    max_iter: int = 5000,
) -> np.ndarray:
    """FISTA (Beck & Teboulle 2009) with a constant step 1/L on centred data, with the adaptive
    restart of O'Donoghue & Candes (2015) (momentum reset when it points uphill), which keeps
    the iteration monotone in practice. Stops when ``||w_new - w|| <= tol max(1, ||w||)``."""
    n = Xc.shape[0]
    t_l1 = alpha * lam / lipschitz
    t_group = (1 - alpha) * lam * np.sqrt(np.bincount(groups)) / lipschitz
    w, z, t = w0.copy(), w0.copy(), 1.0
    for _ in range(max_iter):
        grad = Xc.T @ (Xc @ z - yc) / n
        w_new = sgl_prox(z - grad / lipschitz, groups, t_l1, t_group)
        step = w_new - w
        if float((z - w_new) @ step) > 0:  # the momentum points uphill: restart
            t = 1.0
        t_new = 0.5 * (1 + math.sqrt(1 + 4 * t * t))
        z = w_new + ((t - 1) / t_new) * step
        w, t = w_new, t_new
        if np.linalg.norm(step) <= tol * max(1.0, float(np.linalg.norm(w))):
            break
    return w


def sgl_path(
    X: np.ndarray, y: np.ndarray, groups: np.ndarray, grid: Sequence[tuple[float, float]]
) -> list[tuple[np.ndarray, float]]:
    """Sparse group lasso fits (coef, intercept) for every (alpha, lam) of ``grid``, warm-started
    along the grid's order (decreasing lam within an alpha). The intercept is unpenalised:
    the problem is solved on centred X and y, and ``b = mean(y) - mean(X) w``."""
    x_mean, y_mean = X.mean(axis=0), float(y.mean())
    Xc, yc = X - x_mean, y - y_mean
    lipschitz = float(np.linalg.norm(Xc, 2)) ** 2 / X.shape[0]
    w = np.zeros(X.shape[1])
    last_alpha = None
    out = []
    for alpha, lam in grid:
        if alpha != last_alpha:
            w, last_alpha = np.zeros(X.shape[1]), alpha
        w = sgl_fista(Xc, yc, groups, lam, alpha, w, lipschitz)
        out.append((w.copy(), y_mean - float(x_mean @ w)))
    return out


SGL_ALPHAS = (0.05, 0.25, 0.5, 0.75, 0.95)
SGL_RATIOS = tuple(np.geomspace(0.5, 0.01, 5).tolist())


def sgl_grid(
    X: np.ndarray, y: np.ndarray, groups: np.ndarray, quick: bool
) -> list[tuple[float, float]]:
    """(alpha, lam) pairs: lam = ratio x lambda_max(alpha) of the training set, so that every
    fold of the cross-validation uses the same absolute penalties."""
    alphas = SGL_ALPHAS[::2] if quick else SGL_ALPHAS
    ratios = SGL_RATIOS[::2] if quick else SGL_RATIOS
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    grid = []
    for alpha in alphas:
        top = sgl_lambda_max(Xc, yc, groups, alpha)
        grid += [(alpha, r * top) for r in ratios]
    return grid
