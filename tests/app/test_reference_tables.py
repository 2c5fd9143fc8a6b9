"""Tables registered by reference (issue 28): a CSV or a Parquet directory on a path the server
may read, its statistics pass run as jobs (one per row range) by real worker processes, the
merged statistics checked against numpy on the same rows, and runs from them against the same
rows uploaded in memory."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from app_helpers import csv_text, upload_ok
from fastapi.testclient import TestClient
from service_helpers import make_settings, serve, submit, wait_done, wait_for
from sqlmodel import Session

from app.ingest.chunked import plan_parts, scan_table, table_statistics
from app.jobs import table_pass
from app.models import Dataset
from app.services import reference_tables
from engine.statistics import SufficientStatistics

N, D = 900, 6


def table(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """y from x1 and x4 plus noise; the columns on different scales (x2 around 1e3)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D)) * np.array([1.0, 2.0, 0.5, 3.0, 1.0, 1.5])
    X[:, 2] += 1000.0
    y = 2.0 * X[:, 1] - 3.0 * X[:, 4] + 0.1 * rng.normal(size=N)
    return np.round(X, 6), np.round(y, 6)


def names() -> list[str]:
    return [f"x{j}" for j in range(D)]


def write_parquet_dir(root: Path, X: np.ndarray, y: np.ndarray) -> Path:
    """Two files of two row groups each (300 + 600 rows)."""
    folder = root / "big.parquet.d"
    folder.mkdir(parents=True)
    for i, (lo, hi) in enumerate([(0, 300), (300, N)]):
        columns = {n: X[lo:hi, j] for j, n in enumerate(names())}
        columns["y"] = y[lo:hi]
        pq.write_table(pa.table(columns), folder / f"part-{i}.parquet", row_group_size=200)
    return folder


def write_csv(root: Path, X: np.ndarray, y: np.ndarray) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "big.csv"
    rows = [[f"{v:.6f}" for v in x] + [f"{t:.6f}"] for x, t in zip(X, y, strict=True)]
    path.write_text(csv_text([*names(), "y"], rows))
    return path


def register(client: TestClient, path: Path | str, **body: Any) -> dict[str, Any]:
    response = client.post(
        "/api/datasets/reference", json={"path": str(path), "target": "y", **body}
    )
    assert response.status_code == 201, response.text
    return response.json()


