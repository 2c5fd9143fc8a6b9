"""Step-by-step record of a selection run.

Every algorithm reports what it does through a :class:`Recorder`: one :class:`Event` per
decision. The pages animate these events, the API streams them, and the tests replay them, so
the trace (not the final support alone) is the product of a run.

Event kinds
-----------
``add``     a feature entered the support (``gain`` = objective decrease after the refit,
            ``score`` = the selection criterion of the chosen feature).
``remove``  a feature left the support (``gain`` = the deletion cost that was tested,
            ``threshold`` = the bound it was compared with, ``accepted`` = True).
``check``   a backward test that kept the support unchanged: the cheapest deletion was too
            costly (``accepted`` = False). Recorded so the teaching mode can show it. A swap
            certificate (``engine.certify(...).events()``) is told in checks too: each names an
            exchange (``feature`` in, ``feature_out`` out) and the objective change it would make
            (``gain``, against ``threshold`` 0), nothing applied.
``swap``    one feature replaced another in a single step (``feature`` in, ``feature_out`` out).
            Polish (``polish=True``) records each of its exchanges so, with ``info``
            ``{"polish": 1.0}`` and ``gain`` = the objective decrease, then a ``check`` naming
            the best exchange left, refused because it does not lower the objective.
``iterate`` an iteration of a continuous method that did not change the support.
``stop``    the run ended; ``reason`` says why.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

EVENT_KINDS = ("add", "remove", "check", "swap", "iterate", "stop")
POLL_SECONDS = 0.1  # how often Recorder.checkpoint asks the callback between events
SUPPORT_CHANGING = frozenset({"add", "remove", "swap"})
# Events that are points of the path: a new support, or new coefficients on the same support
# (an iteration of the lasso path or of Frank-Wolfe); checks and the stop are not.
PATH_POINTS = SUPPORT_CHANGING | {"iterate"}


@dataclass(frozen=True, slots=True)
class Candidates:
    """Scores behind one decision: ``features[i]`` scored ``scores[i]`` (best first).

    For forward steps these are the forward scores of the candidates; for backward checks the
    deletion costs of the selected features. ``n_total`` is how many were scored in all (the
    list may hold only the top N of them when d is large).
    """

    features: tuple[int, ...]
    scores: tuple[float, ...]
    n_total: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "scores": [_json_float(s) for s in self.scores],
            "n_total": self.n_total,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Candidates:
        return cls(
            features=tuple(int(f) for f in d["features"]),
            scores=tuple(_float_or_nan(s) for s in d["scores"]),
            n_total=int(d["n_total"]),
        )


@dataclass(frozen=True, slots=True)
class Event:
    """One decision of a run. ``objective`` is the objective value after the step."""

    step: int
    kind: str
    objective: float
    support_size: int
    feature: int | None = None
    feature_out: int | None = None
    gain: float | None = None
    score: float | None = None
    threshold: float | None = None
    accepted: bool | None = None
    reason: str | None = None
    info: dict[str, float] = field(default_factory=dict)
    candidates: Candidates | None = None

    def to_dict(self) -> dict[str, Any]:
        # Field by field, in field order, rather than dataclasses.asdict: asdict deep-copies
        # every field, and the app's workers encode each event as it happens (it was 0.15 ms
        # an event, the larger part of the trace writer's cost at 600 events).
        return {
            "step": self.step,
            "kind": self.kind,
            "objective": _json_float(self.objective),
            "support_size": self.support_size,
            "feature": self.feature,
            "feature_out": self.feature_out,
            "gain": _json_float(self.gain),
            "score": _json_float(self.score),
            "threshold": _json_float(self.threshold),
            "accepted": self.accepted,
            "reason": self.reason,
            "info": {k: _json_float(v) for k, v in self.info.items()},
            "candidates": self.candidates.to_dict() if self.candidates is not None else None,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Event:
        cand = d.get("candidates")
        return cls(
            step=int(d["step"]),
            kind=str(d["kind"]),
            objective=_float_or_nan(d["objective"]),
            support_size=int(d["support_size"]),
            feature=_int_or_none(d.get("feature")),
            feature_out=_int_or_none(d.get("feature_out")),
            gain=_float_or_none(d.get("gain")),
            score=_float_or_none(d.get("score")),
            threshold=_float_or_none(d.get("threshold")),
            accepted=d.get("accepted"),
            reason=d.get("reason"),
            info={k: _float_or_nan(v) for k, v in (d.get("info") or {}).items()},
            candidates=Candidates.from_dict(cand) if cand else None,
        )


RecorderCallback = Callable[[Event], "bool | str | None"]


class StopRequested(Exception):
    """Raised inside an algorithm when the recorder asked the run to stop."""


class Recorder:
    """Collects events, numbers them, and relays each to an optional callback.

    The callback may return ``False`` to stop the run (that is how cancellation works), or a
    string saying why: the recorder then raises :class:`StopRequested` out of :meth:`emit`, and
    ``engine.select`` turns it into a result whose last event is a ``stop`` with that reason
    (``"stopped by recorder"`` for a plain ``False``).

    Parameters
    ----------
    callback : callable, optional
        Called with every event as it happens.
    record_candidates : bool
        Attach the candidate scores behind each decision (for the teaching mode).
    max_candidates : int
        Keep only the best ``max_candidates`` scores per decision (0 keeps all).
    """

    def __init__(
        self,
        callback: RecorderCallback | None = None,
        *,
        record_candidates: bool = False,
        max_candidates: int = 50,
    ) -> None:
        self.callback = callback
        self.record_candidates = record_candidates
        self.max_candidates = max_candidates
        self.events: list[Event] = []
        # A callback object may also answer between events (see checkpoint).
        self._poll: Callable[[], bool | str | None] | None = getattr(callback, "poll", None)
        self._next_poll = 0.0

    def checkpoint(self) -> None:
        """A cancellation point without an event, for loops that record nothing for a while
        (the draws of randomized sparsification, a solver's inner iterations): asks the
        callback's ``poll()`` (when it has one; at most every ``POLL_SECONDS``) whether to go
        on, with the same answers as the callback itself, and raises :class:`StopRequested`
        when it says stop. So a run can be stopped within a bounded time however long it
        goes without deciding anything."""
        if self._poll is None:
            return
        now = time.monotonic()
        if now < self._next_poll:
            return
        self._next_poll = now + POLL_SECONDS
        answer = self._poll()
        if answer is False or isinstance(answer, str):
            raise StopRequested(answer if isinstance(answer, str) else "stopped by recorder")

    def emit(self, kind: str, **fields: Any) -> Event:
        if kind not in EVENT_KINDS:
            raise ValueError(f"unknown event kind {kind!r}; allowed: {EVENT_KINDS}")
        event = Event(step=len(self.events), kind=kind, **fields)
        self.events.append(event)
        answer = self.callback(event) if self.callback is not None else None
        if kind != "stop" and (answer is False or isinstance(answer, str)):
            raise StopRequested(answer if isinstance(answer, str) else "stopped by recorder")
        return event

    # One helper per kind, so that every event of a kind carries the same fields with the same
    # meaning (``gain`` of an add is the objective drop after the refit; of a remove or check,
    # the deletion cost that was tested against ``threshold``).

    def added(
        self,
        feature: int,
        *,
        objective: float,
        support_size: int,
        gain: float | None = None,
        score: float | None = None,
        threshold: float | None = None,
        candidates: Candidates | None = None,
        info: dict[str, float] | None = None,
        reason: str | None = None,
    ) -> Event:
        """``feature`` entered the support; ``score`` is the selection criterion it won by."""
        return self.emit(
            "add",
            feature=int(feature),
            objective=objective,
            support_size=support_size,
            gain=gain,
            score=score,
            threshold=threshold,
            accepted=True,
            candidates=candidates,
            info=info or {},
            reason=reason,
        )

    def removed(
        self,
        feature: int,
        *,
        objective: float,
        support_size: int,
        cost: float | None = None,
        threshold: float | None = None,
        score: float | None = None,
        candidates: Candidates | None = None,
        info: dict[str, float] | None = None,
    ) -> Event:
        """``feature`` left the support: its deletion ``cost`` was below ``threshold``."""
        return self.emit(
            "remove",
            feature=int(feature),
            objective=objective,
            support_size=support_size,
            gain=cost,
            score=score,
            threshold=threshold,
            accepted=True,
            candidates=candidates,
            info=info or {},
        )

    def checked(
        self,
        feature: int | None,
        *,
        objective: float,
        support_size: int,
        cost: float,
        threshold: float,
        feature_out: int | None = None,
        candidates: Candidates | None = None,
        info: dict[str, float] | None = None,
        reason: str | None = None,
    ) -> Event:
        """A move was tested and refused: its ``cost`` was not below ``threshold``. For a
        backward check, ``feature`` is the cheapest deletion; for a refused swap, ``feature``
        would have entered and ``feature_out`` left."""
        return self.emit(
            "check",
            feature=None if feature is None else int(feature),
            feature_out=None if feature_out is None else int(feature_out),
            objective=objective,
            support_size=support_size,
            gain=cost,
            threshold=threshold,
            accepted=False,
            candidates=candidates,
            info=info or {},
            reason=reason,
        )

    def swapped(
        self,
        feature_in: int,
        feature_out: int,
        *,
        objective: float,
        support_size: int,
        gain: float | None = None,
        score: float | None = None,
        threshold: float | None = None,
        info: dict[str, float] | None = None,
    ) -> Event:
        """``feature_in`` replaced ``feature_out`` in one step."""
        return self.emit(
            "swap",
            feature=int(feature_in),
            feature_out=int(feature_out),
            objective=objective,
            support_size=support_size,
            gain=gain,
            score=score,
            threshold=threshold,
            accepted=True,
            info=info or {},
        )

    def iterated(
        self,
        *,
        objective: float,
        support_size: int,
        feature: int | None = None,
        gain: float | None = None,
        score: float | None = None,
        info: dict[str, float] | None = None,
    ) -> Event:
        """An iteration that left the support as it was (``feature``: the coordinate it
        moved, if one)."""
        return self.emit(
            "iterate",
            feature=None if feature is None else int(feature),
            objective=objective,
            support_size=support_size,
            gain=gain,
            score=score,
            info=info or {},
        )

    def stopped(
        self,
        reason: str,
        *,
        objective: float,
        support_size: int,
        info: dict[str, float] | None = None,
    ) -> Event:
        """The run ended; ``reason`` says why."""
        return self.emit(
            "stop", objective=objective, support_size=support_size, reason=reason, info=info or {}
        )

    def candidates(
        self, features: np.ndarray, scores: np.ndarray, *, largest_first: bool = True
    ) -> Candidates | None:
        """Package the scores behind a decision, or None when not recording them."""
        if not self.record_candidates or len(features) == 0:
            return None
        scores = np.asarray(scores, dtype=float)
        order = np.argsort(-scores if largest_first else scores, kind="stable")
        if self.max_candidates:
            order = order[: self.max_candidates]
        return Candidates(
            features=tuple(int(f) for f in np.asarray(features)[order]),
            scores=tuple(float(s) for s in scores[order]),
            n_total=len(features),
        )


# --------------------------------------------------------------------------- path analysis
# Every reading of a trace as a path (the support after each event, when each feature was in,
# Zhang's best size-k support) comes from ``_walk``, the one replay of the events.


def _walk(events: Iterable[Event]) -> Iterator[tuple[Event, tuple[int, ...]]]:
    """Each event with the support after it, features in order of admission."""
    support: list[int] = []
    for e in events:
        if e.kind == "add":
            support.append(_need(e.feature, e))
        elif e.kind == "remove":
            _drop(support, _need(e.feature, e), e)
        elif e.kind == "swap":
            _drop(support, _need(e.feature_out, e), e)
            support.append(_need(e.feature, e))
        yield e, tuple(support)


def _drop(support: list[int], j: int, e: Event) -> None:
    if j not in support:
        raise KeyError(f"event {e.step} ({e.kind}) takes out feature {j}, which is not selected")
    support.remove(j)


def replay(events: Iterable[Event]) -> list[frozenset[int]]:
    """Support after every event, in order (one entry per event)."""
    return [frozenset(s) for _, s in _walk(events)]


def supports_in_order(events: Iterable[Event]) -> list[list[int]]:
    """Support after every event, its features in order of admission."""
    return [list(s) for _, s in _walk(events)]


def final_support(events: Iterable[Event]) -> np.ndarray:
    supports = supports_in_order(events)
    return np.array(sorted(supports[-1]) if supports else [], dtype=np.intp)


@dataclass(frozen=True)
class Membership:
    """When each feature was in the support: ``segments[j]`` lists ``(start, end)`` event
    steps, ``end`` None while the feature is still in at the last event; ``order`` lists the
    features in order of first admission."""

    order: list[int]
    segments: dict[int, list[tuple[int, int | None]]]


def membership(events: Iterable[Event]) -> Membership:
    # Only the features an event moves can enter or leave, so this looks at those alone (what
    # _walk does, without its support copy per event): linear in the events, where comparing
    # the whole support before and after each event was quadratic (30 ms at 600 events, in the
    # app's summary of every run).
    order: list[int] = []
    segments: dict[int, list[tuple[int, int | None]]] = {}
    open_at: dict[int, int] = {}
    count: dict[int, int] = {}  # times each feature is in the support (_walk's list)
    for e in events:
        moved = _moves(e)
        was = {j: count.get(j, 0) > 0 for _, j in moved}
        for delta, j in moved:
            if delta < 0 and count.get(j, 0) == 0:
                raise KeyError(
                    f"event {e.step} ({e.kind}) takes out feature {j}, which is not selected"
                )
            count[j] = count.get(j, 0) + delta
        for j, before in was.items():
            now = count[j] > 0
            if before and not now:
                segments[j].append((open_at.pop(j), e.step))
            elif now and not before:
                if j not in segments:
                    order.append(j)
                    segments[j] = []
                open_at[j] = e.step
    for j, start in open_at.items():
        segments[j].append((start, None))
    return Membership(order, segments)


def _moves(e: Event) -> tuple[tuple[int, int], ...]:
    """What an event does to the support, in _walk's order: (-1, j) takes j out, (+1, j) puts
    it in."""
    if e.kind == "add":
        return ((1, _need(e.feature, e)),)
    if e.kind == "remove":
        return ((-1, _need(e.feature, e)),)
    if e.kind == "swap":
        return ((-1, _need(e.feature_out, e)), (1, _need(e.feature, e)))
    return ()


def best_along_path(events: Iterable[Event]) -> dict[int, tuple[frozenset[int], float, int]]:
    """Zhang's "best k features along the path", for every size k the path visited.

    Returns ``{k: (support, objective, step)}`` with the support of size k that had the smallest
    objective at a point of the path (after a support change, or an iteration that moved the
    coefficients on the same support), the first such step on ties; events whose objective is
    not a number are passed over.
    """
    best: dict[int, tuple[frozenset[int], float, int]] = {}
    for e, support in _walk(events):
        if e.kind not in PATH_POINTS or math.isnan(e.objective):
            continue
        k = len(support)
        if k not in best or e.objective < best[k][1]:
            best[k] = (frozenset(support), e.objective, e.step)
    return best


def answer_step(events: Sequence[Event], k: int | None) -> int | None:
    """The step where the size-k answer was found, when the path went on past it (the final
    support differs from the best size-k support along the path); None otherwise."""
    if not k or not events:
        return None
    best = best_along_path(events).get(k)
    if best is None:
        return None
    return best[2] if replay(events)[-1] != best[0] else None


# --------------------------------------------------------------------------- JSON


_NUMBER = {
    "anyOf": [{"type": "number"}, {"type": "string", "enum": ["nan", "inf", "-inf"]}],
    "description": "A number; JSON has no NaN or infinity, so those travel as strings.",
}


def _nullable(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}], "description": description}


# The JSON form of ``Event.to_dict()``, for the API's schema; kept beside the code it describes.
EVENT_JSON_SCHEMA: dict[str, Any] = {
    "title": "TraceEvent",
    "type": "object",
    "required": ["step", "kind", "objective", "support_size"],
    "properties": {
        "step": {"type": "integer", "minimum": 0, "description": "Position in the trace."},
        "kind": {"type": "string", "enum": list(EVENT_KINDS)},
        "objective": {**_NUMBER, "description": "Objective value after the step."},
        "support_size": {"type": "integer", "minimum": 0},
        "feature": _nullable(
            {"type": "integer"}, "Feature added, removed, swapped in or tested (column index)."
        ),
        "feature_out": _nullable({"type": "integer"}, "Feature swapped out."),
        "gain": _nullable(
            _NUMBER, "add: objective decrease after the refit; remove/check: deletion cost."
        ),
        "score": _nullable(_NUMBER, "The selection criterion of the chosen feature."),
        "threshold": _nullable(_NUMBER, "The bound the gain or cost was compared with."),
        "accepted": _nullable({"type": "boolean"}, "False for a refused move (check)."),
        "reason": _nullable({"type": "string"}, "Why the run stopped (stop events)."),
        "info": {"type": "object", "additionalProperties": _NUMBER},
        "candidates": _nullable(
            {
                "type": "object",
                "required": ["features", "scores", "n_total"],
                "properties": {
                    "features": {"type": "array", "items": {"type": "integer"}},
                    "scores": {"type": "array", "items": _NUMBER},
                    "n_total": {"type": "integer", "minimum": 0},
                },
            },
            "Scores behind the decision, best first (teaching mode).",
        ),
    },
}


def to_json(events: Iterable[Event]) -> str:
    return json.dumps([e.to_dict() for e in events], allow_nan=False)


def from_json(text: str) -> list[Event]:
    return [Event.from_dict(d) for d in json.loads(text)]


def _json_float(x: float | None) -> float | str | None:
    # JSON has no inf/nan; keep them representable rather than lose or crash on them.
    if x is None:
        return None
    x = float(x)
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def _float_or_nan(x: Any) -> float:
    return float(x) if x is not None else math.nan


def _float_or_none(x: Any) -> float | None:
    return None if x is None else float(x)


def _int_or_none(x: Any) -> int | None:
    return None if x is None else int(x)


def _need(feature: int | None, e: Event) -> int:
    if feature is None:
        raise ValueError(f"event {e.step} ({e.kind}) names no feature")
    return feature
