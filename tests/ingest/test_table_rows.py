"""A streamed table as the engine's row source (app.ingest.table_rows): a narrow pass gives
the columns a full pass gives, for numeric and one-hot columns, CSV and Parquet."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from app.ingest.chunked import iter_batches, scan_table
from app.ingest.table_rows import TableRows


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("missing", ["error", "drop"])
def test_a_narrow_pass_reads_the_columns_of_a_full_one(tmp_path, fmt, missing) -> None:
    rng = np.random.default_rng(2)
    n = 230
    a = rng.standard_normal(n)
    b = rng.standard_normal(n)
    if missing == "drop":
        b[[3, 100]] = np.nan  # these rows are dropped in every pass, narrow or not
    table = pa.table(
        {
            "a": a,
            "colour": rng.choice(["red", "green", "blue"], n),
            "b": b,
            "y": (a > 0).astype(np.int64),
        }
    )
    path = tmp_path / f"t.{fmt}"
    if fmt == "csv":
        pacsv.write_csv(table, path)
    else:
        pq.write_table(table, path, row_group_size=64)
    schema = scan_table(path, "y", missing=missing)
    assert schema.feature_names == ["a", "colour=blue", "colour=green", "colour=red", "b"]
    full = np.vstack([X for X, _ in iter_batches(schema, batch_rows=50)])
    labels = np.concatenate([y for _, y in iter_batches(schema, batch_rows=50)])
    rows = TableRows(schema, batch_rows=50)
    for columns in ([4, 2], [0], [], None):
        chunks = list(rows.chunks(columns))
        X = np.vstack([c for c, _ in chunks])
        want = full if columns is None else full[:, columns]
        np.testing.assert_array_equal(X, want)
        np.testing.assert_array_equal(np.concatenate([y for _, y in chunks]), labels)
    assert len(labels) == (n - 2 if missing == "drop" else n)
