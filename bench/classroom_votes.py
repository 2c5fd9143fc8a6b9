"""A class of simulated students voting on the default set-up (SQLite, one server process).

Starts ``python -m app`` on a free port with a temporary data directory, runs the Figure 2
lesson, opens a class session on its FoBa run and asks the first question. Then ``--students``
simulated phones (one cookie jar each) join by code, poll the question every second as the
phone page does (204 while nothing changes), and each votes once at a random moment within
``--window`` seconds; the projector polls the histogram every half second as its page does.
Prints, in milliseconds, p50 / p95 / max of:

* vote -> histogram: from a vote's answer to the first projector poll that counts it;
* the vote request itself, and the students' polls;

and the server process's resident memory (VmRSS, VmHWM) before and after::

    python bench/classroom_votes.py [--students 200] [--window 20] [--seed 0]

Every loop is bounded (a count and a deadline); nothing leaves the loopback interface.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.api_latency import free_port, start_server, until

STUDENT_POLL = 1.0
PROJECTOR_POLL = 0.5
DEADLINE = 120.0


def memory(pid: int) -> dict[str, int]:
    """The process's resident memory now and at its peak, in MB (Linux /proc)."""
    text = Path(f"/proc/{pid}/status").read_text()
    found = {k: int(v) // 1024 for k, v in re.findall(r"(VmRSS|VmHWM):\s+(\d+) kB", text)}
    return found


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def describe(name: str, seconds: list[float]) -> str:
    ms = [s * 1000 for s in seconds]
    return (
        f"{name:<22} n={len(ms):<5} p50 {statistics.median(ms):7.1f}  p95 {pct(ms, 0.95):7.1f}"
        f"  max {max(ms):7.1f} ms"
    )


def prepare(base: str) -> tuple[int, str]:
    """The lesson's FoBa run, a class session on it, its first question asked."""
    httpx.post(f"{base}/teach/lessons/figure2", timeout=60)

    def foba_done() -> bool:
        runs = httpx.get(f"{base}/api/runs").json()
        return any(r["algorithm"] == "foba-obj" and r["status"] == "done" for r in runs)

    until(foba_done, "the lesson's FoBa run", timeout=DEADLINE)
    run = next(r for r in httpx.get(f"{base}/api/runs").json() if r["algorithm"] == "foba-obj")
    made = httpx.post(f"{base}/class", data={"run": run["id"]}, follow_redirects=False)
    session_id = int(made.headers["location"].rsplit("/", 1)[1])
    page = httpx.get(f"{base}/class/{session_id}").text
    code = page.split('aria-label="join code">')[1].split("<")[0]
    httpx.post(f"{base}/class/{session_id}/next", data={})
    return session_id, code


async def join(client: httpx.AsyncClient, code: str) -> dict[str, Any]:
    """A phone opens the join link: its cookie, vote token, state and choices."""
    for _ in range(20):  # a join the busy server answered 503 is tried again
        joined = await client.get(f"/c/{code}")
        if joined.status_code == 200:
            break
        await asyncio.sleep(float(joined.headers.get("retry-after", "1")))
    assert joined.status_code == 200, (joined.status_code, joined.text[:300])
    page = joined.text
    return {
        "csrf": page.split('name="csrf_token" value="')[1].split('"')[0],
        "state": page.split('data-state="')[1].split('"')[0],
        "choices": re.findall(r'name="choice" value="([^"]+)"', page),
    }


async def student(
    client: httpx.AsyncClient,
    code: str,
    joined: dict[str, Any],
    vote_at: float,
    finished: asyncio.Event,
    timings: dict[str, list[float]],
) -> None:
    voted = False
    while not finished.is_set():
        if not voted and time.monotonic() >= vote_at:
            t0 = time.monotonic()
            choice = random.choice(joined["choices"])
            body = {"position": "0", "choice": choice, "csrf_token": joined["csrf"]}
            answer = await client.post(f"/c/{code}/vote", data=body)
            assert answer.status_code == 200, answer.text[:300]
            timings["vote request"].append(time.monotonic() - t0)
            timings["voted"].append(time.monotonic())
            voted = True
        t0 = time.monotonic()
        await client.get(f"/c/{code}/question?v={joined['state']}", headers={"HX-Request": "true"})
        timings["student poll"].append(time.monotonic() - t0)
        await asyncio.sleep(max(0.0, STUDENT_POLL - (time.monotonic() - t0)))


async def projector(
    base: str,
    session_id: int,
    students: int,
    finished: asyncio.Event,
    deadline: float,
    seen: list[tuple[float, int]],
) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        while time.monotonic() < deadline:
            t0 = time.monotonic()
            html = (await client.get(f"/class/{session_id}/live")).text
            total = int(html.split('<strong id="vote-total">')[1].split("<")[0])
            seen.append((time.monotonic(), total))
            if total >= students:
                break
            await asyncio.sleep(max(0.0, PROJECTOR_POLL - (time.monotonic() - t0)))
    finished.set()


async def lesson(base: str, students: int, window: float, seed: int) -> dict[str, list[float]]:
    session_id, code = prepare(base)
    random.seed(seed)
    limits = httpx.Limits(max_connections=1)
    clients = [httpx.AsyncClient(base_url=base, timeout=60, limits=limits) for _ in range(students)]
    t0 = time.monotonic()
    joined = await asyncio.gather(*[join(c, code) for c in clients])
    join_seconds = time.monotonic() - t0
    timings: dict[str, list[float]] = {"vote request": [], "voted": [], "student poll": []}
    seen: list[tuple[float, int]] = []
    finished = asyncio.Event()
    start = time.monotonic()
    await asyncio.gather(
        projector(base, session_id, students, finished, start + window + DEADLINE, seen),
        *[
            student(c, code, j, start + random.uniform(0, window), finished, timings)
            for c, j in zip(clients, joined, strict=True)
        ],
    )
    for c in clients:
        await c.aclose()
    assert seen[-1][1] == students, f"the projector counted {seen[-1][1]} of {students} votes"
    shown = []
    for i, t in enumerate(sorted(timings.pop("voted")), start=1):
        at = next((s for s, n in seen if n >= i and s >= t), None)
        if at is not None:
            shown.append(at - t)
    print(f"{students} joins took {join_seconds:.1f} s in all")
    return {"vote -> histogram": shown, **timings}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--window", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = start_server(Path(tmp) / "data", port)
        try:
            until(lambda: _up(base), "the server", timeout=DEADLINE)
            before = memory(server.pid)
            results = asyncio.run(lesson(base, args.students, args.window, args.seed))
            after = memory(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"{args.students} students, votes spread over {args.window:g} s, SQLite, 1 process")
    for name, values in results.items():
        print(describe(name, values))
    print(
        f"server memory: RSS {before['VmRSS']} MB before, {after['VmRSS']} MB after; "
        f"peak {after['VmHWM']} MB"
    )


def _up(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


if __name__ == "__main__":
    main()
