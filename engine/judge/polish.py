"""Polish as one post-step of ``engine.select``, the same for every algorithm that declares a
size-k answer (``AlgorithmSpec.polishable``; the ``polish`` parameter is added by the registry).

The algorithm runs with its ``stop`` event held back; the trace is then brought from where the
algorithm's path ended to the support it answered (``remove``/``add`` events: a best-k path
usually ends elsewhere), the exchanges follow as ``swap`` events, and the held ``stop`` closes
the trace with the polished objective. The trace therefore replays to the polished answer.
"""

from __future__ import annotations

from typing import Any

from ..algorithms.common import Solution
from ..objectives import Objective
from ..trace import Event, Recorder, final_support
from .problem import fit
from .swaps import polish_state


class HoldStop(Recorder):
    """Relays every event to ``inner`` except ``stop``, which it keeps (``held``)."""

    def __init__(self, inner: Recorder) -> None:
        super().__init__(
            inner.callback,
            record_candidates=inner.record_candidates,
            max_candidates=inner.max_candidates,
        )
        self.inner = inner
        self.events = inner.events
        self.held: dict[str, Any] | None = None

    def emit(self, kind: str, **fields: Any) -> Event:
        if kind == "stop":
            self.held = fields
            return Event(step=len(self.events), kind=kind, **fields)
        return self.inner.emit(kind, **fields)


def polish_solution(
    objective: Objective, rec: Recorder, solution: Solution, *, max_swaps: int | None = None
) -> Solution:
    """``solution`` polished by exchanges, recorded on ``rec`` (which emits the final stop)."""
    target = [int(j) for j in solution.support]
    path_end = [int(j) for j in final_support(rec.events)]
    current = list(path_end)
    for j in [j for j in path_end if j not in target]:
        current.remove(j)
        rec.emit(
            "remove",
            feature=j,
            objective=fit(objective, current).value,
            support_size=len(current),
            accepted=True,
            reason="back to the answer before polishing",
        )
    for j in [j for j in target if j not in path_end]:
        current.append(j)
        rec.emit(
            "add",
            feature=j,
            objective=fit(objective, current).value,
            support_size=len(current),
            accepted=True,
            reason="back to the answer before polishing",
        )
    state = fit(objective, target)
    state, why, _ = polish_state(state, rec, max_swaps=max_swaps)
    result = Solution.of(state, f"{solution.stop_reason}; {why}")
    rec.stopped(result.stop_reason, objective=result.objective, support_size=len(result.support))
    return result
