"""How long a run will take, predicted before it starts from the data's shape and the request.

For the run form's warning and ``GET /api/datasets/{id}/estimate``: when a run is predicted to
take long, say so, with faster settings and what they change in the answer.

The model counts passes over the n x d entries of X, the one cost that grows with the data:

    seconds = sum over the path's steps of
              (PER_STEP + passes(step) x n x d x PER_ENTRY[objective] + refit(step))

* steps: the path's likely length (``engine.config.PathBudget.likely_steps``: k plus the
  ``path_end`` margin for FoBa, ``max_steps`` under ``path_end="zhang"``), k for forward
  methods, the iteration budget (at most ``ITERATIONS``) for iterative ones.
* passes per step, from the forward rule (``Traits``): the objective drop costs one product
  ``X.T r`` for least squares and two for the smooth losses (the gradient and the curvature
  ``(X o X).T v``); |gradient| one; an exact refit gain (stepwise, foba-refit) one per Newton
  iteration and support column for the smooth losses (``logistic_refit``), two for least
  squares (its rank-one algebra); an l1 path ``L1_PASSES`` (coordinate-descent sweeps per
  point of the path).
* refit(step): least squares updates a Cholesky factor (n x size); the smooth losses run
  about ``NEWTON`` Newton iterations on the support (n x size^2 each).

Calibration: the constants are the committed bench results divided by what the formula counts
(not a timing of the machine at request time, and no test times anything):

* least squares, ``bench/results/path_end/quick_goals.md``: FoBa-obj at k = 200 on a dense
  1000 x 2000 design (the default path end, about 220 steps) took 1.29 s, so
  1.29 / (220 x 2e6) = 2.9e-9 s per entry and pass -> ``PER_ENTRY["least_squares"] = 3e-9``
  (a memory-bound product streams 8 bytes per entry: 3e-9 s is 2.7 GB/s).
* logistic, same file: FoBa-obj at k = 40 on 4000 x 4000 with ``path_end="sparsity"`` (40
  steps of two passes) took 7.3 s: 7.3 / (40 x 2 x 1.6e7) = 5.7e-9 -> ``5.5e-9`` (with the
  refits' share taken out). The default path end took 8.6 s; the model gives 8.9 s.
* ``PER_STEP``: the fixed Python cost of a step; FoBa-obj on Liu et al.'s 100 x 500 (19 steps,
  bench/engine_speed.py (d14)) takes about 25 ms, 1.3 ms a step.

The figures come from the 2-core development machine under load; a faster one shortens every
run in proportion, which changes the estimates but not which settings are faster. A
prediction within a factor 2-3 is what the form needs: whether to wait or to change settings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .config import Config, ConfigError, check_config
from .registry import REGISTRY

LONG_SECONDS = 10.0  # past this a run is "long": the form says so before it starts
PER_STEP = 1.3e-3
PER_ENTRY = {"least_squares": 3e-9, "crf": 2e-8}
PER_ENTRY_SMOOTH = 5.5e-9  # logistic and the smoothed losses
NEWTON = 4  # Newton iterations of a smooth-loss refit (bench/refit_check.py: 3-5)
L1_PASSES = 10
ITERATIONS = 100  # iterative methods: the iterations counted (most converge sooner)


@dataclass(frozen=True)
class Faster:
    """A faster setting: the parameters to change, its predicted time, what it changes."""

    settings: dict[str, Any]
    seconds: float
    changes: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "seconds": round(self.seconds, 3),
            "changes": self.changes,
        }


@dataclass(frozen=True)
class Estimate:
    """A run's predicted time; ``sentence`` (with ``faster``) only when it is long."""

    seconds: float
    steps: int
    long: bool
    faster: list[Faster] = field(default_factory=list)
    headline: str | None = None  # the prediction alone, for a form that lists ``faster``

    @property
    def sentence(self) -> str | None:
        """The warning in words: the prediction, then each faster setting and its effect."""
        if self.headline is None or not self.faster:
            return self.headline
        options = "; or ".join(
            f"{_settings(f.settings)} (about {duration(f.seconds)}): {f.changes}"
            for f in self.faster
        )
        return f"{self.headline} Faster: {options}."

    def to_dict(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 3),
            "steps": self.steps,
            "long": self.long,
            "long_seconds": LONG_SECONDS,
            "sentence": self.sentence,
            "faster": [f.to_dict() for f in self.faster],
        }


