"""Lasso and Lasso-Pipeline: the l1 regularisation path as a trace of add/remove actions.

Zhang (2008), Section 4, compares FoBa with the Lasso through "a path of actions for adding and
deleting features, along the L_1 solution path" (LARS), and takes from every path "the active
feature set of size k with the smallest least squares error". Elenberg et al. (2016), Section 5,
use two l1 baselines: *Lasso* (l1-regularised model, the regularisation swept to reach each
sparsity level) and *Lasso-Pipeline* (the Lasso's support, refitted by an unregularised model).

The paths come from scikit-learn (imported lazily, so ``import engine`` stays fast):

* least squares, ``path="lars"``: ``lars_path(method="lasso")``, the exact piecewise linear
  path. Its objective is ``(1/2n)||y - Xw||^2 + alpha ||w||_1``, our least-squares loss plus
  ``alpha ||w||_1``, so its alphas are ours unchanged. With an intercept it runs on centred
  columns and target (the intercept is profiled out exactly: ``b = mean(y) - mean(X) . w``);
  for sparse X on the centred Gram matrix (``lars_path_gram``), which never densifies X;
* least squares, ``path="grid"``: ``Lasso`` (coordinate descent, same scaling, sparse X
  centred implicitly) warm-started along a log-spaced grid of alphas;
* logistic: our active-set Newton solver of ``(1/n) sum_i loss_i + alpha ||w||_1`` with an
  unpenalised intercept (``l1_logistic.py``), warm-started along the same kind of grid; in
  scikit-learn's terms ``alpha = 1/(n C)``. (scikit-learn's ``liblinear`` penalises the
  intercept as a synthetic feature; its ``saga`` needed tens of seconds and warned of
  non-convergence along a path that this solver follows in a fraction of a second.) The path
  is the pure l1 path: our objective's ridge ``lam`` enters the reported objective values and
  the Lasso-Pipeline refit, not the path.

Path end: ``path_end="zhang"`` is Zhang's path of ``max_steps`` = 5k steps (support changes),
the answer the best size-k point along it. A LARS path stops early where it cannot come back to
k features in the steps left (one feature enters or leaves per LARS step), which cannot change
the answer. ``path_end="auto"`` (the default) also ends the path before its first point with
more than k + max(5, ceil(k/10)) features (``common.size_cap``; the points past it would only
matter if the path came back to k from there). ``path_end="sparsity"`` stops at the first point
with k features (LARS: the first k-feature knot; grid: the first grid or bisection point with k
features).

Path to trace. Point ``t`` of the path (a LARS knot or a grid point) has coefficients ``w_t``
and support ``S_t = {j : w_tj != 0}`` (entries below ``1e-12 max|w_t|`` count as zero: LARS
leaves rounding residue of ~1e-20 on a coefficient at the knot where it leaves the path).
Going from ``S_{t-1}`` to ``S_t`` emits ``swap`` events (one entering feature paired with one
leaving feature, in index order), then ``add`` events, then ``remove`` events; a point whose
support did not change emits ``iterate``. Every event carries ``info = {"alpha": alpha_t,
"path_point": t}`` and ``objective`` = OUR objective (the objective's ``value``, with the
logistic ridge) at ``w_t`` restricted to the support after the event. After the last event of
a point that is exactly ``Q(w_t, b_t)``; the restriction only matters for the rare points where
several features change at once, whose intermediate supports are not lasso solutions. LARS
changes one feature per knot, and a feature shows up in the first knot where its coefficient
is nonzero, i.e. one knot after the alpha at which it entered the active set.

Choice at k (both algorithms): among the path points with exactly k nonzero coefficients, the
one with the smallest objective, Zhang's "best k features along the path". ``lasso`` ranks the
points by the objective at the lasso's own (shrunk) coefficients, which it returns; for least
squares that is the last (least shrunk) point with k features. ``lasso-refit`` ranks the
distinct supports by the objective of their refit, which it returns. When no point has exactly
k features, the largest size below k the path reached stands in (never more than k features,
as for the greedy paths), and the stop reason says so. On a grid, a step that jumps over k is
bisected in log(alpha) (``refine_steps`` fits) to find a point with exactly k features.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

import numpy as np

from .. import threads
from ..objectives import ActiveSet, CollinearFeature, GLMObjective, Objective
from ..registry import Param, Requirements, Traits, register_algorithm
from ..trace import Recorder
from .common import Solution, size_cap
from .l1_logistic import L1Logistic
from .params import PATH_END

_ZHANG = "Zhang 2008, Section 4 (LARS path of actions, best k features along the path)"
_ELENBERG = "Elenberg et al. 2016, Section 5"

# |w_j| <= _ZERO_TOL * max|w| is a zero: LARS leaves ~1e-20 on a coefficient at the knot where
# it leaves the path, and no real coefficient of a path point is 1e12 times below the largest.
_ZERO_TOL = 1e-12
# lars_path_gram needs the dense d x d Gram matrix of a sparse X; above this many features it
# costs more memory (d^2 doubles: 32 MB at 2000) than a grid of coordinate-descent fits.
_MAX_GRAM_FEATURES = 2000

LASSO_PARAMS = (
    Param(
        "path",
        "str",
        "auto",
        "How the path is computed: lars (exact LARS-lasso path, least squares only), grid "
        "(warm-started solves on a log-spaced grid of alphas) or auto (lars for least squares "
        f"when X is dense or has at most {_MAX_GRAM_FEATURES} features, grid otherwise).",
        choices=("auto", "lars", "grid"),
    ),
    Param(
        "max_steps",
        "int",
        None,
        "Path length: LARS steps, or support changes along the grid (default 5k, Zhang's path "
        "length; without k the whole path).",
        minimum=1,
        nullable=True,
    ),
    Param(
        "n_alphas",
        "int",
        100,
        "Grid path: number of alphas, log-spaced from alpha_max (where the first feature enters) "
        "down to alpha_min_ratio x alpha_max.",
        minimum=2,
        maximum=10_000,
    ),
    Param(
        "alpha_min_ratio",
        "float",
        None,
        "End of the path as a fraction of alpha_max (default: 0, the whole path, for lars; "
        "1e-3 for the grid).",
        minimum=0.0,
        maximum=1.0,
        nullable=True,
    ),
    Param(
        "refine_steps",
        "int",
        10,
        "Grid path with k: bisection steps in log(alpha) to find a point with exactly k "
        "features when the grid jumps over k (0: keep the plain grid).",
        minimum=0,
        maximum=60,
    ),
    Param(
        "tol",
        "float",
        1e-6,
        "Grid path: tolerance of the solver at every alpha (scikit-learn's Lasso; for "
        "logistic, the relative tolerance on our solver's optimality conditions).",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    Param(
        "max_iter",
        "int",
        1000,
        "Grid path: most solver iterations (coordinate-descent sweeps, or Newton steps of the "
        "logistic solver) per alpha.",
        minimum=1,
    ),
    PATH_END,
)


# --------------------------------------------------------------------------- path


@dataclass(frozen=True)
class PathPoint:
    """One point of the l1 path: regularisation level, coefficients (exact zeros off the
    support), intercept and support."""

    alpha: float
    coef: np.ndarray
    intercept: float
    support: frozenset[int]


@dataclass
class LassoPath:
    """The computed path: ``points[0]`` is the empty model at alpha_max."""

    points: list[PathPoint]
    method: str
    reason: str
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LassoConfig:
    """Validated parameters, with ``method`` resolved from ``auto`` and defaults filled in."""

    method: str
    k: int | None
    max_steps: int | None
    n_alphas: int
    alpha_min_ratio: float
    refine_steps: int
    tol: float
    max_iter: int
    stop_at_k: bool = False
    size_cap: int | None = None  # path_end = auto: end before the first point past this size


def make_point(alpha: float, coef: np.ndarray, intercept: float) -> PathPoint:
    """A path point with rounding residue zeroed (see ``_ZERO_TOL``)."""
    coef = np.array(coef, dtype=np.float64).ravel()
    big = np.max(np.abs(coef), initial=0.0)
    coef[np.abs(coef) <= _ZERO_TOL * big] = 0.0
    return PathPoint(float(alpha), coef, float(intercept), frozenset(np.flatnonzero(coef).tolist()))


def lasso_config(objective: Objective, k: int | None, **params: Any) -> LassoConfig:
    """Resolve ``path="auto"`` and the defaults that depend on the method and on k."""
    method = params["path"]
    is_ls = _quadratic(objective)  # check_config refused 'lars' for any other loss
    design = objective.design
    if method == "lars" and design.sparse and objective.n_features > _MAX_GRAM_FEATURES:
        raise ValueError(
            f"parameter 'path' = 'lars' with a sparse X needs the dense d x d Gram matrix; "
            f"d = {objective.n_features} exceeds {_MAX_GRAM_FEATURES}: use path = 'grid'"
        )
    if method == "auto":
        small = not design.sparse or objective.n_features <= _MAX_GRAM_FEATURES
        method = "lars" if is_ls and small else "grid"
    ratio = params["alpha_min_ratio"]
    if ratio is None:
        ratio = 0.0 if method == "lars" else 1e-3
    if method == "grid" and not ratio > 0:
        raise ValueError(
            "parameter 'alpha_min_ratio' must be > 0 for a grid path (the grid is log-spaced)"
        )
    max_steps = params["max_steps"]
    if max_steps is None and k is not None:
        max_steps = 5 * k  # Zhang: a path five times as long as the target sparsity
    return LassoConfig(
        method=method,
        k=k,
        max_steps=max_steps,
        n_alphas=params["n_alphas"],
        alpha_min_ratio=float(ratio),
        refine_steps=params["refine_steps"],
        tol=params["tol"],
        max_iter=params["max_iter"],
        stop_at_k=k is not None and params.get("path_end", "auto") == "sparsity",
        size_cap=size_cap(k, "auto") if params.get("path_end", "auto") == "auto" else None,
    )


def compute_path(objective: Objective, cfg: LassoConfig) -> LassoPath:
    """The l1 path of ``objective``'s loss, by LARS or along a warm-started grid.

    Parameters
    ----------
    objective : Objective
        Least squares or logistic.
    cfg : LassoConfig
        From :func:`settings`.

    Returns
    -------
    LassoPath
        Points in order of decreasing alpha, the first the empty model at alpha_max; why the
        path ended; scikit-learn's warnings, summarised.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if cfg.method == "lars":
            path = _lars_path(objective, cfg)
        else:
            fitter, notes = _make_fitter(objective, cfg)
            path = _grid_path(objective, cfg, fitter)
            path.notes += notes
            if isinstance(fitter, _LogisticFitter):
                path.notes += fitter.notes()
    path.notes += _warning_notes(caught)
    return path


