"""Finished runs' traces, decoded once: the run page, its figures document and the teaching
mode (each arrow key, and the lesson's other runs) ask for the same traces again and again.
A finished run's trace never changes, so its decoded events and the ROC drawn from them are
kept for the last few runs, with what is drawn from them once (the teaching page's frames)
(a bounded LRU keyed by run id, attempt and end time); a run that
is still going is read afresh every time."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session

from app.models import ACTIVE, Dataset, Run, stored_id
from app.services import runs as run_service
from app.web.charts import recovery
from engine.trace import Event

MAX_KEPT = 32


@dataclass
class Trace:
    events: list[Event]
    _roc: dict[str, recovery.Roc | None] = field(default_factory=dict)
    _memo: dict[str, Any] = field(default_factory=dict)

    def memo(self, key: str, build: Callable[[], Any]) -> Any:
        """``build()`` computed once for this trace (the teaching page's frames)."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    def roc(self, run: Run, dataset: Dataset) -> recovery.Roc | None:
        """The support-recovery ROC of the run (computed once), None without a truth."""
        if dataset.true_support is None:
            return None
        if "roc" not in self._roc:
            self._roc["roc"] = recovery.roc_of(
                self.events, dataset.true_support, dataset.n_features, run.algorithm
            )
        return self._roc["roc"]


_kept: OrderedDict[tuple[int, int, datetime | None], Trace] = OrderedDict()
_lock = threading.Lock()


def trace_of(session: Session, run: Run) -> Trace:
    """The run's decoded trace: from the cache when the run has ended."""
    run_id = stored_id(run)
    if run.status in ACTIVE:
        return Trace(run_service.trace_events(session, run_id))
    key = (run_id, run.attempt, run.finished_at)
    with _lock:
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    trace = Trace(run_service.trace_events(session, run_id))
    with _lock:
        _kept[key] = trace
        while len(_kept) > MAX_KEPT:
            _kept.popitem(last=False)
    return trace


def forget() -> None:
    """Empty the cache (tests)."""
    with _lock:
        _kept.clear()
