"""FoBa Lab engine: sparse feature selection under a cardinality constraint, traced.

Pure numerics (numpy, scipy). Public face::

    result = engine.select(X, y, algorithm="foba-obj", objective="least_squares", k=5)
    result.support, result.coef, result.intercept, result.objective, result.trace

``ALGORITHMS`` and ``OBJECTIVES`` describe every entry and its parameters; ``check_config``
checks a request against them (``select`` calls it; so does the app before it queues a run).

Judging an answer (``engine.judge``; ``JUDGES`` describes their parameters)::

    engine.certify(X, y, result.support, objective="logistic")   # local optimum under swaps?
    engine.why_not(X, y, result.support, feature=7, objective="logistic")
    engine.exact_best(X, y, k=5, support=result.support, objective="logistic")
"""

from .api import SelectionResult, select
from .config import (
    Config,
    ConfigError,
    PathBudget,
    check_config,
    default_k,
    default_objective,
    path_budget,
)
from .from_statistics import select_from_statistics
from .judge import TOOLS as JUDGES
from .judge import Certificate, ExactResult, Exchange, FeatureVerdict, certify, exact_best, why_not
from .registry import REGISTRY, AlgorithmSpec, ObjectiveSpec, Param, Requirements, Traits
from .statistics import SufficientStatistics
from .trace import Event, Recorder

ALGORITHMS = REGISTRY.algorithms
OBJECTIVES = REGISTRY.objectives

__all__ = [
    "ALGORITHMS",
    "JUDGES",
    "OBJECTIVES",
    "AlgorithmSpec",
    "Certificate",
    "Config",
    "ConfigError",
    "Event",
    "ExactResult",
    "Exchange",
    "FeatureVerdict",
    "ObjectiveSpec",
    "Param",
    "PathBudget",
    "Recorder",
    "Requirements",
    "SelectionResult",
    "SufficientStatistics",
    "Traits",
    "certify",
    "check_config",
    "default_k",
    "default_objective",
    "exact_best",
    "path_budget",
    "select",
    "select_from_statistics",
    "why_not",
]
