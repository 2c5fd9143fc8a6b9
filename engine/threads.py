"""Where the BLAS threads go: to the large ``X.T @ r`` products, and nowhere else.

A selection path is a long sequence of small dense products (Cholesky updates, refits, Newton
steps on a k x k Hessian, k x n blocks) around a few large ones (``X.T @ r`` over every
feature). OpenBLAS's threads pay off on the large products only; on the small ones waking and
synchronising a second thread costs far more than the product (measured 4-60x slower with two
threads on a 2-core machine, worse when the other core is busy). So every algorithm run
(``engine.select``) is a *small-products section* (BLAS limited to one thread), and inside it
the products that are large enough to gain from threads (:func:`wide`) get the thread count
the process had when the section started: the library default, or whatever the caller set
with ``threadpoolctl`` or an environment variable. A caller who limits BLAS to one thread
keeps one thread.

The controller (threadpoolctl's view of the loaded BLAS libraries) is built once, on first
use; switching the thread count is one C call per library (a few microseconds). Sections nest
and may run in several threads at once: a lock-protected depth counter limits the threads on
the way into the outermost section and restores them on the way out of the last one.
Without threadpoolctl the policy is a no-op and BLAS keeps its own settings.

Threads pay only with idle cores to run on. On a loaded machine (the app's workers share it)
a multi-threaded product waits for every one of its threads to be scheduled, and measured
4x slower than on one thread under a load of 10 on 2 cores. So the wide count is also capped
by the cores the load average leaves idle (:func:`idle_cores`, read once per section).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

# A dense product over at least this many matrix entries gets the wide thread count. Measured
# on the 2-core machine: X.T @ r on 1000 x 2000 (2e6 entries) is where a second thread starts
# to pay; at 600 x 200 it costs more than it saves.
WIDE_MIN_ENTRIES = 2_000_000

_lock = threading.RLock()
_depth = 0
_restore: int | None = None  # thread count at entry to the outermost section
_wide_threads: int | None = None  # what a large product gets inside: _restore, capped by load
_libs: list[Any] | None = None  # threadpoolctl controllers of the BLAS libraries

F = TypeVar("F", bound=Callable[..., Any])


def _blas_libs() -> list[Any]:
    """The BLAS libraries loaded in the process (cached; empty without threadpoolctl)."""
    global _libs
    if _libs is None:
        try:
            # numpy's and scipy's BLAS must be loaded before the controller looks for them.
            import numpy  # noqa: F401
            import scipy.linalg  # noqa: F401
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl is a runtime dependency
            _libs = []
        else:
            _libs = list(ThreadpoolController().select(user_api="blas").lib_controllers)
    return _libs


def _set(n: int) -> None:
    for lib in _blas_libs():
        lib.set_num_threads(n)


def _current() -> int:
    libs = _blas_libs()
    return max((int(lib.num_threads) for lib in libs), default=1)


# Off: the wide count is the caller's whatever the load (tests of the mechanism set this).
LOAD_AWARE = True


def idle_cores(cpus: int | None, load: float | None) -> int:
    """Cores a product can use: ``cpus`` minus the 1-minute load average, counting our own
    running thread as idle (it is the one that would use them), rounded to the nearest, between
    1 and ``cpus``. Unknown cpus or load (no getloadavg on the platform): no cap."""
    if not cpus or load is None:
        return 1 << 30
    return max(1, min(cpus, int(cpus - load + 1.5)))


def _load() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # not on every platform
        return None


def wide_threads() -> int:
    """Threads a large product gets inside a section (1 outside any section: not ours)."""
    return _wide_threads or 1


def in_section() -> bool:
    return _depth > 0


@contextmanager
def small_products() -> Iterator[None]:
    """Run the body with BLAS on one thread; restore the previous count after the outermost."""
    global _depth, _wide_threads, _restore
    with _lock:
        if _depth == 0:
            _restore = _wide_threads = _current()
            if LOAD_AWARE and _restore > 1:
                _wide_threads = min(_restore, idle_cores(os.cpu_count(), _load()))
            if _restore > 1:
                _set(1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                if _restore is not None and _restore > 1:
                    _set(_restore)
                _wide_threads = _restore = None


@contextmanager
def wide(entries: int) -> Iterator[None]:
    """Inside a section, give a product over ``entries`` matrix entries the wide thread count
    when it is large enough to gain from it; otherwise (or outside a section) do nothing."""
    n = _wide_threads
    if _depth == 0 or n is None or n <= 1 or entries < WIDE_MIN_ENTRIES:
        yield
        return
    with _lock:
        _set(n)
    try:
        yield
    finally:
        with _lock:
            if _depth > 0:
                _set(1)
