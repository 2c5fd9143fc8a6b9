"""Selection from rows read in chunks: smooth GLM losses on tables larger than memory.

:func:`select_from_rows` is ``engine.select(X, y, objective=..., ...)`` for the objectives of
:data:`STREAMED_OBJECTIVES` (logistic, smoothed hinge, smoothed absolute) on a
:class:`~engine.rows.RowSource`: the same validation, standardisation, algorithms (unchanged:
they see the ``Objective``/``ActiveSet`` seam of
:class:`~engine.objectives.streamed_glm.StreamedGLM` and its log-loss case
:class:`~engine.objectives.streamed_logistic.StreamedLogistic`), trace and result, plus how
many times the table was read. The greedy methods whose every step is a few passes are
offered (:data:`STREAMED_ALGORITHMS`); the others need the rows in memory or a pass per
candidate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from .api import SelectionResult, run_selection
from .config import Config, ConfigError, check_config
from .objectives.streamed_glm import StreamedGLM, StreamedSmoothedAbsolute, StreamedSmoothedHinge
from .objectives.streamed_logistic import StreamedLogistic
from .rows import RowSource
from .trace import Recorder, RecorderCallback

__all__ = [
    "STREAMED_ALGORITHMS",
    "STREAMED_OBJECTIVES",
    "StreamedResult",
    "check_rows_config",
    "select_from_rows",
]

OBJECTIVE = "logistic"  # the default
# The registry's objective name -> its streamed objective (the same parameters).
STREAMED_OBJECTIVES: dict[str, Callable[..., StreamedGLM]] = {
    "logistic": StreamedLogistic,
    "smoothed_hinge": StreamedSmoothedHinge,
    "smoothed_absolute": StreamedSmoothedAbsolute,
}
# One full-width pass per forward step, the rest over the support and a short list.
STREAMED_ALGORITHMS = ("foba-obj", "foba-gdt", "omp")


@dataclass
class StreamedResult(SelectionResult):
    """A :class:`SelectionResult` with the reading it took.

    passes : every pass over the table, the first (n, scales, labels) included
    full_passes : the passes that read every column (the others read the support and a short
        list of candidates)
    rows_read : rows read over all passes
    n_samples : rows in the table
    classes : the two labels, negative first (the larger in sort order is positive); empty
        for a regression loss
    """

    passes: int = 0
    full_passes: int = 0
    rows_read: int = 0
    n_samples: int = 0
    classes: tuple[Any, ...] = ()

    def passes_dict(self) -> dict[str, int]:
        """The reading it took, as the CLI's JSON and the app's result hold it."""
        return {
            "passes": self.passes,
            "full_passes": self.full_passes,
            "rows_read": self.rows_read,
            "n_samples": self.n_samples,
        }


def check_rows_config(
    algorithm: str,
    *,
    objective: str = OBJECTIVE,
    k: Any = None,
    params: Mapping[str, Any] | None = None,
    n_samples: int | None = None,
    n_features: int | None = None,
) -> Config:
    """``engine.check_config`` for ``objective`` on streamed rows: also refuses the other
    objectives, and the algorithms and settings that would read the table once per candidate,
    with a ConfigError naming the field."""
    if objective not in STREAMED_OBJECTIVES:
        raise ConfigError(
            f"objective {objective!r} is not offered on a streamed table; use one of "
            f"{', '.join(STREAMED_OBJECTIVES)} (the other objectives need the rows in memory)",
            "objective",
        )
    if algorithm not in STREAMED_ALGORITHMS:
        raise ConfigError(
            f"algorithm {algorithm!r} is not offered for {objective} on a streamed "
            f"table; use one of {', '.join(STREAMED_ALGORITHMS)} (one pass over every column "
            "per forward step)",
            "algorithm",
        )
    config = check_config(
        algorithm, objective, k=k, params=params, n_samples=n_samples, n_features=n_features
    )
    if config.algorithm_params.get("replacement", "none") != "none":
        raise ConfigError(
            "replacement steps price every exchange by a refit (a pass each) and are not "
            "offered on a streamed table; use replacement = none",
            "replacement",
        )
    if config.algorithm_params.get("polish"):
        raise ConfigError(
            "polish prices every exchange by a refit (a pass each) and is not offered on a "
            "streamed table; use polish = false",
            "polish",
        )
    return config


def select_from_rows(
    rows: RowSource,
    *,
    algorithm: str,
    objective: str = OBJECTIVE,
    k: int | None = None,
    recorder: Recorder | RecorderCallback | None = None,
    random_state: int | None = None,
    record_candidates: bool = False,
    max_candidates: int = 50,
    standardize: bool = True,
    **params: Any,
) -> StreamedResult:
    """``engine.select(X, y, objective=objective, ...)`` on rows read in chunks.

    Parameters are those of :func:`engine.select`; ``objective`` is one of
    :data:`STREAMED_OBJECTIVES`, whose parameters (``lam``, ``fit_intercept``, ``beta``) are
    validated as ``engine.select`` does. ``coef`` and ``intercept`` come back on the original
    scale. A recorder whose callback has ``poll`` is asked between chunks too, so a stop needs
    no full pass.

    Raises
    ------
    ConfigError
        As ``engine.check_config``, and for the objectives, algorithms and settings not
        offered here.
    ValueError
        Labels that are not exactly two values (classification), a target that is not finite
        numbers (regression), NaN or infinite entries.
    """
    # Before reading anything.
    config = check_rows_config(algorithm, objective=objective, k=k, params=params)
    if isinstance(recorder, Recorder):
        rec = recorder
    else:
        rec = Recorder(recorder, record_candidates=record_candidates, max_candidates=max_candidates)
    loss = STREAMED_OBJECTIVES[objective](
        rows, **config.objective_params, standardize=standardize, checkpoint=rec.checkpoint
    )
    config = check_rows_config(
        algorithm,
        objective=objective,
        k=k,
        params=params,
        n_samples=loss.n_samples,
        n_features=loss.n_features,
    )
    result = run_selection(
        loss, config, rec, extra={}, scale=loss.scale, random_state=random_state, name=objective
    )
    count = loss.passes
    return StreamedResult(
        **{f.name: getattr(result, f.name) for f in fields(SelectionResult)},
        passes=count.passes,
        full_passes=count.full,
        rows_read=count.rows,
        n_samples=loss.n_samples,
        classes=tuple(np.asarray(loss.classes_).tolist()) if loss.two_labels else (),
    )
