"""The statistics pass of a table registered by reference on JOB_BACKEND=procrastinate: its
row ranges spread over two `python -m app worker` processes (the hosts of a cluster), and the
merged statistics are those of the table read in one process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from service_helpers import postgres_database, serve
from test_jobs_distributed import Workers, until_workers, web_settings
from test_reference_tables import (
    N,
    register,
    stored_statistics,
    table,
    wait_pass,
    write_parquet_dir,
)

from app.ingest.chunked import plan_parts, scan_table, table_statistics


@pytest.fixture(scope="module")
def queue_db(postgres_user: str) -> Iterator[str]:
    with postgres_database(postgres_user, "foba_qr") as url:
        yield url


@pytest.fixture
def workers(queue_db: str, data_dir: Path, tmp_path: Path) -> Iterator[Workers]:
    pool = Workers(queue_db, data_dir, tmp_path)
    yield pool
    print(pool.stop())  # pytest shows it when the test failed


def test_the_ranges_spread_over_two_distributed_workers(
    queue_db: str, data_dir: Path, workers: Workers, tmp_path: Path
) -> None:
    X, y = table(seed=4)
    root = tmp_path / "volume"
    path = write_parquet_dir(root, X, y)
    settings = web_settings(data_dir, queue_db).model_copy(update={"reference_dirs": str(root)})
    with serve(settings) as client:
        ds = register(client, path, n_parts=4)
        workers.start(2)
        until_workers(client, 2)
        ds = wait_pass(client, ds["id"], timeout=240)
        ref = ds["meta"]["reference"]
        assert ref["status"] == "done" and ref["rows"] == N, ref
        assert 1 <= ref["workers"] <= 2
        got = stored_statistics(client, ds["id"])
    schema = scan_table(path, "y")
    expected = table_statistics(schema, plan_parts(schema, n_parts=4))
    assert got.n == expected.n
    np.testing.assert_array_equal(got.xx, expected.xx)  # the same ranges, merged in order
    np.testing.assert_array_equal(got.mean, expected.mean)
