"""The one vocabulary of trace event kinds the pages show: the player's badge and the charts'
legends (``name``), the teaching page's heading (``heading``) and its timeline's glyph
(``glyph``). Templates read ``EVENT_KINDS`` (a Jinja global, rendering.py); the player gets
the names with its frames (charts/player.py); the chart markers take theirs from here
(charts/style.py).

The keys are the trace's event kinds, and one more: ``certificate``, the swap certificate's
``check`` events that the worker appends after the stop (a ``check`` with ``feature_out``).
They are no backward check of the run, so ``kind_key`` names them apart."""

from __future__ import annotations

from dataclasses import dataclass

from engine.trace import Event


@dataclass(frozen=True)
class EventKind:
    name: str  # short: the player's badge, the charts' legends
    heading: str  # the teaching page's badge
    glyph: str  # the teaching page's timeline


EVENT_KINDS: dict[str, EventKind] = {
    "add": EventKind("addition", "Forward step", "+"),
    "remove": EventKind("deletion", "Backward step: a deletion", "\u2212"),
    "check": EventKind("backward check", "Backward check: nothing deleted", "\u2713"),
    "certificate": EventKind(
        "swap certificate", "Swap certificate, after the run: nothing changed", "\u2234"
    ),
    "swap": EventKind("swap", "Swap", "\u21c4"),
    "iterate": EventKind("iteration", "Iteration", "\u00b7"),
    "stop": EventKind("stop", "Stop", "\u25a0"),
}


def kind_of(kind: str) -> EventKind:
    """The words for ``kind`` (an unknown kind is named by itself)."""
    return EVENT_KINDS.get(kind) or EventKind(kind, kind, "?")


def kind_key(e: Event) -> str:
    """The key of ``EVENT_KINDS`` that names ``e``: its kind, except for the swap certificate's
    checks after the run (``certificate``)."""
    if e.kind == "check" and e.feature_out is not None:
        return "certificate"
    return e.kind


def kind_names() -> dict[str, str]:
    """Kind -> short name, as the player's frames carry them."""
    return {key: k.name for key, k in EVENT_KINDS.items()}
