"""FoBa Lab engine: sparse feature selection under a cardinality constraint, traced.

Pure numerics (numpy, scipy). Public face::

    result = engine.select(X, y, algorithm="foba-obj", objective="least_squares", k=5)
    result.support, result.coef, result.intercept, result.objective, result.trace

``ALGORITHMS`` and ``OBJECTIVES`` describe every entry and its parameters; ``check_config``
checks a request against them (``select`` calls it; so does the app before it queues a run).
"""

from .api import SelectionResult, select
from .config import Config, ConfigError, PathBudget, check_config, path_budget
from .registry import REGISTRY, AlgorithmSpec, ObjectiveSpec, Param, Requirements, Traits
from .trace import Event, Recorder

ALGORITHMS = REGISTRY.algorithms
OBJECTIVES = REGISTRY.objectives

__all__ = [
    "ALGORITHMS",
    "OBJECTIVES",
    "AlgorithmSpec",
    "Config",
    "ConfigError",
    "Event",
    "ObjectiveSpec",
    "Param",
    "PathBudget",
    "Recorder",
    "Requirements",
    "SelectionResult",
    "Traits",
    "check_config",
    "path_budget",
    "select",
]
