"""The storage layer and the claim protocol, on SQLite and (when reachable) PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, text, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from app.db import make_db, normalise_url
from app.errors import Conflict
from app.jobs import lease
from app.migrations import prepare_schema
from app.models import CVStudy, Dataset, IdempotencyKey, Run, RunStatus, TraceEvent, utcnow
from app.services.datasets import delete_dataset
from app.storage import DirectoryStore


@pytest.fixture
def db(database_url: str) -> Engine:
    db = make_db(database_url)
    prepare_schema(db)
    yield db
    db.dispose()


def add_dataset(db: Engine) -> int:
    with Session(db) as session:
        dataset = Dataset(
            name="d",
            source="upload",
            task="regression",
            target="y",
            n_samples=3,
            n_features=2,
            feature_names=["a", "b"],
            file="datasets/missing.npz",
        )
        session.add(dataset)
        session.commit()
        return dataset.id


def add_run(db: Engine, dataset_id: int, status: RunStatus = RunStatus.queued) -> int:
    with Session(db) as session:
        run = Run(
            dataset_id=dataset_id, algorithm="omp", objective="least_squares", k=1, status=status
        )
        session.add(run)
        session.commit()
        return run.id


def events(run_id: int, steps: range) -> list[dict]:
    return [{"run_id": run_id, "step": s, "kind": "add", "data": {"step": s}} for s in steps]


def steps_of(db: Engine, run_id: int) -> list[int]:
    with Session(db) as session:
        query = select(TraceEvent.step).where(TraceEvent.run_id == run_id)
        return sorted(session.exec(query))


def get_run(db: Engine, run_id: int) -> Run:
    with Session(db) as session:
        return session.get(Run, run_id)


def age_heartbeat(db: Engine, run_id: int, seconds: float) -> None:
    """What a dead worker leaves: a heartbeat that stopped ``seconds`` ago."""
    with db.begin() as conn:
        conn.execute(
            update(Run)
            .where(Run.id == run_id)
            .values(heartbeat_at=utcnow() - timedelta(seconds=seconds))
        )


def test_postgres_urls_use_psycopg3() -> None:
    assert normalise_url("postgresql://u@h/db").startswith("postgresql+psycopg://")
    assert normalise_url("postgres://u@h/db").startswith("postgresql+psycopg://")
    assert normalise_url("sqlite:///x.db") == "sqlite:///x.db"


def test_sqlite_runs_in_wal_mode_with_foreign_keys(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    db = make_db(f"sqlite:///{data_dir / 'p.db'}")
    with db.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 10_000
    db.dispose()


def test_only_one_claim_wins(db: Engine) -> None:
    run_id = add_run(db, add_dataset(db))
    first = lease.claim(db, run_id, "w1")
    assert first is not None and first.attempt == 1
    assert lease.claim(db, run_id, "w2") is None
    assert lease.claim_next(db, "w2") is None
    run = get_run(db, run_id)
    assert (run.status, run.worker, run.claim_token) == ("running", "w1", first.token)


def test_claim_next_takes_the_oldest_queued_run(db: Engine) -> None:
    dataset_id = add_dataset(db)
    older, newer = add_run(db, dataset_id), add_run(db, dataset_id)
    assert lease.claim_next(db, "w").run_id == older
    assert lease.claim_next(db, "w").run_id == newer
    assert lease.claim_next(db, "w") is None


def test_beat_writes_events_and_reports_cancellation(db: Engine) -> None:
    run_id = add_run(db, add_dataset(db))
    held = lease.claim(db, run_id, "w")
    assert lease.beat(db, held, 0.25, events(run_id, range(3))) is False
    with db.begin() as conn:
        conn.execute(update(Run).where(Run.id == run_id).values(cancel_requested=True))
    assert lease.beat(db, held, 0.5) is True
    assert steps_of(db, run_id) == [0, 1, 2]
    assert get_run(db, run_id).progress == 0.5


def test_a_stale_run_is_requeued_and_its_rerun_trace_starts_afresh(db: Engine) -> None:
    run_id = add_run(db, add_dataset(db))
    dead = lease.claim(db, run_id, "dead")
    lease.beat(db, dead, 0.3, events(run_id, range(5)))
    assert lease.requeue_stale(db, stale_after=60, max_attempts=3) == 0  # heartbeat is fresh
    age_heartbeat(db, run_id, 120)
    assert lease.requeue_stale(db, stale_after=60, max_attempts=3) == 1
    assert get_run(db, run_id).status == "queued"

    again = lease.claim(db, run_id, "alive")
    assert again.attempt == 2
    assert steps_of(db, run_id) == []  # the dead attempt's events are gone
    with pytest.raises(lease.LeaseLost):  # the old worker, should it wake, cannot write
        lease.beat(db, dead, 0.9, events(run_id, range(5, 7)))
    lease.finish(db, again, RunStatus.done, result={"ok": True}, events=events(run_id, range(4)))
    assert steps_of(db, run_id) == [0, 1, 2, 3]
    run = get_run(db, run_id)
    assert (run.status, run.progress, run.claim_token) == ("done", 1.0, None)
    with pytest.raises(lease.LeaseLost):
        lease.finish(db, dead, RunStatus.failed, error="late")


def test_stale_runs_fail_after_max_attempts_or_end_cancelled(db: Engine) -> None:
    dataset_id = add_dataset(db)
    tired, cancelled = add_run(db, dataset_id), add_run(db, dataset_id)
    lease.claim(db, tired, "w")
    lease.claim(db, cancelled, "w")
    with db.begin() as conn:
        conn.execute(update(Run).where(Run.id == tired).values(attempt=3))
        conn.execute(update(Run).where(Run.id == cancelled).values(cancel_requested=True))
    age_heartbeat(db, tired, 120)
    age_heartbeat(db, cancelled, 120)
    assert lease.requeue_stale(db, stale_after=60, max_attempts=3) == 0
    assert get_run(db, tired).status == "failed"
    assert "3 attempts" in get_run(db, tired).error
    assert get_run(db, cancelled).status == "cancelled"


def test_release_puts_the_run_back_in_the_queue(db: Engine) -> None:
    run_id = add_run(db, add_dataset(db))
    held = lease.claim(db, run_id, "w")
    lease.release(db, held)
    run = get_run(db, run_id)
    assert (run.status, run.claim_token, run.worker) == ("queued", None, None)


def test_a_batch_sent_again_after_a_lost_acknowledgement_stores_each_step_once(db: Engine) -> None:
    # The worker resends a batch whose commit it could not confirm together with the next one.
    run_id = add_run(db, add_dataset(db))
    held = lease.claim(db, run_id, "w")
    lease.beat(db, held, None, events(run_id, range(2)))
    lease.beat(db, held, None, events(run_id, range(0, 3)))
    lease.finish(db, held, RunStatus.done, result={}, events=events(run_id, range(2, 4)))
    assert steps_of(db, run_id) == [0, 1, 2, 3]


def test_an_idempotency_key_is_stored_once(db: Engine) -> None:
    run_id = add_run(db, add_dataset(db))
    with Session(db) as session:
        session.add(IdempotencyKey(key="k", request_hash="h", run_id=run_id))
        session.commit()
    with Session(db) as session, pytest.raises(IntegrityError):
        session.add(IdempotencyKey(key="k", request_hash="h2", run_id=run_id))
        session.commit()


def test_a_dataset_in_use_is_not_deleted_and_a_finished_one_takes_its_runs(
    db: Engine, data_dir: Path
) -> None:
    dataset_id = add_dataset(db)
    run_id = add_run(db, dataset_id, RunStatus.running)
    with Session(db) as session, pytest.raises(Conflict, match="queued or running"):
        delete_dataset(session, DirectoryStore(data_dir), dataset_id)
    held_events = events(run_id, range(3))
    with db.begin() as conn:
        conn.execute(update(Run).where(Run.id == run_id).values(status=RunStatus.done))
        conn.execute(TraceEvent.__table__.insert(), held_events)
    with Session(db) as session:
        delete_dataset(session, DirectoryStore(data_dir), dataset_id)
    with Session(db) as session:
        assert session.get(Dataset, dataset_id) is None
        assert session.get(Run, run_id) is None
    assert steps_of(db, run_id) == []


def test_take_over_recovers_a_dead_attempt_then_claims_at_most_max_attempts(db: Engine) -> None:
    """The distributed backend's queue hands a dead worker's job on: no heartbeat age is
    consulted, the run's attempts and cancel flag decide."""
    ds = add_dataset(db)
    run_id = add_run(db, ds)
    first = lease.claim(db, run_id, "host-a:1")
    lease.beat(db, first, 0.5, events(run_id, range(3)))

    second = lease.take_over(db, run_id, "host-b:2", max_attempts=2)  # its worker died
    assert second is not None and second.attempt == 2 and second.token != first.token
    assert steps_of(db, run_id) == []  # the dead attempt's partial trace is gone
    with pytest.raises(lease.LeaseLost):  # the old holder cannot write any more
        lease.beat(db, first, 0.9, events(run_id, range(3, 4)))

    assert lease.take_over(db, run_id, "host-c:3", max_attempts=2) is None  # died again
    run = get_run(db, run_id)
    assert run.status == RunStatus.failed and "each of 2 attempts" in run.error
    assert lease.take_over(db, run_id, "host-c:3", max_attempts=5) is None  # final stays final

    cancelled = add_run(db, ds)
    held = lease.take_over(db, cancelled, "host-a:1", max_attempts=3)  # a queued run: claimed
    assert held is not None and held.attempt == 1
    with db.begin() as conn:
        conn.execute(update(Run).where(Run.id == cancelled).values(cancel_requested=True))
    assert lease.take_over(db, cancelled, "host-b:2", max_attempts=3) is None
    assert get_run(db, cancelled).status == RunStatus.cancelled


