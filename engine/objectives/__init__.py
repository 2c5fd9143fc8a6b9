"""Objectives: one small class per loss, each with its active-set model."""

from .base import FORWARD_RULES, ActiveSet, CollinearFeature, Objective
from .chains import Chains, check_chains
from .crf import CRF
from .glm import GLMObjective, SmoothLoss
from .least_squares import LeastSquares
from .logistic import Logistic
from .smoothed import SmoothedAbsolute, SmoothedHinge

__all__ = [
    "CRF",
    "FORWARD_RULES",
    "ActiveSet",
    "Chains",
    "CollinearFeature",
    "GLMObjective",
    "LeastSquares",
    "Logistic",
    "Objective",
    "SmoothLoss",
    "SmoothedAbsolute",
    "SmoothedHinge",
    "check_chains",
]
