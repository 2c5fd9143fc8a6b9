"""What the trace player (static/js/player.js) steps through, on the run page and the teaching
page: one frame per event, each pointing at the support after it, with one line saying what the
event did. Built once in Python; the browser steps through it without asking the server.

The frames document (JSON)::

    {
      "names":    ["x0", "x1", ...],            feature names, indexed by column
      "kinds":    {"add": "addition", ...},     the kinds' short names (charts/kinds.py)
      "supports": [[0, 3], [0, 3, 5], ...],     each distinct support (sorted columns), listed
                                                once each time the support changes
      "frames": [                               one per event (iterations thinned, ``thin``)
        {"step": 12,                            the event's step number (the URL's ?step=)
         "kind": "add",                         add | remove | check | swap | iterate | stop,
                                                or certificate: the swap certificate's checks
                                                after the stop (kinds.kind_key)
         "text": "add x5 (objective ...)",      one line: what the event did
         "objective": 0.42 | null,              objective after the event
         "size": 3,                             support size after the event
         "support": 1,                          index into "supports": the support after it
         "teach": {...}},                       the teaching page only (views/teach.py,
                                                ``teach_frames``): the narrated decision
        ...
      ],
      "answer": null | {                        set when the path went on past its answer
        "step": 12, "k": 5,                     where the final answer's support was reached
        "text": "The answer was found at step 12; ..."}   shown at the frames after it
    }
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from app.web.charts.kinds import kind_key, kind_names
from app.web.charts.style import MAX_FRAMES, feature_name, fmt, num
from engine.trace import Event, answer_step, best_along_path, replay


def event_text(e: Event, names: Sequence[str]) -> str:
    """One line for the player: what this event did."""
    f = feature_name(names, e.feature)
    if e.kind == "add":
        return f"add {f} (objective falls by {fmt(e.gain)})"
    if e.kind == "remove":
        return f"delete {f} (costs {fmt(e.gain)}, below the threshold {fmt(e.threshold)})"
    if e.kind == "check" and e.feature_out is not None:  # the swap certificate, after the run
        change = "raise" if (e.gain or 0) >= 0 else "lower"
        return (
            f"swap certificate: {f} in for {feature_name(names, e.feature_out)} would {change} "
            f"the objective by {fmt(abs(e.gain or 0))}; nothing changed"
        )
    if e.kind == "check":
        return (
            f"backward check: deleting {f} would cost {fmt(e.gain)}, not below "
            f"{fmt(e.threshold)}; nothing deleted"
        )
    if e.kind == "swap":
        return f"swap: {f} in, {feature_name(names, e.feature_out)} out"
    if e.kind == "iterate":
        return "iteration (support unchanged)"
    if e.kind == "stop":
        return f"stop: {e.reason or 'done'}"
    return e.kind


def answer_found(events: Sequence[Event], k: int | None) -> int | None:
    """The step where the final answer's support was first reached, when the path went on past
    it (``engine.trace.answer_step``: the best size-k support along the path is not where the
    path ends); None when the path ended at its answer."""
    if answer_step(events, k) is None or k is None:
        return None
    support = best_along_path(events)[k][0]
    return next(e.step for e, s in zip(events, replay(events), strict=True) if s == support)


def answer_sentence(step: int, k: int) -> str:
    return (
        f"The answer was found at step {step}; the path continues to show that no return to "
        f"k = {k} improves it."
    )


def player_frames(
    events: Sequence[Event], names: Sequence[str], k: int | None = None
) -> dict[str, Any]:
    """The frames document (see the module's docstring): one frame per event (iterate events
    thinned when there are more than MAX_FRAMES), each pointing at the support after it
    (supports are listed once each time they change), with the kinds' names the player shows
    and, for a run asked for ``k`` features whose path went on past its answer, where the
    answer was found."""
    keep = thin(events)
    supports: list[list[int]] = []
    frames: list[dict[str, Any]] = []
    last: frozenset[int] | None = None
    for e, support, kept in zip(events, replay(events), keep, strict=True):
        if not kept:
            continue
        if support != last:
            supports.append(sorted(support))
            last = support
        frames.append(
            {
                "step": e.step,
                "kind": kind_key(e),
                "text": event_text(e, names),
                "objective": num(e.objective),
                "size": e.support_size,
                "support": len(supports) - 1,
            }
        )
    found = answer_found(events, k)
    answer = None
    if found is not None and k is not None:
        answer = {"step": found, "k": k, "text": answer_sentence(found, k)}
    return {
        "names": list(names),
        "kinds": kind_names(),
        "supports": supports,
        "frames": frames,
        "answer": answer,
    }


def thin(events: Sequence[Event]) -> list[bool]:
    """Which events to keep: all of them up to MAX_FRAMES, else every event that is not an
    iteration and an evenly spread share of the iterations."""
    n = len(events)
    if n <= MAX_FRAMES:
        return [True] * n
    iterates = [i for i, e in enumerate(events) if e.kind == "iterate"]
    budget = max(MAX_FRAMES - (n - len(iterates)), 1)
    stride = math.ceil(len(iterates) / budget)
    dropped = {i for pos, i in enumerate(iterates) if pos % stride}
    return [i not in dropped for i in range(n)]
