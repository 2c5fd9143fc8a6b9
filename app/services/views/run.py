"""The run page: status and metrics, the player, the charts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sqlmodel import Session

import engine
from engine.trace import answer_step, supports_in_order

from ... import storage
from ...models import ACTIVE, Dataset, RunResult
from .. import datasets as dataset_service
from .. import runs as run_service
from ..charts import player, recovery
from ..charts import run as run_charts
from ..charts.style import feature_name

# --------------------------------------------------------------------------- runs


def _true_coef(data_dir: Path, dataset: Dataset) -> np.ndarray | None:
    if dataset.true_support is None:
        return None
    try:
        return storage.load_arrays(data_dir, dataset.file, ("true_coef",))["true_coef"]
    except KeyError:  # a generator that knows its support but not its coefficients
        return None


def run_page(session: Session, data_dir: Path, run_id: int) -> dict[str, Any]:
    """A run with its charts: while it runs, the path and objective so far; once it ended,
    the player, the coefficients and the support-recovery ROC too."""
    run = run_service.get_run(session, run_id)
    dataset = dataset_service.get_dataset(session, run.dataset_id)
    events = run_service.trace_events(session, run_id)
    names = dataset.feature_names
    spec = engine.ALGORITHMS.get(run.algorithm)
    result = RunResult.model_validate(run.result) if run.result else None
    live = run.status in ACTIVE
    step = None if live else answer_step(events, run.k)
    figures: dict[str, Any] = {
        "path": run_charts.path_figure(
            events,
            names,
            true_support=dataset.true_support,
            best_step=step,
            k=run.k,
            title="Features by step (live)" if live else "Forward/backward path: features by step",
        ),
        "objective_step": run_charts.objective_step_figure(
            events,
            best_step=step,
            k=run.k,
            cursor=not live,
            title="Objective by step (live)" if live else "Objective by step",
        ),
    }
    context: dict[str, Any] = {
        "run": run,
        "ds": dataset,
        "spec": spec.to_dict() if spec else None,
        "result": result,
        "events_count": len(events),
        "live": live,
        "figures": figures,
        "support_now": [feature_name(names, j) for j in supports_in_order(events)[-1]]
        if events
        else [],
        "last_event": player.event_text(events[-1], names) if events else None,
        "run_seconds": (run.finished_at - run.started_at).total_seconds()
        if run.finished_at and run.started_at
        else None,
    }
    if live:
        return context
    figures["objective_size"] = run_charts.objective_size_figure(events, k=run.k)
    context["frames"] = player.player_frames(events, names)
    truth = dataset.true_support
    if result is not None:
        figures["coef"] = run_charts.coef_figure(
            [f.model_dump() for f in result.support],
            true_support=truth,
            true_coef=_true_coef(data_dir, dataset),
            names=names,
        )
        if truth is not None:
            roc = recovery.roc_of(events, truth, dataset.n_features, run.algorithm)
            context["roc"] = roc
            figures["roc"] = recovery.roc_figure([roc] if roc else [])
        context["truth_names"] = set(names[j] for j in truth) if truth else set()
    return context
