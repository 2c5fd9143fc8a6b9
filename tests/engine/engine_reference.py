"""Independent reference computations the engine tests compare against.

Nothing here imports the engine: values are written out by hand from the papers' formulas,
least-squares fits use ``numpy.linalg.lstsq`` on explicit design matrices, logistic fits use
scikit-learn, and the reference algorithms are straight transcriptions of the papers' boxes with
a full refit wherever the box says so (slow, obvious code on purpose).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from sklearn.linear_model import LogisticRegression

# --------------------------------------------------------------------------- helpers


def dense(X) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)


def labels01(y) -> np.ndarray:
    """Map two labels to {0, 1}, the larger (in sort order) being 1."""
    y = np.asarray(y).ravel()
    classes = np.unique(y)
    assert len(classes) == 2
    return (y == classes[1]).astype(float)


# --------------------------------------------------------------------------- least squares


def ls_value(X, y, coef, intercept=0.0) -> float:
    """(1/2n) ||y - X w - b||^2, by hand."""
    X = dense(X)
    r = np.asarray(y, dtype=float) - X @ np.asarray(coef, dtype=float) - intercept
    return float(np.sum(r * r) / (2 * X.shape[0]))


def ls_refit(X, y, support: Sequence[int], fit_intercept: bool = True):
    """Least-squares fit on ``support`` with numpy lstsq: (coef (d,), intercept, value)."""
    X = dense(X)
    y = np.asarray(y, dtype=float)
    n, d = X.shape
    S = list(support)
    cols = [np.ones(n)] if fit_intercept else []
    cols += [X[:, j] for j in S]
    coef = np.zeros(d)
    b = 0.0
    if cols:
        A = np.column_stack(cols)
        sol, *_ = np.linalg.lstsq(A, y, rcond=None)
        if fit_intercept:
            b, sol = float(sol[0]), sol[1:]
        coef[S] = sol
    return coef, b, ls_value(X, y, coef, b)


def ls_best_intercept(X, y, coef) -> float:
    """The intercept minimising the least-squares loss at fixed coef."""
    return float(np.mean(np.asarray(y, dtype=float) - dense(X) @ coef))


# --------------------------------------------------------------------------- logistic


def logistic_value(X, y, coef, intercept=0.0, *, lam: float) -> float:
    """(1/n) sum log(1 + exp(-s_i (x_i.w + b))) + (lam/2) ||w||^2, by hand (s_i = 2 t_i - 1)."""
    s = 2.0 * labels01(y) - 1.0
    margin = s * (dense(X) @ np.asarray(coef, dtype=float) + intercept)
    return float(np.mean(np.logaddexp(0.0, -margin)) + 0.5 * lam * np.dot(coef, coef))


def logistic_refit(X, y, support: Sequence[int], *, lam: float, fit_intercept: bool = True):
    """scikit-learn's L2 logistic regression on ``support`` with C = 1/(n lam):
    (coef (d,), intercept, value)."""
    X = dense(X)
    t = labels01(y)
    n, d = X.shape
    S = list(support)
    coef = np.zeros(d)
    if not S:
        b = float(np.log(t.mean()) - np.log1p(-t.mean())) if fit_intercept else 0.0
        return coef, b, logistic_value(X, y, coef, b, lam=lam)
    model = LogisticRegression(
        C=1.0 / (n * lam) if lam > 0 else np.inf,  # C = inf: no penalty
        tol=1e-12,
        max_iter=10_000,
        solver="newton-cholesky",
        fit_intercept=fit_intercept,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X[:, S], t)
    coef[S] = model.coef_.ravel()
    b = float(model.intercept_[0]) if fit_intercept else 0.0
    return coef, b, logistic_value(X, y, coef, b, lam=lam)


# --------------------------------------------------------------------------- generic


def refit_fn(objective: str, X, y, *, lam: float = 1e-4, fit_intercept: bool = True):
    """support -> (coef, intercept, value) for the named objective."""
    if objective == "least_squares":
        return lambda S: ls_refit(X, y, S, fit_intercept)
    return lambda S: logistic_refit(X, y, S, lam=lam, fit_intercept=fit_intercept)


def value_fn(objective: str, X, y, *, lam: float = 1e-4):
    """(coef, intercept) -> value for the named objective."""
    if objective == "least_squares":
        return lambda w, b: ls_value(X, y, w, b)
    return lambda w, b: logistic_value(X, y, w, b, lam=lam)


def best_subset(refit: Callable, d: int, k: int) -> tuple[float, tuple[int, ...]]:
    """Exhaustive search over every support of size k: (optimal value, optimal support)."""
    best = (np.inf, ())
    for S in itertools.combinations(range(d), k):
        v = refit(S)[2]
        if v < best[0]:
            best = (v, S)
    return best


def coordinate_drop(value: Callable, coef, b, j: int, *, profile_intercept: Callable | None = None):
    """Q(w, b) - min_alpha Q(w + alpha e_j, b) by scalar minimisation (scipy's Brent).

    With ``profile_intercept`` (a function coef -> best intercept) the intercept is re-optimised
    for every alpha, i.e. the drop of min over (alpha, b).
    """

    def phi(a: float) -> float:
        w = np.array(coef, dtype=float)
        w[j] += a
        bb = profile_intercept(w) if profile_intercept is not None else b
        return value(w, bb)

    base = value(np.asarray(coef, dtype=float), b)
    # A bracket guess from the curvature at 0 keeps Brent on the right scale.
    res = minimize_scalar(phi, bracket=(-1.0, 1.0), method="brent", tol=1e-12)
    res2 = minimize_scalar(phi, bracket=(-10.0, 10.0), method="brent", tol=1e-12)
    return base - min(res.fun, res2.fun, phi(0.0))


# --------------------------------------------------------------------------- reference paths


def ls_coordinate_drops(X, y, coef, b, candidates, fit_intercept: bool) -> dict[int, float]:
    """Closed form for least squares via a 1- or 2-column lstsq on the residual per candidate:
    the best the objective can drop by moving coordinate j (and the intercept, when fitted)."""
    X = dense(X)
    n = X.shape[0]
    r = np.asarray(y, dtype=float) - X @ coef - b
    base = float(r @ r) / (2 * n)
    out = {}
    for j in candidates:
        A = np.column_stack([X[:, j], np.ones(n)]) if fit_intercept else X[:, [j]]
        sol, *_ = np.linalg.lstsq(A, r, rcond=None)
        rr = r - A @ sol
        out[j] = base - float(rr @ rr) / (2 * n)
    return out


def reference_foba(
    objective: str,
    X,
    y,
    *,
    k: int,
    rule: str = "obj",
    nu: float = 0.5,
    fit_intercept: bool = True,
    lam: float = 1e-4,
    max_steps: int | None = None,
):
    """Zhang (2008) Figure 3 / Liu et al. (2014) Algorithm 1 with the standard backward rule.

    Forward: the candidate with the largest one-coordinate objective drop (``obj``; closed form
    for least squares, scipy Brent for logistic) or largest |gradient| (``gdt``); full refit
    (lstsq / scikit-learn); delta(size) = the decrease. Backward after every forward step: while
    the cheapest deletion (no refit of the other coefficients; the intercept re-optimised)
    costs < nu * delta(size), delete it and refit. The path runs
    for ``max_steps`` (default 5k) add/remove steps, Zhang's Section 4 path.
    Returns the list of (kind, feature, objective) and {size: (best value, support)}.
    """
    X = dense(X)
    y = np.asarray(y)
    n, d = X.shape
    refit = refit_fn(objective, X, y, lam=lam, fit_intercept=fit_intercept)
    value = value_fn(objective, X, y, lam=lam)
    ls = objective == "least_squares"
    max_steps = 5 * k if max_steps is None else max_steps
    F: list[int] = []
    coef, b, val = refit(F)
    q0 = val
    gains: dict[int, float] = {}
    path: list[tuple[str, int, float]] = []
    best: dict[int, tuple[float, frozenset[int]]] = {}
    steps = 0
    while steps < max_steps and len(F) < d:
        cand = [j for j in range(d) if j not in F]
        if rule == "gdt":
            if ls:
                r = y - X @ coef - b
                scores = {j: abs(float(X[:, j] @ r)) / n for j in cand}
            else:
                p = 1 / (1 + np.exp(-(X @ coef + b)))
                scores = {j: abs(float(X[:, j] @ (p - labels01(y)))) / n for j in cand}
        elif ls:
            scores = ls_coordinate_drops(X, y, coef, b, cand, fit_intercept)
        else:
            scores = {j: coordinate_drop(value, coef, b, j) for j in cand}
        j = max(cand, key=lambda c: scores[c])
        if scores[j] <= 1e-13 * q0:
            break
        F.append(j)
        old = val
        coef, b, val = refit(F)
        gains[len(F)] = old - val
        steps += 1
        path.append(("add", j, val))
        _observe(best, F, val)
        while F and steps < max_steps:
            costs = {}
            for i in F:
                w = coef.copy()
                w[i] = 0.0
                if not fit_intercept:
                    bb = b
                elif ls:
                    bb = ls_best_intercept(X, y, w)
                else:  # the intercept re-optimised, as least squares profiles it out
                    bb = best_intercept(value, w, b)
                costs[i] = value(w, bb) - value(coef, b)
            i = min(F, key=lambda c: costs[c])
            if not costs[i] < nu * gains[len(F)]:
                break
            F.remove(i)
            coef, b, val = refit(F)
            steps += 1
            path.append(("remove", i, val))
            _observe(best, F, val)
    return path, best


def best_intercept(value: Callable, coef, b0: float) -> float:
    """argmin_b value(coef, b) by scipy's Brent, bracketed around b0."""
    res = minimize_scalar(
        lambda bb: value(coef, bb), bracket=(b0 - 1.0, b0 + 1.0), method="brent", tol=1e-12
    )
    return float(res.x)


def _observe(best, F, val) -> None:
    size = len(F)
    if size not in best or val < best[size][0]:
        best[size] = (val, frozenset(F))


def reference_forward_ls(X, y, *, k: int, rule: str, fit_intercept: bool = True) -> list[int]:
    """Forward selection order for least squares: ``obj`` (one-coordinate drop, Zhang Figure 1),
    ``gdt`` (largest |gradient|, OMP) or ``refit`` (forward stepwise: best full refit)."""
    X = dense(X)
    y = np.asarray(y, dtype=float)
    d = X.shape[1]
    F: list[int] = []
    coef, b, val = ls_refit(X, y, F, fit_intercept)
    while len(F) < k:
        cand = [j for j in range(d) if j not in F]
        if rule == "obj":
            scores = ls_coordinate_drops(X, y, coef, b, cand, fit_intercept)
        elif rule == "gdt":
            r = y - X @ coef - b
            scores = {j: abs(float(X[:, j] @ r)) for j in cand}
        else:
            scores = {j: val - ls_refit(X, y, [*F, j], fit_intercept)[2] for j in cand}
        j = max(cand, key=lambda c: scores[c])
        F.append(j)
        coef, b, val = ls_refit(X, y, F, fit_intercept)
    return F


def reference_backward_ls(X, y, *, k: int, fit_intercept: bool = True) -> list[int]:
    """Backward elimination (Zhang Section 2): removal order, each time the feature whose
    removal with refit raises the objective least."""
    X = dense(X)
    d = X.shape[1]
    F = list(range(d))
    order = []
    while len(F) > k:
        vals = {j: ls_refit(X, y, [i for i in F if i != j], fit_intercept)[2] for j in F}
        j = min(F, key=lambda c: vals[c])
        F.remove(j)
        order.append(j)
    return order


def logistic_candidate_drops(X, y, coef, b, candidates, *, lam: float) -> dict[int, float]:
    """Q(w, b) - min_a Q(w + a e_j, b) for unselected j (w_j = 0), by scipy's Brent on the
    1-D function a -> mean loss(eta + a x_j) + lam a^2 / 2 (the rest of Q does not move)."""
    X = dense(X)
    t = labels01(y)
    eta = X @ coef + b
    base = float(np.mean(np.logaddexp(0.0, eta) - t * eta))
    out = {}
    for j in candidates:
        x = X[:, j]

        def phi(a, x=x):
            e = eta + a * x
            return float(np.mean(np.logaddexp(0.0, e) - t * e)) + 0.5 * lam * a * a

        # Newton's first step from 0 sets the bracket's scale.
        p = 1 / (1 + np.exp(-eta))
        g = float(x @ (p - t)) / len(t)
        h = float((x * x) @ (p * (1 - p))) / len(t) + lam
        a0 = -g / h if h > 0 else -g
        res = minimize_scalar(
            phi, bracket=(0.0, a0 if a0 != 0 else 1e-3), method="brent", tol=1e-12
        )
        out[j] = base - min(res.fun, base)
    return out
