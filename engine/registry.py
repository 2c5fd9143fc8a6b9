"""Declarative descriptions of algorithms and objectives.

The app builds its forms and its API's JSON schemas from these entries, and ``engine.select``
validates user parameters against them, so a parameter is described exactly once: here, next
to the function that uses it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

_TYPES = {"int": int, "float": float, "str": str, "bool": bool}


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
                lo = f"{'>' if self.exclusive_minimum else '>='} {self.minimum:g}"
            hi = f"<= {self.maximum:g}" if self.maximum is not None else None
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
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise err
            if self.type == "int":
                if isinstance(value, float) and not value.is_integer():
                    raise err
                value = int(value)
            else:
                value = float(value)
                if not math.isfinite(value):
                    raise err
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


@dataclass(frozen=True)
class AlgorithmSpec(ParamsOwner):
    """A registered algorithm.

    ``k`` says how the algorithm uses the target support size: ``"required"``, ``"optional"``
    (another stopping rule may replace it) or ``"unused"``.
    """

    name: str
    title: str
    summary: str
    reference: str
    func: Callable[..., Any]
    params: tuple[Param, ...] = ()
    k: str = "required"
    objectives: tuple[str, ...] | None = None  # None: every objective
    family: str = "greedy"
    uses_groups: bool = False  # receives ``groups`` (one int label per feature, or None)
    kind: ClassVar[str] = "algorithm"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "summary": self.summary,
            "reference": self.reference,
            "family": self.family,
            "k": self.k,
            "objectives": list(self.objectives) if self.objectives else None,
            "uses_groups": self.uses_groups,
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
    algorithms: tuple[str, ...] | None = None  # None: every algorithm
    kind: ClassVar[str] = "objective"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "summary": self.summary,
            "reference": self.reference,
            "task": self.task,
            "algorithms": list(self.algorithms) if self.algorithms else None,
            "params": [p.to_dict() for p in self.params],
            "schema": self.json_schema(),
        }


@dataclass
class Registry:
    algorithms: dict[str, AlgorithmSpec] = field(default_factory=dict)
    objectives: dict[str, ObjectiveSpec] = field(default_factory=dict)

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
        if entry.name in REGISTRY.algorithms:
            raise ValueError(f"algorithm {entry.name!r} registered twice")
        REGISTRY.algorithms[entry.name] = entry
        return func

    return deco


def register_objective(entry: ObjectiveSpec) -> None:
    if entry.name in REGISTRY.objectives:
        raise ValueError(f"objective {entry.name!r} registered twice")
    REGISTRY.objectives[entry.name] = entry
