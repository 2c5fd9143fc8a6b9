"""Smoothed Lipschitz losses: hinge and absolute (Shalev-Shwartz, Srebro & Zhang 2010, Lemma 2.5).

A rho-Lipschitz convex loss L is replaced by its infimal convolution with (beta/2) v^2,

    L~(a, y) = inf_v [ (beta/2) v^2 + L(a - v, y) ],                         (Equation (2.2))

which is beta-smooth and satisfies 0 <= L - L~ <= rho^2 / (2 beta). Both losses here are
1-Lipschitz, and the infimum has a closed form (derived in each class's docstring): a quadratic
piece of width 1/beta where L has its kink, L shifted down by 1/(2 beta) elsewhere. The
objectives are

    Q(w, b) = (1/n) sum_i L~(x_i.w + b, y_i) + (lam/2) ||w||^2,

with the intercept unpenalised; everything else (refits, scores) is ``glm.GLMObjective``.
Corollary 2.6 smooths with beta = rho^2 / epsilon to reach accuracy epsilon on the original loss.
"""

from __future__ import annotations

import numpy as np

from ..registry import ObjectiveSpec, Param, register_objective
from .glm import GLMObjective, SmoothLoss


def _check_beta(beta: float) -> float:
    if not np.isfinite(beta) or beta <= 0:
        raise ValueError(f"beta must be a finite number > 0, got {beta}")
    return float(beta)


