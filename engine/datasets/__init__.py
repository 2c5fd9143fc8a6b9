"""Seeded problem generators from the five papers, and a registry describing them.

Every generator is a plain function ``f(random_state=None, **params) -> Problem``; the same
integer seed gives identical arrays. ``GENERATORS`` describes each one (title, help, paper,
parameters with type, default and range) so that the app can build its forms from it, and
:func:`generate` is the validated entry point::

    problem = generate("zhang2008", random_state=0, n=100)
    problem.X, problem.y, problem.true_coef, problem.support
"""

from __future__ import annotations

from typing import Any

from .base import DatasetSpec, Problem, RandomState
from .bundled import bundled_path, list_bundled, load_bundled
from .chains import CRF_PARAMS, liu2014_crf, split_chains
from .classification import ELENBERG2016_PARAMS, LIU2014_PARAMS, elenberg2016, liu2014_logistic
from .regression import (
    GAUSSIAN_PARAMS,
    XIANG2014_CONVERGENCE_PARAMS,
    XIANG2014_PARAMS,
    ZHANG2008_PARAMS,
    gaussian_regression,
    xiang2014_bilevel,
    xiang2014_convergence,
    zhang2008,
)
from .sparse import SPARSE_PARAMS, sparse_design

_SPECS = (
    DatasetSpec(
        name="zhang2008",
        title="Zhang 2008 simulation",
        help="n=100, d=500, 5 true features U[0,10], decoy columns correlated with true ones.",
        reference="T. Zhang, Adaptive Forward-Backward Greedy Algorithm (NIPS 2008), Sec. 4.1",
        func=zhang2008,
        params=ZHANG2008_PARAMS,
        task="regression",
    ),
    DatasetSpec(
        name="liu2014_logistic",
        title="Liu et al. 2014 two Gaussian classes",
        help="Classes N(+beta*, I) and N(-beta*, I), beta* sparse with norm 5, labels +-1.",
        reference="J. Liu, R. Fujimaki, J. Ye, Forward-Backward Greedy Algorithms for General "
        "Convex Smooth Functions (ICML 2014), App. D.1.1",
        func=liu2014_logistic,
        params=LIU2014_PARAMS,
        task="classification",
    ),
    DatasetSpec(
        name="liu2014_crf",
        title="Liu et al. 2014 CRF chains",
        help="T=800 positions, 4 sensors with 5 states, 4 labels drawn from a sparse "
        "linear-chain CRF; for the crf objective.",
        reference="J. Liu, R. Fujimaki, J. Ye, Forward-Backward Greedy Algorithms for General "
        "Convex Smooth Functions (ICML 2014), App. D.2",
        func=liu2014_crf,
        params=CRF_PARAMS,
        task="sequence",
    ),
    DatasetSpec(
        name="elenberg2016",
        title="Elenberg et al. 2016 AR(1) logistic",
        help="AR(1) rows (alpha 0.3, variance 5), 50 Rademacher nonzeros, logistic 0/1 labels.",
        reference="E. Elenberg, R. Khanna, A. Dimakis, S. Negahban, Restricted Strong "
        "Convexity Implies Weak Submodularity (2016), Sec. 4",
        func=elenberg2016,
        params=ELENBERG2016_PARAMS,
        task="classification",
    ),
    DatasetSpec(
        name="xiang2014_bilevel",
        title="Xiang et al. 2014 bi-level groups",
        help="A ~ N(0,1) 100x200, 20 groups of 10; case 1 bi-level, case 2 whole groups.",
        reference="S. Xiang, T. Yang, J. Ye, Simultaneous Feature and Feature Group Selection "
        "through Hard Thresholding (KDD 2014), Sec. 5.3",
        func=xiang2014_bilevel,
        params=XIANG2014_PARAMS,
        task="regression",
    ),
    DatasetSpec(
        name="xiang2014_convergence",
        title="Xiang et al. 2014 convergence sets",
        help="A ~ N(0,1) n x p in groups of 100 (paper: (100,2000) to (1000,50000)); y from "
        "random groups with 5 random N(0,1) coefficients each.",
        reference="S. Xiang, T. Yang, J. Ye, Simultaneous Feature and Feature Group Selection "
        "through Hard Thresholding (KDD 2014), Sec. 5.2",
        func=xiang2014_convergence,
        params=XIANG2014_CONVERGENCE_PARAMS,
        task="regression",
    ),
    DatasetSpec(
        name="sparse_design",
        title="RCV1-like sparse design",
        help="20,000 x 50,000 tf-idf CSR at density 0.001, 100 true features, least squares.",
        reference="Shape of RCV1 binary as used by Elenberg et al. (2016), Sec. 4",
        func=sparse_design,
        params=SPARSE_PARAMS,
        task="regression",
    ),
    DatasetSpec(
        name="gaussian_regression",
        title="Gaussian regression (demo)",
        help="Small sparse linear model with rho^|i-j| correlated Gaussian features.",
        reference="Generic; no paper",
        func=gaussian_regression,
        params=GAUSSIAN_PARAMS,
        task="regression",
    ),
)

GENERATORS: dict[str, DatasetSpec] = {spec.name: spec for spec in _SPECS}


def generate(name: str, random_state: RandomState = None, **params: Any) -> Problem:
    """Generate the problem ``name`` with validated parameters.

    Parameters
    ----------
    name : str
        A key of ``GENERATORS``.
    random_state : int, numpy Generator or None
        The same integer gives identical arrays; a Generator is drawn from (and advanced).
    **params
        The generator's parameters; missing ones take their defaults.

    Returns
    -------
    Problem

    Raises
    ------
    ValueError
        Unknown name or parameter, or a value outside its allowed range (the message names the
        parameter and the range).
    """
    try:
        spec = GENERATORS[name]
    except KeyError:
        raise ValueError(
            f"unknown dataset {name!r}; available: {', '.join(sorted(GENERATORS))}"
        ) from None
    return spec.func(random_state, **spec.validate(params))


__all__ = [
    "GENERATORS",
    "DatasetSpec",
    "Problem",
    "bundled_path",
    "elenberg2016",
    "gaussian_regression",
    "generate",
    "list_bundled",
    "liu2014_crf",
    "liu2014_logistic",
    "load_bundled",
    "sparse_design",
    "split_chains",
    "xiang2014_bilevel",
    "xiang2014_convergence",
    "zhang2008",
]
