"""A range of rows read from either store without loading the array (the data set preview):
the same values as slicing the loaded array, dense (C or Fortran order) or sparse, new archives
or ones written before rows could be read; and only the needed bytes or chunks are read."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sqlalchemy import Engine, event
from sqlmodel import Session

from app.db import make_db
from app.migrations import prepare_schema
from app.storage import (
    ArraysMissing,
    ArrayStore,
    DatabaseStore,
    DirectoryStore,
    make_store,
    matrix_rows,
    pack_matrix,
)
from app.storage.base import read_rows, write_npz


@pytest.fixture
def db(database_url: str) -> Iterator[Engine]:
    db = make_db(database_url)
    prepare_schema(db)
    yield db
    db.dispose()


@pytest.fixture(params=["directory", "database"])
def store(request: pytest.FixtureRequest, db: Engine, data_dir: Path) -> ArrayStore:
    return make_store(request.param, data_dir, db)


def save(store: ArrayStore, db: Engine, arrays: dict[str, np.ndarray]) -> str:
    with Session(db) as session:
        key = store.save(arrays, session)
        session.commit()
    return key


@pytest.mark.parametrize("order", ["C", "F"])
def test_rows_are_the_slices_of_the_stored_arrays(store, db, order) -> None:
    rng = np.random.default_rng(0)
    X = np.asarray(rng.normal(size=(300, 7)), order=order)
    y = rng.normal(size=300)
    key = save(store, db, {"X": X, "y": y, "col_mean": X.mean(axis=0)})
    for start, stop in [(0, 15), (285, 300), (290, 400), (10, 10), (500, 515), (0, 300)]:
        assert np.array_equal(store.rows(key, "X", start, stop), X[start:stop])
        assert np.array_equal(store.rows(key, "y", start, stop), y[start:stop])
    assert np.array_equal(store.load(key)["X"], X)  # np.load reads the C-ordered member
    with pytest.raises(KeyError):
        store.rows(key, "true_coef", 0, 1)
    store.delete(key)
    with pytest.raises(ArraysMissing):
        store.rows(key, "X", 0, 1)


def test_rows_of_a_sparse_matrix(store, db) -> None:
    X = sp.random(200, 50, density=0.05, random_state=1, format="csr")
    key = save(store, db, {**pack_matrix(X), "y": np.arange(200.0)})
    dense = X.toarray()
    for start, stop in [(0, 15), (190, 230), (50, 50)]:
        assert np.array_equal(matrix_rows(store, key, start, stop), dense[start:stop])


def test_archives_written_before_are_read_whole(tmp_path) -> None:
    """np.savez wrote Fortran-ordered members and may be compressed: sliced after reading."""
    X = np.asfortranarray(np.arange(60.0).reshape(12, 5))
    for write in (np.savez, np.savez_compressed):
        buffer = io.BytesIO()
        write(buffer, X=X, y=np.arange(12.0))
        buffer.seek(0)
        assert np.array_equal(read_rows(buffer, "X", 3, 6), X[3:6])
    plain = io.BytesIO()
    write_npz({"X": X}, plain)
    with zipfile.ZipFile(plain) as archive:  # the new ones: uncompressed, rows in order
        assert archive.getinfo("X.npy").compress_type == zipfile.ZIP_STORED
        assert not np.lib.format.read_array(archive.open("X.npy")).flags.f_contiguous


class CountingFile(io.FileIO):
    read_bytes = 0

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        n = super().readinto(buffer)
        CountingFile.read_bytes += n or 0
        return n


def test_a_preview_reads_its_rows_not_the_array(db, data_dir, monkeypatch) -> None:
    X = np.asfortranarray(np.random.default_rng(2).normal(size=(2000, 200)))  # 3.2 MB
    directory = DirectoryStore(data_dir)
    key = save(directory, db, {"X": X, "y": np.zeros(2000)})
    monkeypatch.setattr(Path, "open", lambda self, mode="r": CountingFile(self, mode))
    assert np.array_equal(directory.rows(key, "X", 100, 115), X[100:115])
    assert CountingFile.read_bytes < 64 * 1024  # 15 rows are 24 kB
    monkeypatch.undo()

    database = DatabaseStore(db, chunk_bytes=64 * 1024)
    key = save(database, db, {"X": X, "y": np.zeros(2000)})
    fetched: list[str] = []

    def count(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        if "SELECT array_chunks.data" in statement:
            fetched.append(statement)

    event.listen(db, "before_cursor_execute", count)
    try:
        assert np.array_equal(database.rows(key, "X", 100, 115), X[100:115])
    finally:
        event.remove(db, "before_cursor_execute", count)
    assert len(fetched) <= 4  # directory, headers, rows: of 50 chunks


def test_the_upload_and_the_preview_load_no_arrays(client, monkeypatch) -> None:
    """The upload answers with the column statistics it computed (not read back), and the
    preview pages through rows with an offset, reading those rows only."""
    from app_helpers import regression_csv, upload_ok

    store = client.app.state.store

    def load(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("arrays loaded whole")

    monkeypatch.setattr(store, "load", load)
    text = regression_csv(n=40, d=3, support=(0, 2))
    dataset = upload_ok(client, text, target="y")
    assert [c["name"] for c in dataset["columns"]] == ["x0", "x1", "x2", "y"]
    table = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1)
    assert dataset["columns"][0]["mean"] == pytest.approx(table[:, 0].mean())
    page = client.get(f"/api/datasets/{dataset['id']}/preview?offset=35&limit=10").json()
    assert page["offset"] == 35 and page["total"] == 40
    assert np.allclose(page["rows"], table[35:])
