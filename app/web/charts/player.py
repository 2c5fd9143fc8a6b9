"""What the run page's trace player steps through: one frame per event, each pointing at the
support after it, with one line saying what the event did."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from app.web.charts.kinds import kind_names
from app.web.charts.style import MAX_FRAMES, feature_name, fmt, num
from engine.trace import Event, replay


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


def player_frames(events: Sequence[Event], names: Sequence[str]) -> dict[str, Any]:
    """What the trace player steps through: one frame per event (iterate events thinned when
    there are more than MAX_FRAMES), each pointing at the support after it (supports are
    listed once each time they change), with the kinds' names the player shows."""
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
                "kind": e.kind,
                "text": event_text(e, names),
                "objective": num(e.objective),
                "size": e.support_size,
                "support": len(supports) - 1,
            }
        )
    return {"names": list(names), "kinds": kind_names(), "supports": supports, "frames": frames}


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
