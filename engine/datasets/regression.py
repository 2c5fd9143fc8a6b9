"""Least-squares problems: Zhang (2008) Section 4.1, Xiang et al. (2014) Section 5.3, and a small
generic Gaussian problem for demos."""

from __future__ import annotations

import numpy as np
from scipy.signal import lfilter

from ..registry import Param
from .base import (
    Problem,
    RandomState,
    check_params,
    make_rng,
    names,
    normalise_columns,
    require,
    seed_meta,
    support_of,
)

# --------------------------------------------------------------------------- Zhang 2008

ZHANG2008_PARAMS = (
    Param("n", "int", 100, "Number of samples (the paper: 100).", minimum=2, maximum=100_000),
    Param("d", "int", 500, "Number of features (the paper: 500).", minimum=1, maximum=100_000),
    Param("k_true", "int", 5, "Number of true features (the paper: 5).", minimum=1, maximum=1000),
    Param("noise_var", "float", 0.1, "Noise variance sigma^2 (the paper: 0.1).", minimum=0.0),
    Param(
        "correlation",
        "float",
        0.85,
        "Correlation between a decoy column and the mix of true columns it imitates.",
        minimum=0.0,
        maximum=0.99,
    ),
    Param(
        "n_decoys",
        "int",
        None,
        "Number of decoy columns (default: 2 k_true; 0 gives independent columns).",
        minimum=0,
        nullable=True,
    ),
)


def zhang2008(
    random_state: RandomState = None,
    *,
    n: int = 100,
    d: int = 500,
    k_true: int = 5,
    noise_var: float = 0.1,
    correlation: float = 0.85,
    n_decoys: int | None = None,
) -> Problem:
    """Zhang (2008) Section 4.1: sparse least squares with moderately correlated decoy columns.

    The paper says only that "the basis functions f_j are randomly generated with moderate
    correlation: that is, some basis functions are correlated to the basis functions spanning the
    true target", and that this "does not violate the sparse eigenvalue condition" but does fool
    forward greedy and the Lasso. The construction used here:

    1. ``k_true`` true columns at random positions, i.i.d. N(0, 1) entries.
    2. ``n_decoys`` decoy columns at other random positions. Decoy ``j`` imitates a mix of two
       distinct true columns (one when ``k_true = 1``): ``u = a f_p + b f_q`` with ``a, b ~
       U[0, 1]``, scaled to norm sqrt(n), and ``f_j = r u + sqrt(1 - r^2) z_j`` with ``r =
       correlation`` and ``z_j`` fresh N(0, 1) noise. The mix weights are positive because the
       true coefficients are: a decoy then correlates with ``y`` more than either true parent
       when the two coefficients are similar, so forward greedy picks it first, while its own
       noise ``z_j`` keeps every small set of columns well conditioned (the smallest eigenvalue
       of a decoy with its parents is of order ``1 - r^2``, reported in ``meta``), which is what
       lets FoBa delete it later.
    3. Every other column is independent N(0, 1) noise.
    4. All columns are scaled to ``||f_j||^2 = n`` (Zhang's Assumption 3.1).
    5. True coefficients U[0, 10] ("generated uniformly from 0 to 10"), and ``y = X w + e`` with
       ``e ~ N(0, noise_var)``.

    With the defaults (r = 0.85, 10 decoys), seeds 0-49 give a feature-selection error at k = 5
    of 0.60 +- 1.26 for the engine's FoBa (best 5 along its path) and 1.78 +- 1.22 for forward
    greedy, against 0.76 +- 0.98 and 1.8 +- 1.1 in the paper's Table 1.

    Parameters
    ----------
    random_state : int, numpy Generator or None
    n, d, k_true : int
        Samples, features, true features (k_true + n_decoys must not exceed d).
    noise_var : float
        Variance of the Gaussian noise.
    correlation : float
        ``r`` above, in [0, 0.99].
    n_decoys : int or None
        Decoy columns; None means ``2 * k_true`` (capped at ``d - k_true``).

    Returns
    -------
    Problem
        ``meta["decoys"]`` maps each decoy column to its parents; ``meta["min_decoy_eigenvalue"]``
        is the smallest eigenvalue of ``X_S^T X_S / n`` over the sets S = a decoy and its parents.
    """
    p = check_params(
        "zhang2008",
        ZHANG2008_PARAMS,
        n=n,
        d=d,
        k_true=k_true,
        noise_var=noise_var,
        correlation=correlation,
        n_decoys=n_decoys,
    )
    require(k_true <= d, "k_true", f"an integer between 1 and d = {d}", k_true)
    if n_decoys is None:
        n_decoys = min(2 * k_true, d - k_true)
    require(n_decoys <= d - k_true, "n_decoys", f"at most d - k_true = {d - k_true}", n_decoys)
    rng = make_rng(random_state)

    support = np.sort(rng.choice(d, size=k_true, replace=False))
    X = rng.standard_normal((n, d))
    # Normalise the true columns first: the decoys imitate them as they will be returned.
    X[:, support] = normalise_columns(X[:, support], n)
    others = np.setdiff1d(np.arange(d), support)
    decoy_cols = np.sort(rng.choice(others, size=n_decoys, replace=False))
    parents = _add_decoys(X, support, decoy_cols, correlation, rng)
    normalise_columns(X, n)

    coef = np.zeros(d)
    coef[support] = rng.uniform(0.0, 10.0, size=k_true)
    y = X @ coef + rng.normal(0.0, np.sqrt(noise_var), size=n)

    meta = seed_meta(random_state, p)
    meta["decoys"] = {
        int(j): [int(q) for q in par] for j, par in zip(decoy_cols, parents, strict=True)
    }
    meta["min_decoy_eigenvalue"] = _min_decoy_eigenvalue(X, decoy_cols, parents)
    return Problem(
        X=X,
        y=y,
        true_coef=coef,
        support=support_of(coef),
        name="zhang2008",
        task="regression",
        description=(
            f"Zhang (2008) Section 4.1: n = {n}, d = {d}, {k_true} true features with "
            f"coefficients U[0, 10], noise variance {noise_var:g}, {n_decoys} decoy columns "
            f"correlated {correlation:g} with mixes of true columns."
        ),
        feature_names=names("f", d),
        meta=meta,
    )


