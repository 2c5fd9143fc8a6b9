"""Declarative descriptions of algorithms and objectives.

The app builds its forms and its API's JSON schemas from these entries, and ``engine.select``
validates user parameters against them, so a parameter is described exactly once: here, next
to the function that uses it.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

_TYPES = {"int": int, "float": float, "str": str, "bool": bool}
# An int parameter without its own bounds still gets these: counts and iteration caps are
# far below, and a larger value (1e300 steps) is a mistake, not a wish.
INT_LIMIT = 2**31 - 1


@dataclass(frozen=True)
class Param:
    """One parameter: its type, default, allowed values and a one-line help text.

    ``minimum``/``maximum`` bound numbers (``exclusive_minimum`` makes the lower bound strict);
    ``choices`` lists allowed strings; ``nullable`` lets None mean "not used".
    """

    name: str
    type: str
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    choices: tuple[str, ...] | None = None
    nullable: bool = False
    required: bool = False

    def __post_init__(self) -> None:
        if self.type not in _TYPES:
            raise TypeError(f"param {self.name}: unknown type {self.type}")

    def allowed(self) -> str:
        """Human description of the allowed values, used in error messages."""
        if self.choices:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.type in ("int", "float"):
            kind = "an integer" if self.type == "int" else "a number"
            lo = None
            if self.minimum is not None:
                lo = f"{'>' if self.exclusive_minimum else '>='} {_number(self.minimum, self.type)}"
            maximum = self.maximum
            if maximum is None and self.type == "int":
                maximum = INT_LIMIT
            hi = f"<= {_number(maximum, self.type)}" if maximum is not None else None
            text = kind + (" " + " and ".join(x for x in (lo, hi) if x) if lo or hi else "")
        elif self.type == "bool":
            text = "true or false"
        else:
            text = "a string"
        return text + (" (or null)" if self.nullable else "")

    def validate(self, value: Any) -> Any:
        err = ValueError(f"parameter {self.name!r} must be {self.allowed()}, got {value!r}")
        if value is None:
            if self.nullable:
                return None
            raise err
        if self.type == "bool":
            if not isinstance(value, bool):
                raise err
            return value
        if self.type in ("int", "float"):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise err
            if self.type == "int":
                # Strict: 5.0 or 1e300 is a number, not an integer (JSON keeps them apart).
                if not isinstance(value, numbers.Integral) or abs(int(value)) > INT_LIMIT:
                    raise err
                value = int(value)
            else:
                value = float(value)
                if not math.isfinite(value):
                    raise err
                if value != 0.0 and abs(value) < sys.float_info.min:
                    # A subnormal (nu = 1e-320): 1/nu overflows, nu * delta underflows to 0.
                    raise ValueError(
                        f"parameter {self.name!r} = {value!r} is closer to 0 than the smallest "
                        f"normal number ({sys.float_info.min:.3g}); use {self.allowed()}, not a "
                        "subnormal number"
                    )
            if self.minimum is not None and (
                value < self.minimum or (self.exclusive_minimum and value == self.minimum)
            ):
                raise err
            if self.maximum is not None and value > self.maximum:
                raise err
            return value
        if not isinstance(value, str) or (self.choices and value not in self.choices):
            raise err
        return value

    def json_schema(self) -> dict[str, Any]:
        base: dict[str, Any] = {
            "int": {"type": "integer"},
            "float": {"type": "number"},
            "str": {"type": "string"},
            "bool": {"type": "boolean"},
        }[self.type]
        if self.choices:
            base["enum"] = list(self.choices)
        if self.minimum is not None:
            key = "exclusiveMinimum" if self.exclusive_minimum else "minimum"
            base[key] = self.minimum
        if self.maximum is not None:
            base["maximum"] = self.maximum
        elif self.type == "int":
            base["maximum"] = INT_LIMIT
        if self.type == "int" and self.minimum is None:
            base["minimum"] = -INT_LIMIT
        if self.nullable:
            base = {"anyOf": [base, {"type": "null"}]}
        base["description"] = self.help
        if not self.required:
            base["default"] = self.default
        return base

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "default": self.default,
            "help": self.help,
            "minimum": self.minimum,
            "maximum": self.maximum,
            "exclusive_minimum": self.exclusive_minimum,
            "choices": list(self.choices) if self.choices else None,
            "nullable": self.nullable,
            "required": self.required,
        }


def _number(x: float, kind: str) -> str:
    return f"{int(x)}" if kind == "int" and float(x).is_integer() else f"{x:g}"


def validate_params(
    owner: str, specs: tuple[Param, ...], given: Mapping[str, Any]
) -> dict[str, Any]:
    """Defaults filled in, every value checked; unknown names are an error naming the allowed."""
    by_name = {p.name: p for p in specs}
    unknown = sorted(set(given) - set(by_name))
    if unknown:
        allowed = ", ".join(sorted(by_name)) or "none"
        raise ValueError(f"{owner} has no parameter {unknown[0]!r}; its parameters: {allowed}")
    out = {}
    for p in specs:
        if p.name in given:
            out[p.name] = p.validate(given[p.name])
        elif p.required:
            raise ValueError(f"parameter {p.name!r} is required for {owner}: {p.help}")
        else:
            out[p.name] = p.default
    return out


def params_schema(title: str, specs: tuple[Param, ...]) -> dict[str, Any]:
    return {
        "title": title,
        "type": "object",
        "properties": {p.name: p.json_schema() for p in specs},
        "required": [p.name for p in specs if p.required],
        "additionalProperties": False,
    }


class ParamsOwner:
    """What every registered entry with parameters shares: validation and its JSON schema.

    Subclasses are dataclasses with ``name`` and ``params``; ``kind`` names them in errors.
    """

    kind: ClassVar[str] = "entry"
    name: str
    params: tuple[Param, ...]

    def validate(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults filled in, every value checked (ValueError naming the parameter)."""
        return validate_params(f"{self.kind} {self.name!r}", self.params, given)

    def json_schema(self) -> dict[str, Any]:
        return params_schema(f"{self.name} parameters", self.params)


