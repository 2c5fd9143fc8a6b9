"""The run page: status and metrics, the player, the charts."""

from __future__ import annotations

from typing import Any

import numpy as np
from sqlmodel import Session

import engine
from app.models import ACTIVE, Dataset, Run, RunResult
from app.services import datasets as dataset_service
from app.services import runs as run_service
from app.storage import ArrayStore
from app.web.charts import player, recovery
from app.web.charts import run as run_charts
from app.web.charts.style import ADD, MAX_PATH_ROWS, REMOVE, SKY, SWAP_IN, SWAP_OUT
from app.web.views import judge as judge_view
from engine.trace import answer_step

# --------------------------------------------------------------------------- runs


def _true_coef(store: ArrayStore, dataset: Dataset) -> np.ndarray | None:
    if dataset.true_support is None:
        return None
    try:
        return store.load(dataset.file, ("true_coef",))["true_coef"]
    except KeyError:  # a generator that knows its support but not its coefficients
        return None


def run_page(session: Session, run_id: int) -> dict[str, Any]:
    """What the run page's HTML holds: status, metrics and the stop explanation. The charts
    come separately: from ``run_figures`` once the run has ended, from the trace API (only the
    events after the last one the browser has) while it runs, so a long trace never makes the
    page heavy."""
    run = run_service.get_selection_run(session, run_id)
    dataset = dataset_service.get_dataset(session, run.dataset_id)
    spec = engine.ALGORITHMS.get(run.algorithm)
    result = RunResult.model_validate(run.result) if run.result else None
    live = run.status in ACTIVE
    context: dict[str, Any] = {
        "run": run,
        "ds": dataset,
        "params": run.params,
        "standardize": run.standardize,
        "spec": spec.to_dict() if spec else None,
        "result": result,
        "live": live,
        "run_seconds": (run.finished_at - run.started_at).total_seconds()
        if run.finished_at and run.started_at
        else None,
    }
    if live:
        context["live_setup"] = live_setup(run, dataset)
        return context
    events = run_service.trace_events(session, run_id)
    truth = dataset.true_support
    context["events_count"] = len(events)
    context["answer_step"] = answer_step(events, run.k)
    context["stop_text"] = stop_text(run, result, context["answer_step"])
    roc = recovery.roc_of(events, truth, dataset.n_features, run.algorithm) if truth else None
    context["roc_auc"] = roc.auc if roc else None
    context["truth_names"] = {dataset.feature_names[j] for j in truth} if truth else set()
    context["judge"] = judge_view.run_judgement(run, dataset, result)
    return context


def stop_text(run: Run, result: RunResult | None, answer_at: int | None) -> str:
    """Why the run ended and, when its path went on past the answer, where the answer was."""
    if result is None:
        return ""
    if run.status == "cancelled":
        return f"Cancelled by you after {result.n_steps} add/remove steps: {result.stop_reason}."
    text = f"The path ended: {result.stop_reason}."
    if answer_at is not None:
        size = len(result.support)
        text += (
            f" The answer is the best {size}-feature support along the path, found at step "
            f"{answer_at} (Zhang's rule: the path may go past k so that a wrong feature can be "
            "dropped)."
        )
    return text


def run_figures(session: Session, store: ArrayStore, run_id: int) -> dict[str, Any]:
    """The finished run's figures and the player's frames, as one JSON document."""
    run = run_service.get_selection_run(session, run_id)
    dataset = dataset_service.get_dataset(session, run.dataset_id)
    events = run_service.trace_events(session, run_id)
    names, truth = dataset.feature_names, dataset.true_support
    result = RunResult.model_validate(run.result) if run.result else None
    step = answer_step(events, run.k)
    figures: dict[str, Any] = {
        "path": run_charts.path_figure(events, names, true_support=truth, best_step=step, k=run.k),
        "objective_step": run_charts.objective_step_figure(events, best_step=step, k=run.k),
        "objective_size": run_charts.objective_size_figure(events, k=run.k),
    }
    if result is not None:
        figures["coef"] = run_charts.coef_figure(
            [f.model_dump() for f in result.support],
            true_support=truth,
            true_coef=_true_coef(store, dataset),
            names=names,
        )
        if truth is not None:
            roc = recovery.roc_of(events, truth, dataset.n_features, run.algorithm)
            figures["roc"] = recovery.roc_figure([roc] if roc else [])
    return {"figures": figures, "frames": player.player_frames(events, names)}


def live_setup(run: Run, dataset: Dataset) -> dict[str, Any]:
    """What the browser needs to draw a running run from its trace: the feature names, the
    true support, the event kinds' markers and the two charts' layouts."""
    return {
        "run": run.id,
        "trace_url": f"/api/runs/{run.id}/trace",
        "names": dataset.feature_names,
        "truth": dataset.true_support or [],
        "max_rows": MAX_PATH_ROWS,
        "styles": {"add": ADD, "remove": REMOVE, "swap": SWAP_IN, "swap_out": SWAP_OUT},
        "bar": SKY,
        "layouts": {
            "path": run_charts.path_layout("Features by step (live)", rows=8),
            "objective": run_charts.objective_step_layout("Objective by step (live)"),
        },
    }
