"""The run page: status and metrics, the player, the charts."""

from __future__ import annotations

from typing import Any

import numpy as np
from sqlmodel import Session

import engine
from app.models import ACTIVE, Dataset, Run, RunResult, seconds_left
from app.services import datasets as dataset_service
from app.services import reference_tables
from app.services import runs as run_service
from app.storage import ArrayStore
from app.web.charts import player, recovery
from app.web.charts import run as run_charts
from app.web.charts.style import feature_name
from app.web.views import judge as judge_view
from app.web.views import live_trace, traces
from engine.trace import supports_in_order

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
    come separately once the run has ended (``run_figures``), so a long trace never makes the
    page heavy; while it runs, the page holds the live fragment (``live_view``), which HTMX
    polls."""
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
        # A logistic run read the rows in passes: that, not the statistics, is what it used.
        "statistics_line": None
        if result is not None and result.passes
        else reference_tables.statistics_line(dataset),
        "passes_line": reference_tables.passes_line(dataset, result.passes if result else None),
        "live": live,
        "run_seconds": (run.finished_at - run.started_at).total_seconds()
        if run.finished_at and run.started_at
        else None,
    }
    if live:
        context.update(live_view(session, run, dataset))
        return context
    trace = traces.trace_of(session, run)
    events = trace.events
    truth = dataset.true_support
    context["events_count"] = len(events)
    context["answer_step"] = player.answer_found(events, run.k)
    context["stop_text"] = stop_text(run, result, context["answer_step"])
    roc = trace.roc(run, dataset)
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
    trace = traces.trace_of(session, run)  # decoded once for the page and this document
    events = trace.events
    names, truth = dataset.feature_names, dataset.true_support
    result = RunResult.model_validate(run.result) if run.result else None
    step = player.answer_found(events, run.k)
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
            roc = trace.roc(run, dataset)
            figures["roc"] = recovery.roc_figure([roc] if roc else [])
    return {"figures": figures, "frames": player.player_frames(events, names, run.k)}


def live_view(session: Session, run: Run, dataset: Dataset) -> dict[str, Any]:
    """A running run's fragment: the support now and the two charts of the trace so far,
    drawn by the same functions as a finished run's."""
    events = live_trace.events_so_far(session, run)  # only the steps new since the last poll
    names = dataset.feature_names
    support = supports_in_order(events)[-1] if events else []
    # Polled every second: long traces are thinned as the player thins them (iterations only,
    # so the support bars are exact).
    events = [e for e, kept in zip(events, player.thin(events), strict=True) if kept]
    title = "Features by step (live)"
    return {
        "events_count": len(events),
        "seconds_left": seconds_left(run),
        "support": [feature_name(names, j) for j in support],
        "path_figure": run_charts.path_figure(
            events, names, true_support=dataset.true_support, title=title
        ),
        "objective_figure": run_charts.objective_step_figure(
            events, title="Objective by step (live)", cursor=False
        ),
    }


def run_live(session: Session, run_id: int) -> dict[str, Any]:
    """The live fragment HTMX polls; ``live`` false once the run has ended."""
    run = run_service.get_selection_run(session, run_id)
    if run.status not in ACTIVE:
        return {"run": run, "live": False}
    dataset = dataset_service.get_dataset(session, run.dataset_id)
    return {"run": run, "live": True, "oob": True, **live_view(session, run, dataset)}
