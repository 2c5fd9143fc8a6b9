"""Objectives: one small class per loss, each with its active-set model."""

from .base import FORWARD_RULES, ActiveSet, CollinearFeature, Objective
from .least_squares import LeastSquares
from .logistic import Logistic

__all__ = [
    "FORWARD_RULES",
    "ActiveSet",
    "CollinearFeature",
    "LeastSquares",
    "Logistic",
    "Objective",
]
