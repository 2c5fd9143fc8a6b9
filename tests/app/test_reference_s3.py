"""Tables in object storage registered by reference (issue 28): an s3:// URI under an allowed
prefix (REFERENCE_URIS) is registered, its pass run by worker processes that read S3 (moto's
server) themselves, and its statistics and runs equal those of the same file on a mounted
volume; a URI the server may not or cannot read is a 422 at ``path`` saying why; the CLI
streams an s3:// URI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from s3_server import Bucket
from service_helpers import make_settings, serve, submit, wait_for
from test_reference_tables import (
    N,
    register,
    stored_statistics,
    table,
    wait_pass,
    write_csv,
    write_parquet_dir,
)

from foba_lab.cli import main


def refused(client: Any, path: str) -> str:
    answer = client.post("/api/datasets/reference", json={"path": path, "target": "y"})
    assert answer.status_code == 422, (path, answer.text)
    detail = answer.json()["detail"]
    assert detail[0]["loc"] == ["body", "path"], detail
    return str(detail[0]["msg"])


def test_an_s3_table_runs_as_the_same_file_on_a_volume(tmp_path: Path, s3: Bucket) -> None:
    X, y = table(seed=4)
    root = tmp_path / "volume"
    local = write_csv(root, X, y)
    uri = s3.put_file("datasets/big.csv", local)
    settings = make_settings(
        tmp_path / "data",
        workers=2,
        reference_dirs=str(root),
        reference_uris=f"{s3.uri('datasets')},s3://other-bucket/x/",
    )
    with serve(settings) as client:
        remote = register(client, uri, n_parts=3)
        assert remote["name"] == "big.csv"
        assert remote["meta"]["reference"]["schema"]["files"] == [uri]
        on_disk = register(client, str(local), n_parts=3)
        remote, on_disk = wait_pass(client, remote["id"]), wait_pass(client, on_disk["id"])
        assert remote["meta"]["reference"]["status"] == "done", remote["meta"]["reference"]
        assert remote["n_samples"] == on_disk["n_samples"] == len(y)
        assert len(remote["meta"]["reference"]["parts"]) == 3
        # The same bytes in the same ranges: the same statistics, bit for bit.
        ours = stored_statistics(client, remote["id"])
        assert ours.to_bytes() == stored_statistics(client, on_disk["id"]).to_bytes()
        config = {"algorithm": "foba-obj", "k": 3}
        a = wait_for(client, submit(client, remote["id"], **config)["id"], timeout=60)
        b = wait_for(client, submit(client, on_disk["id"], **config)["id"], timeout=60)
        assert a["status"] == b["status"] == "done", a["error"]
        assert a["result"]["support"] == b["result"]["support"]
        assert a["result"]["objective"] == b["result"]["objective"]
        assert uri in client.get(f"/runs/{a['id']}").text  # the statistics line names it


def test_s3_uris_the_server_may_not_or_cannot_read_are_refused(tmp_path: Path, s3: Bucket) -> None:
    X, y = table()
    uri = s3.put_file("datasets/big.csv", write_csv(tmp_path / "volume", X, y))
    with serve(make_settings(tmp_path / "off")) as client:  # REFERENCE_URIS unset: off
        assert "set REFERENCE_URIS" in refused(client, uri)
    allowed = s3.uri("datasets/")
    with serve(make_settings(tmp_path / "data", reference_uris=allowed)) as client:
        for outside in [
            s3.uri("private/big.csv"),
            s3.uri("datasets-private/big.csv"),  # a prefix is a directory
            "s3://another-bucket/datasets/big.csv",
        ]:
            assert f"(REFERENCE_URIS: {allowed})" in refused(client, outside)
        assert "'..' segments" in refused(client, s3.uri("datasets/../private/big.csv"))
        assert "no '?' options" in refused(client, uri + "?endpoint_override=127.0.0.1:9")
        missing = refused(client, s3.uri("datasets/nope.csv"))
        assert "no key or prefix 'datasets/nope.csv'" in missing
        with s3.credentials_checked():
            denied = refused(client, uri)
            assert "ACCESS_DENIED" in denied and "AWS_SECRET_ACCESS_KEY" in denied
        wrong = client.post("/api/datasets/reference", json={"path": uri, "target": "zz"})
        assert wrong.status_code == 422 and "no column 'zz'" in wrong.text
        # A prefix of Parquet files: registered, its row groups counted from the footers in S3.
        folder = write_parquet_dir(tmp_path / "pq", X, y)
        for file in sorted(folder.iterdir()):
            s3.put_file(f"datasets/sales/{file.name}", file)
        ds = register(client, s3.uri("datasets/sales/"), n_parts=4)
        ref = ds["meta"]["reference"]
        assert ds["name"] == "sales" and ref["schema"]["format"] == "parquet"
        files = [s3.uri(f"datasets/sales/part-{i}.parquet") for i in (0, 1)]
        assert ref["schema"]["files"] == files
        assert sum(ref["part_rows"]) == N and ref["status"] == "queued"  # no workers here
    with pytest.raises(ValidationError, match="'/mnt/tables/' is not an S3 prefix"):
        make_settings(tmp_path / "bad", reference_uris="s3://ok/, /mnt/tables")
    # A bucket that does not exist, under an allowed prefix.
    with serve(make_settings(tmp_path / "gone", reference_uris="s3://no-such-bucket-here/")) as c:
        assert "no bucket 'no-such-bucket-here'" in refused(c, "s3://no-such-bucket-here/t.csv")


def test_the_cli_streams_an_s3_uri(tmp_path: Path, s3: Bucket, capsys) -> None:
    X, y = table(seed=5)
    local = write_csv(tmp_path / "volume", X, y)
    uri = s3.put_file("datasets/big.csv", local)
    outputs = []
    for table_at in (uri, str(local)):
        args = ["select", table_at, "--target", "y", "--k", "3", "--json", "--no-certify"]
        assert main([*args, "--stream"]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    remote, on_disk = outputs
    assert remote["streamed"] is True and remote["n_samples"] == len(y)
    assert remote["selected"] == on_disk["selected"]
    assert main(["select", uri, "--target", "y", "--k", "3"]) == 0  # no --stream needed
    capsys.readouterr()
    assert main(["select", s3.uri("datasets/nope.csv"), "--target", "y"]) == 2
    assert "no key or prefix 'datasets/nope.csv'" in capsys.readouterr().err
    with s3.credentials_checked():
        assert main(["select", uri, "--target", "y"]) == 2
    err = capsys.readouterr().err
    assert "ACCESS_DENIED" in err and "Traceback" not in err
