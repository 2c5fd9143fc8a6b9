"""Damped Newton for objectives whose Hessian is only available as differences of gradients.

The CRF's parameters on a support are few (k + C + C^2), and its gradient at many points costs
one batched forward-backward pass, so the Hessian by forward differences of the exact gradient
is affordable; what is not affordable is recomputing it at every step.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

GTOL = 1e-10  # stop when every partial derivative is below this
FD_STEP = 1e-6  # relative forward-difference step
_MAXITER = 100
_ARMIJO = 1e-4

Evaluate = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def chord_newton(
    evaluate: Evaluate, x: np.ndarray, f: float, g: np.ndarray, H: np.ndarray | None = None
) -> tuple[np.ndarray, int, np.ndarray | None]:
    """Minimise from x by Newton steps that reuse one Hessian for as long as it works.

    ``evaluate(X)`` gives values and gradients at the rows of X in one batched pass. The
    Hessian comes from forward differences of the exact gradient (one batched pass with as
    many rows as parameters, the cost of several single passes), so it is recomputed only
    when a step fails the Armijo test or the gradient shrinks by less than a factor 4 (the
    chord method's linear rate has become slow). A Levenberg-Marquardt ridge mu keeps the
    system positive definite; it grows tenfold on a failed step at a fresh Hessian.

    H, when given, is a Hessian carried from elsewhere (treated as stale).

    Returns the minimiser, the number of accepted steps and the last Hessian used.
    """
    scale = max(1.0, float(np.abs(g).max()))
    mu = 1e-10
    fresh = False  # H was computed at the current x
    steps = 0
    for _ in range(_MAXITER):
        if np.abs(g).max() <= GTOL:
            break
        if H is None:
            H, fresh = fd_hessian(evaluate, x, g), True
        try:
            d = cho_solve(cho_factor(H + mu * np.eye(len(x))), g)
            fz, gz = evaluate((x - d)[None])
            ok = bool(fz[0] <= f - _ARMIJO * float(g @ d))
        except LinAlgError:
            ok = False
        if not ok:
            if not fresh:
                H = None  # a stale Hessian failed: take a fresh one before damping more
                continue
            mu *= 10.0
            if mu > 1e6 * scale:
                break  # no decrease left at machine precision
            continue
        done = f - fz[0] <= 1e-15 * max(1.0, abs(f))
        slow = np.abs(gz[0]).max() > 0.25 * np.abs(g).max()
        x, f, g = x - d, float(fz[0]), gz[0]
        steps += 1
        if fresh:
            mu = max(mu / 10.0, 1e-10)
        fresh = False
        if done:
            break
        if slow:
            H = None
    return x, steps, H


def fd_hessian(evaluate: Evaluate, x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Forward-difference Hessian from the exact gradient at x and at x + h_i e_i (one batched
    call), symmetrised."""
    h = FD_STEP * np.maximum(1.0, np.abs(x))
    _, G = evaluate(x[None, :] + np.diag(h))
    H = (G - g[None, :]) / h[:, None]
    return 0.5 * (H + H.T)
