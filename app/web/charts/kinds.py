"""The one vocabulary of trace event kinds the pages show: the player's badge and the charts'
legends (``name``), the teaching page's heading (``heading``) and its timeline's glyph
(``glyph``). Templates read ``EVENT_KINDS`` (a Jinja global, rendering.py); the player gets
the names with its frames (charts/player.py); the chart markers take theirs from here
(charts/style.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EventKind:
    name: str  # short: the player's badge, the charts' legends
    heading: str  # the teaching page's badge
    glyph: str  # the teaching page's timeline


EVENT_KINDS: dict[str, EventKind] = {
    "add": EventKind("addition", "Forward step", "+"),
    "remove": EventKind("deletion", "Backward step: a deletion", "\u2212"),
    "check": EventKind("backward check", "Backward check: nothing deleted", "\u2713"),
    "swap": EventKind("swap", "Swap", "\u21c4"),
    "iterate": EventKind("iteration", "Iteration", "\u00b7"),
    "stop": EventKind("stop", "Stop", "\u25a0"),
}


def kind_of(kind: str) -> EventKind:
    """The words for ``kind`` (an unknown kind is named by itself)."""
    return EVENT_KINDS.get(kind) or EventKind(kind, kind, "?")


def kind_names() -> dict[str, str]:
    """Kind -> short name, as the player's frames carry them."""
    return {key: k.name for key, k in EVENT_KINDS.items()}
