"""``WORKER_CONCURRENCY=N``: one ``python -m app worker`` command supervising N worker processes.

Each child is a complete worker (``app.jobs.distributed.worker.run_one``: its own Procrastinate
worker, heartbeat and database pool), so the queue sees N workers on this host. The supervisor
passes SIGTERM/SIGINT on (each child hands its run back), waits for the children, and replaces a
child that died while nobody asked it to stop; its job is retried by the queue as any dead
worker's. A child whose supervisor is gone stops by itself.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import threading
from multiprocessing.process import BaseProcess

from app.config import Settings

log = logging.getLogger(__name__)


def supervise(settings: Settings, info: str) -> int:
    context = mp.get_context("spawn")  # a clean interpreter: no copied pools or threads
    stopping = threading.Event()

    def spawn() -> BaseProcess:
        child = context.Process(
            target=_child, args=(settings, info, os.getpid()), name="foba-worker"
        )
        child.start()
        return child

    children = [spawn() for _ in range(settings.worker_concurrency)]

    def stop(signum: int, _frame: object) -> None:
        stopping.set()
        for child in children:
            if child.is_alive() and child.pid is not None:
                os.kill(child.pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while not stopping.wait(settings.monitor_seconds):
        for i, child in enumerate(children):
            if not child.is_alive() and not stopping.is_set():
                log.warning("worker %s exited (%s); starting another", child.pid, child.exitcode)
                children[i] = spawn()
    for child in children:
        child.join()
    return 0


def _child(settings: Settings, info: str, parent: int) -> None:
    from app.jobs.distributed.worker import run_one

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    run_one(settings, info, parent=parent)
