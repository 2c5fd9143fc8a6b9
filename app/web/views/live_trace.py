"""A running run's trace, read incrementally: its live fragment is polled every second, and
reading the whole trace at each poll made a long run's page cost more the longer it ran.
While a run runs its trace only grows (one attempt writes steps in order; a new attempt
starts over and has a new key), so the events read so far are kept (a bounded LRU keyed by
run id and attempt) and each poll reads only the steps after the last one kept."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from sqlmodel import Session

from app.models import Run, stored_id
from app.services import runs as run_service
from engine.trace import Event

MAX_KEPT = 16


@dataclass
class _SoFar:
    last_step: int = -1
    events: list[Event] = field(default_factory=list)


_kept: OrderedDict[tuple[int, int], _SoFar] = OrderedDict()
_lock = threading.Lock()


def events_so_far(session: Session, run: Run) -> list[Event]:
    """Every stored event of the run, in step order (a new list each time)."""
    key = (stored_id(run), run.attempt)
    with _lock:
        so_far = _kept.setdefault(key, _SoFar())
        _kept.move_to_end(key)
        while len(_kept) > MAX_KEPT:
            _kept.popitem(last=False)
        after = so_far.last_step
    new = run_service.trace_events_after(session, key[0], after)
    with _lock:  # another poll may have added some of these meanwhile
        so_far.events.extend(e for s, e in new if s > so_far.last_step)
        so_far.last_step = max([so_far.last_step, *(s for s, _ in new)])
        return list(so_far.events)


def forget() -> None:
    """Drop what is kept (tests)."""
    with _lock:
        _kept.clear()
