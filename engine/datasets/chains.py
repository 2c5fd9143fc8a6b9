"""Linear-chain CRF data in the setting of Liu, Fujimaki & Ye (2014), Appendix D.2.

The paper used the generator of Schmidt's Matlab crfChain package and omits its description
("because of space limitations"); it states only the shape: X in {1..5}^(T x D) with T = 800,
D = 4, and four labels. We therefore draw data from the CRF itself, so that the true model, and
with it the relevant observation features, is known exactly:

1. observations: every sensor's state is uniform on its ``n_states`` states, independently
   over positions and sensors (the CRF models y given x, so any law of x will do);
2. the true model: ``n_relevant`` distinct (sensor, state, label) indicators, chosen uniformly,
   with weights of random sign and magnitude uniform in [w_min, w_max]; transitions with
   ``stickiness`` on the diagonal plus N(0, 0.25) noise (labels that persist, like
   activities); label biases zero;
3. labels: one exact draw from P(y | x) per chain (forward filtering, backward sampling).

Feature j = (v * n_states + s) * n_labels + c, as ``engine.objectives.chains`` encodes it.
"""

from __future__ import annotations

import numpy as np

from ..objectives.chain_inference import ChainLayout, sample_labels
from ..registry import Param
from .base import Problem, RandomState, check_params, make_rng, require, seed_meta

CRF_PARAMS = (
    Param(
        "T",
        "int",
        800,
        "Positions in the training chain (the paper: 800).",
        minimum=2,
        maximum=1_000_000,
    ),
    Param("D", "int", 4, "Observed variables (sensors) (the paper: 4).", minimum=1, maximum=1000),
    Param("n_states", "int", 5, "States of every sensor (the paper: 5).", minimum=2, maximum=100),
    Param("n_labels", "int", 4, "Labels (the paper: 4).", minimum=2, maximum=50),
    Param(
        "n_relevant",
        "int",
        10,
        "Nonzero observation features of the true model (the paper's Figure 4: 10 to 30).",
        minimum=1,
        maximum=100_000,
    ),
    Param(
        "n_chains",
        "int",
        1,
        "The T positions are split into this many chains of equal length.",
        minimum=1,
        maximum=100_000,
    ),
    Param(
        "w_min",
        "float",
        1.0,
        "Smallest |weight| of a relevant feature.",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    Param(
        "w_max",
        "float",
        2.0,
        "Largest |weight| of a relevant feature.",
        minimum=0.0,
        exclusive_minimum=True,
    ),
    Param(
        "stickiness", "float", 1.5, "Transition weight of staying in the same label.", minimum=0.0
    ),
    Param(
        "n_test",
        "int",
        0,
        "Test positions from the same model, in meta['X_test'] and "
        "meta['y_test'] (chains of the same length as the training ones).",
        minimum=0,
        maximum=1_000_000,
    ),
)


def liu2014_crf(
    random_state: RandomState = None,
    *,
    T: int = 800,
    D: int = 4,
    n_states: int = 5,
    n_labels: int = 4,
    n_relevant: int = 10,
    n_chains: int = 1,
    w_min: float = 1.0,
    w_max: float = 2.0,
    stickiness: float = 1.5,
    n_test: int = 0,
) -> Problem:
    """Chains of discrete observations with labels drawn from a sparse linear-chain CRF.

    Returns
    -------
    Problem
        ``X`` (T, D) int states and ``y`` (T,) int labels, one chain (or ``n_chains`` chains
        laid end to end: ``meta["lengths"]``); ``true_coef`` over the D * n_states * n_labels
        indicator features and its ``support``; ``groups`` the sensor of every feature (so
        ``engine.metrics.groups_used`` counts sensors); ``meta["transitions"]`` and
        ``meta["label_bias"]`` the dense truth; ``meta["X_test"]``, ``meta["y_test"]``.
    """
    params = check_params(
        "liu2014_crf",
        CRF_PARAMS,
        T=T,
        D=D,
        n_states=n_states,
        n_labels=n_labels,
        n_relevant=n_relevant,
        n_chains=n_chains,
        w_min=w_min,
        w_max=w_max,
        stickiness=stickiness,
        n_test=n_test,
    )
    F = D * n_states * n_labels
    require(n_relevant <= F, "n_relevant", f"at most D x n_states x n_labels = {F}", n_relevant)
    require(w_min <= w_max, "w_max", f"at least w_min = {w_min}", w_max)
    require(T % n_chains == 0, "n_chains", f"a divisor of T = {T}", n_chains)
    require(
        n_test % (T // n_chains) == 0,
        "n_test",
        f"a multiple of the chain length {T // n_chains}",
        n_test,
    )
    rng = make_rng(random_state)

    coef = np.zeros(F)
    support = np.sort(rng.choice(F, size=n_relevant, replace=False))
    coef[support] = rng.choice([-1.0, 1.0], size=n_relevant) * rng.uniform(
        w_min, w_max, size=n_relevant
    )
    transitions = stickiness * np.eye(n_labels) + rng.normal(0.0, 0.5, (n_labels, n_labels))
    bias = np.zeros(n_labels)
    length = T // n_chains
    X, y = _sample(rng, T, length, D, n_states, coef, bias, transitions)

    meta = seed_meta(random_state, params)
    meta.update(
        lengths=[length] * n_chains,
        transitions=transitions,
        label_bias=bias,
    )
    if n_test:
        X_test, y_test = _sample(rng, n_test, length, D, n_states, coef, bias, transitions)
        meta.update(X_test=X_test, y_test=y_test, test_lengths=[length] * (n_test // length))
    return Problem(
        X=X,
        y=y,
        true_coef=coef,
        support=support,
        name="liu2014_crf",
        task="sequence",
        description=(
            f"Liu et al. (2014) App. D.2 setting: {n_chains} chain(s), {T} positions, {D} "
            f"sensors with {n_states} states, {n_labels} labels; {n_relevant} of the {F} "
            f"sensor x state x label indicators relevant (|w| in [{w_min:g}, {w_max:g}]), "
            "labels drawn exactly from the CRF."
        ),
        groups=np.repeat(np.arange(D), n_states * n_labels),
        feature_names=tuple(
            f"x{v}={s} & y={c}" for v in range(D) for s in range(n_states) for c in range(n_labels)
        ),
        model_features=F,
        meta=meta,
    )


def _sample(rng, T, length, D, n_states, coef, bias, transitions):
    X = rng.integers(0, n_states, size=(T, D))
    n_labels = bias.size
    W = coef.reshape(D * n_states, n_labels)
    rows = X + (np.arange(D) * n_states)[None, :]
    unary = W[rows].sum(axis=1) + bias
    layout = ChainLayout(np.arange(0, T + 1, length))
    y = sample_labels(layout, unary, transitions, rng)
    return X, y


def split_chains(X: np.ndarray, y: np.ndarray, lengths) -> tuple[list, list]:
    """Cut chains laid end to end (a Problem's X, y and meta['lengths']) into lists, the form
    ``engine.select`` takes for several chains."""
    cuts = np.cumsum(lengths)[:-1]
    return np.split(np.asarray(X), cuts), np.split(np.asarray(y), cuts)
