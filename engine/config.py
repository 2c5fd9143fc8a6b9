"""``check_config``: the one validation of a selection request, before any data is touched.

``engine.select`` calls it once it knows the data's shape, and the app calls it at submit time
with the data set's shape, so a request is refused for the same reasons, with the same words,
wherever it comes from. Each refusal is a :class:`ConfigError` naming the field at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import algorithms as _algorithms  # noqa: F401  (registers the algorithms)
from . import objectives as _objectives  # noqa: F401  (registers the objectives)
from .algorithms.common import default_max_steps, size_cap
from .registry import CAPABILITIES, REGISTRY, AlgorithmSpec, ObjectiveSpec


class ConfigError(ValueError):
    """A request the engine refuses; ``field`` is what to fix: ``algorithm``, ``objective``,
    ``k``, ``params`` or ``groups``."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Config:
    """A checked request: the entries, k, and every parameter with its default filled in."""

    algorithm: AlgorithmSpec
    objective: ObjectiveSpec
    k: int | None
    algorithm_params: dict[str, Any] = field(default_factory=dict)
    objective_params: dict[str, Any] = field(default_factory=dict)
    n_features: int | None = None

    @property
    def params(self) -> dict[str, Any]:
        """Objective and algorithm parameters together, as a run stores them."""
        return {**self.objective_params, **self.algorithm_params}

    @property
    def forward_rule(self) -> str | None:
        return self.algorithm.traits.rule(self.algorithm_params)

    @property
    def path(self) -> str:
        """What the sizes along the path mean with these parameters (``Traits.path_for``)."""
        return self.algorithm.traits.path_for(self.algorithm_params)

    @property
    def path_length(self) -> int | None:
        """Add/remove steps the path may take (Zhang's 5k by default), for methods that have
        a step budget; None for the others."""
        if "max_steps" not in self.algorithm_params or self.n_features is None:
            return None
        given = self.algorithm_params["max_steps"]
        return given if given is not None else default_max_steps(self.k, self.n_features)

    @property
    def size_cap(self) -> int | None:
        """The most features the path may hold before its ``path_end`` stops it
        (``algorithms.common.size_cap``); None without k or without a ``path_end``."""
        if "path_end" not in self.algorithm_params:
            return None
        return size_cap(self.k, str(self.algorithm_params["path_end"]))

    @property
    def budget(self) -> PathBudget:
        """Where this run's path ends at the latest (:func:`path_budget`)."""
        steps = self.path_length
        if steps is None and "max_steps" in self.algorithm_params:
            steps = self.algorithm_params["max_steps"]
        cap = self.size_cap
        return PathBudget(steps=steps, size=cap, likely_steps=_likely(steps, cap))

    def progress(self, steps: int, size: int | None, iterations: int = 0) -> float:
        """Fraction of the run done after ``steps`` support changes and ``iterations``
        iterations that kept the support, with ``size`` features selected (below 1: only a
        stored result is done). Without k, an iterative method counts its iterations against
        ``max_iter``, the most it may take (it may stop sooner)."""
        if size is None:
            return 0.0
        k, d, path = self.k, self.n_features, self.algorithm.traits.path
        max_iter = self.algorithm_params.get("max_iter")
        budget = self.budget
        if path == "best-k" and budget.likely_steps:
            # Against where the path really ends (its path_end), not against max_steps: the
            # default path stops about ``size`` steps in, far before Zhang's 5k.
            done = steps / budget.likely_steps
            if budget.size:
                done = max(done, size / budget.size)
        elif path == "backward" and k is not None and d is not None and d > k:
            done = (d - size) / (d - k)
        elif k:
            done = size / k
        elif max_iter:
            done = (steps + iterations) / max_iter
        else:
            done = 0.0
        return min(max(done, 0.0), 0.99)


