"""An edit or a cancel racing a DELETE of the same row answers 404, never a 500 (the ORM's
refresh of a deleted row raised), on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlmodel import Session, delete

from app.db import make_db
from app.errors import NotFound
from app.migrations import prepare_schema
from app.models import Dataset, Run, RunStatus, RunUpdate
from app.services.runs import cancel_run
from app.services.updates import apply_update


@pytest.fixture
def db(database_url: str):
    engine = make_db(database_url)
    prepare_schema(engine)
    yield engine
    engine.dispose()


def _run(db, status: str = RunStatus.done) -> int:
    with Session(db) as session:
        dataset = Dataset(
            name="d",
            source="generator",
            task="regression",
            target="y",
            n_samples=3,
            n_features=2,
            feature_names=["a", "b"],
            file="none",
        )
        session.add(dataset)
        session.flush()
        run = Run(dataset_id=dataset.id, algorithm="omp", objective="least_squares", status=status)
        session.add(run)
        session.commit()
        return run.id


def _delete(db, run_id: int) -> None:
    with Session(db) as other:
        other.exec(delete(Run).where(Run.id == run_id))
        other.commit()


def test_an_edit_of_a_run_deleted_meanwhile_is_not_found(db) -> None:
    run_id = _run(db)
    with Session(db) as session:
        run = session.get(Run, run_id)
        _delete(db, run_id)
        with pytest.raises(NotFound, match="deleted meanwhile"):
            apply_update(session, run, RunUpdate(name="late"), str)


def test_a_cancel_of_a_run_deleted_meanwhile_is_not_found(db, monkeypatch) -> None:
    run_id = _run(db, status=RunStatus.running)
    with Session(db) as session:
        # The delete lands between the cancel's read of the run and its refresh.
        real_commit = session.commit

        def commit_then_delete() -> None:
            real_commit()
            _delete(db, run_id)

        monkeypatch.setattr(session, "commit", commit_then_delete)
        with pytest.raises(NotFound):
            cancel_run(session, run_id)