def estimate(
    algorithm: str,
    objective: str,
    *,
    n_samples: int,
    n_features: int,
    k: int | None,
    params: Mapping[str, Any] | None = None,
) -> Estimate:
    """The predicted time of ``engine.select`` with this request on an n x d dense table.

    Raises ``ConfigError`` for a request ``engine.select`` would refuse (the same check).
    """
    params = dict(params or {})
    config = _check(algorithm, objective, k, params, n_samples, n_features)
    seconds, steps = _seconds(config, n_samples, n_features)
    if seconds <= LONG_SECONDS:
        return Estimate(seconds, steps, long=False)
    faster = _faster(config, params, n_samples, n_features, seconds)
    return Estimate(seconds, steps, long=True, faster=faster, headline=_headline(config, seconds))


def _check(algorithm, objective, k, params, n_samples, n_features) -> Config:
    return check_config(
        algorithm, objective, k=k, params=params, n_samples=n_samples, n_features=n_features
    )


def _seconds(config: Config, n: int, d: int) -> tuple[float, int]:
    """(predicted seconds, steps counted) of the checked request.

    A path grows one feature a step up to its largest support (deletions are few), so the
    support size at step i is min(i, cap); the sums over the steps are in closed form (a
    max_steps of 10^9 costs nothing to estimate).
    """
    spec = config.algorithm
    rule = spec.traits.rule(config.algorithm_params)
    least_squares = config.objective.name == "least_squares"
    per_entry = PER_ENTRY.get(config.objective.name, PER_ENTRY_SMOOTH)
    steps, cap = _steps(config, d)
    m = min(steps, cap)
    sizes = m * (m + 1) / 2 + (steps - m) * cap  # sum of the support sizes over the steps
    squares = m * (m + 1) * (2 * m + 1) / 6 + (steps - m) * cap * cap
    fixed, per_size = _passes(rule, spec.family, least_squares)
    passes = fixed * steps + per_size * sizes
    refits = sizes if least_squares else NEWTON * squares
    return steps * PER_STEP + (passes * n * d + refits * n) * per_entry, steps


def _steps(config: Config, d: int) -> tuple[int, int]:
    """(steps the run likely takes, the largest support it holds)."""
    k = config.k
    budget = config.budget
    cap = min(budget.size or k or d, d)
    if budget.likely_steps is not None:
        return budget.likely_steps, cap
    if config.algorithm.traits.path == "final":
        max_iter = config.algorithm_params.get("max_iter")
        iterations = min(int(max_iter), ITERATIONS) if max_iter else ITERATIONS
        return iterations, cap
    return min(k or d, d), cap


def _passes(rule: str | None, family: str, least_squares: bool) -> tuple[float, float]:
    """Passes over X one step makes, as (fixed, per selected feature) (module docstring)."""
    if rule == "obj":
        return (1.0 if least_squares else 2.0), 0.0
    if rule == "refit":
        return (2.0, 0.0) if least_squares else (2.0 * NEWTON, float(NEWTON))
    if family == "l1":
        return float(L1_PASSES), 0.0
    return 1.0, 0.0


# --------------------------------------------------------------------------- streamed rows

