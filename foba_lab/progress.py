"""A one-line progress bar on stderr, driven by the engine's recorder callback.

It stays silent for short runs: nothing is drawn before ``delay`` seconds, so a run that ends
quickly prints nothing, and a long one shows where it is. Redrawn at most ``fps`` times a
second; cleared when done.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from engine import Config, Event
from engine.trace import SUPPORT_CHANGING


class ProgressBar:
    """``update(fraction, label)`` from anywhere; ``callback(configs)`` makes a recorder
    callback that turns engine events into the fraction of the job done."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        enabled: bool = True,
        delay: float = 0.5,
        fps: float = 10.0,
        width: int = 30,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.delay = delay
        self.interval = 1.0 / fps
        self.width = width
        self.started = time.monotonic()
        self.last_draw = -1.0
        self.drawn = False

    def update(self, fraction: float, label: str = "") -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started < self.delay or now - self.last_draw < self.interval:
            return
        self.last_draw = now
        fraction = min(max(fraction, 0.0), 1.0)
        filled = round(fraction * self.width)
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = now - self.started
        self.stream.write(f"\r[{bar}] {fraction:4.0%} {label} {elapsed:5.1f} s\x1b[K")
        self.stream.flush()
        self.drawn = True

    def callback(
        self, configs: Sequence[Config], start: float = 0.0, end: float = 1.0, label: str = ""
    ) -> Callable[[Event], None]:
        """A recorder callback for engine runs of ``configs``, one after another (a run ends
        with its ``stop`` event), covering ``[start, end]`` of the job in equal shares."""
        share = (end - start) / max(len(configs), 1)
        run, steps = 0, 0

        def callback(event: Event) -> None:
            nonlocal run, steps
            config = configs[min(run, len(configs) - 1)]
            if event.kind in SUPPORT_CHANGING:
                steps += 1
            done = 1.0 if event.kind == "stop" else config.progress(steps, event.support_size)
            self.update(start + share * (run + done), label)
            if event.kind == "stop":
                run, steps = run + 1, 0

        return callback

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False