class SmoothedHingeLoss(SmoothLoss):
    """Lemma 2.5 smoothing of the hinge loss max(0, 1 - s z), labels s in {-1, +1}.

    Derivation: with u = s v and the hinge t = max(0, 1 - s z),
    L~ = inf_u [(beta/2) u^2 + max(0, 1 - s z + u)]. If 1 - s z <= 0, u = 0 gives 0, the
    minimum. Otherwise the linear piece's stationary point u = -1/beta lies in it when
    t > 1/beta (value t - 1/(2 beta)); when t <= 1/beta the minimum sits at the kink u = -t
    (value beta t^2 / 2). Hence

        L~(z, s) = beta t^2 / 2        if t <= 1/beta,
                   t - 1/(2 beta)      if t >  1/beta,
        dL~/dz   = -s min(beta t, 1),
        d2L~/dz2 = beta on 0 < t <= 1/beta, else 0.

    Parameters
    ----------
    beta : float
        Smoothness (> 0); the gap to the hinge is at most 1/(2 beta).
    """

    name = "smoothed_hinge"

    def __init__(self, beta: float) -> None:
        self.beta = _check_beta(beta)
        self.smoothness = self.beta

    def _t(self, z: np.ndarray, s: np.ndarray) -> np.ndarray:
        return np.maximum(0.0, 1.0 - s * z)

    def value(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        t = self._t(z, y)
        return np.where(t <= 1.0 / self.beta, 0.5 * self.beta * t * t, t - 0.5 / self.beta)

    def derivative(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return -y * np.minimum(self.beta * self._t(z, y), 1.0)

    def curvature(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        t = self._t(z, y)
        return np.where((t > 0) & (t <= 1.0 / self.beta), self.beta, 0.0)


class SmoothedAbsoluteLoss(SmoothLoss):
    """Lemma 2.5 smoothing of the absolute loss |z - y|: the Huber function.

    Derivation: with r = z - y, L~ = inf_v [(beta/2) v^2 + |r - v|]. For |r| <= 1/beta the
    minimiser is v = r (the subgradient condition beta v in sign(r - v) holds with |beta r| <= 1),
    value beta r^2 / 2; for |r| > 1/beta it is v = sign(r)/beta, value |r| - 1/(2 beta). Hence

        L~(z, y) = beta r^2 / 2        if |r| <= 1/beta,
                   |r| - 1/(2 beta)    otherwise,
        dL~/dz   = clip(beta r, -1, 1),
        d2L~/dz2 = beta on |r| <= 1/beta, else 0.

    Parameters
    ----------
    beta : float
        Smoothness (> 0); the gap to |z - y| is at most 1/(2 beta).
    """

    name = "smoothed_absolute"

    def __init__(self, beta: float) -> None:
        self.beta = _check_beta(beta)
        self.smoothness = self.beta

    def value(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        r = np.abs(z - y)
        return np.where(r <= 1.0 / self.beta, 0.5 * self.beta * r * r, r - 0.5 / self.beta)

    def derivative(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.clip(self.beta * (z - y), -1.0, 1.0)

    def curvature(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.where(np.abs(z - y) <= 1.0 / self.beta, self.beta, 0.0)

    def initial_intercept(self, y: np.ndarray) -> float:
        # The median minimises the mean absolute loss: the refit starts next to the answer.
        return float(np.median(y))


class SmoothedHinge(GLMObjective):
    """Mean smoothed hinge loss (Lemma 2.5) plus (lam/2)||w||^2, intercept unpenalised.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n_samples, n_features)
    y : array-like, shape (n_samples,)
        Exactly two distinct values; the larger (in sort order) becomes s = +1, the other -1.
    beta : float, default 10.0
    lam : float, default 0.0
    fit_intercept : bool, default True
    """

    name = "smoothed_hinge"
    loss: SmoothedHingeLoss

    def __init__(
        self, X, y, *, beta: float = 10.0, lam: float = 0.0, fit_intercept: bool = True
    ) -> None:
        y = np.asarray(y).ravel()
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(
                f"the hinge loss needs exactly two distinct labels in y, found "
                f"{len(self.classes_)}: {self.classes_[:5].tolist()}"
            )
        s = np.where(y == self.classes_[1], 1.0, -1.0)
        super().__init__(X, s, SmoothedHingeLoss(beta), lam=lam, fit_intercept=fit_intercept)
        self.beta = self.loss.beta


class SmoothedAbsolute(GLMObjective):
    """Mean smoothed absolute loss (Huber, Lemma 2.5) plus (lam/2)||w||^2, intercept
    unpenalised.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n_samples, n_features)
    y : array-like of float, shape (n_samples,)
    beta : float, default 10.0
    lam : float, default 0.0
    fit_intercept : bool, default True
    """

    name = "smoothed_absolute"
    loss: SmoothedAbsoluteLoss

    def __init__(
        self, X, y, *, beta: float = 10.0, lam: float = 0.0, fit_intercept: bool = True
    ) -> None:
        y = np.asarray(y, dtype=np.float64).ravel()
        super().__init__(X, y, SmoothedAbsoluteLoss(beta), lam=lam, fit_intercept=fit_intercept)
        self.beta = self.loss.beta


def _params(what: str) -> tuple[Param, ...]:
    return (
        Param(
            "beta",
            "float",
            10.0,
            f"Smoothing (Lemma 2.5): the loss is beta-smooth and below the {what} by at most "
            "1/(2 beta); Corollary 2.6 takes beta = 1/epsilon.",
            minimum=0.0,
            exclusive_minimum=True,
        ),
        Param("lam", "float", 0.0, "Ridge weight lambda on ||w||^2 / 2.", minimum=0.0),
        Param("fit_intercept", "bool", True, "Fit an unpenalised intercept."),
    )


_REFERENCE = "Shalev-Shwartz, Srebro & Zhang 2010, Lemma 2.5 and Corollary 2.6"

register_objective(
    ObjectiveSpec(
        name="smoothed_hinge",
        title="Smoothed hinge",
        summary="Mean hinge loss max(0, 1 - s z) smoothed by infimal convolution with "
        "(beta/2) v^2, + (lam/2)||w||^2; any two labels.",
        reference=_REFERENCE,
        factory=SmoothedHinge,
        params=_params("hinge loss"),
        task="classification",
    )
)
register_objective(
    ObjectiveSpec(
        name="smoothed_absolute",
        title="Smoothed absolute (Huber)",
        summary="Mean absolute error |z - y| smoothed by infimal convolution with (beta/2) v^2 "
        "(the Huber loss), + (lam/2)||w||^2.",
        reference=_REFERENCE,
        factory=SmoothedAbsolute,
        params=_params("absolute loss"),
        task="regression",
    )
)
