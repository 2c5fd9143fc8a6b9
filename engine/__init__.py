"""FoBa Lab engine: sparse feature selection under a cardinality constraint, traced.

Pure numerics (numpy, scipy). Public face::

    result = engine.select(X, y, algorithm="foba-obj", objective="least_squares", k=5)
    result.support, result.coef, result.intercept, result.objective, result.trace

``ALGORITHMS`` and ``OBJECTIVES`` describe every entry and its parameters.
"""

from .api import SelectionResult, select
from .registry import REGISTRY, AlgorithmSpec, ObjectiveSpec, Param
from .trace import Event, Recorder

ALGORITHMS = REGISTRY.algorithms
OBJECTIVES = REGISTRY.objectives

__all__ = [
    "ALGORITHMS",
    "OBJECTIVES",
    "AlgorithmSpec",
    "Event",
    "ObjectiveSpec",
    "Param",
    "Recorder",
    "SelectionResult",
    "select",
]
