"""Bounds on one run, whatever its parameters: its time and its memory.

Time is checked wherever the run can stop: at every trace event and at the engine's
cancellation points between events (``engine.trace.Recorder.checkpoint``), so a run past
``MAX_RUN_SECONDS`` stops within a second and fails with a message saying so. Memory is an
address-space limit on the worker process (``MAX_RUN_MEMORY_MB`` above what the worker
held before its first run): an allocation past it raises MemoryError, which fails the run
with a message naming the setting, and the worker goes on with the next run.
"""

from __future__ import annotations

import ctypes
import resource
import time
from pathlib import Path

_baseline_bytes: int | None = None


def time_exceeded(started: float, max_seconds: float | None) -> str | None:
    """Why a run that started at ``started`` (monotonic) must stop now, or None."""
    if max_seconds is None or time.monotonic() - started <= max_seconds:
        return None
    return (
        f"the run took longer than MAX_RUN_SECONDS = {max_seconds:g} s and was stopped; "
        "choose a smaller k or max_steps, a faster algorithm, or ask the operator for a "
        "longer limit"
    )


def seconds_left(started: float, max_seconds: float | None) -> float | None:
    """What is left of ``MAX_RUN_SECONDS`` for a run that started at ``started`` (None:
    unbounded): judging a finished answer spends it too."""
    if max_seconds is None:
        return None
    return max(0.0, max_seconds - (time.monotonic() - started))


def memory_exceeded(max_mb: float | None) -> str:
    limit = f"MAX_RUN_MEMORY_MB = {max_mb:g}" if max_mb else "the memory available"
    return (
        f"the run needed more memory than {limit} allows; try fewer features or rows, a "
        "smaller n_repeats or max_steps, or ask the operator for a larger limit"
    )


def limit_memory(max_mb: float | None) -> None:
    """Cap this process's address space at what it holds now plus ``max_mb`` (once per
    process: the first call fixes the baseline, so runs get the same room every time)."""
    global _baseline_bytes
    if not max_mb:
        return
    if _baseline_bytes is None:
        _fewer_malloc_arenas()
        _baseline_bytes = _address_space_bytes()
    cap = _baseline_bytes + int(max_mb * 1024 * 1024)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _fewer_malloc_arenas() -> None:
    """glibc reserves up to 64 MB of address space per thread that allocates (the heartbeat
    thread, BLAS threads): under an address-space cap that reservation, not the run's data,
    would use up the room. Two arenas keep it small (glibc only; elsewhere nothing changes)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    m_arena_max = -8  # mallopt's M_ARENA_MAX
    libc.mallopt(m_arena_max, 2)


def _address_space_bytes() -> int:
    """VmSize of this process (Linux); 0 where /proc is not there (the cap is then max_mb)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