def _add_decoys(
    X: np.ndarray,
    support: np.ndarray,
    decoy_cols: np.ndarray,
    r: float,
    rng: np.random.Generator,
) -> list[np.ndarray]:
    """Overwrite the decoy columns of X in place; return each decoy's parent columns."""
    n = X.shape[0]
    n_parents = min(2, support.size)
    parents = []
    for j in decoy_cols:
        par = np.sort(rng.choice(support, size=n_parents, replace=False))
        u = X[:, par] @ rng.uniform(0.0, 1.0, size=n_parents)
        u *= np.sqrt(n) / np.linalg.norm(u)
        z = X[:, j] * (np.sqrt(n) / np.linalg.norm(X[:, j]))
        X[:, j] = r * u + np.sqrt(1.0 - r * r) * z
        parents.append(par)
    return parents


def _min_decoy_eigenvalue(X: np.ndarray, decoy_cols: np.ndarray, parents: list) -> float | None:
    if decoy_cols.size == 0:
        return None
    n = X.shape[0]
    return float(
        min(
            np.linalg.eigvalsh(X[:, [j, *par]].T @ X[:, [j, *par]] / n)[0]
            for j, par in zip(decoy_cols, parents, strict=True)
        )
    )


# --------------------------------------------------------------------------- Xiang 2014

XIANG2014_PARAMS = (
    Param(
        "case",
        "int",
        1,
        "1: bi-level sparsity (a few features in a few groups); 2: group sparsity (whole groups).",
        minimum=1,
        maximum=2,
    ),
    Param("n", "int", 100, "Number of samples (the paper: 100).", minimum=2, maximum=100_000),
    Param("d", "int", 200, "Number of features (the paper: 200).", minimum=1, maximum=100_000),
    Param("n_groups", "int", 20, "Number of equal groups (the paper: 20).", minimum=1),
    Param(
        "active_groups",
        "int",
        6,
        "Groups carrying signal, the first ones (the paper: 6).",
        minimum=1,
    ),
    Param(
        "active_features",
        "int",
        3,
        "Case 1: nonzero features per active group (the paper: 18 in 6 groups).",
        minimum=1,
    ),
    Param("noise_std", "float", 1.0, "Standard deviation of the Gaussian noise.", minimum=0.0),
)


