"""Binary classification problems: Liu, Fujimaki & Ye (2014) Appendix D.1.1 and Elenberg et al.
(2016) Section 4."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..registry import Param
from .base import Problem, RandomState, check_params, make_rng, names, require, seed_meta
from .regression import ar1_rows

# --------------------------------------------------------------------------- Liu 2014

LIU2014_PARAMS = (
    Param(
        "n",
        "int",
        100,
        "Number of samples, split equally between the two classes (the paper: 100).",
        minimum=2,
        maximum=100_000,
    ),
    Param("d", "int", 500, "Number of features (the paper: 500).", minimum=1, maximum=100_000),
    Param("s", "int", 5, "Nonzeros of beta* (the paper: 5 to 14).", minimum=1, maximum=100_000),
    Param(
        "norm",
        "float",
        5.0,
        "Euclidean norm of beta* (the paper: 5).",
        minimum=0.0,
        exclusive_minimum=True,
    ),
)


def liu2014_logistic(
    random_state: RandomState = None,
    *,
    n: int = 100,
    d: int = 500,
    s: int = 5,
    norm: float = 5.0,
) -> Problem:
    """Liu, Fujimaki & Ye (2014) Appendix D.1.1: two Gaussian classes N(+beta*, I), N(-beta*, I).

    The paper: "The data matrix X consists of two classes of data (each row is a sample) from
    i.i.d. Gaussian distribution N(beta*, I) and N(-beta*, I), respectively, where the true
    parameter beta* is sparse and its nonzero entries follow i.i.d. uniform distribution
    U[0, 1]. The two classes are of the same size. The norm of beta* is normalized to 5 [...]
    The vector y is the class label vector with values being 1 or -1."

    Here: ``s`` positions drawn at random, values U[0, 1], rescaled to ``||beta*|| = norm``;
    ``ceil(n/2)`` rows of class +1 (mean +beta*) and ``floor(n/2)`` of class -1 (mean -beta*),
    rows shuffled so that the classes are interleaved (the paper does not order them; a
    shuffled order keeps naive splits balanced). ``true_coef`` is the paper's beta*. The
    logistic model these classes imply is ``P(y = 1 | x) = sigmoid(2 beta*.x)`` (the log ratio
    of the two Gaussian densities), so the Bayes-optimal logistic weights are ``2 beta*``;
    ``meta["logit_scale"] = 2.0`` records that.

    Parameters
    ----------
    random_state : int, numpy Generator or None
    n, d, s : int
        ``s <= d``.
    norm : float
        Positive.

    Returns
    -------
    Problem
        Labels ``y`` in {-1, +1} (int).
    """
    p = check_params("liu2014_logistic", LIU2014_PARAMS, n=n, d=d, s=s, norm=norm)
    require(s <= d, "s", f"an integer between 1 and d = {d}", s)
    rng = make_rng(random_state)

    coef = np.zeros(d)
    support = np.sort(rng.choice(d, size=s, replace=False))
    coef[support] = rng.uniform(0.0, 1.0, size=s)
    # U[0, 1] can return exactly 0; redraw rather than silently shrink the support.
    while np.any(coef[support] == 0.0):
        zero = support[coef[support] == 0.0]
        coef[zero] = rng.uniform(0.0, 1.0, size=zero.size)
    coef *= norm / np.linalg.norm(coef)

    y = np.where(np.arange(n) < (n + 1) // 2, 1, -1)
    y = y[rng.permutation(n)]
    X = rng.standard_normal((n, d)) + y[:, None] * coef[None, :]

    meta = seed_meta(random_state, p)
    meta["logit_scale"] = 2.0
    return Problem(
        X=X,
        y=y,
        true_coef=coef,
        support=support,
        name="liu2014_logistic",
        task="classification",
        description=(
            f"Liu et al. (2014) Appendix D.1.1: {n} samples from N(+beta*, I) and N(-beta*, I) "
            f"in d = {d}, beta* with {s} nonzeros U[0, 1] scaled to norm {norm:g}, labels +-1."
        ),
        feature_names=names("x", d),
        meta=meta,
    )


# --------------------------------------------------------------------------- Elenberg 2016

ELENBERG2016_PARAMS = (
    Param(
        "n", "int", 600, "Number of training samples (the paper: 600).", minimum=2, maximum=100_000
    ),
    Param("p", "int", 200, "Number of features (the paper: 200).", minimum=1, maximum=100_000),
    Param(
        "s",
        "int",
        50,
        "Nonzeros of the true coefficients (the paper: 50).",
        minimum=1,
        maximum=100_000,
    ),
    Param(
        "alpha",
        "float",
        0.3,
        "AR(1) coefficient along each row (the paper: 0.3).",
        minimum=-0.99,
        maximum=0.99,
    ),
    Param(
        "noise_var",
        "float",
        5.0,
        "AR(1) innovation variance (the paper: 5).",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    Param(
        "sq_norm",
        "float",
        5.0,
        "Squared norm of the true coefficients (the paper: 5).",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    Param(
        "n_test",
        "int",
        0,
        "Extra samples from the same model, in meta['X_test'] and meta['y_test'] (the paper: 600).",
        minimum=0,
        maximum=100_000,
    ),
)


def elenberg2016(
    random_state: RandomState = None,
    *,
    n: int = 600,
    p: int = 200,
    s: int = 50,
    alpha: float = 0.3,
    noise_var: float = 5.0,
    sq_norm: float = 5.0,
    n_test: int = 0,
) -> Problem:
    """Elenberg, Khanna, Dimakis & Negahban (2016) Section 4: AR(1) design, logistic responses.

    The paper: "each row of a 600x200 design matrix X is generated independently according to a
    first order AR process (alpha = 0.3 and noise variance sigma^2 = 5) [...] Bernoulli +-1
    (i.e., Rademacher) random variables are placed on 50 random indices to form the true
    support, and scaled such that ||beta||_2^2 = 5. Then responses y are computed via a
    logistic model."

    Here the AR process runs along the feature index of each row, ``x_j = alpha x_{j-1} + e_j``
    with ``e_j ~ N(0, noise_var)``, started in its stationary law ``x_1 ~ N(0, noise_var / (1 -
    alpha^2))`` (the paper does not say how the chain starts; this choice gives every feature
    the same variance and ``corr(x_i, x_j) = alpha^|i-j|``). The true coefficients are +-1 on
    ``s`` random indices times ``sqrt(sq_norm / s)``, and ``y_i ~ Bernoulli(sigmoid(x_i.beta))``
    in {0, 1}, without intercept (the paper adds the bias column to the model, not the truth).

    Test samples (``n_test > 0``) are drawn after the training ones from the same stream, so the
    training arrays do not depend on ``n_test``.

    Parameters
    ----------
    random_state : int, numpy Generator or None
    n, p, s : int
        ``s <= p``.
    alpha, noise_var, sq_norm : float
    n_test : int

    Returns
    -------
    Problem
        Labels in {0, 1} (int); ``meta["X_test"]``, ``meta["y_test"]`` when ``n_test > 0``.
    """
    params = check_params(
        "elenberg2016",
        ELENBERG2016_PARAMS,
        n=n,
        p=p,
        s=s,
        alpha=alpha,
        noise_var=noise_var,
        sq_norm=sq_norm,
        n_test=n_test,
    )
    require(s <= p, "s", f"an integer between 1 and p = {p}", s)
    rng = make_rng(random_state)

    coef = np.zeros(p)
    support = np.sort(rng.choice(p, size=s, replace=False))
    coef[support] = rng.choice([-1.0, 1.0], size=s) * np.sqrt(sq_norm / s)
    X, y = _elenberg_sample(rng, n, coef, alpha, noise_var)

    meta = seed_meta(random_state, params)
    if n_test:
        X_test, y_test = _elenberg_sample(rng, n_test, coef, alpha, noise_var)
        X_test.flags.writeable = False
        y_test.flags.writeable = False
        meta["X_test"], meta["y_test"] = X_test, y_test
    return Problem(
        X=X,
        y=y,
        true_coef=coef,
        support=support,
        name="elenberg2016",
        task="classification",
        description=(
            f"Elenberg et al. (2016) Section 4: {n} x {p} AR(1) rows (alpha = {alpha:g}, "
            f"noise variance {noise_var:g}), {s} Rademacher nonzeros with squared norm "
            f"{sq_norm:g}, y ~ Bernoulli(sigmoid(X beta)) in {{0, 1}}."
        ),
        feature_names=names("x", p),
        meta=meta,
    )


def _elenberg_sample(
    rng: np.random.Generator, n: int, coef: np.ndarray, alpha: float, noise_var: float
) -> tuple[np.ndarray, np.ndarray]:
    X = ar1_rows(
        rng,
        n,
        coef.size,
        alpha,
        innovation_var=noise_var,
        first_var=noise_var / (1.0 - alpha * alpha),
    )
    y = (rng.random(n) < expit(X @ coef)).astype(np.int64)
    return X, y