def wait_pass(client: TestClient, dataset_id: int, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        ds = client.get(f"/api/datasets/{dataset_id}").json()
        if ds["meta"]["reference"]["status"] in ("done", "failed", "cancelled"):
            return ds
        assert time.monotonic() < deadline, ds["meta"]["reference"]
        time.sleep(0.1)


def stored_statistics(client: TestClient, dataset_id: int) -> SufficientStatistics:
    """The merged statistics the runs read, from the app's own store."""
    with Session(client.app.state.db) as session:  # type: ignore[attr-defined]
        dataset = session.get(Dataset, dataset_id)
        assert dataset is not None and dataset.file
        return table_pass.load_statistics(client.app.state.store, dataset)  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_a_reference_table_gives_the_in_memory_statistics_and_runs(
    tmp_path: Path, database_url: str, kind: str
) -> None:
    X, y = table()
    root = tmp_path / "volume"
    path = write_parquet_dir(root, X, y) if kind == "parquet" else write_csv(root, X, y)
    settings = make_settings(
        tmp_path / "data", workers=2, database_url=database_url, reference_dirs=str(root)
    )
    with serve(settings) as client:
        ds = register(client, path, n_parts=3, name="big")
        assert ds["source"] == "reference" and ds["n_features"] == D
        assert ds["meta"]["reference"]["schema"]["format"] == kind
        assert len(ds["meta"]["reference"]["parts"]) >= 2
        ds = wait_pass(client, ds["id"])
        ref = ds["meta"]["reference"]
        assert ref["status"] == "done", ref
        assert ds["n_samples"] == ref["rows"] == N
        # The statistics: as numpy computes them from the rows, to rounding.
        stats = stored_statistics(client, ds["id"])
        Xc, yc = X - X.mean(axis=0), y - y.mean()
        assert stats.n == N
        np.testing.assert_allclose(stats.mean, X.mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(stats.xx, Xc.T @ Xc, rtol=1e-9, atol=1e-8)
        np.testing.assert_allclose(stats.xy, Xc.T @ yc, rtol=1e-9, atol=1e-8)
        np.testing.assert_allclose(stats.yy, yc @ yc, rtol=1e-12)
        # The column summaries come from them.
        target = next(c for c in ds["columns"] if c["role"] == "target")
        assert target["mean"] == pytest.approx(y.mean()) and target["std"] == pytest.approx(
            y.std(ddof=1)
        )

        # A run from the statistics equals the run on the same rows uploaded in memory.
        uploaded = upload_ok(
            client,
            csv_text([*names(), "y"], [[*map(str, x), str(t)] for x, t in zip(X, y, strict=True)]),
            target="y",
        )
        config = {"algorithm": "foba-obj", "k": 3}
        big = wait_for(client, submit(client, ds["id"], **config)["id"], timeout=60)
        small = wait_for(client, submit(client, uploaded["id"], **config)["id"], timeout=60)
        assert big["status"] == small["status"] == "done", big["error"]
        ours, theirs = big["result"], small["result"]
        assert [f["name"] for f in ours["support"]] == [f["name"] for f in theirs["support"]]
        assert ours["objective"] == pytest.approx(theirs["objective"], rel=1e-8)
        for a, b in zip(ours["support"], theirs["support"], strict=True):
            assert a["coef"] == pytest.approx(b["coef"], rel=1e-7)
        assert ours["train"]["mse"] == pytest.approx(theirs["train"]["mse"], rel=1e-6)
        assert ours["train"]["r2"] == pytest.approx(theirs["train"]["r2"], rel=1e-9)
        # The swap certificate, from the statistics: as the one on the rows.
        mine, rows_cert = ours["certificate"], theirs["certificate"]
        assert "skipped" not in mine, mine
        for key in ("verdict", "local_optimum", "n_improving", "n_exchanges", "support"):
            assert mine[key] == rows_cert[key], key
        assert mine["objective"] == pytest.approx(rows_cert["objective"], rel=1e-8)
        assert ours["judged_as"] == theirs["judged_as"]
        trace = client.get(f"/api/runs/{big['id']}/trace").json()["events"]
        rows_trace = client.get(f"/api/runs/{small['id']}/trace").json()["events"]
        # The selection's events, then the certificate's checks: as on the rows.
        assert [e["kind"] for e in trace] == [e["kind"] for e in rows_trace]
        assert "stop" in [e["kind"] for e in trace] and trace[-1]["kind"] == "check"
        # The ranges are parts, not runs of their own.
        listed = client.get("/api/runs", params={"dataset_id": ds["id"]}).json()
        assert [r["id"] for r in (listed["runs"] if isinstance(listed, dict) else listed)] == [
            big["id"]
        ]
        page = client.get(f"/runs/{big['id']}")
        assert page.status_code == 200
        assert f"{N} rows read" in page.text
        assert client.get(f"/datasets/{ds['id']}").status_code == 200
        assert client.delete(f"/api/datasets/{ds['id']}").status_code == 204


def pass_statistics(tmp_path: Path, path: Path, root: Path, workers: int) -> bytes:
    """The merged statistics of the table's pass in 4 ranges by ``workers`` workers, as the
    bytes ``SufficientStatistics.to_bytes`` writes."""
    settings = make_settings(
        tmp_path / f"data-{workers}", workers=workers, reference_dirs=str(root)
    )
    with serve(settings) as client:
        ds = wait_pass(client, register(client, path, n_parts=4)["id"])
        assert ds["meta"]["reference"]["status"] == "done"
        assert ds["meta"]["reference"]["workers"] <= workers
        if workers == 2:  # what a run on such a table refuses, now that it is ready
            refused = client.post(
                "/api/runs",
                json={"dataset_id": ds["id"], "algorithm": "omp", "k": 2, "test_fraction": 0.2},
            )
            assert refused.status_code == 422 and "test split" in refused.text
            refused = client.post(
                "/api/runs",
                json={"dataset_id": ds["id"], "algorithm": "lasso", "objective": "smoothed_hinge"},
            )
            assert refused.status_code == 422 and "foba-obj, foba-gdt, omp" in refused.text
            refused = client.post(
                "/api/stability",
                json={"dataset_id": ds["id"], "algorithm": "omp", "objective": "logistic"},
            )
            assert refused.status_code == 422 and "needs the rows" in refused.text
        return stored_statistics(client, ds["id"]).to_bytes()


def test_the_merged_statistics_do_not_depend_on_the_number_of_workers(tmp_path: Path) -> None:
    X, y = table(seed=1)
    root = tmp_path / "volume"
    path = write_csv(root, X, y)
    assert pass_statistics(tmp_path, path, root, 1) == pass_statistics(tmp_path, path, root, 2)


def test_paths_outside_the_reference_dirs_are_refused(tmp_path: Path) -> None:
    X, y = table()
    root, elsewhere = tmp_path / "volume", tmp_path / "private"
    write_csv(root, X, y)
    secret = write_csv(elsewhere, X, y)
    (root / "link.csv").symlink_to(secret)
    with serve(make_settings(tmp_path / "off")) as client:  # REFERENCE_DIRS unset: off
        off = client.post("/api/datasets/reference", json={"path": str(secret), "target": "y"})
        assert off.status_code == 422 and "REFERENCE_DIRS" in off.text
    with serve(make_settings(tmp_path / "data", reference_dirs=str(root))) as client:
        for path in [secret, root / ".." / "private" / "big.csv", "../private/big.csv", "link.csv"]:
            answer = client.post("/api/datasets/reference", json={"path": str(path), "target": "y"})
            assert answer.status_code == 422, (path, answer.text)
            assert "outside the directories" in answer.text
        missing = client.post("/api/datasets/reference", json={"path": "nope.csv", "target": "y"})
        assert missing.status_code == 422 and "does not exist" in missing.text
        wrong = client.post("/api/datasets/reference", json={"path": "big.csv", "target": "zz"})
        assert wrong.status_code == 422 and "no column 'zz'" in wrong.text
        # Inside, relative to the first directory: registered; its ranges wait for a worker.
        ds = register(client, "big.csv", n_parts=2)
        assert ds["meta"]["reference"]["status"] == "queued" and ds["n_samples"] == 0
        early = client.post("/api/runs", json={"dataset_id": ds["id"], "algorithm": "omp"})
        assert early.status_code == 409 and "statistics pass" in early.text
        page = client.get(f"/datasets/{ds['id']}")
        assert page.status_code == 200 and 'id="table-pass"' in page.text
        assert 'ranges done: <span class="parts-done">0</span> of 2' in page.text
        fragment = client.get(f"/datasets/{ds['id']}/pass", headers={"HX-Request": "true"})
        assert fragment.status_code == 200 and "hx-trigger" in fragment.text  # polled
        assert client.get(f"/datasets/{uploaded_id(client)}/pass").status_code == 404
        assert client.get("/api/runs").json() == []  # the ranges are no runs of their own
        # Its ranges block the deletion, as any queued run does, until the pass is cancelled.
        assert client.delete(f"/api/datasets/{ds['id']}").status_code == 409
        cancelled = client.post(f"/api/datasets/{ds['id']}/pass/cancel")
        assert cancelled.json()["meta"]["reference"]["status"] == "cancelled"
        assert client.delete(f"/api/datasets/{ds['id']}").status_code == 204


def test_a_range_whose_worker_is_killed_runs_again_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    X, y = table(seed=2)
    root = tmp_path / "volume"
    path = write_parquet_dir(root, X, y)
    gate = tmp_path / "gate"
    started = Path(f"{gate}.started")
    monkeypatch.setenv("FOBA_TEST_TABLE_GATE", str(gate))  # the workers inherit it
    settings = make_settings(tmp_path / "data", workers=1, reference_dirs=str(root))
    with serve(settings) as client:
        ds = register(client, path, n_parts=2)
        wait_until(lambda: started.exists() and len(started.read_text().split()) == 1)
        with Session(client.app.state.db) as session:  # type: ignore[attr-defined]
            dataset = session.get(Dataset, ds["id"])
            assert dataset is not None
            first = reference_tables.pass_runs(session, ds["id"])[0]
        assert first.status == "running" and first.worker
        os.kill(int(first.worker.rsplit(":", 1)[1]), signal.SIGKILL)
        # Its heartbeat goes stale, the range is queued again and a new worker takes it.
        wait_until(lambda: len(started.read_text().split()) == 2)
        gate.touch()
        ds = wait_pass(client, ds["id"])
        ref = ds["meta"]["reference"]
        assert ref["status"] == "done" and ref["rows"] == N and ref["retried"] == 1
        with Session(client.app.state.db) as session:  # type: ignore[attr-defined]
            attempts = [r.attempt for r in reference_tables.pass_runs(session, ds["id"])]
        assert attempts == [2, 1]
        expected = table_statistics(
            scan_table(path, "y"), plan_parts(scan_table(path, "y"), n_parts=2)
        )
        got = stored_statistics(client, ds["id"])
        assert got.n == expected.n
        np.testing.assert_allclose(got.xx, expected.xx, rtol=1e-12)
        np.testing.assert_allclose(got.xy, expected.xy, rtol=1e-12)
        page = client.get(f"/datasets/{ds['id']}").text
        assert "1 range attempt rerun after a worker died" in page


def uploaded_id(client: TestClient) -> int:
    X, y = table()
    rows = [[*map(str, x), str(t)] for x, t in zip(X[:20], y[:20], strict=True)]
    return int(upload_ok(client, csv_text([*names(), "y"], rows), target="y")["id"])


def wait_until(condition: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def run_ranges_here(client: TestClient, dataset_id: int, order: list[int]) -> None:
    """Execute the pass's ranges in this process, in ``order``, as a worker would."""
    from app.jobs import lease
    from app.jobs.tasks import JobContext, run_job

    db, store = client.app.state.db, client.app.state.store  # type: ignore[attr-defined]
    with Session(db) as session:
        ids = [r.id for r in reference_tables.pass_runs(session, dataset_id)]
    for i in order:
        held = lease.claim(db, ids[i], "test")
        if held is not None:  # None: cancelled meanwhile (a sibling failed)
            run_job(ids[i], JobContext(db=db, store=store, claim=held))


def test_a_range_with_a_missing_cell_fails_the_pass_or_drops_the_row(tmp_path: Path) -> None:
    X, y = table(seed=3)
    root = tmp_path / "volume"
    path = write_csv(root, X, y)
    lines = path.read_text().splitlines()
    lines[-5] = ",".join(["NA", *lines[-5].split(",")[1:]])  # in the last range
    path.write_text("\n".join(lines) + "\n")
    with serve(make_settings(tmp_path / "data", reference_dirs=str(root))) as client:
        failing = register(client, path, n_parts=2)
        run_ranges_here(client, failing["id"], [1, 0])
        ref = client.get(f"/api/datasets/{failing['id']}").json()["meta"]["reference"]
        assert ref["status"] == "failed"
        page = client.get(f"/datasets/{failing['id']}").text
        assert "A range failed" in page and "missing=" in page
        refused = client.post("/api/runs", json={"dataset_id": failing["id"], "algorithm": "omp"})
        assert refused.status_code == 409 and "failed" in refused.text

        dropping = register(client, path, n_parts=2, missing="drop")
        run_ranges_here(client, dropping["id"], [0, 1])
        ds = client.get(f"/api/datasets/{dropping['id']}").json()
        assert ds["meta"]["reference"]["status"] == "done" and ds["n_samples"] == N - 1
        kept = np.ones(N, dtype=bool)
        kept[N - 5] = False  # the header is line 0: lines[-5] is line N - 4, row N - 5
        np.testing.assert_allclose(stored_statistics(client, ds["id"]).mean, X[kept].mean(axis=0))


def wait_cv(client: TestClient, cv_id: int, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        study = client.get(f"/api/cv/{cv_id}").json()
        if study["status"] in ("done", "failed", "cancelled"):
            return study
        assert time.monotonic() < deadline, study
        time.sleep(0.1)


def test_cv_on_a_reference_table_equals_engine_cv_on_its_row_blocks(
    tmp_path: Path, database_url: str
) -> None:
    """Folds are whole ranges of the pass (blocks of rows) dealt from the seed; each fold trains
    on the other ranges' statistics and is scored from its own. The curve equals engine CV on
    the same rows with the same blocks held out."""
    from engine.cv import fold_errors, summarise

    X, y = table(seed=4)
    root = tmp_path / "volume"
    path = write_parquet_dir(root, X, y)  # 4 ranges: rows 0-300, 300-500, 500-700, 700-900
    settings = make_settings(
        tmp_path / "data", workers=2, database_url=database_url, reference_dirs=str(root)
    )
    with serve(settings) as client:
        ds = wait_pass(client, register(client, path, n_parts=4)["id"])
        assert ds["meta"]["reference"]["status"] == "done"
        with Session(client.app.state.db) as session:  # type: ignore[attr-defined]
            rows = [r["rows"] for r in table_pass.range_results(session, ds["id"])]
        assert rows == [300, 200, 200, 200]
        body = {"dataset_id": ds["id"], "algorithm": "foba-obj", "k_max": 5, "n_folds": 3}
        submitted = client.post("/api/cv", json={**body, "seed": 11})
        assert submitted.status_code == 202, submitted.text
        study = wait_cv(client, submitted.json()["id"])
        assert study["status"] == "done", study["error"]

        # The same folds from the rows, scored by engine.cv.
        bounds = np.cumsum([0, *rows])
        expected = []
        for held_ranges in table_pass.fold_ranges(len(rows), 3, 11):
            held = np.concatenate([np.arange(bounds[i], bounds[i + 1]) for i in held_ranges])
            rest = np.setdiff1d(np.arange(N), held)
            expected.append(fold_errors(X, y, rest, held, algorithm="foba-obj", k_max=5))
        summary = summarise(expected, "1se")
        curve = study["curve"]
        np.testing.assert_allclose(curve["mean"], summary.mean, rtol=1e-7)
        np.testing.assert_allclose(curve["se"], summary.se, rtol=1e-6, atol=1e-12)
        assert (curve["k_min"], curve["k_1se"]) == (summary.k_min, summary.k_1se)
        assert [f["n_test"] for f in study["folds"]] == [r.n_test for r in expected]
        assert [f["n_train"] for f in study["folds"]] == [r.n_train for r in expected]
        page = client.get(f"/cv/{study['id']}")
        assert (
            page.status_code == 200
            and "blocks of rows (whole ranges of the statistics pass)" in page.text
        )
        # The final run at the chosen k runs from the merged statistics.
        final = client.post(f"/api/cv/{study['id']}/final", json={})
        assert final.status_code == 202, final.text
        run = wait_for(client, final.json()["id"], timeout=60)
        assert run["status"] == "done" and len(run["result"]["support"]) == curve["k_best"]

        # What stays refused says what to change.
        for change, field, words in [
            ({"n_folds": 5}, "n_folds", "n_parts >= 5"),
            ({"metric": "mae"}, "metric", "mean squared error"),
            ({"objective": "logistic"}, "objective", "needs the rows"),
        ]:
            refused = client.post("/api/cv", json={**body, **change})
            assert refused.status_code == 422, refused.text
            assert words in refused.text and field in str(refused.json()), refused.text


def test_the_reader_options_are_the_uploads(tmp_path: Path) -> None:
    """A ';'-separated Latin-1 CSV with decimal commas and missing cells, registered with the
    upload's options and missing=impute: its statistics equal the X'X, X'y ... of the same
    file uploaded with the same options (the data set's stored arrays). Hostile option values
    get a 422 at the field."""
    from ingest.ingest_helpers import european_csv

    from app import storage

    root = tmp_path / "volume"
    root.mkdir()
    data = european_csv()
    (root / "eu.csv").write_bytes(data)
    options = {"delimiter": ";", "decimal": ",", "encoding": "latin-1", "missing": "impute"}
    with serve(make_settings(tmp_path / "data", reference_dirs=str(root))) as client:
        ds = register(client, "eu.csv", n_parts=3, categorical_missing="level", **options)
        run_ranges_here(client, ds["id"], [2, 0, 1])
        ds = client.get(f"/api/datasets/{ds['id']}").json()
        assert ds["meta"]["reference"]["status"] == "done", ds["meta"]["reference"]
        uploaded = upload_ok(
            client, data, text_columns="onehot", categorical_missing="level", **options
        )
        assert ds["feature_names"] == uploaded["feature_names"]
        assert "région=(missing)" in ds["feature_names"]
        ours = {c["name"]: c for c in ds["columns"]}
        theirs = {c["name"]: c for c in uploaded["columns"]}
        for name in ("a", "b", "c"):
            assert ours[name]["imputed"] == theirs[name]["imputed"], name
            assert ours[name]["missing"] == theirs[name]["missing"], name
        with Session(client.app.state.db) as session:  # type: ignore[attr-defined]
            upload_row = session.get(Dataset, uploaded["id"])
            assert upload_row is not None
            arrays = client.app.state.store.load(upload_row.file)  # type: ignore[attr-defined]
        expected = SufficientStatistics.from_arrays(storage.unpack_matrix(arrays), arrays["y"])
        got = stored_statistics(client, ds["id"])
        assert got.n == expected.n == ds["n_samples"] == 1198
        np.testing.assert_allclose(got.mean, expected.mean, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(got.xx, expected.xx, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(got.xy, expected.xy, rtol=1e-10, atol=1e-10)
        assert got.yy == pytest.approx(expected.yy, rel=1e-10)

        for change, field in [
            ({"delimiter": "::"}, "delimiter"),
            ({"delimiter": "\n"}, "delimiter"),
            ({"delimiter": ",", "decimal": ","}, "decimal"),
            ({"decimal": ";"}, "decimal"),
            ({"encoding": "utf-16"}, "encoding"),
            ({"encoding": "base64"}, "encoding"),
            ({"encoding": "x" * 500}, "encoding"),
            ({"missing": "mean"}, "missing"),
            ({"categorical_missing": "mode"}, "categorical_missing"),
            ({"na_values": "[1, 2]"}, "na_values"),
        ]:
            body = {"path": "eu.csv", "target": "y", **options, **change}
            refused = client.post("/api/datasets/reference", json=body)
            assert refused.status_code == 422, (change, refused.text)
            assert refused.json()["detail"][0]["loc"][-1] == field, (change, refused.text)


def test_stability_on_a_reference_table_equals_the_engine_on_its_range_halves(
    tmp_path: Path, database_url: str
) -> None:
    """A stability study on a table registered by reference: each subsample is half of the
    pass's ranges (complementary pairs dealt from the seed), run from their stored statistics
    as jobs. The frequencies equal engine.subsample_supports_from_statistics on the same
    blocks, and the supports those of the engine on the blocks' rows in memory."""
    import dataclasses

    from engine.from_statistics import subsample_supports_from_statistics
    from engine.stability import plan_stability, subsample_supports, summarise

    X, y = table(seed=5)
    root = tmp_path / "volume"
    path = write_parquet_dir(root, X, y)  # 4 ranges: rows 0-300, 300-500, 500-700, 700-900
    settings = make_settings(
        tmp_path / "data", workers=2, database_url=database_url, reference_dirs=str(root)
    )
    with serve(settings) as client:
        ds = register(client, path, n_parts=4)
        early = client.post("/api/stability", json={"dataset_id": ds["id"], "k_max": 3})
        assert early.status_code in (202, 409), early.text  # 409 while the pass runs
        ds = wait_pass(client, ds["id"])
        assert ds["meta"]["reference"]["status"] == "done"
        body = {
            "dataset_id": ds["id"],
            "algorithm": "foba-obj",
            "compare_with": ["omp"],
            "k_max": 3,
            "n_pairs": 3,
            "seed": 9,
        }
        submitted = client.post("/api/stability", json=body)
        assert submitted.status_code == 202, submitted.text
        study = wait_done(client, submitted.json()["url"])
        assert study["status"] == "done", study["error"]
        assert study["parts_done"] == study["parts_total"] == 2 * 6

        bounds = np.cumsum([0, 300, 200, 200, 200])
        halves = table_pass.half_ranges(4, 3, 9)
        rows = [np.concatenate([np.arange(bounds[i], bounds[i + 1]) for i in h]) for h in halves]
        assert all(len(np.intersect1d(rows[2 * j], rows[2 * j + 1])) == 0 for j in range(3))
        for method in study["methods"]:
            plan = plan_stability(
                method["algorithm"], k_max=3, n_samples=N, n_features=D, n_pairs=3, random_state=9
            )
            from_stats = [
                subsample_supports_from_statistics(
                    SufficientStatistics.from_arrays(X[r], y[r]), plan, i
                )
                for i, r in enumerate(rows)
            ]
            on_rows = dataclasses.replace(plan, subsamples=rows)
            in_memory = [subsample_supports(X, y, on_rows, i) for i in range(len(rows))]
            assert [s.supports for s in from_stats] == [s.supports for s in in_memory]
            expected = summarise(from_stats, plan, threshold=study["threshold"])
            np.testing.assert_array_equal(method["summary"]["frequency"], expected.frequency)
            assert method["summary"]["stable"] == [list(s) for s in expected.stable]

        page = client.get(f"/stability/{study['id']}")
        assert page.status_code == 200 and "foba-obj" in page.text
        assert "“why not” answer" not in page.text  # it needs the rows: not offered
        form = client.get(f"/datasets/{ds['id']}").text  # the data set page offers the study
        assert 'action="/api/stability"' in form and f"/stability/{study['id']}" in form
        # Its forms offer what runs from the statistics: abess and lasso need the rows.
        assert re.search(r'data-algorithm="abess"[^>]*disabled', form)
        assert form.count("needs the rows in memory") >= 2
        assert (
            '<option value="lasso"' not in form.split('id="st-algorithm"')[1].split("</select>")[0]
        )
        why = client.get(f"/api/stability/{study['id']}/why-not", params={"feature": 0, "k": 2})
        assert why.status_code == 409 and "needs the rows" in why.text
        # What stays refused says what to change.
        for change, field, words in [
            ({"objective": "logistic"}, "objective", "needs the rows"),
            ({"algorithm": "lasso"}, "algorithm", "sufficient statistics"),
            ({"compare_with": ["lasso"]}, "compare_with", "sufficient statistics"),
        ]:
            refused = client.post("/api/stability", json={**body, **change})
            assert refused.status_code == 422, refused.text
            assert words in refused.text and field in str(refused.json()), refused.text
        # A table read in one range has no halves.
        single = wait_pass(client, register(client, write_csv(root, X, y), n_parts=1)["id"])
        refused = client.post("/api/stability", json={**body, "dataset_id": single["id"]})
        assert refused.status_code == 422 and "n_parts >= 4" in refused.text, refused.text
        assert refused.json()["detail"][0]["loc"] == ["body", "dataset_id"]
