"""The teaching mode: the lessons and one decision of a run at a time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlmodel import Session, col, select

import engine
from app.errors import NotFound
from app.models import ACTIVE, Dataset, Run, RunResult
from app.services import datasets as dataset_service
from app.services import lessons, what_if
from app.services import runs as run_service
from app.storage import ArrayStore
from app.web.charts.style import feature_name
from app.web.views import teach_step as teach
from app.web.views import traces
from engine.trace import PATH_POINTS, Event, answer_step

# --------------------------------------------------------------------------- teaching


def teach_index(session: Session) -> dict[str, Any]:
    return {
        "states": [lessons.state(session, lesson) for lesson in lessons.LESSONS.values()],
        "recorded": session.exec(
            select(Run).where(Run.record_candidates).order_by(col(Run.id).desc()).limit(20)
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


def _step_index(events: Sequence[Event], asked: str) -> tuple[int, str | None]:
    """The index of the event whose step the URL asks for, and a note when there is none (a
    shared URL with a step out of range, or not a number, opens the nearest step, and says
    so)."""
    last = events[-1].step
    if not asked.lstrip("-").isdigit():
        return 0, f"“{asked[:40]}” is not a step number; showing step 0."
    step = int(asked)
    for i, e in enumerate(events):
        if e.step == step:
            return i, None
    i = max(0, min(step, len(events) - 1))
    shown = events[i].step
    return i, f"This run has steps 0 to {last}; there is no step {step}, so step {shown} is shown."


def matching_step(events: Sequence[Event], index: int, other: Sequence[Event]) -> int | None:
    """The step of ``other`` that makes the same decision as ``events[index]``: the same n-th
    addition for an addition, else the first event after which the support has the same size
    (the stop when nothing matches)."""
    if not other:
        return None
    e = events[index]
    if e.kind == "add":
        nth = sum(x.kind == "add" for x in events[: index + 1])
        adds = [x for x in other if x.kind == "add"]
        if len(adds) >= nth:
            return adds[nth - 1].step
    same = [x for x in other if x.kind in PATH_POINTS and x.support_size == e.support_size]
    if e.kind != "stop" and same:
        return same[0].step
    return other[-1].step


def _instant_controls(
    run: Run, dataset: Dataset, spec: engine.AlgorithmSpec | None
) -> dict[str, Any]:
    """The k and nu the page can change at once, or why it cannot."""
    takes_k = spec is not None and spec.k != "unused"
    nu = next((p for p in spec.params if p.name == "nu"), None) if spec else None
    return {
        "unavailable": what_if.unavailable(dataset),
        "k": takes_k,
        "k_max": dataset.n_features,
        "nu": nu.to_dict() if nu else None,
    }


def _lesson_of(
    session: Session, dataset: Dataset, run: Run, events: Sequence[Event], index: int | None
) -> dict[str, Any] | None:
    """The lesson the run belongs to, with its other runs and, for each, the step that makes
    the same decision as the one shown."""
    key = (dataset.sample_key or "").removeprefix("lesson:")
    found = lessons.LESSONS.get(key) if dataset.sample_key else None
    if found is None:
        return None
    state = lessons.state(session, found)
    others = []
    for spec, other in state.runs:
        if other is None or other.id == run.id:
            continue
        step = None
        if index is not None:
            step = matching_step(events, index, traces.trace_of(session, other).events)
        others.append((spec, other, step))
    return {"lesson": found, "others": others}


def teach_page(
    session: Session,
    store: ArrayStore,
    run_id: int,
    step: str,
    play: bool,
    k: str | None = None,
    nu: str | None = None,
) -> dict[str, Any]:
    """One decision of a run; ``step`` is the event's step number. With ``k`` or ``nu`` other
    than the run's (small problems only), the decisions are those of the run recomputed at
    once with them (``services.what_if``): shown, never stored."""
    run = run_service.get_selection_run(session, run_id)
    dataset = dataset_service.get_dataset(session, run.dataset_id)
    spec = engine.ALGORITHMS.get(run.algorithm)
    changes = what_if.changes_of(run, k, nu)
    recomputed = what_if.recompute(store, run, dataset, changes) if changes else None
    if recomputed is not None:
        run, events = recomputed.run, recomputed.events
        answer = recomputed.answer
    else:
        events = traces.trace_of(session, run).events  # decoded once per finished run
        result = RunResult.model_validate(run.result) if run.result else None
        answer = [f.name for f in result.support] if result else []
    context: dict[str, Any] = {
        "run": run,
        "ds": dataset,
        "play": play,
        "events": events,
        "spec": spec.to_dict() if spec is not None else None,
        "lesson": _lesson_of(session, dataset, run, events, None),
        "what_if": recomputed,
        "query": recomputed.query if recomputed else "",
        "instant": _instant_controls(run, dataset, spec),
    }
    if not events:
        return context
    index, context["step_note"] = _step_index(events, step)
    context["lesson"] = None if recomputed else _lesson_of(session, dataset, run, events, index)
    names = dataset.feature_names
    context["step"] = teach.explain(
        run, names, events, index, best_step=answer_step(events, run.k), answer=answer
    )
    context["timeline"] = [
        {
            "step": e.step,
            "kind": e.kind,
            "feature": feature_name(names, e.feature) if e.feature is not None else "",
        }
        for e in events
    ]
    truth = dataset.true_support
    context["truth"] = {names[j] for j in truth} if truth else set()
    context["live"] = run.status in ACTIVE
    return context
