"""View models of the HTML pages: what each page shows, built from the services.

Routes in ``app.routers.pages`` parse the request, call one function here and render its
dictionary; nothing here knows about requests or templates.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sqlmodel import Session, select

import engine
from engine.trace import Event, answer_step, best_along_path, supports_in_order

from .. import run_options, storage
from ..errors import NotFound
from ..models import ACTIVE, Comparison, Dataset, Run, RunResult, RunStatus, Task
from . import catalog, charts, evaluation, lessons, teach
from . import datasets as dataset_service
from . import runs as run_service

# --------------------------------------------------------------------------- forms


def objective_specs(dataset: Dataset) -> list[dict[str, Any]]:
    """Objectives usable on the data set (a classification objective needs binary labels)."""
    return [
        spec.to_dict()
        for spec in catalog.OBJECTIVES.values()
        if spec.task != Task.classification or dataset.task == Task.classification
    ]


def run_form(
    dataset: Dataset, algorithm: str | None, objective: str | None, k: str | None
) -> dict[str, Any]:
    """The run form: the chosen algorithm (the registry's default otherwise), the objectives
    it can work with on this data set, and k."""
    specs = {name: spec.to_dict() for name, spec in engine.ALGORITHMS.items()}
    spec = specs[algorithm if algorithm in specs else engine.REGISTRY.default_algorithm]
    needs = set(spec["requires"]["capabilities"])
    usable = objective_specs(dataset)
    usable = [o for o in usable if needs <= set(o["capabilities"])] or usable
    names = [o["name"] for o in usable]
    preferred = catalog.default_objective(dataset)
    chosen = objective if objective in names else (preferred if preferred in names else names[0])
    return {
        "dataset": dataset,
        "algorithms": list(specs.values()),
        "algorithm": spec,
        "objectives": usable,
        "objective": next(o for o in usable if o["name"] == chosen),
        "k_value": k if k not in (None, "") else catalog.default_k(dataset),
    }


# --------------------------------------------------------------------------- home, data sets


def home(session: Session, generator: str | None) -> dict[str, Any]:
    all_datasets = dataset_service.list_datasets(session, 0, 1000)
    specs = [spec.to_dict() for spec in catalog.GENERATORS.values()]
    chosen = next((s for s in specs if s["name"] == generator), specs[0] if specs else None)
    order = {"bundled": 0, "generator": 1, "upload": 2, "lesson": 3}
    return {
        "datasets": sorted(all_datasets, key=lambda ds: (order.get(ds.source, 9), ds.id)),
        "datasets_by_id": {ds.id: ds for ds in all_datasets},
        "runs": run_service.list_runs(session, None, None, 0, 15),
        "comparisons": session.exec(
            select(Comparison).order_by(Comparison.id.desc()).limit(8)
        ).all(),
        "generators": specs,
        "generator": chosen,
    }


def generator_form(name: str) -> dict[str, Any]:
    spec = catalog.GENERATORS.get(name)
    if spec is None:
        raise NotFound(f"unknown generator {name!r}")
    return {"generator": spec.to_dict()}


def dataset_page(
    session: Session,
    data_dir: Path,
    dataset_id: int,
    algorithm: str | None,
    objective: str | None,
) -> dict[str, Any]:
    dataset = dataset_service.get_dataset(session, dataset_id)
    return {
        "ds": dataset_service.describe(data_dir, dataset),
        "preview": dataset_service.preview(data_dir, dataset, 0, 15),
        "groups": _groups(dataset),
        "runs": run_service.list_runs(session, dataset_id, None, 0, 50),
        "compare_algorithms": catalog.compare_choices(dataset),
        "compare_objectives": objective_specs(dataset),
        "default_objective": catalog.default_objective(dataset),
        **run_form(dataset, algorithm, objective, None),
    }


def _groups(dataset: Dataset) -> list[tuple[str, list[str]]]:
    if not dataset.groups:
        return []
    out: dict[str, list[str]] = {}
    for name, label in zip(dataset.feature_names, dataset.groups, strict=True):
        out.setdefault(label, []).append(name)
    return list(out.items())


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
        "path": charts.path_figure(
            events,
            names,
            true_support=dataset.true_support,
            best_step=step,
            k=run.k,
            title="Features by step (live)" if live else "Forward/backward path: features by step",
        ),
        "objective_step": charts.objective_step_figure(
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
        "params": run_options.engine_params(run.params),
        "standardize": run_options.standardize(run.params),
        "spec": spec.to_dict() if spec else None,
        "result": result,
        "events_count": len(events),
        "live": live,
        "figures": figures,
        "support_now": [charts.feature_name(names, j) for j in supports_in_order(events)[-1]]
        if events
        else [],
        "last_event": charts.event_text(events[-1], names) if events else None,
        "run_seconds": (run.finished_at - run.started_at).total_seconds()
        if run.finished_at and run.started_at
        else None,
    }
    if live:
        return context
    figures["objective_size"] = charts.objective_size_figure(events, k=run.k)
    context["frames"] = charts.player_frames(events, names)
    truth = dataset.true_support
    if result is not None:
        figures["coef"] = charts.coef_figure(
            [f.model_dump() for f in result.support],
            true_support=truth,
            true_coef=_true_coef(data_dir, dataset),
            names=names,
        )
        if truth is not None:
            roc = charts.roc_of(events, truth, dataset.n_features, run.algorithm)
            context["roc"] = roc
            figures["roc"] = charts.roc_figure([roc] if roc else [])
        context["truth_names"] = set(names[j] for j in truth) if truth else set()
    return context


# --------------------------------------------------------------------------- comparisons


def _label(run: Any, runs: Sequence[Any]) -> str:
    same = [r for r in runs if r.algorithm == run.algorithm]
    return run.algorithm if len(same) == 1 else f"{run.algorithm} #{run.id}"


def comparison_page(session: Session, comparison_id: int) -> dict[str, Any]:
    comparison = run_service.get_comparison(session, comparison_id)
    dataset = dataset_service.get_dataset(session, comparison.dataset_id)
    runs = comparison.runs
    labels = {r.id: _label(r, runs) for r in runs}
    truth = dataset.true_support
    rocs, selected = [], {}
    for r in runs:
        if r.result is None:
            continue
        selected[r.id] = [f.name for f in r.result.support]
        if truth is not None:
            roc = charts.roc_of(
                run_service.trace_events(session, r.id), truth, dataset.n_features, labels[r.id]
            )
            if roc:
                rocs.append(roc)
    finished = [r for r in runs if r.result is not None]
    counts: dict[str, int] = {}
    for names in selected.values():
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    truth_names = {dataset.feature_names[j] for j in truth} if truth else set()
    rows = sorted(counts, key=lambda n: (-counts[n], dataset.feature_names.index(n)))
    return {
        "comparison": comparison,
        "ds": dataset,
        "labels": labels,
        "live": any(r.status in ACTIVE for r in runs),
        "selected": {rid: set(names) for rid, names in selected.items()},
        "feature_rows": rows,
        "counts": counts,
        "n_finished": len(selected),
        "everyone": [n for n in rows if counts[n] == len(selected)] if selected else [],
        "some": [n for n in rows if counts[n] < len(selected)],
        "truth_names": truth_names,
        "figures": {
            "roc": charts.roc_figure(rocs) if truth is not None else None,
            "time": charts.time_figure(
                [labels[r.id] for r in finished],
                [r.result.engine_seconds for r in finished],
                [r.run_seconds for r in finished],
                title="Time per run",
            ),
        },
        "rocs": {roc.label: roc for roc in rocs},
    }


def comparison_by_k(session: Session, data_dir: Path, comparison_id: int) -> dict[str, Any]:
    """Objective and test error against k, from Zhang's best size-k support along each path
    (refitted on the training rows, scored on the held-out ones)."""
    comparison = run_service.get_comparison(session, comparison_id)
    dataset = dataset_service.get_dataset(session, comparison.dataset_id)
    labels = {r.id: _label(r, comparison.runs) for r in comparison.runs}
    objective, error = [], []
    error_label = None
    for r in comparison.runs:
        best = best_along_path(run_service.trace_events(session, r.id))
        ks = sorted(k for k in best if k > 0)
        objective.append(charts.Series(labels[r.id], ks, [best[k][1] for k in ks]))
        if r.test_fraction and r.status == RunStatus.done and ks:
            run = run_service.get_run(session, r.id)
            errors, error_label = evaluation.refit_errors(
                run, dataset, data_dir, {k: sorted(best[k][0]) for k in ks}
            )
            error.append(charts.Series(labels[r.id], ks, [errors[k] for k in ks]))
    figures = {
        "objective_k": charts.by_k_figure(
            objective,
            title="Training objective of the best k-feature support along the path",
            ytitle="Objective (training loss)",
        ),
        "error_k": charts.by_k_figure(
            error,
            title=f"Test {error_label or 'error'} of the best k-feature support",
            ytitle=f"Test {error_label or 'error'}",
        )
        if error
        else None,
    }
    return {"figures": figures, "has_split": any(r.test_fraction for r in comparison.runs)}


# --------------------------------------------------------------------------- teaching


def teach_index(session: Session) -> dict[str, Any]:
    return {
        "states": [lessons.state(session, lesson) for lesson in lessons.LESSONS.values()],
        "recorded": session.exec(
            select(Run).where(Run.record_candidates).order_by(Run.id.desc()).limit(20)
        ).all(),
        "names": {ds.id: ds.name for ds in dataset_service.list_datasets(session, 0, 1000)},
    }


def lesson(key: str) -> lessons.Lesson:
    found = lessons.LESSONS.get(key)
    if found is None:
        raise NotFound(f"there is no lesson {key!r}; see /teach for the lessons")
    return found


def lesson_page(session: Session, key: str) -> dict[str, Any]:
    state = lessons.state(session, lesson(key))
    results = {
        run.id: RunResult.model_validate(run.result)
        for _, run in state.runs
        if run is not None and run.result
    }
    live = any(run is not None and run.status in ACTIVE for _, run in state.runs)
    return {"state": state, "results": results, "live": live}


def _step_index(events: Sequence[Event], step: int) -> int:
    for i, e in enumerate(events):
        if e.step == step:
            return i
    return max(0, min(step, len(events) - 1))


def _lesson_of(session: Session, dataset: Dataset, run: Run) -> dict[str, Any] | None:
    key = (dataset.sample_key or "").removeprefix("lesson:")
    found = lessons.LESSONS.get(key) if dataset.sample_key else None
    if found is None:
        return None
    state = lessons.state(session, found)
    others = [(spec, r) for spec, r in state.runs if r is not None and r.id != run.id]
    return {"lesson": found, "others": others}


def teach_page(session: Session, run_id: int, step: str, play: bool) -> dict[str, Any]:
    """One decision of a run; ``step`` is the event's step number (a shared URL with a step
    out of range, or not a number, opens the nearest step rather than an error)."""
    run = run_service.get_run(session, run_id)
    dataset = dataset_service.get_dataset(session, run.dataset_id)
    events = run_service.trace_events(session, run_id)
    spec = engine.ALGORITHMS.get(run.algorithm)
    context: dict[str, Any] = {
        "run": run,
        "ds": dataset,
        "play": play,
        "events": events,
        "spec": spec.to_dict() if spec is not None else None,
        "lesson": _lesson_of(session, dataset, run),
    }
    if not events:
        return context
    index = _step_index(events, int(step) if step.lstrip("-").isdigit() else 0)
    result = RunResult.model_validate(run.result) if run.result else None
    names = dataset.feature_names
    context["step"] = teach.explain(
        run,
        names,
        events,
        index,
        best_step=answer_step(events, run.k),
        answer=[f.name for f in result.support] if result else (),
    )
    context["timeline"] = [
        {
            "step": e.step,
            "kind": e.kind,
            "feature": charts.feature_name(names, e.feature) if e.feature is not None else "",
        }
        for e in events
    ]
    truth = dataset.true_support
    context["truth"] = {names[j] for j in truth} if truth else set()
    context["live"] = run.status in ACTIVE
    return context