# What an objective can offer beyond the active-set interface every objective has (refit on a
# support, forward scores, deletion costs). Objective classes list theirs in ``capabilities``.
CAPABILITIES: dict[str, str] = {
    "linear": "a linear model X @ coef + intercept over the columns of a feature matrix, with "
    "its value and gradient at any point and the matrix itself (``design``)",
    "quadratic": "a quadratic loss (least squares), for exact path algebra such as LARS",
    "l1-path": "an l1-regularised path solver for its loss (scikit-learn's LARS or coordinate "
    "descent for least squares, its logistic solvers for the log-loss)",
    "splicing": "a loss the abess package's best-subset splicing solves (least squares, logistic)",
}

PATHS = {
    "best-k": "the path may grow past k; the answer is the best size-k support along it "
    "(Zhang 2008)",
    "prefix": "features are only added: the support after the k-th addition is the size-k answer",
    "backward": "features are only removed from the full model: every size is visited once",
    "final": "the answer is where the method ends; sizes along the way are not answers",
}


@dataclass(frozen=True)
class Requirements:
    """What an algorithm needs, checked once by ``engine.check_config``.

    capabilities: what it asks of the objective (keys of ``CAPABILITIES``).
    when: capabilities needed only for some parameter values, ``{param: {value: (caps,)}}``.
    groups: it needs a group label for every feature.
    more_samples_than_features: it fits the full model first (n_samples > n_features).
    check: a final check of (k, params) that raises ValueError (a stopping rule is needed...).
    """

    capabilities: frozenset[str] = frozenset()
    when: Mapping[str, Mapping[Any, tuple[str, ...]]] = field(default_factory=dict)
    groups: bool = False
    more_samples_than_features: bool = False
    check: Callable[[int | None, Mapping[str, Any]], None] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "capabilities": sorted(self.capabilities),
            "when": {p: {str(v): list(c) for v, c in by.items()} for p, by in self.when.items()},
            "groups": self.groups,
            "more_samples_than_features": self.more_samples_than_features,
        }


@dataclass(frozen=True)
class Traits:
    """How an algorithm behaves, for the pages and the estimators (never for the numerics).

    forward_rule: the forward score it adds by: ``obj`` (one-coordinate objective drop),
        ``gdt`` (|gradient|), ``quad`` (quadratic approximation), ``refit`` (exact refit
        gain), ``alone`` (gain of the feature alone); None when it does not add greedily.
    rule_param: the parameter whose value replaces ``forward_rule`` (forward-obj's selection).
    deletion: how it prices a deletion: ``no-refit`` (zero the coefficient) or ``refit``.
    deletion_param: the parameter whose value replaces ``deletion``.
    backward_param: the parameter naming its backward threshold rule, if it has one.
    path: what the sizes along its path mean (a key of ``PATHS``).
    path_param: a parameter that post-processes the end of the path (replacement steps):
        with any value but ``"none"`` the answer at k is no longer the path's size-k support,
        so the path counts as ``final`` (``path_for``).
    default: the algorithm forms start with; compare: pre-ticked in comparisons.
    """

    forward_rule: str | None = None
    rule_param: str | None = None
    deletion: str | None = None
    deletion_param: str | None = None
    backward_param: str | None = None
    path: str = "final"
    path_param: str | None = None
    default: bool = False
    compare: bool = False

    def rule(self, params: Mapping[str, Any]) -> str | None:
        if self.rule_param is not None and self.rule_param in params:
            return str(params[self.rule_param])
        return self.forward_rule

    def path_for(self, params: Mapping[str, Any]) -> str:
        """What the sizes along the path mean with these (validated) parameters."""
        if self.path_param is not None and params.get(self.path_param, "none") != "none":
            return "final"
        if params.get("polish"):  # exchanges after the path: its sizes are no longer answers
            return "final"
        return self.path

    def deletion_for(self, params: Mapping[str, Any]) -> str | None:
        if self.deletion_param is not None and self.deletion_param in params:
            return str(params[self.deletion_param])
        return self.deletion


