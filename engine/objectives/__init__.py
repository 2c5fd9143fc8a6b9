"""Objectives: one small class per loss, each with its active-set model."""

from .base import FORWARD_RULES, ActiveSet, CollinearFeature, Objective
from .glm import GLMObjective, SmoothLoss
from .least_squares import LeastSquares
from .logistic import Logistic
from .smoothed import SmoothedAbsolute, SmoothedHinge

__all__ = [
    "FORWARD_RULES",
    "ActiveSet",
    "CollinearFeature",
    "GLMObjective",
    "LeastSquares",
    "Logistic",
    "Objective",
    "SmoothLoss",
    "SmoothedAbsolute",
    "SmoothedHinge",
]
