"""L2-regularised logistic regression (Liu, Fujimaki & Ye 2014, Appendix D.1).

    Q(w, b) = (1/n) sum_i log(1 + exp(-s_i (x_i.w + b))) + (lambda/2) ||w||^2,

with s_i in {-1, +1} from any two distinct labels and an unpenalised intercept b. The loss is
written with t_i = (1 + s_i)/2 in {0, 1} as log(1 + e^z) - t z. Refits and deletion costs are
the generic smooth-loss ones (``glm``); what is specific to the log-loss is how fast its
forward scores can be had:

* FoBa-obj's one-coordinate drops for every candidate, by a vectorised safeguarded Newton
  iteration with one exponential per stored entry (``coordinate_newton``);
* the best of them without solving them all, from self-concordance bounds
  (``coordinate_bounds``);
* forward stepwise's exact refit gains of every candidate at once (``logistic_refit``).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..registry import ObjectiveSpec, Param, register_objective
from .coordinate_bounds import ColumnStats, best_coordinate_drop
from .coordinate_newton import (
    BOUND_SLACK,
    logistic_coordinate_drops,
    loss_change,
    self_concordant_decrease,
)
from .glm import GLMActiveSet, GLMObjective, SmoothLoss
from .logistic_refit import logistic_refit_gains


class LogLoss(SmoothLoss):
    """log(1 + e^z) - t z for labels t in {0, 1}: 1/4-smooth, self-concordant (|L'''| <= L'')."""

    name = "log_loss"
    smoothness = 0.25

    def value(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.logaddexp(0.0, z) - y * z

    def derivative(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return expit(z) - y

    def curvature(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        p = expit(z)
        return p * (1.0 - p)

    def initial_intercept(self, y: np.ndarray) -> float:
        # The intercept-only optimum: the log-odds of the positive class.
        p = float(np.clip(np.mean(y), 1e-300, 1 - 1e-16))
        return float(np.log(p) - np.log1p(-p))


class Logistic(GLMObjective):
    """Mean log-loss plus (lam/2)||w||^2.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n_samples, n_features)
    y : array-like, shape (n_samples,)
        Exactly two distinct values; the larger (in sort order) is the positive class.
    lam : float, default 1e-4
        Ridge weight (the paper's UCI setting; 0.01 in its synthetic study).
    fit_intercept : bool, default True
    standardize : bool, default False
        Fit on the columns divided by their scales (root mean square without an intercept,
        standard deviation with one: ``engine.scaling.column_scale``), folded into the products
        and the forward scores' per-column sums instead of a scaled copy of X (``Design``,
        ``Columns.inv``); ``design.scale`` holds them. ``engine.select(standardize=True)`` asks
        for it.
    """

    name = "logistic"
    capabilities = frozenset({"linear", "l1-path", "splicing"})
    folds_scaling = True  # accepts standardize=True (engine.select then copies no X)

    def __init__(
        self, X, y, *, lam: float = 1e-4, fit_intercept: bool = True, standardize: bool = False
    ) -> None:
        y = np.asarray(y).ravel()
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(
                f"logistic loss needs exactly two distinct labels in y, found "
                f"{len(self.classes_)}: {self.classes_[:5].tolist()}"
            )
        t = (y == self.classes_[1]).astype(np.float64)
        super().__init__(
            X, t, LogLoss(), lam=lam, fit_intercept=fit_intercept, standardize=standardize
        )
        self.t = self.y
        self.column_stats = ColumnStats(self.columns, self.design)

    def start(self) -> LogisticActiveSet:
        return LogisticActiveSet(self)


class LogisticActiveSet(GLMActiveSet):
    """The generic smooth-loss active set with the log-loss's fast forward scores."""

    objective: Logistic

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
        j, drop, move, _ = best_coordinate_drop(obj.column_stats, self.eta, obj.t, obj.lam, cand)
        self._entering = (j, move, self.eta)
        return j, drop

    def deletion_costs(self) -> np.ndarray:
        # As the generic version (intercept re-optimised), with the loss change computed from
        # sigmoid(eta) by one exponential per entry instead of two logaddexp (this is FoBa's
        # backward hot path), and the intercept's Newton iteration run on sigmoids updated by
        # products alone: sigmoid(eta + z + s) = p e^z e^s / (1 - p + p e^z e^s).
        return self._deletion_costs_at(np.arange(len(self.support)))

    def _deletion_costs_at(
        self, pos: np.ndarray, first: tuple[np.ndarray, np.ndarray] | None = None
    ) -> np.ndarray:
        """Exact deletion costs of the selected features at positions ``pos`` (each row is
        computed on its own, so a subset gives the same numbers as the full computation).
        ``first``: the intercept derivatives at shift 0 of these rows, when the caller has them
        (:func:`_intercept_shifts`)."""
        obj = self.objective
        if pos.size == 0:
            return np.zeros(0)
        w = self._w[pos]
        z = self._cols[pos] * (-w)[:, None]  # (m, n): prediction change when w_j -> 0
        p = expit(self.eta)[None, :]
        t = obj.t[None, :]
        if obj.fit_intercept:
            z = z + _intercept_shifts(p, z, float(obj.t.mean()), first)[:, None]
        # sum / n: ndarray.mean's own arithmetic, without its Python wrapper (issue 22)
        change = loss_change(p, z, t).sum(axis=1) / z.shape[1]
        return change - 0.5 * obj.lam * w**2

    def cheapest_deletion(self) -> tuple[int, float]:
        """The argmin of ``deletion_costs`` without re-optimising the intercept for every
        feature: the cost with the intercept held bounds it above, and the log-loss's
        self-concordance bounds what re-optimising the intercept can take off it
        (:func:`_shift_gain_bounds`); only the features whose lower bound reaches the smallest
        upper bound get their exact cost. Same position and cost as the full computation."""
        obj = self.objective
        m, n = self._cols.shape
        if m * n < _BOUND_MIN_ENTRIES or not obj.fit_intercept:
            return super().cheapest_deletion()
        # z: the prediction changes when w_j -> 0, in a buffer of its own (the screen writes
        # into it)
        z = np.empty((m, n))
        np.multiply(self._cols, (-self._w)[:, None], out=z)
        sums = deletion_screen_sums(z, expit(self.eta), obj.t)
        screen = deletion_screen(sums, n, float(obj.t.mean()), obj.lam, self._w, self.value)
        if screen is None:
            return super().cheapest_deletion()
        pos, g, h = screen
        # g and h are _intercept_shifts' derivatives at shift 0 (the same q to the bit): one
        # of its ~3 passes over each row saved.
        exact = self._deletion_costs_at(pos, (g[pos], h[pos]))
        i = int(np.argmin(exact))  # pos is sorted: ties go to the lowest position
        return int(pos[i]), float(exact[i])

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


def _intercept_shifts(
    p: np.ndarray,
    z: np.ndarray,
    t_mean: float,
    first: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """argmin_s mean_i logloss(eta_i + z_ji + s) for every row j of z, given p = sigmoid(eta).

    Newton on the derivative mean(sigmoid) - mean(t), each step clipped to |s| <= 1: the
    log-loss is self-concordant (|psi'''| <= psi''), so the curvature changes by at most
    a factor e along such a step and the iteration converges from s = 0 (quadratically once
    close). Stops when the decrease left, g^2 / 2h, is below 1e-18 (far below the rounding of a
    deletion cost). A row that has not converged in the budget keeps s = 0 (the intercept held).
    ``first``: (g, h) at s = 0 if the caller computed them as this function would (the same
    numbers, so the same iterates).
    """
    k, n = z.shape
    pe = p * np.exp(np.minimum(np.maximum(z, -700.0), 700.0))  # as np.clip, without its wrapper
    one_minus_p = 1.0 - p
    s = np.zeros(k)
    done = np.zeros(k, dtype=bool)
    for it in range(_SHIFT_MAX_ITER):
        if it == 0 and first is not None:
            g, h = first
        else:
            qe = pe * np.exp(s)[:, None]
            q = qe / (one_minus_p + qe)
            # sum / n rather than mean: the same numbers, without mean's wrapper (issue 22)
            g = q.sum(axis=1) / n - t_mean
            h = (q * (1.0 - q)).sum(axis=1) / n
        # Written for the common case, every h > 0, in as few numpy calls as it takes: on a
        # support of a few dozen features each call's own cost is most of the time (issue 22).
        if (h > 0).all():
            done = g * g / (2.0 * h) <= 1e-18
            step = -g / h
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                left = np.where(h > 0, g * g / (2.0 * h), np.where(g == 0, 0.0, np.inf))
            done = left <= 1e-18
            step = -g / np.where(h > 0, h, 1.0)
        if done.all():
            return s
        step[done] = 0.0
        # np.minimum/np.maximum: np.clip's Python wrapper costs more than the clipping here
        s = s + np.minimum(np.maximum(step, -1.0), 1.0)
    return np.where(done, s, 0.0)


ScreenSums = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def deletion_screen_sums(z: np.ndarray, p: np.ndarray, t: np.ndarray) -> ScreenSums:
    """The deletion screen's per-feature sums over a block of samples: row j of z (k, rows) the
    prediction changes when w_j -> 0, p = sigmoid(eta) and t the labels of those samples.

    Returns sum log(1 - p + p e^z), z.t, sum q and sum q (1 - q) for q = sigmoid(eta + z), and
    ``safe``: all 1 - p + p e^z > 1e-6 (rows near the log-loss's saturation, where rounding is
    no longer small, get no bound). Sums over blocks of samples add up to the sums over all, the
    flags by ``&``. z is overwritten: it is one of the two buffers every pass is written into.
    """
    k, rows = z.shape
    # Two k x rows buffers: at 50 x 600 the temporaries of the plain expressions (eight fresh
    # 240 kB arrays a call) cost more than the passes that fill them (issue 22).
    B = np.empty((k, rows))
    zt = z @ t
    # Clipped as _intercept_shifts clips, so the sums of q are its first ones to the bit; two
    # reductions are cheaper than a clipped copy when nothing is clipped.
    z_max = float(z.max())
    clipped = None
    if z_max > 700.0 or z.min() < -700.0:
        # A change above 700 is clipped in the log too, while z.t keeps it whole: that row's
        # held cost would come out too low and could screen out the cheapest. It gets no
        # bound (its exact cost is computed, which takes such changes exactly).
        clipped = z.max(axis=1) > 700.0
        np.clip(z, -700.0, 700.0, out=z)
    # One exp and one log per entry: numpy's exp and log are vectorised, its expm1 and log1p
    # are not (issue 22: twice the time at 50 x 600); the sums only screen, and log(1 + x)
    # instead of log1p(x) costs them 1e-16 absolute, far below BOUND_SLACK.
    np.exp(z, out=z)
    z *= p  # p e^z
    np.add(z, 1.0 - p, out=B)  # inner = 1 - p + p e^z
    safe = B.min(axis=1) > 1e-6  # as all(inner > 1e-6), NaN included
    if clipped is not None:
        safe &= ~clipped
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = _row_log_sums(B, z_max)
        np.divide(z, B, out=z)  # q = sigmoid(eta + z)
    q_sum = z.sum(axis=1)
    np.subtract(1.0, z, out=B)
    B *= z  # q (1 - q): the same products as _intercept_shifts', so the same sums
    return logs, zt, q_sum, B.sum(axis=1), safe


def deletion_screen(
    sums: ScreenSums, n: int, t_mean: float, lam: float, w: np.ndarray, value: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The positions whose deletion cost can be the smallest, from the sums of
    :func:`deletion_screen_sums` over all n samples, and the intercept derivatives g, h at
    shift 0 of every row, the numbers :func:`_intercept_shifts` computes from the same sums.
    The cost with the intercept held bounds a cost above; what re-optimising the intercept can
    take off it is bounded by :func:`_shift_gain_bounds`. None when no row is safe."""
    held_sum, zt, q_sum, qq_sum, safe = sums
    if not safe.any():
        return None
    held = held_sum / n - zt / n - 0.5 * lam * w**2
    # as _intercept_shifts divides: the in-memory exact costs take g and h as its first ones
    g = q_sum / n - t_mean
    h = qq_sum / n
    lower = np.where(safe, held - _shift_gain_bounds(g, h), -np.inf)
    top = float(held[safe].min())
    slack = BOUND_SLACK * (abs(top) + abs(value))
    return np.flatnonzero(lower <= top + slack), g, h