def _warning_notes(caught: Sequence[warnings.WarningMessage]) -> list[str]:
    # scikit-learn's convergence and degeneracy warnings belong in the stop reason, where the
    # user sees them, not on the server's stderr.
    if not caught:
        return []
    first = str(caught[0].message).split("\n")[0]
    return [f"scikit-learn warned {len(caught)} time(s), first: {first}"]


def _alpha_max(objective: Objective) -> float:
    """Smallest alpha at which the l1 solution is empty: max_j |dQ/dw_j| at the null model."""
    state = objective.start()
    return float(np.max(np.abs(state.gradient()), initial=0.0))


def _null_point(objective: Objective, alpha: float) -> PathPoint:
    state = objective.start()
    return make_point(alpha, np.zeros(objective.n_features), state.intercept)


# --------------------------------------------------------------------------- LARS


def _lars_path(objective: Objective, cfg: LassoConfig) -> LassoPath:
    from sklearn.linear_model import lars_path, lars_path_gram

    design, n, d = objective.design, objective.n_samples, objective.n_features
    yc = _centred_target(objective)
    alpha_max = _alpha_max(objective)
    if alpha_max <= 0.0:
        return LassoPath([_null_point(objective, 0.0)], "lars", "no feature correlates with y")
    # lars_path wants an int; the whole lasso path is rarely longer than a few times min(n, d).
    max_iter = cfg.max_steps if cfg.max_steps is not None else max(500, 8 * min(n, d))
    alpha_min = cfg.alpha_min_ratio * alpha_max

    def common(m: int) -> dict:
        return {"method": "lasso", "max_iter": m, "alpha_min": alpha_min}

    if design.sparse:
        gram = design.gram()
        xy = design.rmatvec(yc)

        def run(m: int):
            return lars_path_gram(xy, gram.copy(), n_samples=n, copy_Gram=False, **common(m))
    else:

        def run(m: int):
            # A fresh Fortran-ordered centred copy per call: LARS works on columns (10x slower
            # on a C-ordered array) and swaps them in place, which is safe on our own copy.
            Xc = design.centred_fortran()
            return lars_path(Xc, yc, Gram="auto", copy_X=False, **common(m))

    # LARS's large products X.T @ v dominate it: it runs with the caller's BLAS threads.
    settled = capped = False
    with threads.wide(n * d if not design.sparse else d * d):
        if cfg.stop_at_k:
            assert cfg.k is not None  # lasso_config sets stop_at_k only with a k
            # The first knot with k features: k LARS steps, more if some feature left the
            # path on the way (each retry adds the missing count, as the path is restarted).
            m = min(cfg.k, max_iter)
            while True:
                alphas, _, coefs = run(m)
                size = int(np.count_nonzero(coefs[:, -1]))
                if size >= cfg.k or len(alphas) - 1 < m or m >= max_iter:
                    break
                m = min(m + cfg.k - size, max_iter)
        elif cfg.size_cap is not None:
            alphas, coefs, capped = _lars_until_capped(run, cfg.size_cap, max_iter)
        elif cfg.k is not None and cfg.max_steps is not None:
            alphas, coefs, settled = _lars_until_settled(run, cfg.k, max_iter)
        else:
            alphas, _, coefs = run(max_iter)
    points = [
        make_point(a, coefs[:, t], _ls_intercept(objective, coefs[:, t]))
        for t, a in enumerate(alphas)
    ]
    n_steps = len(alphas) - 1
    if cfg.stop_at_k and cfg.k is not None and len(points[-1].support) >= cfg.k:
        reason = f"path_end = sparsity: the path reached k = {cfg.k} features"
    elif capped:
        reason = (
            f"path_end = auto: the next LARS knot holds more than k + "
            f"{cfg.size_cap - cfg.k} = {cfg.size_cap} features"  # type: ignore[operator]
        )
    elif settled:
        size = len(points[-1].support)
        reason = (
            f"the path ({size} features) cannot return to k = {cfg.k} in the "
            f"{max_iter - n_steps} LARS steps left of max_steps = {max_iter}"
        )
    elif cfg.max_steps is not None and n_steps >= cfg.max_steps:
        reason = f"max_steps = {cfg.max_steps} LARS steps taken"
    elif alpha_min > 0 and alphas[-1] <= alpha_min * (1 + 1e-12):
        reason = f"reached alpha = alpha_min_ratio x alpha_max = {alpha_min:.4g}"
    else:
        reason = f"the lasso path is complete ({n_steps} LARS steps, alpha = {alphas[-1]:.3g})"
    return LassoPath(points, "lars", reason)


