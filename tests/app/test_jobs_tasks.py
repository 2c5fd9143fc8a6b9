"""``run_job`` and its trace writer in this process, against SQLite and PostgreSQL: the
outcomes a worker process reaches, made deterministic."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

import engine
from app.db import make_db
from app.jobs import lease
from app.jobs.tasks import JobContext, ProgressMeter, TraceWriter, run_job
from app.migrations import prepare_schema
from app.models import DatasetGenerate, Run, RunConfig, RunStatus, TraceEvent
from app.services.datasets import create_generated
from app.services.runs import cancel_run, validate_config, with_defaults
from app.storage import DirectoryStore
from engine.trace import Event


@pytest.fixture
def db(database_url: str) -> Engine:
    db = make_db(database_url)
    prepare_schema(db)
    yield db
    db.dispose()


def queue_run(db: Engine, data_dir: Path, **config) -> int:
    """A generated data set (true support known) and a queued run on it."""
    with Session(db) as session:
        body = DatasetGenerate(generator="gaussian_regression", params={"n": 80, "d": 10})
        dataset = create_generated(session, DirectoryStore(data_dir), body)
        run_config = with_defaults(RunConfig(**config), dataset)  # as the API resolves it
        params = validate_config(run_config, dataset)
        run = Run(
            dataset_id=dataset.id,
            algorithm=run_config.algorithm,
            objective=run_config.objective,
            k=run_config.k,
            params=params,
        )
        session.add(run)
        session.commit()
        return run.id


def context(db: Engine, data_dir: Path, held: lease.Claim, **options) -> JobContext:
    return JobContext(db=db, store=DirectoryStore(data_dir), claim=held, **options)


def stored(db: Engine, run_id: int) -> tuple[Run, list[int]]:
    with Session(db) as session:
        steps = session.exec(
            select(TraceEvent.step).where(TraceEvent.run_id == run_id).order_by(TraceEvent.step)
        )
        return session.get(Run, run_id), list(steps)


def test_run_job_stores_result_and_trace(db: Engine, data_dir: Path) -> None:
    run_id = queue_run(db, data_dir, algorithm="foba-obj", k=5)
    held = lease.claim(db, run_id, "here")
    assert run_job(run_id, context(db, data_dir, held)) == RunStatus.done
    run, steps = stored(db, run_id)
    assert (run.status, run.progress, run.claim_token, run.error) == ("done", 1.0, None, None)
    assert run.result["recovery"]["exact_recovery"] is True
    assert steps == list(range(len(steps))) and len(steps) > 5


def test_a_stopping_worker_gives_its_run_back(db: Engine, data_dir: Path) -> None:
    run_id = queue_run(db, data_dir, algorithm="foba-obj", k=5)
    held = lease.claim(db, run_id, "here")
    status = run_job(run_id, context(db, data_dir, held, shutdown=lambda: True))
    assert status == RunStatus.queued
    run, steps = stored(db, run_id)
    assert (run.status, run.claim_token, run.result) == ("queued", None, None)
    assert steps == [0]  # what it wrote before noticing; the next claim clears it
    again = lease.claim(db, run_id, "next")
    assert again.attempt == 2 and stored(db, run_id)[1] == []


def test_a_worker_that_lost_its_claim_writes_nothing(db: Engine, data_dir: Path) -> None:
    run_id = queue_run(db, data_dir, algorithm="omp", k=3)
    held = lease.claim(db, run_id, "slow")
    assert lease.requeue_stale(db, stale_after=-1, max_attempts=5) == 1  # declared dead
    assert run_job(run_id, context(db, data_dir, held)) is None
    run, steps = stored(db, run_id)
    assert (run.status, run.result, steps) == ("queued", None, [])


def test_a_cancel_request_stops_the_run(db: Engine, data_dir: Path) -> None:
    run_id = queue_run(db, data_dir, algorithm="foba-obj", k=5)
    held = lease.claim(db, run_id, "here")
    with Session(db) as session:
        assert cancel_run(session, run_id).cancel_requested  # what POST .../cancel does
    assert run_job(run_id, context(db, data_dir, held)) == RunStatus.cancelled
    run, steps = stored(db, run_id)
    assert (
        run.status == "cancelled" and run.result["stop_reason"] == "cancelled at the user's request"
    )
    assert steps == list(range(len(steps)))


def test_trace_is_written_in_batches(db: Engine, data_dir: Path) -> None:
    run_id = queue_run(db, data_dir, algorithm="omp", k=3)
    held = lease.claim(db, run_id, "here")
    ctx = context(db, data_dir, held, batch_events=3, batch_seconds=3600)
    meter = ProgressMeter(engine.check_config("omp", k=10, n_features=10))
    writer = TraceWriter(ctx, meter)
    written = []
    for step in range(7):
        assert writer(Event(step=step, kind="add", objective=1.0, support_size=step + 1))
        written.append(stored(db, run_id)[1])
    # The first event goes out at once; then every third.
    assert [len(w) for w in written] == [1, 1, 1, 4, 4, 4, 7]
    assert stored(db, run_id)[0].progress == pytest.approx(0.7)


@pytest.mark.parametrize(
    "algorithm, k, d, params, events, expected",
    [
        # Against the path's real end: the default path_end stops past k + 5 = 9 features.
        ("foba-obj", 4, 50, {}, [("add", 1), ("add", 2), ("remove", 1)], 3 / 9),
        ("foba-obj", 4, 50, {"max_steps": 6}, [("add", 1), ("check", 1)], 1 / 6),
        ("omp", 4, 50, {}, [("add", 1), ("add", 2)], 2 / 4),
        ("backward", 10, 50, {}, [("remove", 49), ("remove", 48)], 2 / 40),
        ("omp", None, 50, {"epsilon": 0.1}, [("add", 1)], 0.0),
        ("omp", 2, 50, {}, [("add", 1), ("add", 2), ("swap", 2)], 0.99),
        ("backward", 10, 50, {}, [], 0.0),
        ("frank-wolfe", None, 50, {"B1": 1.0, "max_iter": 10}, [("add", 1), ("iterate", 1)], 0.2),
    ],
)
def test_progress(algorithm, k, d, params, events, expected) -> None:
    meter = ProgressMeter(engine.check_config(algorithm, k=k, params=params, n_features=d))
    for step, (kind, size) in enumerate(events):
        meter.observe(Event(step=step, kind=kind, objective=0.0, support_size=size))
    assert meter.progress == pytest.approx(expected)
