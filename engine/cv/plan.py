"""The plan of a cross-validation over k: the request checked once, and how each fold reads
every k off its run (``supports_by_k``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import Config, ConfigError, check_config
from ..registry import REGISTRY
from ..trace import SUPPORT_CHANGING, Event, best_along_path, replay

MODES = {
    "path": "one run per fold; every k is read off its path",
    "per-k": "one run per k per fold (the sizes along this algorithm's path are not answers)",
}
METRICS = {
    "mse": "mean squared error of the predictions",
    "mae": "mean absolute error of the predictions",
    "log_loss": "mean log-loss of sigmoid(decision function) (the logistic model's own loss)",
    "error": "misclassification rate (the sign of the decision function)",
}
METRICS_FOR_TASK = {"regression": ("mse", "mae"), "classification": ("log_loss", "error")}
DEFAULT_METRIC = {"regression": "mse", "classification": "log_loss"}
RULES = {
    "min": "the k of smallest mean error (the smallest such k on ties)",
    "1se": "the smallest k whose mean error is within one standard error of the minimum",
}


@dataclass(frozen=True)
class CVPlan:
    """How one fold is computed; :func:`plan_cv` builds it and checks the request.

    Attributes
    ----------
    k_max : int
        Every k in 1..k_max is scored.
    mode : {"path", "per-k"}
        One run per fold, or one run per k (see ``MODES``).
    path : str
        What the sizes along the algorithm's path mean with these parameters
        (``engine.registry.PATHS``).
    metric : str
        A key of ``METRICS``.
    runs : list of Config
        The checked engine runs one fold makes, in order (one in ``path`` mode).
    path_lengths : dict of int to int or None
        ``best-k`` paths: the support changes ``engine.select(k=k)`` would take (known when
        the plan was made with ``n_features``; ``supports_by_k`` needs them).
    size_caps : dict of int to int or None
        ``best-k`` paths: the support size at which the run at k stops under its
        ``path_end`` (``Config.size_cap``; None: no cap).
    reason : str
        Why the fold runs this way, in words for a page.
    """

    k_max: int
    mode: str
    path: str
    metric: str
    runs: list[Config]
    path_lengths: dict[int, int | None] = field(default_factory=dict)
    reason: str = ""
    size_caps: dict[int, int | None] = field(default_factory=dict)

    @property
    def algorithm(self) -> str:
        return self.runs[0].algorithm.name

    @property
    def objective(self) -> str:
        return self.runs[0].objective.name

    @property
    def params(self) -> dict[str, Any]:
        return self.runs[0].params

    def to_dict(self) -> dict[str, Any]:
        return {
            "k_max": self.k_max,
            "mode": self.mode,
            "path": self.path,
            "metric": self.metric,
            "runs": [c.k for c in self.runs],
            "reason": self.reason,
        }


def plan_cv(
    algorithm: str,
    objective: str = "least_squares",
    *,
    k_max: Any,
    params: Mapping[str, Any] | None = None,
    metric: str | None = None,
    n_samples: int | None = None,
    n_features: int | None = None,
    has_groups: bool | None = None,
    task: str | None = None,
) -> CVPlan:
    """Check a cross-validation request and say how each fold will be computed.

    Parameters
    ----------
    algorithm, objective, params, n_samples, n_features, has_groups, task
        As in :func:`engine.check_config` (``n_samples``: of a training part).
    k_max : int
        Largest k scored, from 1 to n_features.
    metric : str, optional
        A key of ``METRICS`` fitting the objective's task; default ``mse`` for regression and
        ``log_loss`` for classification.

    Raises
    ------
    ConfigError
        Naming the field at fault (``algorithm``, ``objective``, ``k`` for k_max, ``params``,
        ``groups`` or ``metric``) and what is allowed.
    """
    spec = REGISTRY.algorithms.get(algorithm) if isinstance(algorithm, str) else None
    if spec is not None and spec.k == "unused":
        raise ConfigError(
            f"algorithm {algorithm!r} does not take k (its budget is a parameter), so "
            "cross-validation over k cannot tune it; choose an algorithm that takes k",
            "algorithm",
        )
    top = check_config(
        algorithm,
        objective,
        k=k_max,
        params=params,
        n_samples=n_samples,
        n_features=n_features,
        has_groups=has_groups,
        task=task,
    )
    obj = top.objective
    if obj.task not in METRICS_FOR_TASK or obj.check_input is not None:
        raise ConfigError(
            f"objective {obj.name!r} takes {obj.task} data, not a table of features; "
            "cross-validation over k needs a regression or classification objective",
            "objective",
        )
    metric = _check_metric(metric, obj.task)
    if top.k is None:  # check_config accepts no k when a parameter ends the path
        raise ConfigError("cross-validation over k needs k_max, the largest k to try", "k")
    k_max = int(top.k)
    path = top.path

    def at(k: int) -> Config:
        return check_config(
            algorithm,
            objective,
            k=k,
            params=params,
            n_samples=n_samples,
            n_features=n_features,
            has_groups=has_groups,
        )

    if path in ("best-k", "prefix") and not top.algorithm.uses_groups:
        configs = {k: at(k) for k in range(1, k_max + 1)} if path == "best-k" else {}
        lengths = {k: c.path_length for k, c in configs.items()}
        caps = {k: c.size_cap for k, c in configs.items()}
        how = (
            "the best size-k support along the first steps the run at k would take"
            if path == "best-k"
            else "the support after the k-th addition"
        )
        return CVPlan(
            k_max, "path", path, metric, [top], lengths, f"one path to k_max; {how}", caps
        )
    if path == "backward":
        return CVPlan(
            k_max, "path", path, metric, [at(1)], {}, "one backward path down to 1 feature"
        )
    why = (
        "a group-aware path adds whole groups, so sizes inside a group are not answers"
        if top.algorithm.uses_groups and path != "final"
        else f"the answer of {algorithm!r} at k is where its run ends (path {path!r})"
    )
    runs = [at(k) for k in range(1, k_max + 1)]
    return CVPlan(k_max, "per-k", path, metric, runs, {}, f"one run per k: {why}")


def _check_metric(metric: str | None, task: str) -> str:
    allowed = METRICS_FOR_TASK[task]
    if metric is None:
        return DEFAULT_METRIC[task]
    if metric not in allowed:
        raise ConfigError(
            f"metric must be one of {', '.join(allowed)} for a {task} objective, got {metric!r}",
            "metric",
        )
    return metric


def supports_by_k(events: Sequence[Event], plan: CVPlan) -> list[tuple[int, ...]]:
    """The size-k answer of every k = 1..k_max read off one path's trace (``path`` mode).

    When the path never reached size k (a threshold stopped it), the answer is that of the
    largest size below k it reached, as ``engine.select`` returns then.
    """
    if plan.mode != "path":
        raise ValueError(f"a {plan.mode!r} plan reads no path")
    if plan.path == "best-k" and None in plan.path_lengths.values():
        if "max_steps" in plan.runs[0].algorithm_params:
            raise ValueError("reading a best-k path needs a plan made with n_features")
    if plan.path == "best-k":
        total = sum(e.kind in SUPPORT_CHANGING for e in events)
        best: dict[int, dict[int, tuple[frozenset[int], float, int]]] = {}  # by length read
        out = []
        for k in range(1, plan.k_max + 1):
            length = min(plan.path_lengths.get(k) or total, total)
            length = min(length, _changes_before_cap(events, plan.size_caps.get(k)))
            if length not in best:
                best[length] = best_along_path(_first_changes(events, length))
            sizes = [s for s in best[length] if s <= k]
            out.append(tuple(sorted(best[length][max(sizes)][0])) if sizes else ())
        return out
    last: dict[int, frozenset[int]] = {0: frozenset()}
    for e, support in zip(events, replay(events), strict=True):
        if e.kind in SUPPORT_CHANGING:
            last[len(support)] = support  # backward: the later visit is the backward one
    return [tuple(sorted(last[max(s for s in last if s <= k)])) for k in range(1, plan.k_max + 1)]


def _changes_before_cap(events: Sequence[Event], cap: int | None) -> int:
    """Support changes the run at k makes before its size cap stops it: a greedy path checks
    the cap before each forward step, so the run at k ends before the first ``add`` that
    starts from ``cap`` or more features (its decisions up to there are those of the longer
    run, which the cap of a larger k let go on)."""
    seen = 0
    for e in events:
        if e.kind not in SUPPORT_CHANGING:
            continue
        if cap is not None and e.kind == "add" and e.support_size - 1 >= cap:
            return seen
        seen += 1
    return seen


def _first_changes(events: Sequence[Event], n: int) -> Sequence[Event]:
    """The events up to the n-th support change."""
    seen = 0
    for i, e in enumerate(events):
        if e.kind in SUPPORT_CHANGING:
            seen += 1
            if seen == n:
                return events[: i + 1]
    return events