def xiang2014_bilevel(
    random_state: RandomState = None,
    *,
    case: int = 1,
    n: int = 100,
    d: int = 200,
    n_groups: int = 20,
    active_groups: int = 6,
    active_features: int = 3,
    noise_std: float = 1.0,
) -> Problem:
    """Xiang, Yang & Ye (2014) Section 5.3: bi-level (case 1) or group (case 2) sparse regression.

    The paper: "y = A x + eps, where both of the design matrix A in R^{100x200} and the noise
    term eps follow a normal distribution. The ground truth x is partitioned into 20 groups of
    equal size", with two grouping structures shown only as a colour map (Figure 5): "Both cases
    include redundant groups (group 7 to group 20). In addition, the first case contains a
    bi-level sparsity. The values within each group are identical".

    The figure cannot be read from the text, so the sizes come from Table 3, where number -
    false positives + false negatives gives the true counts for every method alike: case 1 has
    6 groups and 18 features, case 2 has 6 groups and 60 features (6 full groups of 10). Here:

    * ``A`` has i.i.d. N(0, 1) entries; ``groups[j] = j // (d / n_groups)`` (contiguous groups).
    * The first ``active_groups`` groups carry signal. Case 1: the first ``active_features``
      features of each (3 x 6 = 18); case 2: every feature of each (10 x 6 = 60).
    * All nonzeros of a group share one value, ``+-U[1, 2]`` with a random sign (our choice:
      the paper gives no values; bounded away from zero so that every true feature is
      detectable).
    * ``eps ~ N(0, noise_std^2)`` (the paper does not give the noise level).

    Parameters
    ----------
    random_state : int, numpy Generator or None
    case : {1, 2}
    n, d, n_groups : int
        ``d`` must be a multiple of ``n_groups``.
    active_groups : int
        At most ``n_groups``.
    active_features : int
        Case 1 only; at most the group size.
    noise_std : float

    Returns
    -------
    Problem
        With ``groups`` set and ``meta["group_values"]`` the value of each active group.
    """
    p = check_params(
        "xiang2014_bilevel",
        XIANG2014_PARAMS,
        case=case,
        n=n,
        d=d,
        n_groups=n_groups,
        active_groups=active_groups,
        active_features=active_features,
        noise_std=noise_std,
    )
    require(d % n_groups == 0, "n_groups", f"a divisor of d = {d}", n_groups)
    size = d // n_groups
    require(
        active_groups <= n_groups, "active_groups", f"at most n_groups = {n_groups}", active_groups
    )
    if case == 1:
        require(
            active_features <= size,
            "active_features",
            f"at most the group size {size}",
            active_features,
        )
    rng = make_rng(random_state)

    A = rng.standard_normal((n, d))
    groups = np.repeat(np.arange(n_groups), size)
    values = rng.uniform(1.0, 2.0, active_groups) * rng.choice([-1.0, 1.0], active_groups)
    per_group = active_features if case == 1 else size
    coef = np.zeros(d)
    for g, v in enumerate(values):
        coef[g * size : g * size + per_group] = v
    y = A @ coef + rng.normal(0.0, noise_std, size=n)

    meta = seed_meta(random_state, p)
    meta["group_values"] = [float(v) for v in values]
    meta["active_groups"] = list(range(active_groups))
    kind = "bi-level sparsity" if case == 1 else "group sparsity"
    return Problem(
        X=A,
        y=y,
        true_coef=coef,
        support=support_of(coef),
        groups=groups,
        name="xiang2014_bilevel",
        task="regression",
        description=(
            f"Xiang et al. (2014) Section 5.3, case {case} ({kind}): A ~ N(0, 1) of shape "
            f"{n} x {d}, {n_groups} groups of {size}, {active_groups} active groups with "
            f"{per_group} equal nonzeros each, noise std {noise_std:g}."
        ),
        feature_names=tuple(f"g{g}_{j % size}" for j, g in enumerate(groups)),
        meta=meta,
    )


