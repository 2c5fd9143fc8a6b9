"""A loop that records nothing for a while still reaches cancellation points: the recorder's
callback object is polled between events and can stop the run."""

from __future__ import annotations

import numpy as np

import engine


class StopAfterPolls:
    """Records events; says stop at its ``limit``-th poll."""

    def __init__(self, limit: int) -> None:
        self.limit, self.polls, self.events = limit, 0, 0

    def __call__(self, event: engine.Event) -> bool:
        self.events += 1
        return True

    def poll(self) -> bool | str:
        self.polls += 1
        return "enough" if self.polls >= self.limit else True


def test_randomized_sparsification_stops_between_draws() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 8))
    y = X[:, 0] + 0.1 * rng.standard_normal(40)
    callback = StopAfterPolls(limit=3)
    result = engine.select(
        X, y, algorithm="randomized-sparsification", k=2, n_repeats=10**9, B1=2.0, recorder=callback
    )
    assert callback.polls == 3
    assert result.cancelled
    assert result.trace[-1].kind == "stop" and result.trace[-1].reason == "enough"


def test_a_plain_callback_is_never_polled() -> None:
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 5))
    y = X[:, 1]
    seen: list[engine.Event] = []
    result = engine.select(
        X, y, algorithm="randomized-sparsification", k=2, n_repeats=5, B1=2.0, recorder=seen.append
    )
    assert not result.cancelled and seen[-1].kind == "stop"