_SHIFT_MAX_ITER = 50
# Below this many entries (support size x samples) the exact costs are as cheap as the bounds.
_BOUND_MIN_ENTRIES = 10_000


def _row_log_sums(inner: np.ndarray, z_max: float) -> np.ndarray:
    """sum_i log(inner_ji) per row j, for inner = 1 - p + p e^z with every z <= z_max.

    numpy vectorises its float64 log only with AVX-512 (without it ~5 ns an entry, 30x a
    product; with it ~1 ns): the logs of products of _LOG_BLOCK entries instead, B times fewer
    logs. A product of B entries rounds
    to B ulps, so each log is off by ~B x 1e-16 absolute, as B separate logs would be together,
    far below the screen's BOUND_SLACK. It cannot overflow while inner <= 1 + e^z_max stays
    below 1e308^(1/B) (z_max <= 80); rows with an entry below 1e-6 get no bound
    (:func:`deletion_screen_sums`' ``safe``), so underflow to 0 (log -inf) touches no row that
    is used.
    """
    m, n = inner.shape
    nb = n // _LOG_BLOCK
    if z_max > _LOG_BLOCK_Z_MAX or nb == 0:
        return np.log(inner).sum(axis=1)
    # Entries i, i + nb, i + 2 nb, ... multiplied together: a reduction over a middle axis,
    # which numpy runs as whole-row multiplies.
    head = inner[:, : nb * _LOG_BLOCK].reshape(m, _LOG_BLOCK, nb).prod(axis=1)
    out = np.log(head).sum(axis=1)
    if nb * _LOG_BLOCK < n:
        out += np.log(inner[:, nb * _LOG_BLOCK :]).sum(axis=1)
    return out


_LOG_BLOCK = 8
_LOG_BLOCK_Z_MAX = 80.0  # (1 + e^80)^8 < 1e308


def _shift_gain_bounds(g: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Upper bounds on what re-optimising the intercept takes off a deletion cost: the shift
    moves every prediction by s, so the self-concordant bound applies with M = 1."""
    return self_concordant_decrease(g, h)


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
