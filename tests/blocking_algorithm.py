"""``test-blocking``: a test-only algorithm that runs until the test opens its gate.

It replaces runs made "slow enough" by timing the engine on this machine: a test that must
cancel, kill or restart a run in its middle gives the run a ``gate`` (a file path under
``tmp_path``), waits until the run is running, does what it tests, and opens the gate
(creates the file) when the run may finish. Nothing depends on how fast the machine is.

While it waits the algorithm emits an ``iterate`` event every ``poll_seconds``: each event is
a cancellation point of the worker (``app.jobs.tasks.TraceWriter`` answers the recorder with
the stop reason), so a cancel or a worker's shutdown stops it at once. A gate that nobody
opens fails the run after ``timeout_seconds`` instead of hanging the suite.

Every attempt appends a line ``<pid>`` to ``<gate>.started`` when it begins, so a test can
tell a first attempt from a second without reading the trace.

``test-gated-omp`` is OMP (with OMP's parameters and path) behind the same gate, for the jobs
that need a path algorithm: a stability subsample or a CV fold that must be caught in its
middle waits at the gate, then runs OMP as usual.

Two processes need the entry: the test process (the app checks a run with
``engine.check_config`` at submit) and the worker processes, which import the engine fresh.
Importing this module registers it; ``tests/conftest.py`` names this file in
``FOBA_TEST_PLUGINS``, which the workers load at start (``app.jobs.plugins``), and the
``blocking`` fixture (tests/conftest.py) registers it in the test process for the test that
uses it only, so tests that list every algorithm never see it: import this module in no test
module (its import registers it for the whole session).
"""

from __future__ import annotations

import os
import time
from dataclasses import replace

from engine.algorithms.common import Solution, emit_stop
from engine.registry import REGISTRY, Param, register_algorithm

NAME = "test-blocking"
GATED = "test-gated-omp"

PARAMS = (
    Param("gate", "str", "", "The run finishes once this file exists.", required=True),
    Param(
        "poll_seconds",
        "float",
        0.05,
        "How often it looks at the gate (and emits an event: a cancellation point).",
        minimum=0.001,
        exclusive_minimum=True,
    ),
    Param(
        "timeout_seconds",
        "float",
        120.0,
        "A gate still closed after this long fails the run.",
        minimum=0.0,
        exclusive_minimum=True,
    ),
)


def wait_at_gate(rec, value: float, size: int, gate, poll_seconds, timeout_seconds) -> None:
    """Note this attempt in ``<gate>.started``, then emit an ``iterate`` event per poll
    until the gate file exists."""
    with open(f"{gate}.started", "a") as started:  # one line per attempt
        started.write(f"{os.getpid()}\n")
    deadline = time.monotonic() + timeout_seconds
    while not os.path.exists(gate):
        if time.monotonic() > deadline:
            raise RuntimeError(f"test-blocking: the gate {gate} stayed closed")
        time.sleep(poll_seconds)
        rec.emit("iterate", objective=value, support_size=size)


def blocking(objective, rec, *, k, rng, gate, poll_seconds, timeout_seconds):
    """Add feature 0, wait at the gate (an ``iterate`` event per poll), stop."""
    state = objective.start()
    gain = state.add(0)
    rec.added(0, objective=state.value, support_size=1, gain=gain, score=gain)
    wait_at_gate(rec, state.value, 1, gate, poll_seconds, timeout_seconds)
    reason = "the test opened the gate"
    emit_stop(rec, state, reason)
    return Solution.of(state, reason)


def gated_omp(objective, rec, *, gate, poll_seconds, timeout_seconds, **omp_params):
    """OMP, once the gate is open: a path algorithm (stability, CV) whose parts block."""
    wait_at_gate(rec, objective.start().value, 0, gate, poll_seconds, timeout_seconds)
    return REGISTRY.algorithms["omp"].func(objective, rec, **omp_params)


def register() -> None:
    """Register ``test-blocking`` and ``test-gated-omp`` (once: a second call does nothing)."""
    if NAME not in REGISTRY.algorithms:
        register_algorithm(
            name=NAME,
            title="Test: blocks until released",
            summary="Test-only: adds feature 0, then waits until its gate file exists.",
            reference="tests/blocking_algorithm.py",
            params=PARAMS,
            k="unused",
            family="forward",
        )(blocking)
    if GATED not in REGISTRY.algorithms:
        omp = REGISTRY.algorithms["omp"]
        REGISTRY.algorithms[GATED] = replace(
            omp,
            name=GATED,
            title="Test: OMP behind a gate",
            summary="Test-only: waits until its gate file exists, then runs OMP.",
            params=(*PARAMS, *omp.params),
            func=gated_omp,
        )


def unregister() -> None:
    REGISTRY.algorithms.pop(NAME, None)
    REGISTRY.algorithms.pop(GATED, None)


register()
