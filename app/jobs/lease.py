"""How workers hold runs. The Run row is the source of truth; a job backend carries only ids.

* ``claim``: ``UPDATE runs SET status='running', claim_token=<new>, attempt=attempt+1 ...
  WHERE id=? AND status='queued'``: exactly one worker wins. The same transaction deletes any
  trace an earlier attempt left, so every attempt's trace starts at step 0 and never repeats a
  step ((run_id, step) is also the table's key).
* ``beat`` / ``finish`` / ``release``: every write of a worker is conditional on its token, so
  a worker that was declared dead (and whose run was requeued) cannot touch the new attempt;
  it learns from the row count (``LeaseLost``) and stops.
* ``requeue_stale``: a running run whose heartbeat is older than ``stale_after`` seconds has
  lost its worker: back to queued, or failed once it has used up ``max_attempts``, or
  cancelled when that had been asked for (the in-process backend's liveness check).
* ``take_over``: the same recovery for one run whose job a queue handed to a new worker
  because the old one died (the distributed backend, whose liveness is the queue's).

Every write is one short transaction, retried with backoff while the database is transiently
unavailable (``app.db.transient``): a lock held elsewhere delays a run, it never fails one. A
run's error is cleaned here, where it is stored (``run_errors.scrub``): no SQL, tokens or
paths reach its user.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import ColumnElement, Connection, Engine, bindparam, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import col

from app.db.transient import retried
from app.jobs.run_errors import scrub
from app.models import ACTIVE, Run, RunStatus, TraceEvent, utcnow


@dataclass(frozen=True)
class Claim:
    run_id: int
    token: str
    attempt: int


class LeaseLost(Exception):
    """The run is no longer held by this claim (requeued after a stale heartbeat)."""


@retried
def claim(db: Engine, run_id: int, worker: str) -> Claim | None:
    """Take the queued run ``run_id``; None when it is not queued (any more)."""
    token = uuid.uuid4().hex
    now = utcnow()
    with db.begin() as conn:
        row = conn.execute(
            update(Run)
            .where(col(Run.id) == run_id, col(Run.status) == RunStatus.queued)
            .values(
                status=RunStatus.running,
                claim_token=token,
                worker=worker,
                attempt=Run.attempt + 1,
                heartbeat_at=now,
                started_at=now,
                progress=0.0,
            )
            .returning(col(Run.attempt))
        ).first()
        if row is None:
            return None
        conn.execute(delete(TraceEvent).where(col(TraceEvent.run_id) == run_id))
    return Claim(run_id=run_id, token=token, attempt=row.attempt)


def claim_next(db: Engine, worker: str) -> Claim | None:
    """Take the oldest queued run, if any."""
    while True:
        run_id = _oldest_queued(db)
        if run_id is None:
            return None
        taken = claim(db, run_id, worker)
        if taken is not None:
            return taken
        # Another worker won it, or it was cancelled meanwhile: look again.


@retried
def _oldest_queued(db: Engine) -> int | None:
    with db.connect() as conn:
        return conn.execute(
            select(col(Run.id))
            .where(col(Run.status) == RunStatus.queued)
            .order_by(col(Run.id))
            .limit(1)
        ).scalar()


# The statements of ``beat``, the writes a worker repeats all through a run (a trace batch
# every ``trace_batch_events`` events), built once: building and hashing them each time was
# about half of a batch's 0.85 ms of CPU on the engine's thread (measured with cProfile).
_HELD = (col(Run.id) == bindparam("held_id"), col(Run.claim_token) == bindparam("held_token"))
_BEAT = update(Run).where(*_HELD).returning(col(Run.cancel_requested))
_BEATS = {
    False: _BEAT.values(heartbeat_at=bindparam("now")),
    True: _BEAT.values(heartbeat_at=bindparam("now"), progress=bindparam("progress")),
}
_APPEND = {
    name: dialect.insert(TraceEvent).on_conflict_do_nothing()
    for name, dialect in (("postgresql", postgresql), ("sqlite", sqlite))
}


@retried
def beat(
    db: Engine,
    held: Claim,
    progress: float | None = None,
    events: Sequence[dict[str, Any]] = (),
) -> bool:
    """Heartbeat, progress and a batch of trace events in one short transaction.

    Returns whether cancellation was requested; raises LeaseLost when the claim is gone.
    """
    values = {"held_id": held.run_id, "held_token": held.token, "now": utcnow()}
    if progress is not None:
        values["progress"] = progress
    with db.begin() as conn:
        row = conn.execute(_BEATS[progress is not None], values).first()
        if row is None:
            raise LeaseLost(f"run {held.run_id} is no longer held by this worker")
        if events:
            _append(conn, events)
    return bool(row.cancel_requested)


def _append(conn: Connection, events: Sequence[dict[str, Any]]) -> None:
    """Insert trace events, skipping steps already stored: a batch whose commit reached the
    database but whose acknowledgement was lost is sent again with the next one, and only the
    claim's holder writes (the update above fences it), so a stored step is this very event."""
    conn.execute(_APPEND[conn.dialect.name], list(events))


