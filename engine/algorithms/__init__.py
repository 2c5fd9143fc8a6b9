"""Algorithms: importing this package registers every one of them."""

from . import (  # noqa: F401  (registration side effects)
    backward,
    foba,
    forward,
    frank_wolfe,
    group_omp,
    lasso,
    oblivious,
    sght,
    splicing,
)
