"""Worker processes under one parent, for both job backends: the in-process backend's workers
(supervised by the web process) and ``WORKER_CONCURRENCY`` distributed workers (supervised by
``python -m app worker``).

The supervisor spawns its children (spawn context: a clean interpreter, no copied threads,
locks or pools), passes SIGTERM on to them when it is asked to stop, replaces a child that
died while nobody asked it to stop, and joins them, killing those that outlast the grace
period. Each child is told its parent's pid and stops by itself once the parent is gone (an
orphan's ``os.getppid()`` changes). Ctrl-C reaches the whole process group: the children are
started with SIGINT blocked and then ignore it, so the parent decides when they stop (a child
still importing its modules does not die of a KeyboardInterrupt); a child may install its own
handler once it can stop cleanly.

Nothing here knows a job backend: no import of ``app.jobs`` modules, so neither backend's
module imports the other (the old worker <-> worker_pool cycle).
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from typing import Any

log = logging.getLogger(__name__)

PROCESS_NAME = "foba-worker"
STOP_GRACE_SECONDS = 10.0  # a stopping worker ends its run at the run's next event
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread() -> None:
    """One BLAS thread per worker: the workers already use the cores, and an oversubscribed
    BLAS makes the engine's many small products wait on each other (measured: sparse OMP
    7.4 s with two threads per process against 1.4 s with one, on 2 busy cores).

    The environment covers libraries not loaded yet (a spawned child inherits it as it is when
    it starts); threadpoolctl those already loaded (the ``foba-lab`` command imports numpy
    before it starts a worker)."""
    for var in BLAS_THREAD_VARS:
        os.environ.setdefault(var, "1")
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")


class Supervisor:
    """``count`` children each running ``target(*args, parent=<this pid>)``."""

    def __init__(
        self,
        target: Callable[..., Any],
        args: tuple[Any, ...],
        count: int,
        *,
        name: str = PROCESS_NAME,
        daemon: bool = False,
    ) -> None:
        self.target = target
        self.args = args
        self.count = count
        self.name = name
        self.daemon = daemon
        self.children: list[BaseProcess] = []
        self.stopping = threading.Event()
        self._told: set[int] = set()  # pids already asked to stop
        self._context = mp.get_context("spawn")
        self._lock = threading.Lock()  # the monitor thread and stop() both touch children

    def start(self) -> None:
        for var in BLAS_THREAD_VARS:  # inherited by the children (see one_blas_thread)
            os.environ.setdefault(var, "1")
        with self._lock:
            self.children = [self._spawn() for _ in range(self.count)]

    def _spawn(self) -> BaseProcess:
        child = self._context.Process(
            target=_child_main,
            args=(self.target, self.args, os.getpid()),
            name=self.name,
            daemon=self.daemon,
        )
        # The child inherits the blocked SIGINT through fork and exec; _child_main ignores it.
        # pthread_sigmask is per thread, so this works from a monitoring thread too.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            child.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return child

    def replace_dead(self) -> int:
        """Start a new child for each one that exited while nobody asked it to stop."""
        replaced = 0
        with self._lock:
            for i, child in enumerate(self.children):
                if child.is_alive() or self.stopping.is_set():
                    continue
                log.warning(
                    "worker %s exited (code %s); starting another", child.pid, child.exitcode
                )
                self.children[i] = self._spawn()
                replaced += 1
        return replaced

    def monitor(self, until: threading.Event, every: float) -> None:
        """Replace dead children every ``every`` seconds until ``until`` is set."""
        while not until.wait(every):
            self.replace_dead()

    def signal(self, signum: int = signal.SIGTERM) -> None:
        """Ask every child to stop, once (none is replaced from now on)."""
        self.stopping.set()
        for child in self.children:
            if child.is_alive() and child.pid is not None and child.pid not in self._told:
                self._told.add(child.pid)
                try:
                    os.kill(child.pid, signum)
                except ProcessLookupError:
                    pass

    def join(self, grace: float | None = STOP_GRACE_SECONDS) -> None:
        """Wait for the children, ``grace`` seconds in all (None: as long as they take); kill
        those still running then."""
        if self.stopping.is_set():  # a child started while the others were told to stop
            self.signal(signal.SIGTERM)
        deadline = None if grace is None else time.monotonic() + grace
        for child in self.children:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            child.join(left)
            if child.is_alive():
                log.warning("worker %s did not stop in time; killing it", child.pid)
                child.kill()
                child.join()
        for child in self.children:
            child.close()  # its sentinel pipe
        self.children = []
        self.args = ()  # what the children were handed (queues, say) is the owner's to release

    def stop(self, grace: float | None = STOP_GRACE_SECONDS) -> None:
        self.signal(signal.SIGTERM)
        self.join(grace)

    def describe(self) -> dict[str, Any]:
        children = list(self.children)
        return {
            "workers": len(children),
            "alive": sum(c.is_alive() for c in children),
            "pids": [c.pid for c in children],
        }


def _child_main(target: Callable[..., Any], args: tuple[Any, ...], parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor decides when children stop
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    target(*args, parent=parent)