def test_cancel_folds_ends_the_queued_folds_and_asks_the_running_ones_to_stop(db: Engine) -> None:
    dataset_id = add_dataset(db)
    with Session(db) as session:
        study = CVStudy(
            dataset_id=dataset_id,
            algorithm="omp",
            objective="least_squares",
            k_max=2,
            params={},
            n_folds=3,
            rule="min",
            metric="mse",
            seed=0,
            plan={},
        )
        session.add(study)
        session.commit()
        study_id = study.id
    folds = {status: add_run(db, dataset_id, status) for status in RunStatus}
    other = add_run(db, dataset_id, RunStatus.queued)  # not a fold: untouched
    with db.begin() as conn:
        conn.execute(update(Run).where(Run.id.in_(folds.values())).values(cv_id=study_id))
    lease.cancel_parts(db, Run.cv_id == study_id)
    after = {status: get_run(db, run_id) for status, run_id in folds.items()}
    assert after[RunStatus.queued].status == RunStatus.cancelled
    assert after[RunStatus.queued].finished_at is not None
    assert after[RunStatus.running].status == RunStatus.running  # it stops at its next event
    assert after[RunStatus.running].cancel_requested
    for status in (RunStatus.done, RunStatus.failed, RunStatus.cancelled):
        assert after[status].status == status and not after[status].cancel_requested
    assert get_run(db, other).status == RunStatus.queued and not get_run(db, other).cancel_requested