@retried
def finish(
    db: Engine,
    held: Claim,
    status: RunStatus,
    *,
    result: dict[str, Any] | None = None,
    error: str | None = None,
    events: Sequence[dict[str, Any]] = (),
) -> None:
    """Store the outcome with the last trace events; raises LeaseLost when the claim is gone."""
    now = utcnow()
    values: dict[str, Any] = {
        "status": status,
        "result": result,
        "error": None if error is None else scrub(error),
        "claim_token": None,
        "heartbeat_at": now,
        "finished_at": now,
    }
    if status == RunStatus.done:
        values["progress"] = 1.0
    with db.begin() as conn:
        updated = conn.execute(
            update(Run)
            .where(col(Run.id) == held.run_id, col(Run.claim_token) == held.token)
            .values(**values)
        ).rowcount
        if updated == 0:
            raise LeaseLost(f"run {held.run_id} is no longer held by this worker")
        if events:
            _append(conn, events)


@retried
def release(db: Engine, held: Claim) -> None:
    """Give the run back to the queue (the worker is shutting down); its trace goes at the
    next claim."""
    with db.begin() as conn:
        conn.execute(
            update(Run)
            .where(col(Run.id) == held.run_id, col(Run.claim_token) == held.token)
            .values(status=RunStatus.queued, claim_token=None, worker=None, progress=0.0)
        )


@retried
def cancel_parts(db: Engine, siblings: ColumnElement[bool]) -> None:
    """Cancel the parts of a study (``siblings``: ``Run.cv_id == 5``, ``Run.stability_id ==
    7``): the queued ones at once, the running ones at their next event (the user's cancel, or
    a part that failed: the study has failed, so the other parts' work would be thrown away)."""
    with db.begin() as conn:
        conn.execute(
            update(Run)
            .where(siblings, col(Run.status) == RunStatus.queued)
            .values(status=RunStatus.cancelled, cancel_requested=True, finished_at=utcnow())
        )
        conn.execute(
            update(Run).where(siblings, col(Run.status).in_(ACTIVE)).values(cancel_requested=True)
        )


def requeue_stale(db: Engine, stale_after: float, max_attempts: int) -> int:
    """Recover the runs of dead workers; return how many went back to the queue."""
    stale = (col(Run.status) == RunStatus.running) & (
        col(Run.heartbeat_at) < utcnow() - timedelta(seconds=stale_after)
    )
    with db.begin() as conn:
        return _recover(conn, stale, max_attempts)


def take_over(db: Engine, run_id: int, worker: str, max_attempts: int) -> Claim | None:
    """Claim ``run_id`` for a queue that has already decided its last holder is gone.

    The distributed backend's job queue knows when a worker died (its worker heartbeats), and
    hands the run's job to another worker: a run still ``running`` then belongs to a dead
    attempt and is recovered as ``requeue_stale`` would (cancelled, failed after
    ``max_attempts``, or queued), then claimed. None when nothing is left to run.
    """
    with db.begin() as conn:
        abandoned = (col(Run.id) == run_id) & (col(Run.status) == RunStatus.running)
        _recover(conn, abandoned, max_attempts)
    return claim(db, run_id, worker)


def _recover(conn: Connection, abandoned: ColumnElement[bool], max_attempts: int) -> int:
    """Runs whose worker is gone: cancelled when that had been asked for, failed once they
    have used up ``max_attempts``, queued otherwise; return how many were queued."""
    now = utcnow()
    ended = {"claim_token": None, "finished_at": now}
    conn.execute(
        update(Run)
        .where(abandoned, col(Run.cancel_requested))
        .values(status=RunStatus.cancelled, **ended)
    )
    conn.execute(
        update(Run)
        .where(abandoned, col(Run.attempt) >= max_attempts)
        .values(
            status=RunStatus.failed,
            error=f"its worker stopped responding on each of {max_attempts} attempts (killed,"
            " or out of memory?); try a smaller problem",
            **ended,
        )
    )
    return conn.execute(
        update(Run)
        .where(abandoned)
        .values(status=RunStatus.queued, claim_token=None, worker=None, progress=0.0)
    ).rowcount