XIANG2014_CONVERGENCE_PARAMS = (
    Param(
        "n",
        "int",
        100,
        "Number of samples (the paper: 100 or 1000).",
        minimum=2,
        maximum=100_000,
    ),
    Param(
        "p",
        "int",
        2000,
        "Number of features (the paper: 2000, 5000, 20000 or 50000).",
        minimum=1,
        maximum=1_000_000,
    ),
    Param(
        "group_size",
        "int",
        100,
        "Features per group, contiguous (the paper: 100).",
        minimum=1,
    ),
    Param(
        "active_groups",
        "int",
        None,
        "Groups carrying signal, drawn at random (default: 10% of the groups, the paper's "
        "smaller s2).",
        minimum=1,
        nullable=True,
    ),
    Param(
        "active_features",
        "int",
        5,
        "Nonzero features per active group, drawn at random (the paper's s1 = 5 s2).",
        minimum=1,
    ),
    Param("noise_std", "float", 0.1, "Standard deviation of the Gaussian noise.", minimum=0.0),
)


def xiang2014_convergence(
    random_state: RandomState = None,
    *,
    n: int = 100,
    p: int = 2000,
    group_size: int = 100,
    active_groups: int | None = None,
    active_features: int = 5,
    noise_std: float = 0.1,
) -> Problem:
    """Xiang, Yang & Ye (2014) Section 5.2: the data sets of the convergence study (Figure 4).

    The paper: "we generate A in R^{n x p}, y in R^n, where the values of n and p are chosen
    from {(100, 2000), (100, 5000), (1000, 20000), (1000, 50000)}. All of the p features are
    partitioned into groups of size 100. The value of s2 is selected from {0.1|G|, 0.2|G|} [...]
    s1 is set to 5 s2". It says only that (A, y) are "randomly generated". Our choices:

    * ``A`` has i.i.d. N(0, 1) entries; ``groups[j] = j // group_size`` (contiguous groups).
    * ``y = A x + eps`` from a planted x with the budgets of the run: ``active_groups`` groups
      drawn at random, ``active_features`` random features in each, N(0, 1) values; so the
      constrained minimum is near the noise level and the objective curves of different
      settings are on one scale (a y of pure noise would make every support nearly as good).
    * ``eps ~ N(0, noise_std^2)``.

    Draw order: A, then the groups, then per group (in the order drawn) its values and then its
    features, then the noise; a given seed gives the problem that ``bench/sght_projection.py``
    used to build inline, so its earlier outputs stay reproducible.

    Parameters
    ----------
    random_state : int, numpy Generator or None
    n, p : int
    group_size : int
        Must divide p.
    active_groups : int or None
        At most the number of groups; None means ``max(1, round(0.1 |G|))``.
    active_features : int
        At most ``group_size``.
    noise_std : float

    Returns
    -------
    Problem
        With ``groups`` set and ``meta["active_groups"]`` the planted groups, sorted.
    """
    params = check_params(
        "xiang2014_convergence",
        XIANG2014_CONVERGENCE_PARAMS,
        n=n,
        p=p,
        group_size=group_size,
        active_groups=active_groups,
        active_features=active_features,
        noise_std=noise_std,
    )
    require(p % group_size == 0, "group_size", f"a divisor of p = {p}", group_size)
    n_groups = p // group_size
    if active_groups is None:
        active_groups = max(1, round(0.1 * n_groups))
    require(active_groups <= n_groups, "active_groups", f"at most {n_groups} groups", active_groups)
    require(
        active_features <= group_size,
        "active_features",
        f"at most group_size = {group_size}",
        active_features,
    )
    rng = make_rng(random_state)

    A = rng.standard_normal((n, p))
    groups = np.arange(p) // group_size
    coef = np.zeros(p)
    chosen = rng.choice(n_groups, active_groups, replace=False)
    for g in chosen:
        values = rng.standard_normal(active_features)
        coef[g * group_size + rng.choice(group_size, active_features, replace=False)] = values
    y = A @ coef + noise_std * rng.standard_normal(n)

    meta = seed_meta(random_state, params)
    meta["active_groups"] = sorted(int(g) for g in chosen)
    return Problem(
        X=A,
        y=y,
        true_coef=coef,
        support=support_of(coef),
        groups=groups,
        name="xiang2014_convergence",
        task="regression",
        description=(
            f"Xiang et al. (2014) Section 5.2: A ~ N(0, 1) of shape {n} x {p}, {n_groups} groups "
            f"of {group_size}; y from {active_groups} random groups with {active_features} "
            f"random N(0, 1) coefficients each, noise std {noise_std:g}."
        ),
        feature_names=tuple(f"g{g}_{j % group_size}" for j, g in enumerate(groups)),
        meta=meta,
    )


