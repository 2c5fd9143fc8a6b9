"""The worker supervisor both job backends use (``app.jobs.supervisor``): children spawned with
SIGINT ignored, SIGTERM passed on, a child that died unasked replaced, an orphan stopping by
itself; and the in-process backend releasing its multiprocessing resources when it stops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.jobs.supervisor import Supervisor

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def sleeper(folder: str, *, parent: int) -> None:
    """A child: says it started (and how it treats SIGINT), runs until SIGTERM or until its
    parent is gone, and says which ended it."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    Path(folder, f"{os.getpid()}.started").write_text(f"{parent} {ignored}")
    while not stop.wait(0.05) and os.getppid() == parent:
        pass
    Path(folder, f"{os.getpid()}.stopped").write_text("term" if stop.is_set() else "orphan")


def wait_for(predicate, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.05)
    pytest.fail("timed out")


def started(folder: Path, count: int = 1) -> dict[int, str] | None:
    """The children that said they started, once there are ``count`` of them."""
    found = {int(p.name.split(".")[0]): p.read_text() for p in folder.glob("*.started")}
    return found if len(found) >= count else None


def test_children_are_replaced_when_they_die_and_stopped_with_sigterm(tmp_path) -> None:
    workers = Supervisor(sleeper, (str(tmp_path),), 2)
    workers.start()
    try:
        first = wait_for(lambda: started(tmp_path, 2))
        assert all(text == f"{os.getpid()} True" for text in first.values())  # SIGINT ignored
        victim = workers.children[0].pid
        os.kill(victim, signal.SIGINT)  # Ctrl-C reaches the children too: they stay
        os.kill(victim, signal.SIGKILL)
        wait_for(lambda: not workers.children[0].is_alive())
        assert workers.replace_dead() == 1
        now = wait_for(lambda: started(tmp_path, 3))
        assert sorted(c.pid for c in workers.children) == sorted(set(now) - {victim})
    finally:
        workers.stop(grace=60)
    assert workers.children == [] and workers.replace_dead() == 0
    ended = {p.read_text() for p in tmp_path.glob("*.stopped")}
    assert ended == {"term"} and len(list(tmp_path.glob("*.stopped"))) == 2


def test_a_child_stops_when_its_supervisor_is_gone(tmp_path) -> None:
    code = (
        "import sys, time; from test_jobs_supervisor import sleeper; "
        "from app.jobs.supervisor import Supervisor; "
        f"w = Supervisor(sleeper, ({str(tmp_path)!r},), 1); w.start(); time.sleep(600)"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])},
    )
    try:
        (child,) = wait_for(lambda: started(tmp_path))
    finally:
        parent.kill()
        parent.wait()
    assert wait_for(lambda: (p := tmp_path / f"{child}.stopped").exists() and p.read_text())
    assert (tmp_path / f"{child}.stopped").read_text() == "orphan"


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="named semaphores live in /dev/shm")
def test_the_inprocess_backend_releases_its_semaphores_when_it_stops(data_dir) -> None:
    """They were left to the interpreter's exit handlers; an exit that skipped them (a second
    Ctrl-C) made the resource tracker warn of leaked semaphores."""
    from service_helpers import make_settings, serve

    with serve(make_settings(data_dir, workers=1)) as client:
        wake = client.app.state.backend._wake
        names = [lock._semlock.name for lock in (wake._rlock, wake._wlock, wake._sem)]
        files = [Path("/dev/shm", "sem." + name.lstrip("/")) for name in names]
        assert all(f.exists() for f in files)
        del wake
    assert not any(f.exists() for f in files)