@dataclass(frozen=True)
class PathBudget:
    """Where a path ends at the latest, for reporting progress against its real end.

    steps : int or None
        Most support-changing steps (add, remove, swap) the run may take: ``max_steps``
        (default 5k for the paths that have one); None when the algorithm has no step budget
        or the data's width is unknown.
    size : int or None
        The path stops before it would hold more than this many features: k + max(5,
        ceil(k/10)) under ``path_end="auto"``, k under ``"sparsity"``; None under ``"zhang"``,
        without k, or for algorithms without ``path_end``.
    likely_steps : int or None
        A FoBa or Lasso path mostly grows one feature a step and deletes a few, so it usually
        ends after about ``size`` steps (a little more for each deletion); ``min(steps, size)``,
        or whichever of them is known. A progress bar can show
        ``max(steps_done / likely_steps, largest_size_so_far / size)`` (capped below 1 until
        the run stops), which reaches the end with the run instead of at max_steps: under the
        default path end a run stops after about ``size`` steps plus two per deletion, well
        before max_steps (5k) once k is above a few features.
    """

    steps: int | None
    size: int | None
    likely_steps: int | None


def _likely(steps: int | None, size: int | None) -> int | None:
    known = [v for v in (steps, size) if v is not None]
    return min(known) if known else None


def path_budget(
    algorithm: str,
    k: int | None,
    n_features: int | None,
    params: Mapping[str, Any] | None = None,
    objective: str = "least_squares",
) -> PathBudget:
    """How far the run of ``algorithm`` with target ``k`` can go under its path end.

    Pure and cheap (no data): for the app's progress bar, which should measure a FoBa or
    Lasso run against the end its ``path_end`` sets rather than against ``max_steps``.

    Parameters
    ----------
    algorithm, objective : str
        Names in ``engine.ALGORITHMS`` and ``engine.OBJECTIVES``.
    k : int or None
        Target number of features.
    n_features : int or None
        Width of the data (the step budget without k depends on it).
    params : mapping, optional
        The run's algorithm parameters (``max_steps``, ``path_end``...); defaults filled in.

    Returns
    -------
    PathBudget
        ``steps`` (the hard bound on support changes), ``size`` (the support size at which
        the path stops at the latest) and ``likely_steps`` (see :class:`PathBudget`).

    Raises
    ------
    ConfigError
        As :func:`check_config` for an invalid request.

    Examples
    --------
    >>> path_budget("foba-obj", 50, 10_000)
    PathBudget(steps=250, size=55, likely_steps=55)
    >>> path_budget("foba-obj", 50, 10_000, {"path_end": "zhang"})
    PathBudget(steps=250, size=None, likely_steps=250)
    """
    config = check_config(algorithm, objective, k=k, params=params or {}, n_features=n_features)
    return config.budget


def check_config(
    algorithm: str,
    objective: str = "least_squares",
    *,
    k: Any = None,
    params: Mapping[str, Any] | None = None,
    n_samples: int | None = None,
    n_features: int | None = None,
    has_groups: bool | None = None,
    task: str | None = None,
) -> Config:
    """Check a request against the registry; return it with defaults filled in.

    Parameters
    ----------
    algorithm, objective : str
        Names in ``engine.ALGORITHMS`` and ``engine.OBJECTIVES``.
    k : int, optional
        Target number of features, checked against the algorithm's use of k and n_features.
    params : mapping
        Algorithm and objective parameters by name (objective parameters are routed to it).
    n_samples, n_features : int, optional
        The data's shape (of the selectable features); checks that need it are skipped
        without it.
    has_groups : bool, optional
        Whether the features carry group labels; None skips the check.
    task : str, optional
        The data's task (``regression`` or ``classification``); None skips the check.

    Raises
    ------
    ConfigError
        Naming the field at fault and what is allowed.
    """
    algo = _lookup(REGISTRY.algorithms, algorithm, "algorithm")
    obj = _lookup(REGISTRY.objectives, objective, "objective")
    if task is not None and obj.task == "classification" and task != "classification":
        raise ConfigError(
            f"objective {obj.name!r} needs a binary target, but the data is a {task} task; "
            "use a regression objective",
            "objective",
        )
    if missing := algo.requires.capabilities - obj.capabilities:
        raise ConfigError(
            f"objective {obj.name!r} works with algorithms {', '.join(algorithms_for(obj))}, "
            f"not {algo.name!r}, which needs {_describe(missing)}",
            "objective",
        )
    params = dict(params or {})
    own = {p.name for p in obj.params}
    try:
        obj_params = obj.validate({n: v for n, v in params.items() if n in own})
        algo_params = algo.validate({n: v for n, v in params.items() if n not in own})
    except ValueError as exc:
        raise ConfigError(str(exc), "params") from None
    for name, by_value in algo.requires.when.items():
        value = algo_params.get(name)
        if missing := frozenset(by_value.get(value, ())) - obj.capabilities:
            raise ConfigError(
                f"parameter {name!r} = {value!r} of algorithm {algo.name!r} needs "
                f"{_describe(missing)}; objective {obj.name!r} does not offer it",
                "params",
            )
    k = _check_k(k, algo, n_features)
    if algo.requires.groups and has_groups is False:
        raise ConfigError(
            f"algorithm {algo.name!r} needs groups: one group label per feature "
            "(groups=, or a data set with feature groups)",
            "groups",
        )
    if algo.requires.more_samples_than_features and n_samples is not None and n_features:
        if n_features >= n_samples:
            raise ConfigError(
                f"{algo.title} needs more samples than features (got n_samples = {n_samples}, "
                f"n_features = {n_features}): the full model fits the data exactly and no "
                "deletion can be told from another (Zhang 2008, Section 2). Use FoBa or forward "
                "selection instead.",
                "algorithm",
            )
    if algo.requires.check is not None:
        try:
            algo.requires.check(k, algo_params)
        except ValueError as exc:
            raise ConfigError(str(exc), "params") from None
    return Config(algo, obj, k, algo_params, obj_params, n_features)