# Passes over the table per forward step on streamed rows (``engine.from_rows``), measured
# with ``path_end="sparsity"``, k = 10 and 20 (bench: Liu et al.'s design, n = 2000, d = 200;
# for the Huber loss the same size with t(2) noise). Logistic: omp 7-8 (the gradient and the
# refit's Newton evaluations), foba-gdt 10-12 (and the deletion check), foba-obj 12-19 (and the
# exact one-coordinate drops of the short list); ill-conditioned tables take more: breast
# cancer (n = 569, d = 30, k = 10) took 10, 31 and 26 a step. The smoothed losses have no
# bounds to shorten the exact drops: the safeguarded Newton iteration of every coordinate is a
# pass per iteration, up to its budget (100) where L'' vanishes on a coordinate's whole range
# (a separable hinge), and the deletion costs' intercept shifts a pass per evaluation.
# Smoothed hinge (defaults beta = 10, lam = 0): omp 6-10 (breast cancer 35), foba-gdt 54-56
# (51), foba-obj 98 (62; on Liu's separable design it stopped after 2 steps, the loss near 0);
# with lam = 1e-3 on Liu's design omp 17, foba-gdt 20, foba-obj 29 (its pruned coordinate
# iteration 4-9 passes a step, 12-21 unpruned; the rest refits and deletion checks). Smoothed
# absolute: omp 8-11, foba-gdt 12-15, foba-obj 17-21. The figures are the larger ones: they
# err long.
STREAMED_PASSES = {"omp": 8.0, "foba-gdt": 12.0, "foba-obj": 17.0}  # logistic
PASSES_BY_OBJECTIVE = {
    "logistic": STREAMED_PASSES,
    "smoothed_hinge": {"omp": 10.0, "foba-gdt": 55.0, "foba-obj": 100.0},
    "smoothed_absolute": {"omp": 11.0, "foba-gdt": 15.0, "foba-obj": 24.0},
}


def streamed_estimate(
    algorithm: str,
    *,
    n_samples: int,
    n_features: int,
    k: int | None,
    seconds_per_pass: float,
    params: Mapping[str, Any] | None = None,
    objective: str = "logistic",
) -> Estimate:
    """The predicted time of ``objective`` (one of ``engine.from_rows.STREAMED_OBJECTIVES``)
    on a streamed table (``select_from_rows``):
    passes x ``seconds_per_pass`` (a measured pass over the table, e.g. its statistics pass's),
    and, when that is long, a random sample of rows held in memory as the faster setting.

    Every pass is priced as a full one (a pass over a few columns reads less of a Parquet
    file, but a CSV is parsed whole), so this errs long. Raises ``ConfigError`` as
    ``engine.from_rows.check_rows_config``.
    """
    from .from_rows import check_rows_config  # the engine's own check of such a run

    params = dict(params or {})
    config = check_rows_config(
        algorithm,
        objective=objective,
        k=k,
        params=params,
        n_samples=n_samples,
        n_features=n_features,
    )
    steps, _ = _steps(config, n_features)
    passes = 1.0 + PASSES_BY_OBJECTIVE[objective][config.algorithm.name] * steps
    seconds = passes * max(seconds_per_pass, 0.0)
    if seconds <= LONG_SECONDS:
        return Estimate(seconds, steps, long=False)
    headline = (
        f"This run reads the table about {round(passes)} times ({steps} steps of "
        f"{config.algorithm.name}, a pass taking about {duration(seconds_per_pass)}): about "
        f"{duration(seconds)}."
    )
    sample = _sample_rows(config, params, n_samples, n_features)
    faster = []
    if sample is not None:
        rows, in_memory = sample
        total = seconds_per_pass + in_memory  # one pass draws the sample
        if total <= 0.9 * seconds:
            faster.append(
                Faster(
                    {"sample_rows": rows},
                    total,
                    f"fit on a random sample of {rows} of the {n_samples} rows held in memory "
                    "(one pass to draw it, then engine.select): the selection sees a sample, "
                    "so a weak feature may be missed or a chance one chosen",
                )
            )
    return Estimate(seconds, steps, long=True, faster=faster, headline=headline)