# --------------------------------------------------------------------------- generic demo

GAUSSIAN_PARAMS = (
    Param("n", "int", 100, "Number of samples.", minimum=2, maximum=100_000),
    Param("d", "int", 20, "Number of features.", minimum=1, maximum=100_000),
    Param("k_true", "int", 5, "Number of true features.", minimum=1, maximum=100_000),
    Param(
        "rho",
        "float",
        0.5,
        "Correlation rho^|i-j| between features i and j.",
        minimum=-0.99,
        maximum=0.99,
    ),
    Param(
        "snr",
        "float",
        5.0,
        "Signal-to-noise ratio Var(x.w) / Var(noise).",
        minimum=0.0,
        exclusive_minimum=True,
    ),
)


def gaussian_regression(
    random_state: RandomState = None,
    *,
    n: int = 100,
    d: int = 20,
    k_true: int = 5,
    rho: float = 0.5,
    snr: float = 5.0,
) -> Problem:
    """A small sparse linear model with Toeplitz-correlated Gaussian features, for demos.

    Rows are i.i.d. N(0, Sigma) with ``Sigma_ij = rho^|i-j|``, drawn by the AR(1) recursion
    ``x_1 = z_1``, ``x_j = rho x_{j-1} + sqrt(1 - rho^2) z_j`` (O(nd), no factorisation). The
    ``k_true`` true features sit at random positions with coefficients ``+-U[1, 2]``, and
    ``y = X w + e`` with ``Var(e) = w' Sigma w / snr`` (the population signal variance, so the
    noise level does not depend on the draw of X).

    Parameters
    ----------
    random_state : int, numpy Generator or None
    n, d, k_true : int
        ``k_true <= d``.
    rho : float
        In [-0.99, 0.99].
    snr : float
        Positive.

    Returns
    -------
    Problem
    """
    p = check_params(
        "gaussian_regression", GAUSSIAN_PARAMS, n=n, d=d, k_true=k_true, rho=rho, snr=snr
    )
    require(k_true <= d, "k_true", f"an integer between 1 and d = {d}", k_true)
    rng = make_rng(random_state)

    X = ar1_rows(rng, n, d, rho, innovation_var=1.0 - rho * rho, first_var=1.0)
    coef = np.zeros(d)
    support = np.sort(rng.choice(d, size=k_true, replace=False))
    coef[support] = rng.uniform(1.0, 2.0, k_true) * rng.choice([-1.0, 1.0], k_true)
    signal_var = float(coef @ toeplitz_times(rho, coef))
    noise_std = np.sqrt(signal_var / snr)
    y = X @ coef + rng.normal(0.0, noise_std, size=n)

    meta = seed_meta(random_state, p)
    meta["noise_std"] = float(noise_std)
    return Problem(
        X=X,
        y=y,
        true_coef=coef,
        support=support_of(coef),
        name="gaussian_regression",
        task="regression",
        description=(
            f"Gaussian regression: n = {n}, d = {d}, {k_true} true features, correlation "
            f"rho^|i-j| with rho = {rho:g}, signal-to-noise ratio {snr:g}."
        ),
        feature_names=names("x", d),
        meta=meta,
    )


def ar1_rows(
    rng: np.random.Generator,
    n: int,
    d: int,
    alpha: float,
    *,
    innovation_var: float,
    first_var: float,
) -> np.ndarray:
    """Rows that are AR(1) sequences along the feature index: x_j = alpha x_{j-1} + e_j.

    ``first_var = innovation_var / (1 - alpha^2)`` starts the chain in its stationary law, so
    every feature has the same variance and corr(x_i, x_j) = alpha^|i-j|.
    """
    scale = np.full(d, np.sqrt(innovation_var))
    scale[0] = np.sqrt(first_var)
    return lfilter([1.0], [1.0, -alpha], rng.standard_normal((n, d)) * scale, axis=1)


def toeplitz_times(alpha: float, v: np.ndarray) -> np.ndarray:
    """T v with T_ij = alpha^|i-j|, as two first-order recursions (T itself is d x d)."""
    fwd = lfilter([1.0], [1.0, -alpha], v)
    bwd = lfilter([1.0], [1.0, -alpha], v[::-1])[::-1]
    return fwd + bwd - v
