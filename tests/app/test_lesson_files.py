"""The lesson file service against SQLite and PostgreSQL: the same file imported from several
threads at once makes one data set, one run (one job) and one lesson, and the losers leave no
arrays behind; a file exported and parsed again holds the same numbers, bit for bit."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine, func
from sqlmodel import Session, select

from app.db import make_db
from app.errors import Conflict
from app.migrations import prepare_schema
from app.models import Dataset, Run, SavedLesson
from app.services import lesson_files
from app.storage import DirectoryStore


class RecordingBackend:
    """A job backend that keeps the ids it is given (no worker runs them)."""

    def __init__(self) -> None:
        self.enqueued: list[int] = []
        self.submitted: list[int] = []
        self._lock = threading.Lock()

    def start(self) -> None:
        pass

    def enqueue(self, session: Session, run_ids: Sequence[int]) -> None:
        with self._lock:
            self.enqueued.extend(run_ids)

    def submit(self, run_id: int) -> None:
        with self._lock:
            self.submitted.append(run_id)

    def stop(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {}


@pytest.fixture
def db(database_url: str) -> Iterator[Engine]:
    db = make_db(database_url)
    prepare_schema(db)
    yield db
    db.dispose()


def a_file(seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 5))
    y = X[:, 1] - 2 * X[:, 3] + 0.1 * rng.normal(size=30)
    return json.dumps(
        {
            "format": lesson_files.FORMAT,
            "version": lesson_files.VERSION,
            "lesson": {"title": "t", "story": "s", "steps": [0, 2], "hidden": ["nav"]},
            "run": {"algorithm": "foba-obj", "objective": "least_squares", "k": 2, "seed": 3},
            "dataset": {
                "name": "mine",
                "task": "regression",
                "feature_names": [f"c{j}" for j in range(5)],
                "X": X.tolist(),
                "y": y.tolist(),
            },
            "trace": {
                "length": 6,
                "questions": [
                    {"step": 0, "kind": "enter", "answer": "c3"},
                    {"step": 2, "kind": "enter", "answer": "c1"},
                ],
            },
        }
    ).encode()


def test_one_file_imported_at_once_from_four_threads_makes_one_lesson(
    db: Engine, data_dir: Path
) -> None:
    store, backend, data = DirectoryStore(data_dir), RecordingBackend(), a_file()
    start = threading.Barrier(4)
    found: list[int] = []
    errors: list[BaseException] = []

    def importer() -> None:
        try:
            with Session(db, expire_on_commit=False) as session:
                start.wait()
                lesson, _ = lesson_files.import_file(session, backend, store, data)
                found.append(lesson.id or 0)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=importer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(set(found)) == 1 and len(found) == 4
    with Session(db) as session:
        for model in (SavedLesson, Dataset, Run):
            assert session.exec(select(func.count()).select_from(model)).one() == 1, model
        run = session.exec(select(Run)).one()
        assert run.record_candidates and run.seed == 3 and run.status == "queued"
    assert backend.enqueued == backend.submitted == [run.id]
    assert len(list((data_dir / "datasets").iterdir())) == 1  # the losers' arrays are gone


def test_an_exported_file_holds_the_stored_numbers_exactly(db: Engine, data_dir: Path) -> None:
    store, backend, data = DirectoryStore(data_dir), RecordingBackend(), a_file(1)
    with Session(db, expire_on_commit=False) as session:
        lesson, created = lesson_files.import_file(session, backend, store, data)
        assert created
        with pytest.raises(Conflict, match="once it has finished"):
            lesson_files.export(session, store, lesson.id or 0)
        run = session.get(Run, lesson.run_id)
        run.status = "done"  # as a worker leaves it (no trace: the file says so)
        session.add(run)
        session.commit()
        exported = lesson_files.export(session, store, lesson.id or 0)
    sent = json.loads(data)
    assert exported["dataset"]["X"] == sent["dataset"]["X"]  # floats equal bit for bit
    assert exported["dataset"]["y"] == sent["dataset"]["y"]
    assert exported["lesson"] == sent["lesson"]
    assert exported["run"]["seed"] == 3 and exported["run"]["record_candidates"]
    assert exported["trace"] == {"length": 0, "questions": []}
