"""The teaching mode: the lessons and one decision of a run at a time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlmodel import Session, select

import engine
from engine.trace import Event, answer_step

from ...errors import NotFound
from ...models import ACTIVE, Dataset, Run, RunResult
from .. import datasets as dataset_service
from .. import lessons, teach
from .. import runs as run_service
from ..charts.style import feature_name

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
            "feature": feature_name(names, e.feature) if e.feature is not None else "",
        }
        for e in events
    ]
    truth = dataset.true_support
    context["truth"] = {names[j] for j in truth} if truth else set()
    context["live"] = run.status in ACTIVE
    return context
