"""Algorithms: importing this package registers every one of them."""

from . import backward, foba, forward, oblivious  # noqa: F401  (registration side effects)
