"""A run's predicted time on a data set, before it starts (engine.estimate's cost model).

For the run form's warning (HTMX fragment) and GET /api/datasets/{id}/estimate. Parameters come
as query strings (``path_end=sparsity``, or ``params.path_end`` from the form) and are typed by
the registry, so the estimate is checked as the run itself would be.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import engine
from app.errors import InvalidInput
from app.jobs import table_pass
from app.models.dataset import Dataset
from app.services import catalog
from engine.estimate import Estimate, estimate, streamed_estimate

_PREFIX = "params."
_NOT_PARAMS = {"algorithm", "objective", "k"}


def for_dataset(
    dataset: Dataset,
    algorithm: str | None,
    objective: str | None,
    k: int | None,
    query: Mapping[str, str],
    *,
    strict: bool = True,
) -> Estimate:
    """The estimate of a run of ``algorithm`` on ``dataset`` with the parameters in ``query``.

    ``strict``: a query key that is no parameter of the algorithm or objective is a 422 (the
    API); the form sends its other fields too (seed, test fraction...), which are skipped.
    """
    algorithm = algorithm or engine.REGISTRY.default_algorithm
    objective = objective or catalog.default_objective(dataset)
    params = parse_params(algorithm, objective, query, strict=strict)
    try:
        if table_pass.reads_rows(objective) and table_pass.is_reference(dataset):
            return streamed_estimate(
                algorithm,
                objective=objective,
                n_samples=max(dataset.n_samples, 2),
                n_features=dataset.n_features,
                k=k,
                seconds_per_pass=pass_seconds(dataset),
                params=params,
            )
        return estimate(
            algorithm,
            objective,
            n_samples=dataset.n_samples,
            n_features=dataset.n_features,
            k=k,
            params=params,
        )
    except engine.ConfigError as exc:
        raise InvalidInput(str(exc), loc=("query", exc.field)) from None


def parse_params(
    algorithm: str, objective: str, query: Mapping[str, str], *, strict: bool
) -> dict[str, Any]:
    """The algorithm's and objective's parameters in ``query``, typed by the registry; a
    blank value is left out (the default)."""
    specs = {}
    if algorithm in engine.ALGORITHMS:
        specs.update({p.name: p for p in engine.ALGORITHMS[algorithm].params})
    if objective in engine.OBJECTIVES:
        specs.update({p.name: p for p in engine.OBJECTIVES[objective].params})
    params: dict[str, Any] = {}
    for key, raw in query.items():
        name = key.removeprefix(_PREFIX)
        if key in _NOT_PARAMS:
            continue
        spec = specs.get(name)
        if spec is None:
            if strict:
                allowed = ", ".join(sorted(specs)) or "none"
                raise InvalidInput(
                    f"{key!r} is no parameter of {algorithm} or {objective}; allowed: {allowed}",
                    loc=("query", key),
                )
            continue
        if raw.strip() == "":
            continue
        params[name] = _typed(spec.type, raw, key)
    return params


def _typed(kind: str, raw: str, key: str) -> Any:
    try:
        if kind == "int":
            return int(raw)
        if kind == "float":
            value = float(raw)
            if not math.isfinite(value):
                raise ValueError(raw)
            return value
    except ValueError:
        raise InvalidInput(
            f"{key} must be a finite number ({kind}), got {raw!r}", loc=("query", key)
        ) from None
    if kind == "bool":
        if raw.lower() in ("true", "on", "1", "yes"):
            return True
        if raw.lower() in ("false", "off", "0", "no"):
            return False
        raise InvalidInput(f"{key} must be true or false, got {raw!r}", loc=("query", key))
    return raw


def pass_seconds(dataset: Dataset) -> float:
    """About how long one worker takes to read a table registered by reference: its
    statistics pass's span times the workers that shared it (0 before the pass is done)."""
    ref = dataset.meta.get("reference") or {}
    span = ref.get("seconds")
    if not span:
        return 0.0
    return float(span) * max(int(ref.get("workers", 1)), 1)