def _lars_until_settled(run: Callable[[int], tuple], k: int, max_steps: int):
    """Zhang's LARS path of ``max_steps`` steps, cut where no later knot can have k features.

    Each LARS step adds or drops one feature (scikit-learn drops several at once only at exact
    ties of their zero crossings), so a knot with s > k features is followed by no knot with k
    features within max_steps when s - k exceeds the steps left: those knots cannot change the
    answer at k (nor the largest size below k, which a path above k reaches only through k).
    lars_path cannot be resumed, so it is rerun with just enough more steps to settle the
    question if every one of them added a feature; the first run settles it unless some
    feature left the path.

    Returns (alphas, coefs, settled): settled when the path was cut short by this rule.
    """
    m = min(max_steps, (max_steps + k) // 2 + 1)
    while True:
        alphas, _, coefs = run(m)
        steps = len(alphas) - 1
        if steps < m or m >= max_steps:
            return alphas, coefs, False
        size = len(make_point(0.0, coefs[:, -1], 0.0).support)
        left = max_steps - steps
        if size - k > left:
            return alphas, coefs, True
        m = min(max_steps, steps + (left - (size - k)) // 2 + 1)


def _lars_until_capped(run: Callable[[int], tuple], cap: int, max_steps: int):
    """The LARS path of at most ``max_steps`` steps, ended before its first knot with more than
    ``cap`` features (``path_end="auto"``).

    One feature enters or leaves per step, so ``cap + 1`` steps reach past the cap unless some
    feature left on the way; lars_path cannot be resumed, so it is rerun with the missing
    count added (the first run nearly always settles it).

    Returns (alphas, coefs, capped): capped when a knot past the cap was cut off.
    """
    m = min(cap + 1, max_steps)
    while True:
        alphas, _, coefs = run(m)
        sizes = [len(make_point(0.0, coefs[:, t], 0.0).support) for t in range(len(alphas))]
        over = next((t for t, size in enumerate(sizes) if size > cap), None)
        if over is not None:
            return alphas[:over], coefs[:, :over], True
        if len(alphas) - 1 < m or m >= max_steps:
            return alphas, coefs, False
        m = min(m + cap + 1 - sizes[-1], max_steps)


def _quadratic(objective: Objective) -> bool:
    """Least squares (the quadratic loss LARS follows exactly) rather than a GLM's loss."""
    return "quadratic" in objective.capabilities


def _centred_target(objective: Objective) -> np.ndarray:
    """y as least squares sees it: centred when the intercept is profiled out."""
    y = objective.y
    return y - y.mean() if objective.fit_intercept else y


def _ls_intercept(objective: Objective, coef: np.ndarray) -> float:
    """The least-squares intercept profiled out at ``coef``: mean(y) - mean(X) . coef."""
    if not objective.fit_intercept:
        return 0.0
    return float(objective.y.mean()) - float(objective.design.mean @ coef)


# --------------------------------------------------------------------------- grid


class _PathFitter(Protocol):
    """What the grid path asks of a fitter: :class:`_Fitter` or :class:`_LogisticFitter`."""

    def fit(self, alpha: float) -> PathPoint: ...

    def warm(self, point: PathPoint) -> None: ...


class _Fitter:
    """One warm-started scikit-learn estimator, refitted at any alpha of the path."""

    def __init__(
        self, estimator: Any, X: Any, y: np.ndarray, set_alpha: Callable[[float], dict]
    ) -> None:
        self.estimator, self.X, self.y, self._set_alpha = estimator, X, y, set_alpha

    def fit(self, alpha: float) -> PathPoint:
        self.estimator.set_params(**self._set_alpha(alpha))
        self.estimator.fit(self.X, self.y)
        coef = np.ravel(self.estimator.coef_)
        intercept = float(np.ravel(self.estimator.intercept_)[0]) if self._has_b else 0.0
        return make_point(alpha, coef, intercept)

    @property
    def _has_b(self) -> bool:
        return bool(self.estimator.fit_intercept)

    def warm(self, point: PathPoint) -> None:
        """Start the next fit from ``point`` (after a bisection moved the estimator away)."""
        shape = np.shape(self.estimator.coef_)
        self.estimator.coef_ = point.coef.reshape(shape).copy()
        if self._has_b:
            self.estimator.intercept_ = np.full(
                np.shape(self.estimator.intercept_), point.intercept
            )


def _make_fitter(objective: Objective, cfg: LassoConfig) -> tuple[_PathFitter, list[str]]:
    """The warm-started estimator of the objective's l1 path, and notes for the stop reason."""
    from sklearn.linear_model import Lasso

    X = objective.design.scaled_X()  # least squares may fold the scaling into its design
    if _quadratic(objective):
        est = Lasso(
            alpha=1.0,
            fit_intercept=objective.fit_intercept,
            tol=cfg.tol,
            max_iter=cfg.max_iter,
            warm_start=True,
        )
        return _Fitter(est, X, objective.y, lambda a: {"alpha": a}), []
    solver = L1Logistic(
        objective.design,
        objective.y,
        fit_intercept=objective.fit_intercept,
        tol=cfg.tol,
        max_iter=cfg.max_iter,
    )
    return _LogisticFitter(solver), []


class _LogisticFitter:
    """The same interface as :class:`_Fitter`, on our l1-logistic solver."""

    def __init__(self, solver: L1Logistic) -> None:
        self.solver = solver

    def fit(self, alpha: float) -> PathPoint:
        self.solver.solve(alpha)
        return make_point(alpha, self.solver.coef(), self.solver.b)

    def warm(self, point: PathPoint) -> None:
        self.solver.set_point(point.coef, point.intercept)

    def notes(self) -> list[str]:
        bad = self.solver.unconverged
        if not bad:
            return []
        return [
            f"the l1 solver reached max_iter = {self.solver.max_iter} Newton steps at {bad} "
            "alpha(s) before its tolerance; raise max_iter"
        ]


def l1_penalty_kwargs() -> dict:
    """How to ask LogisticRegression for a pure l1 penalty in the installed scikit-learn.

    ``penalty`` is deprecated from 1.8 on (``l1_ratio=1`` replaces it); before 1.8,
    ``l1_ratio`` alone is ignored unless ``penalty="elasticnet"``.
    """
    import sklearn

    major, minor = (int(part) for part in sklearn.__version__.split(".")[:2])
    return {"l1_ratio": 1.0} if (major, minor) >= (1, 8) else {"penalty": "l1"}


def _grid_path(objective: Objective, cfg: LassoConfig, fitter: _PathFitter) -> LassoPath:
    alpha_max = _alpha_max(objective)
    if alpha_max <= 0.0:
        return LassoPath([_null_point(objective, 0.0)], "grid", "no feature correlates with y")
    alphas = alpha_max * np.geomspace(1.0, cfg.alpha_min_ratio, cfg.n_alphas)
    # At alpha_max the solution is empty by definition; no solver run needed for it.
    points = [_null_point(objective, alphas[0])]
    steps = 0
    reason = f"the grid ended at alpha = {alphas[-1]:.4g} ({cfg.n_alphas} alphas)"
    for alpha in alphas[1:]:
        point = fitter.fit(alpha)
        if cfg.k is not None and cfg.refine_steps and _jumps_over(points[-1], point, cfg.k):
            middle = _bisect_for_k(fitter, points[-1], point, cfg.k, cfg.refine_steps)
            if middle is not None:
                steps += n_changes(points[-1].support, middle.support)
                points.append(middle)
                if cfg.stop_at_k:
                    reason = f"path_end = sparsity: the path reached k = {cfg.k} features"
                    break
            fitter.warm(point)
        if cfg.size_cap is not None and len(point.support) > cfg.size_cap:
            reason = (
                f"path_end = auto: the grid point at alpha = {alpha:.4g} holds more than k + "
                f"{cfg.size_cap - cfg.k} = {cfg.size_cap} features"  # type: ignore[operator]
            )
            break
        steps += n_changes(points[-1].support, point.support)
        points.append(point)
        if cfg.stop_at_k and cfg.k is not None and len(point.support) >= cfg.k:
            reason = f"path_end = sparsity: the path reached {len(point.support)} >= k features"
            break
        if cfg.max_steps is not None and steps >= cfg.max_steps:
            reason = f"max_steps = {cfg.max_steps} support changes made (alpha = {alpha:.4g})"
            break
    return LassoPath(points, "grid", reason)


def _jumps_over(before: PathPoint, after: PathPoint, k: int) -> bool:
    return len(before.support) < k < len(after.support)


def _bisect_for_k(
    fitter: _PathFitter, lo: PathPoint, hi: PathPoint, k: int, steps: int
) -> PathPoint | None:
    """A point with exactly k features between ``lo`` (fewer) and ``hi`` (more), or None.

    Bisection in log(alpha): the support size along the path is not monotone in general, but
    between two close alphas it nearly always is.
    """
    fitter.warm(lo)
    a_lo, a_hi = lo.alpha, hi.alpha
    for _ in range(steps):
        mid = math.sqrt(a_lo * a_hi)
        point = fitter.fit(mid)
        size = len(point.support)
        if size == k:
            return point
        if size < k:
            a_lo = mid
        else:
            a_hi = mid
    return None


def n_changes(before: frozenset[int], after: frozenset[int]) -> int:
    """Support-changing events between two supports (an entering/leaving pair is one swap)."""
    return max(len(after - before), len(before - after))


# --------------------------------------------------------------------------- trace


def path_values(objective: Objective, points: Sequence[PathPoint]) -> list[float]:
    """Our objective at every path point (the lasso's own coefficients).

    One product of the columns the path ever used with all points' coefficients at once,
    instead of a full ``X @ coef`` per point.
    """
    if not points:
        return []
    used = sorted(set().union(*(p.support for p in points)))
    C = np.array([p.coef[used] for p in points]).T  # (|used|, T)
    b = np.array([p.intercept for p in points])
    design = objective.design
    cols = design.columns(used) if used else np.zeros((objective.n_samples, 0))
    if _quadratic(objective):
        # design.columns are centred when there is an intercept, which is then profiled out.
        R = _centred_target(objective)[:, None] - cols @ C
        if not objective.fit_intercept:
            R -= b[None, :]
        return list((R * R).sum(axis=0) / (2 * objective.n_samples))
    assert isinstance(objective, GLMObjective)  # an l1 path without "quadratic": a GLM's loss
    eta = cols @ C + b[None, :]
    loss = objective.loss.value(eta, objective.y[:, None]).mean(axis=0)
    return list(loss + 0.5 * objective.lam * (C * C).sum(axis=0))


def emit_path(
    rec: Recorder,
    objective: Objective,
    points: Sequence[PathPoint],
    values: Sequence[float],
    last: int | None = None,
) -> None:
    """Emit the events of points 1..last (default: all); point 0 is the empty start.

    Parameters
    ----------
    rec : Recorder
    objective : Objective
        Evaluates the objective of intermediate supports (several changes at one point).
    points : sequence of PathPoint
    values : sequence of float
        Our objective at every point (:func:`path_values`).
    last : int, optional
        Index of the last point to emit.
    """
    last = len(points) - 1 if last is None else last
    for t in range(1, last + 1):
        _emit_point(rec, objective, points[t - 1], points[t], values[t - 1], values[t], t)


class _EventFields(TypedDict):
    """The event fields every move at one path point shares."""

    objective: float
    support_size: int
    info: dict[str, float]


def _emit_point(
    rec: Recorder,
    objective: Objective,
    before: PathPoint,
    point: PathPoint,
    prev_value: float,
    value: float,
    t: int,
) -> None:
    info = {"alpha": point.alpha, "path_point": float(t)}
    entering = sorted(point.support - before.support)
    leaving = sorted(before.support - point.support)
    if not entering and not leaving:
        rec.iterated(objective=value, support_size=len(point.support), info=info)
        return
    n_pairs = min(len(entering), len(leaving))
    moves: list[tuple[str, int, int | None]] = [
        ("swap", j, q) for j, q in zip(entering[:n_pairs], leaving[:n_pairs], strict=True)
    ]
    moves += [("add", j, None) for j in entering[n_pairs:]]
    moves += [("remove", j, None) for j in leaving[n_pairs:]]
    support = set(before.support)
    for i, (kind, j, out) in enumerate(moves):
        if kind == "remove":
            support.discard(j)
        else:
            support.add(j)
            if out is not None:
                support.discard(out)
        if i == len(moves) - 1:
            now = value
        else:  # an intermediate support: the point's coefficients restricted to it
            now = _restricted_value(objective, point, support)
        where: _EventFields = {"objective": now, "support_size": len(support), "info": dict(info)}
        if kind == "remove":
            rec.removed(j, cost=now - prev_value, **where)
        elif kind == "swap":
            assert out is not None  # a swap names the feature it replaces
            rec.swapped(j, out, gain=prev_value - now, **where)
        else:
            rec.added(j, gain=prev_value - now, **where)
        prev_value = now


def _restricted_value(objective: Objective, point: PathPoint, support: set[int]) -> float:
    coef = np.zeros_like(point.coef)
    idx = sorted(support & point.support)
    coef[idx] = point.coef[idx]
    return objective.value(coef, point.intercept)


# --------------------------------------------------------------------------- choice at k


def points_of_size(points: Sequence[PathPoint], k: int | None) -> tuple[list[int], str]:
    """Indices of the path points the answer is chosen from, and a note when k was missed.

    Without k: the last point. With k: the points with exactly k features, or, when there are
    none, those of the largest size below k the path reached (the empty start always counts).
    """
    if k is None:
        return [len(points) - 1], ""
    sizes = [len(p.support) for p in points]
    size = k if k in sizes else max(s for s in sizes if s < k)
    note = ""
    if size != k:
        note = (
            f"; the path never had exactly k = {k} features, returning {size} (the largest size "
            "below k it reached; a finer grid, refine_steps or max_steps may reach k)"
        )
    return [t for t, s in enumerate(sizes) if s == size], note


def _path_summary(path: LassoPath) -> str:
    notes = "".join(f"; {n}" for n in path.notes)
    return f"lasso path ({path.method}, {len(path.points) - 1} points): {path.reason}{notes}"


# --------------------------------------------------------------------------- algorithms


# LARS follows the exact least-squares path; the other path solvers need only the loss's own.
_L1 = Requirements(
    capabilities=frozenset({"linear", "l1-path"}), when={"path": {"lars": ("quadratic",)}}
)


@register_algorithm(
    name="lasso",
    title="Lasso (l1 path)",
    summary="The l1-regularisation path (LARS for least squares, warm-started l1 solves for "
    "logistic) as a trace of adds and removes; at k, the path point with k features and the "
    "smallest objective, with the lasso's own shrunk coefficients.",
    reference=f"{_ZHANG}; {_ELENBERG} (Lasso); Efron et al. 2004 (LARS)",
    params=LASSO_PARAMS,
    k="optional",
    family="l1",
    requires=_L1,
    traits=Traits(path="final"),
)
def lasso(
    objective: Objective, rec: Recorder, *, k: int | None, rng: np.random.Generator, **params: Any
) -> Solution:
    """Lasso: the l1 path as a trace; the answer is its best point with k features.

    Parameters
    ----------
    objective : Objective
        Least squares or logistic (the path needs scikit-learn's matching l1 solver).
    rec : Recorder
        Receives one event per support change along the path (``iterate`` for a point whose
        support did not change), then ``stop`` at the path's end.
    k : int or None
        Target support size; None returns the path's last point.
    rng : numpy.random.Generator
        Unused: the path is deterministic (saga's sample order has a fixed seed).
    **params
        ``LASSO_PARAMS``: path, max_steps, n_alphas, alpha_min_ratio, refine_steps, tol,
        max_iter.

    Returns
    -------
    Solution
        The path point with k nonzero coefficients and the smallest objective (Zhang 2008,
        Section 4), with the lasso's own shrunk coefficients and intercept; without such a
        point, the best point of the largest size below k.
    """
    path = compute_path(objective, lasso_config(objective, k, **params))
    values = path_values(objective, path.points)
    emit_path(rec, objective, path.points, values)
    candidates, note = points_of_size(path.points, k)
    t = min(candidates, key=lambda i: values[i])  # min keeps the first point on ties
    point = path.points[t]
    reason = (
        f"{_path_summary(path)}; returned path point {t} (alpha = {point.alpha:.4g}, "
        f"{len(point.support)} features){note}"
    )
    end = path.points[-1]
    rec.stopped(reason, objective=values[-1], support_size=len(end.support))
    return Solution(
        support=np.array(sorted(point.support), dtype=np.intp),
        coef=point.coef.copy(),
        intercept=point.intercept,
        objective=values[t],
        stop_reason=reason,
    )


@register_algorithm(
    name="lasso-refit",
    title="Lasso-Pipeline (l1 support, then refit)",
    summary="The support of the l1 path at k features, refitted without the l1 penalty (the "
    "objective's own model, e.g. logistic with its ridge lam only).",
    reference=f"{_ELENBERG} (Lasso-Pipeline); {_ZHANG}",
    params=LASSO_PARAMS,
    k="optional",
    family="l1",
    requires=_L1,
    traits=Traits(path="final"),
)
def lasso_refit(
    objective: Objective, rec: Recorder, *, k: int | None, rng: np.random.Generator, **params: Any
) -> Solution:
    """Lasso-Pipeline (Elenberg et al. 2016): the l1 path's support at k, refitted.

    Parameters
    ----------
    objective, rec, k, rng, **params
        As for :func:`lasso`.

    Returns
    -------
    Solution
        The objective's own model (least squares; logistic with its ridge ``lam`` only)
        refitted on the size-k support of the path whose refit has the smallest objective
        (Zhang's best k features along the path); features collinear with the rest of that
        support are left out.

    Notes
    -----
    The trace is the path up to the first point with the chosen support, so it replays to
    the returned support, then ``remove`` events for collinear features left out (rare) and a
    ``stop`` event carrying the refitted objective.
    """
    path = compute_path(objective, lasso_config(objective, k, **params))
    values = path_values(objective, path.points)
    candidates, note = points_of_size(path.points, k)
    t, state = _best_refit(objective, path.points, candidates)
    emit_path(rec, objective, path.points, values, last=t)
    dropped = [j for j in sorted(path.points[t].support) if j not in state.support]
    for j in dropped:  # collinear with the rest: the refit cannot use it (said in the reason)
        rec.removed(j, objective=state.value, support_size=len(state.support))
    reason = (
        f"{_path_summary(path)}; refitted the support of path point {t} "
        f"(alpha = {path.points[t].alpha:.4g}, {len(path.points[t].support)} features){note}"
    )
    if dropped:
        reason += f"; left out collinear features {dropped}"
    rec.stopped(reason, objective=state.value, support_size=len(state.support))
    return Solution.of(state, reason)


def _best_refit(
    objective: Objective, points: Sequence[PathPoint], candidates: Sequence[int]
) -> tuple[int, ActiveSet]:
    """Among the candidate points, the first one whose support has the best refit."""
    best: tuple[int, ActiveSet] | None = None
    seen: set[frozenset[int]] = set()
    for t in candidates:
        if points[t].support in seen:
            continue
        seen.add(points[t].support)
        state = refit(objective, sorted(points[t].support))
        if best is None or state.value < best[1].value:
            best = (t, state)
    assert best is not None  # candidates is never empty
    return best


def refit(objective: Objective, support: Sequence[int]) -> ActiveSet:
    """The objective's model refitted on ``support``, leaving out collinear features."""
    state = objective.start()
    for j in support:
        try:
            state.add(int(j))
        except CollinearFeature:
            continue
    return state
