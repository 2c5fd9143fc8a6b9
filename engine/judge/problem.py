"""The problem a judgement is made on: the objective built exactly as ``engine.select`` builds
it (same input checks, same column scaling, same objective parameters), so that the numbers a
certificate or an exact search reports are those of the run being judged."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config import ConfigError
from ..objectives import ActiveSet, CollinearFeature, Objective
from ..objectives.glm import GLMActiveSet
from ..registry import REGISTRY, Param, ParamsOwner
from ..scaling import column_scale, scale_columns


@dataclass(frozen=True)
class Problem:
    """The objective of a judgement, the column scales it was built on and its parameters."""

    objective: Objective
    objective_name: str
    params: dict[str, Any]
    scale: np.ndarray | None


def build_problem(
    X: Any, y: Any, *, objective: str, standardize: bool, params: Mapping[str, Any]
) -> Problem:
    """The objective ``engine.select(X, y, objective=..., standardize=..., **params)`` runs on.

    Raises
    ------
    ConfigError
        An unknown objective (field ``objective``) or parameter (field ``params``).
    """
    if not isinstance(objective, str) or objective not in REGISTRY.objectives:
        raise ConfigError(
            f"unknown objective {objective!r}; available: {', '.join(sorted(REGISTRY.objectives))}",
            "objective",
        )
    spec = REGISTRY.objective(objective)
    try:
        checked = spec.validate(dict(params))
    except ValueError as exc:
        raise ConfigError(str(exc), "params") from None
    from ..api import _check_data, _check_target  # the api imports the polish post-step

    if spec.check_input is not None:
        X, y = spec.check_input(X, y)
    else:
        X, y = _check_data(X, y)
        _check_target(y, spec.task)
    scale = None
    if standardize and "linear" in spec.capabilities:
        scale = column_scale(X, centered=bool(checked.get("fit_intercept", True)))
        X = scale_columns(X, scale)
    return Problem(spec.factory(X, y, **checked), objective, checked, scale)


def check_support(support: Sequence[int] | np.ndarray, n_features: int) -> list[int]:
    """Distinct feature indices in range, sorted (ValueError naming the one at fault)."""
    out: list[int] = []
    for j in np.asarray(support).ravel().tolist():
        if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < n_features:
            raise ConfigError(
                f"support must hold feature indices 0..{n_features - 1}, got {j!r}", "support"
            )
        if j in out:
            raise ConfigError(f"feature {j} appears twice in the support", "support")
        out.append(j)
    return sorted(out)


def fit(objective: Objective, features: Sequence[int]) -> ActiveSet:
    """The refit on ``features``, leaving out a feature in the span of those before it (least
    squares): the fit, and so the objective, is the same without it."""
    state = objective.start()
    if isinstance(state, GLMActiveSet) and features:  # one solve instead of one per feature
        state.support = [int(j) for j in features]
        state._cols = np.ascontiguousarray(objective.design.columns(state.support).T)
        state._w = np.zeros(len(state.support))
        state._refit()
        return state
    for j in features:
        try:
            state.add(int(j))
        except CollinearFeature:
            continue
    return state


class Tool(ParamsOwner):
    """A judging tool as the registry describes an algorithm: name, title, summary and the
    parameters the app's forms and API schemas are built from (validated the same way)."""

    kind = "judging tool"

    def __init__(self, name: str, title: str, summary: str, params: tuple[Param, ...]) -> None:
        self.name, self.title, self.summary, self.params = name, title, summary, params

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "summary": self.summary,
            "params": [p.to_dict() for p in self.params],
            "schema": self.json_schema(),
        }

    def check(self, given: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return self.validate(given)
        except ValueError as exc:
            raise ConfigError(str(exc), "params") from None
