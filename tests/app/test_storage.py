"""The array stores (data directory, database chunks on SQLite and PostgreSQL): round trips,
lazy partial loads, lost arrays, and nothing half-stored when the data set row fails."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from service_helpers import make_settings, serve
from sqlalchemy import Engine, event, func, select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session
from sqlmodel import select as select_rows

from app.db import make_db
from app.migrations import prepare_schema
from app.models import ArrayChunk, Dataset, DatasetGenerate
from app.services.datasets import create_from_problem, create_generated
from app.storage import (
    ArraysMissing,
    ArrayStore,
    DatabaseStore,
    DirectoryStore,
    make_store,
    pack_matrix,
    unpack_matrix,
)
from engine import datasets as generators

CHUNKS = ArrayChunk.__table__


@pytest.fixture
def db(database_url: str) -> Iterator[Engine]:
    db = make_db(database_url)
    prepare_schema(db)
    yield db
    db.dispose()


@pytest.fixture(params=["directory", "database"])
def store(request: pytest.FixtureRequest, db: Engine, data_dir: Path) -> ArrayStore:
    return make_store(request.param, data_dir, db)


def arrays(seed: int = 0, n: int = 50, d: int = 8) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"X": rng.normal(size=(n, d)), "y": rng.normal(size=n), "mean": rng.normal(size=d)}


def same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def chunk_rows(db: Engine) -> int:
    with db.connect() as conn:
        return conn.execute(select(func.count()).select_from(CHUNKS)).scalar_one()


def test_arrays_round_trip_under_new_keys(store: ArrayStore, db: Engine) -> None:
    first, second = arrays(0), arrays(1)
    with Session(db) as session:
        a, b = store.save(first, session), store.save(second, session)
        session.commit()
    assert a != b
    assert same(store.load(a), first) and same(store.load(b), second)
    assert same(store.load(a, ("y",)), {"y": first["y"]})
    assert store.missing([a, b, "datasets/never.npz", "db:never"]) == {
        "datasets/never.npz",
        "db:never",
    }


def test_sparse_matrices_travel_as_their_parts(store: ArrayStore, db: Engine) -> None:
    X = sp.random(40, 30, density=0.1, random_state=0, format="csr")
    with Session(db) as session:
        key = store.save({**pack_matrix(X), "y": np.arange(40.0)}, session)
        session.commit()
    back = unpack_matrix(store.load(key))
    assert sp.issparse(back) and (back != X).nnz == 0


def test_deleted_arrays_are_missing_with_a_message_naming_no_path(
    store: ArrayStore, db: Engine, data_dir: Path
) -> None:
    with Session(db) as session:
        key = store.save(arrays(), session)
        session.commit()
    store.delete(key)
    store.delete(key)  # twice: no error
    with pytest.raises(ArraysMissing) as lost:
        store.load(key)
    assert lost.value.status_code == 410
    assert "upload" in lost.value.message and "/" not in lost.value.message
    assert store.missing([key]) == {key}


def test_a_rolled_back_save_leaves_nothing(store: ArrayStore, db: Engine, data_dir: Path) -> None:
    with Session(db) as session:
        key = store.save(arrays(), session)
        session.rollback()
    store.discard(key)
    assert store.missing([key]) == {key}
    assert chunk_rows(db) == 0
    assert not (data_dir / "datasets").exists() or not list((data_dir / "datasets").iterdir())


def test_a_data_set_row_that_cannot_be_stored_leaves_no_arrays(
    store: ArrayStore, db: Engine, data_dir: Path
) -> None:
    problem = generators.generate("gaussian_regression", random_state=0, n=30, d=5)
    with Session(db) as session:
        create_from_problem(session, store, problem, name="a", source="t", sample_key="same")
    files_before = sorted((data_dir / "datasets").glob("*")) if store.kind == "directory" else []
    rows_before = chunk_rows(db)
    with Session(db) as session, pytest.raises(IntegrityError):
        create_from_problem(session, store, problem, name="b", source="t", sample_key="same")
    if store.kind == "directory":
        assert sorted((data_dir / "datasets").glob("*")) == files_before  # no .npz, no .partial
    assert chunk_rows(db) == rows_before
    with Session(db) as session:
        assert [d.name for d in session.exec(select_rows(Dataset))] == ["a"]


def test_database_arrays_are_cut_into_chunks_and_read_lazily(db: Engine) -> None:
    store = DatabaseStore(db, chunk_bytes=4096)
    big = arrays(n=400, d=20)  # 64 kB of X: 16 chunks and more
    with Session(db) as session:
        key = store.save(big, session)
        session.commit()
    with db.connect() as conn:
        seqs = conn.scalars(select(CHUNKS.c.seq).where(CHUNKS.c.key == key)).all()
    assert sorted(seqs) == list(range(len(seqs))) and len(seqs) > 16
    assert same(store.load(key), big)

    fetched = []

    def count(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        if "SELECT array_chunks.data" in statement:
            fetched.append(statement)

    event.listen(db, "before_cursor_execute", count)
    try:
        assert same(store.load(key, ("mean",)), {"mean": big["mean"]})
    finally:
        event.remove(db, "before_cursor_execute", count)
    assert 0 < len(fetched) < len(seqs) / 2  # the small member, not the whole archive


def test_database_arrays_with_a_lost_chunk_are_missing(db: Engine) -> None:
    store = DatabaseStore(db, chunk_bytes=1024)
    with Session(db) as session:
        key = store.save(arrays(), session)
        session.commit()
    with db.begin() as conn:
        conn.execute(CHUNKS.delete().where(CHUNKS.c.key == key, CHUNKS.c.seq == 1))
    with pytest.raises(ArraysMissing):
        store.load(key)


def test_a_worker_with_database_storage_needs_no_data_directory(db: Engine, tmp_path: Path) -> None:
    """Stored by one node, read by another that only has the database URL."""
    with Session(db, expire_on_commit=False) as session:
        body = DatasetGenerate(generator="gaussian_regression")
        dataset = create_generated(session, DatabaseStore(db), body)
    elsewhere = make_db(str(db.url.render_as_string(hide_password=False)))
    try:
        loaded = DatabaseStore(elsewhere).load(dataset.file, ("y",))
    finally:
        elsewhere.dispose()
    assert loaded["y"].shape == (dataset.n_samples,)
    assert not (tmp_path / "data" / "datasets").exists()


def test_directory_keys_stay_inside_and_pickles_are_refused(data_dir: Path) -> None:
    store = DirectoryStore(data_dir)
    with pytest.raises(ValueError, match="outside the data directory"):
        store.load("../../etc/passwd")
    folder = data_dir / "datasets"
    folder.mkdir(parents=True)
    np.savez(folder / "objects.npz", X=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="pickle"):
        store.load("datasets/objects.npz")


def test_a_truncated_file_is_missing(data_dir: Path) -> None:
    store = DirectoryStore(data_dir)
    key = store.save(arrays())
    path = data_dir / key
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ArraysMissing):
        store.load(key)


def test_sweeping_removes_only_old_arrays_no_data_set_names(data_dir: Path) -> None:
    store = DirectoryStore(data_dir)
    named, orphan, young = store.save(arrays()), store.save(arrays()), store.save(arrays())
    stray = data_dir / "datasets" / f".{'a' * 32}.partial"  # a crash while writing
    stray.write_bytes(b"half")
    mine = data_dir / "datasets" / "README.txt"  # not ours to remove
    mine.write_text("kept")
    hour_ago = time.time() - 3600
    for path in (data_dir / named, data_dir / orphan, stray, mine):
        os.utime(path, (hour_ago, hour_ago))
    assert store.sweep(lambda: {named}, grace_seconds=600) == 2
    assert store.missing([named, orphan, young]) == {orphan}
    assert not stray.exists() and mine.exists()


def test_sweeping_the_database_keeps_every_named_key(db: Engine) -> None:
    store = DatabaseStore(db, chunk_bytes=1024)
    with Session(db) as session:
        named, orphan = store.save(arrays(), session), store.save(arrays(), session)
        session.commit()
    assert store.sweep(lambda: {named}, grace_seconds=0) == 1
    assert store.missing([named, orphan]) == {orphan}
    assert store.sweep(lambda: {named}, grace_seconds=0) == 0


def test_the_app_sweeps_orphans_on_start(data_dir: Path) -> None:
    store = DirectoryStore(data_dir)
    orphan = data_dir / store.save(arrays())
    os.utime(orphan, (time.time() - 7200, time.time() - 7200))
    with serve(make_settings(data_dir)) as client:
        dataset = client.post("/api/datasets/generate", json={"generator": "zhang2008"})
        assert dataset.status_code == 201
    assert not orphan.exists()
    assert len(list((data_dir / "datasets").iterdir())) == 1
