"""The chunked reader on object storage (issue 28): a Parquet file, a CSV read in several byte
ranges and a prefix of Parquet files in S3 (moto's server) give the statistics of the same
files on the local disk, bit for bit; what S3 refuses is a StreamError saying what to check."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from s3_server import Bucket

from app.ingest import table_fs
from app.ingest.chunked import (
    StreamError,
    iter_batches,
    part_statistics,
    plan_parts,
    scan_table,
)

N = 700


def rows(seed: int = 0) -> tuple[list[str], np.ndarray, np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(N, 4)) * [1.0, 3.0, 0.5, 2.0] + [0, 0, 100.0, 0], 6)
    y = np.round(X @ [1.5, 0.0, -2.0, 0.5] + 0.1 * rng.normal(size=N), 6)
    colour = list(rng.choice(["red", "green", "blue"], size=N))
    return ["a", "b", "c", "d"], X, y, colour


def write_parquet(path: Path, lo: int = 0, hi: int = N) -> Path:
    names, X, y, colour = rows()
    columns = {n: X[lo:hi, j] for j, n in enumerate(names)}
    columns |= {"colour": colour[lo:hi], "y": y[lo:hi]}
    pq.write_table(pa.table(columns), path, row_group_size=100)
    return path


def write_csv(path: Path) -> Path:
    names, X, y, colour = rows()
    lines = [",".join([*names, "colour", "y"])]
    lines += [
        ",".join([*(f"{v:.6f}" for v in x), c, f"{t:.6f}"])
        for x, c, t in zip(X, colour, y, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def statistics_bytes(location: str, n_parts: int) -> tuple[list[bytes], int]:
    """Every part's statistics (as stored) and the number of parts."""
    schema = scan_table(location, "y")
    parts = plan_parts(schema, n_parts=n_parts)
    return [part_statistics(schema, p, batch_rows=64).to_bytes() for p in parts], len(parts)


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_an_s3_table_gives_the_statistics_of_the_same_file_on_disk(
    tmp_path: Path, s3: Bucket, kind: str
) -> None:
    local = (
        write_parquet(tmp_path / "t.parquet")
        if kind == "parquet"
        else write_csv(tmp_path / "t.csv")
    )
    uri = s3.put_file(f"datasets/{local.name}", local)
    on_disk, n_local = statistics_bytes(str(local), n_parts=5)
    remote, n_remote = statistics_bytes(uri, n_parts=5)
    assert n_local == n_remote == 5  # several row-group runs, or several byte ranges
    assert remote == on_disk
    schema = scan_table(uri, "y")
    assert schema.files == (uri,) and schema.format == kind
    assert schema.categories == {"colour": ("blue", "green", "red")}
    # Every row read once over the ranges, however the byte cuts fell inside lines.
    assert (
        sum(len(y) for p in plan_parts(schema, n_parts=5) for _, y in iter_batches(schema, p)) == N
    )
    # The schema travels as plain data: a worker reads the same ranges from it.
    again = type(schema).from_dict(schema.to_dict())
    assert (
        part_statistics(again).to_bytes() == part_statistics(scan_table(str(local), "y")).to_bytes()
    )


def test_an_s3_prefix_is_read_as_a_directory(tmp_path: Path, s3: Bucket) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, (lo, hi) in enumerate([(0, 300), (300, N)]):
        path = write_parquet(folder / f"part-{i}.parquet", lo, hi)
        s3.put_file(f"datasets/parts/{path.name}", path)
    s3.put("datasets/parts/README.txt", b"not a table")  # skipped, as on disk
    s3.put("datasets/parts/deeper/part-9.parquet", b"")  # not listed: one level only
    for prefix in (s3.uri("datasets/parts"), s3.uri("datasets/parts/")):
        schema = scan_table(prefix, "y")
        assert schema.files == tuple(s3.uri(f"datasets/parts/part-{i}.parquet") for i in (0, 1))
        remote, _ = statistics_bytes(prefix, n_parts=4)
        assert remote == statistics_bytes(str(folder), n_parts=4)[0]


def test_what_s3_refuses_is_a_stream_error_saying_what_to_check(tmp_path: Path, s3: Bucket) -> None:
    uri = s3.put_file("datasets/t.csv", write_csv(tmp_path / "t.csv"))
    with pytest.raises(StreamError, match=r"no key or prefix 'datasets/missing\.csv' in bucket"):
        scan_table(s3.uri("datasets/missing.csv"), "y")
    with pytest.raises(StreamError, match="no bucket 'no-such-bucket-here'"):
        scan_table("s3://no-such-bucket-here/t.csv", "y")
    with pytest.raises(StreamError, match="no '\\?' options"):
        scan_table(uri + "?endpoint_override=elsewhere.example", "y")
    with pytest.raises(StreamError, match="'\\.\\.' segments"):
        scan_table(s3.uri("datasets/../secret/t.csv"), "y")
    schema = scan_table(uri, "y")
    with s3.credentials_checked():  # the key is unknown to the server now
        with pytest.raises(StreamError, match="AWS_ACCESS_KEY_ID") as refused:
            scan_table(uri, "y")
        assert uri in str(refused.value)
        with pytest.raises(StreamError, match="AWS_SECRET_ACCESS_KEY"):
            list(iter_batches(schema))  # a worker's read, after the scan
    s3.client.delete_object(Bucket=s3.name, Key="datasets/t.csv")
    with pytest.raises(StreamError, match=r"no key or prefix 'datasets/t\.csv'"):
        part_statistics(schema)  # deleted after it was registered


def test_an_endpoint_comes_from_the_environment(s3: Bucket, monkeypatch) -> None:
    """pyarrow (26) reads AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL when it makes the
    filesystem from a URI (the S3-specific one wins)."""
    s3.put("t.csv", b"a,y\n1,2\n3,5\n")
    assert table_fs.size(s3.uri("t.csv")) == 12
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3.endpoint)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
    assert table_fs.size(s3.uri("t.csv")) == 12
