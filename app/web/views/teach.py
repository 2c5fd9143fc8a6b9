"""The teaching mode: the lessons and one decision of a run at a time."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from sqlmodel import Session, col, select

import engine
from app.errors import NotFound
from app.models import ACTIVE, Dataset, Run, RunResult
from app.services import classroom, lessons, what_if
from app.services import datasets as dataset_service
from app.services import runs as run_service
from app.storage import ArrayStore
from app.web.charts import geometry, player
from app.web.charts.kinds import kind_key, kind_of
from app.web.charts.style import feature_name
from app.web.views import reveal, traces
from app.web.views import teach_step as teach
from engine.trace import PATH_POINTS, Event, supports_in_order

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


def chart_note(run: Run, step: teach.TeachStep) -> str:
    """What the chart card says when the step has no candidates figure."""
    if step.figure is not None:
        return ""
    if step.kind in ("add", "remove", "check") and not step.scores_choice:
        spec = engine.ALGORITHMS.get(run.algorithm)
        title = spec.title if spec is not None else run.algorithm
        return (
            f"{title} does not choose this step among scored candidates: the sentence beside "
            "says what moved the feature."
        )
    if step.kind in ("add", "remove", "check"):
        why = (
            ""
            if run.record_candidates
            else " (the run was started without “record candidate scores”)"
        )
        return f"No candidate scores were recorded for this step{why}."
    return "This step is not a choice among candidates."


def teach_frame(run: Run, names: Sequence[str], step: teach.TeachStep) -> dict[str, Any]:
    """What the teaching panel shows for one frame (``frame["teach"]``): the narrated decision
    of ``teach_step.explain`` and the candidates figure, as JSON."""
    e = step.event
    words = kind_of(kind_key(e))
    feature = feature_name(names, e.feature) if e.feature is not None else ""
    return {
        "label": step.kind_label,
        "sentence": step.sentence,
        "facts": [[label, value] for label, value in step.facts],
        "added": step.added,
        "removed": step.removed,
        "figure": step.figure,
        "score_help": step.score_help,
        "chart_note": chart_note(run, step),
        "tick": words.glyph + (feature if e.kind in ("add", "remove", "swap") else ""),
        "title": f"step {e.step}: {words.name} {feature}".rstrip(),
    }


def teach_frames(
    run: Run, dataset: Dataset, events: Sequence[Event], answer: Sequence[str]
) -> dict[str, Any]:
    """The player's frames (charts/player.py) with, in each, the teaching panel of its step
    (``frame["teach"]``, see ``teach_frame``), at each step a student can predict the
    classroom's question (``frame["question"]``, ``reveal.question_frame``: "Predict first"),
    and the true support (``truth``, columns): everything the page steps through without
    asking the server again."""
    names = dataset.feature_names
    doc = player.player_frames(events, names, run.k)
    supports = supports_in_order(events)
    best = doc["answer"]["step"] if doc["answer"] else None
    kept = [i for i, keep in enumerate(player.thin(events)) if keep]
    for frame, i in zip(doc["frames"], kept, strict=True):
        step = teach.explain(
            run, names, events, i, best_step=best, answer=answer, supports=supports
        )
        frame["teach"] = teach_frame(run, names, step)
        question = classroom.question_at(events, names, i, supports)
        if question is not None:
            frame["question"] = reveal.question_frame(question)
    doc["truth"] = sorted(dataset.true_support or [])
    return doc


MAX_WHAT_IFS = 16  # as many as services.what_if keeps
_what_if_frames: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
_lock = threading.Lock()


def _frames_of_what_if(dataset: Dataset, found: what_if.WhatIf) -> dict[str, Any]:
    """A what-if's frames, built once per run and set of changes."""
    run = found.run
    key = (run.id, run.attempt, run.finished_at, tuple(sorted(found.changes.items())))
    with _lock:
        if key in _what_if_frames:
            _what_if_frames.move_to_end(key)
            return _what_if_frames[key]
    doc = teach_frames(run, dataset, found.events, found.answer)
    with _lock:
        _what_if_frames[key] = doc
        while len(_what_if_frames) > MAX_WHAT_IFS:
            _what_if_frames.popitem(last=False)
    return doc


def _lesson_steps(
    session: Session, dataset: Dataset, run: Run, events: Sequence[Event], doc: dict[str, Any]
) -> list[dict[str, Any]]:
    """For each other run of the run's lesson, the step making the same decision as each
    frame (``matching_step``), aligned with the frames."""
    key = (dataset.sample_key or "").removeprefix("lesson:")
    found = lessons.LESSONS.get(key) if dataset.sample_key else None
    if found is None:
        return []
    index = {e.step: i for i, e in enumerate(events)}
    links = []
    for spec, other in lessons.state(session, found).runs:
        if other is None or other.id == run.id:
            continue
        other_events = traces.trace_of(session, other).events
        steps = [matching_step(events, index[f["step"]], other_events) for f in doc["frames"]]
        links.append({"label": spec.label, "run": other.id, "steps": steps})
    return links


def teach_page(
    session: Session,
    store: ArrayStore,
    run_id: int,
    step: str,
    play: bool,
    k: str | None = None,
    nu: str | None = None,
) -> dict[str, Any]:
    """A run's decisions, one at a time: the page holds the frames of every step (the player
    steps through them in the browser; ``step`` is the one the URL names, the player's start).
    With ``k`` or ``nu`` other than the run's (small problems only), the decisions are those
    of the run recomputed at once with them (``services.what_if``): shown, never stored; the
    what-if and its frames are computed once per set of changes. "Predict first" (?predict=1)
    and the presentation mode (?present=1) are the browser's (teach.js reads the URL)."""
    run = run_service.get_selection_run(session, run_id)
    dataset = dataset_service.get_dataset(session, run.dataset_id)
    spec = engine.ALGORITHMS.get(run.algorithm)
    changes = what_if.changes_of(run, k, nu)
    recomputed = what_if.recompute(store, run, dataset, changes) if changes else None
    if recomputed is not None:
        run, events = recomputed.run, recomputed.events
        frames = _frames_of_what_if(dataset, recomputed) if events else None
    else:
        trace = traces.trace_of(session, run)  # decoded once per finished run
        events = trace.events
        result = RunResult.model_validate(run.result) if run.result else None
        answer = [f.name for f in result.support] if result else []
        frames = (
            trace.memo("teach", lambda: teach_frames(run, dataset, events, answer))
            if events
            else None
        )
    context: dict[str, Any] = {
        "run": run,
        "ds": dataset,
        "play": play,
        "step_asked": step if step.isdigit() else "0",
        "spec": spec.to_dict() if spec is not None else None,
        "lesson": _lesson_of(session, dataset, run, events, None),
        "what_if": recomputed,
        "query": recomputed.query if recomputed else "",
        "instant": _instant_controls(run, dataset, spec),
        "live": run.status in ACTIVE,
        "frames": None,
    }
    if frames is not None:
        geometry.attach(frames, store, run, dataset, events)  # once per kept frames document
        lesson_links = [] if recomputed else _lesson_steps(session, dataset, run, events, frames)
        context["frames"] = {**frames, "lesson": lesson_links}
    return context