# The defaults every door (the app's form and API, the CLI, engine.sklearn) applies when a
# request leaves the objective or k out: declared here once so that the same data give the
# same run whichever door it came through (issue 25).
DEFAULT_OBJECTIVES = {"regression": "least_squares", "classification": "logistic"}
# A handful of features: readable, and cheap on wide tables (10% of 20,000 features would be
# a 2,000-step path on a table of a few dozen rows).
DEFAULT_K = 5


def default_objective(task: str) -> str:
    """The objective a run on data of ``task`` gets when it names none."""
    try:
        return DEFAULT_OBJECTIVES[task]
    except KeyError:
        message = f"no default objective for task {task!r}; name one"
        raise ConfigError(message, "objective") from None


def default_k(
    algorithm: str,
    objective: str,
    n_features: int,
    params: Mapping[str, Any] | None = None,
) -> int | None:
    """k when a request gives none: None when the algorithm takes no k or its parameters end
    the path by its own stopping rule (delta, epsilon, ...), otherwise ``DEFAULT_K`` features
    (at most all of them)."""
    spec = REGISTRY.algorithms.get(algorithm)
    if spec is not None and spec.k == "unused":
        return None
    try:
        check_config(algorithm, objective, k=None, params=params, n_features=n_features)
    except ConfigError:
        return min(DEFAULT_K, max(n_features, 1))
    return None


def algorithms_for(objective: ObjectiveSpec) -> list[str]:
    """Algorithms whose (parameter-free) requirements the objective meets."""
    return [
        name
        for name, spec in REGISTRY.algorithms.items()
        if spec.requires.capabilities <= objective.capabilities
    ]


def _lookup(registry: Mapping[str, Any], name: str, kind: str) -> Any:
    if not isinstance(name, str) or name not in registry:
        raise ConfigError(
            f"unknown {kind} {name!r}; available: {', '.join(sorted(registry))}", kind
        )
    return registry[name]


def _describe(capabilities: frozenset[str]) -> str:
    return "; ".join(f"{c} ({CAPABILITIES[c]})" for c in sorted(capabilities))


def _check_k(k: Any, algo: AlgorithmSpec, n_features: int | None) -> int | None:
    span = f"1 to {n_features}" if n_features is not None else "1 or more"
    if k is None:
        if algo.k == "required":
            raise ConfigError(
                f"algorithm {algo.name!r} needs k, the number of features to select ({span})",
                "k",
            )
        return None
    if algo.k == "unused":
        raise ConfigError(f"algorithm {algo.name!r} does not take k", "k")
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise ConfigError(f"k must be an integer from {span}, got {k!r}", "k")
    if k < 1 or (n_features is not None and k > n_features):
        raise ConfigError(
            f"k must be between 1 and {n_features} (n_features = {n_features}), got {k}"
            if n_features is not None
            else f"k must be at least 1, got {k}",
            "k",
        )
    return int(k)
