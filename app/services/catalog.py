"""The part of the engine the app can run, and what each algorithm can do on a data set.

The app's data sets are feature tables with a regression or classification target. The engine
also has an objective and a generator for other data: the linear-chain CRF and its chains
(labelled sequences of discrete observations, task "sequence"), whose features are indicators
built from the observations rather than the table's columns. Those stay engine-only for now;
the app lists what it can run and says why when asked for the rest.
"""

from __future__ import annotations

from typing import Any

import engine
from app.jobs import table_pass
from app.models import Dataset, Task
from engine import datasets as generators
from engine.from_statistics import check_statistics_config

TABLE_TASKS = frozenset(t.value for t in Task)

OBJECTIVES = {name: s for name, s in engine.OBJECTIVES.items() if s.task in TABLE_TASKS}
GENERATORS = {name: s for name, s in generators.GENERATORS.items() if s.task in TABLE_TASKS}


def engine_only(kind: str, name: str) -> str | None:
    """Why the engine's objective or generator ``name`` cannot be used here, or None."""
    registry = engine.OBJECTIVES if kind == "objective" else generators.GENERATORS
    spec = registry.get(name)
    if spec is None or spec.task in TABLE_TASKS:
        return None
    what = "takes" if kind == "objective" else "makes"
    return (
        f"{kind} {name!r} {what} labelled sequences ({spec.title}), not a feature table; the "
        "app's data sets are tables, so use it through the engine: engine.select(X_chains, "
        "y_chains, objective='crf', ...)"
    )


def algorithm_list() -> list[dict[str, Any]]:
    return [spec.to_dict() for spec in engine.ALGORITHMS.values()]


def default_objective(dataset: Dataset) -> str:
    """The objective of a run that names none: the data set's task decides (engine's rule)."""
    return engine.default_objective(dataset.task)


def default_k(dataset: Dataset) -> int:
    """A size for studies over k (CV, stability) and the compare form: the known true
    support's, otherwise the engine's default k."""
    if dataset.true_support:
        return min(len(dataset.true_support), dataset.n_features)
    return min(engine.config.DEFAULT_K, dataset.n_features)


def run_k(
    dataset: Dataset, algorithm: str, objective: str, params: dict[str, Any] | None = None
) -> int | None:
    """k of a run that gives none, the same for the form, the API and (without a known true
    support) the CLI and engine.sklearn: None when the algorithm ends its path itself."""
    k = engine.default_k(algorithm, objective, dataset.n_features, params)
    if k is not None and dataset.true_support:
        return min(len(dataset.true_support), dataset.n_features)
    return k


def blocked_reason(algorithm: engine.AlgorithmSpec, dataset: Dataset) -> str | None:
    """Why the algorithm cannot run with its defaults on this data set (the engine's own check,
    in a few words for a form), or None."""
    required = [p.name for p in algorithm.params if p.required]
    if required:
        return f"needs {', '.join(required)}"
    k = default_k(dataset) if algorithm.k != "unused" else None
    try:
        if table_pass.is_reference(dataset):  # not held: least squares from its statistics
            check_statistics_config(
                algorithm.name,
                k=k,
                n_samples=dataset.n_samples or None,
                n_features=dataset.n_features,
                has_groups=dataset.groups is not None,
            )
        else:
            engine.check_config(
                algorithm.name,
                default_objective(dataset),
                k=k,
                n_samples=dataset.n_samples,
                n_features=dataset.n_features,
                has_groups=dataset.groups is not None,
                task=dataset.task,
            )
    except engine.ConfigError as exc:
        if exc.field == "groups":
            return "needs feature groups"
        if exc.field == "algorithm" and algorithm.requires.more_samples_than_features:
            return "needs more rows than features"
        if exc.field == "algorithm" and table_pass.is_reference(dataset):
            return "needs the rows in memory"
        return str(exc)
    return None


# The state of the art as a baseline (issue 23): pre-ticked in comparisons wherever it can run
# (the abess package installed, a loss it solves), so FoBa and its relatives meet it on the
# user's own data.
BASELINES = ("abess",)


def compare_choices(dataset: Dataset) -> list[dict[str, Any]]:
    """Every algorithm for the compare form: blocked with a reason, or pre-ticked."""
    choices = []
    for spec in engine.ALGORITHMS.values():
        blocked = blocked_reason(spec, dataset)
        choices.append(
            {
                **spec.to_dict(),
                "blocked": blocked,
                "checked": spec.traits.compare or (spec.name in BASELINES and blocked is None),
                "baseline": spec.name in BASELINES,
            }
        )
    return choices