def _sample_rows(
    config: Config, params: dict[str, Any], n: int, d: int
) -> tuple[int, float] | None:
    """The largest sample (a multiple of 1000 rows, at least 1000, fewer than n) whose
    in-memory run is predicted within ``LONG_SECONDS``, and that prediction; None if none."""
    name = config.algorithm.name
    checked = _check(name, config.objective.name, config.k, params, max(n, 2), d)
    per_row = _seconds(checked, 1_000_000, d)[0] / 1_000_000  # the model is linear in n
    fixed = _seconds(checked, 0, d)[0]
    rows = int((LONG_SECONDS - fixed) / per_row) // 1000 * 1000 if per_row > 0 else n
    rows = min(rows, (n - 1) // 1000 * 1000)
    if rows < 1000:
        return None
    return rows, _seconds(checked, rows, d)[0]


# --------------------------------------------------------------------------- what to change

_SPARSITY = (
    "the path stops as soon as it holds k features, and the answer is that first size-k "
    "support instead of the best one along a path that may grow past k and delete back "
    "(it missed the default's better support in 15 of 160 measured paths)"
)
_FORWARD_OF = {"foba-refit": "foba-obj", "stepwise": "forward-obj"}


def _faster(config: Config, params: dict[str, Any], n: int, d: int, now: float) -> list[Faster]:
    """Settings that cut the prediction by a tenth or more, each with what it changes."""
    alg = config.algorithm
    names = {p.name for p in alg.params}
    k = config.k
    tries: list[tuple[str, dict[str, Any], str]] = []
    if "path_end" in names and k is not None and config.algorithm_params["path_end"] != "sparsity":
        tries.append((alg.name, {"path_end": "sparsity"}, _SPARSITY))
    if "max_steps" in names and k is not None:
        steps = 2 * k
        current = config.algorithm_params.get("max_steps") or 5 * k
        if steps < current:
            tries.append(
                (
                    alg.name,
                    {"max_steps": steps},
                    f"the path stops after {steps} add/remove steps instead of {current}: "
                    "fewer chances to delete a wrong feature, and the answer is the best "
                    "size-k support found by then",
                )
            )
    if alg.name in _FORWARD_OF:
        other = _FORWARD_OF[alg.name]
        tries.append(
            (
                other,
                {},
                "each candidate is scored by its best one-coordinate move instead of a full "
                "refit (one pass over the data per step instead of one per Newton iteration "
                "and selected feature), so a different feature can win a step",
            )
        )
    found = []
    for algorithm, change, words in tries:
        try:
            checked = _check(
                algorithm,
                config.objective.name,
                k,
                {**_carried(config, params, algorithm), **change},
                n,
                d,
            )
        except ConfigError:
            continue
        seconds, _ = _seconds(checked, n, d)
        if seconds <= 0.9 * now:
            settings = change if algorithm == alg.name else {"algorithm": algorithm}
            found.append(Faster(settings, seconds, words))
    return found


def _carried(config: Config, params: dict[str, Any], algorithm: str) -> dict[str, Any]:
    """The request's parameters that ``algorithm`` (or the objective) also takes."""
    if algorithm == config.algorithm.name:
        return dict(params)
    takes = {p.name for p in REGISTRY.algorithms[algorithm].params}
    takes |= {p.name for p in config.objective.params}
    return {name: v for name, v in params.items() if name in takes}


def _headline(config: Config, seconds: float) -> str:
    run = config.algorithm.name + (f", k = {config.k}" if config.k is not None else "")
    return f"This run is predicted to take about {duration(seconds)} on this data ({run})."


def _settings(settings: Mapping[str, Any]) -> str:
    return ", ".join(
        f'{name} = "{v}"' if isinstance(v, str) else f"{name} = {v}" for name, v in settings.items()
    )


def duration(seconds: float) -> str:
    """A duration in words a form can show: '40 s', '3 min', '1.5 h'."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    hours = seconds / 3600
    return f"{hours:.1f} h" if hours < 10 else f"{math.floor(hours)} h"