# Declared once for every algorithm whose answer is a refitted support of at most k features
# (``AlgorithmSpec.polishable``); ``engine.select`` applies it after the algorithm
# (``engine.judge.polish``), the algorithm itself never sees it.
POLISH = Param(
    "polish",
    "bool",
    False,
    "After the method, apply the best improving single exchange (one selected feature out, one "
    "other in, refitted) until none lowers the objective; each exchange is a swap event. This "
    "goes beyond the papers: their algorithm is unchanged when it is off.",
)


@dataclass(frozen=True)
class AlgorithmSpec(ParamsOwner):
    """A registered algorithm.

    ``k`` says how the algorithm uses the target support size: ``"required"``, ``"optional"``
    (another stopping rule may replace it) or ``"unused"``. ``family`` groups algorithms for
    display and progress; ``requires`` and ``traits`` are what the rest of the product reads
    instead of naming algorithms.
    """

    name: str
    title: str
    summary: str
    reference: str
    func: Callable[..., Any]
    params: tuple[Param, ...] = ()
    k: str = "required"
    family: str = "forward"
    requires: Requirements = field(default_factory=Requirements)
    traits: Traits = field(default_factory=Traits)
    # Whether the answer is a refitted support of at most k features, which ``polish`` can
    # improve by exchanges. None: decided from the rest of the entry (a k, no groups, a path
    # whose sizes are refitted supports).
    size_k_answer: bool | None = None
    kind: ClassVar[str] = "algorithm"

    @property
    def uses_groups(self) -> bool:
        return self.requires.groups

    @property
    def polishable(self) -> bool:
        if self.size_k_answer is not None:
            return self.size_k_answer
        return (
            self.k != "unused"
            and not self.requires.groups
            and self.traits.path in ("best-k", "prefix", "backward")
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "summary": self.summary,
            "reference": self.reference,
            "family": self.family,
            "k": self.k,
            "uses_groups": self.uses_groups,
            "polishable": self.polishable,
            "requires": self.requires.to_dict(),
            "path": self.traits.path,
            "forward_rule": self.traits.forward_rule,
            "params": [p.to_dict() for p in self.params],
            "schema": self.json_schema(),
        }


@dataclass(frozen=True)
class ObjectiveSpec(ParamsOwner):
    name: str
    title: str
    summary: str
    reference: str
    factory: Callable[..., Any]
    params: tuple[Param, ...] = ()
    task: str = "regression"  # or "classification", or "sequence" (labelled chains)
    # Validates and encodes (X, y) when the objective does not take a feature matrix (the CRF
    # takes chains); returns the (data, y) its factory receives. The data must have ``shape``
    # (positions, selectable features). None: X is a matrix of features.
    check_input: Callable[[Any, Any], tuple[Any, Any]] | None = None
    kind: ClassVar[str] = "objective"

    @property
    def capabilities(self) -> frozenset[str]:
        """Declared once, by the objective's class."""
        return frozenset(getattr(self.factory, "capabilities", ()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "summary": self.summary,
            "reference": self.reference,
            "task": self.task,
            "capabilities": sorted(self.capabilities),
            "params": [p.to_dict() for p in self.params],
            "schema": self.json_schema(),
        }


@dataclass
class Registry:
    algorithms: dict[str, AlgorithmSpec] = field(default_factory=dict)
    objectives: dict[str, ObjectiveSpec] = field(default_factory=dict)

    @property
    def default_algorithm(self) -> str:
        """The algorithm a form starts with."""
        return next(n for n, s in self.algorithms.items() if s.traits.default)

    def algorithm(self, name: str) -> AlgorithmSpec:
        try:
            return self.algorithms[name]
        except KeyError:
            raise ValueError(
                f"unknown algorithm {name!r}; available: {', '.join(sorted(self.algorithms))}"
            ) from None

    def objective(self, name: str) -> ObjectiveSpec:
        try:
            return self.objectives[name]
        except KeyError:
            raise ValueError(
                f"unknown objective {name!r}; available: {', '.join(sorted(self.objectives))}"
            ) from None


REGISTRY = Registry()


def register_algorithm(**spec: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: ``@register_algorithm(name=..., title=..., params=(...))``."""

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        entry = AlgorithmSpec(func=func, **spec)
        if entry.polishable:
            entry = replace(entry, params=(*entry.params, POLISH))
        named = set(entry.requires.capabilities)
        for by_value in entry.requires.when.values():
            named.update(*by_value.values())
        if not named <= set(CAPABILITIES) or entry.traits.path not in PATHS:
            raise ValueError(f"algorithm {entry.name!r}: unknown capability or path")
        if entry.name in REGISTRY.algorithms:
            raise ValueError(f"algorithm {entry.name!r} registered twice")
        REGISTRY.algorithms[entry.name] = entry
        return func

    return deco


def register_objective(entry: ObjectiveSpec) -> None:
    if entry.name in REGISTRY.objectives:
        raise ValueError(f"objective {entry.name!r} registered twice")
    REGISTRY.objectives[entry.name] = entry
