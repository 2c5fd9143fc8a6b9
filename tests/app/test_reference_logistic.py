"""Logistic regression (and the smoothed hinge and absolute losses) on a table registered by
reference (issue 28): after its statistics pass, a run reads the file again in passes
(engine.select_from_rows on app.ingest.table_rows) in one worker, with the answer of the same
rows uploaded in memory and the passes on the run's result and page; what it cannot run is
refused with a 422 naming the field."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pytest
from app_helpers import csv_text, upload_ok
from service_helpers import make_settings, serve, submit, wait_for
from test_reference_tables import register, wait_pass, write_parquet_dir

import engine

N, D = 900, 6


def labelled() -> tuple[np.ndarray, np.ndarray]:
    """Two classes (0/1) from x1 and x4; x2 around 1e3, so the scales matter."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(N, D)) * np.array([1.0, 2.0, 0.5, 3.0, 1.0, 1.5])
    X[:, 2] += 1000.0
    y = (0.8 * X[:, 1] - 1.5 * X[:, 4] + rng.normal(size=N) > 0).astype(float)
    return np.round(X, 6), y


def test_a_logistic_run_reads_the_table_in_passes(tmp_path: Path, database_url: str) -> None:
    X, y = labelled()
    root = tmp_path / "volume"
    path = write_parquet_dir(root, X, y)
    settings = make_settings(
        tmp_path / "data", workers=1, database_url=database_url, reference_dirs=str(root)
    )
    with serve(settings) as client:
        ds = wait_pass(client, register(client, path, n_parts=2, name="labels")["id"])
        assert ds["meta"]["reference"]["status"] == "done"
        form = client.get(f"/datasets/{ds['id']}")  # the run form offers logistic
        assert form.status_code == 200 and '<option value="logistic"' in form.text
        config = {"algorithm": "foba-obj", "k": 3, "objective": "logistic"}
        config["params"] = {"path_end": "sparsity"}
        big = wait_for(client, submit(client, ds["id"], **config)["id"], timeout=120)
        assert big["status"] == "done", big["error"]
        uploaded = upload_ok(
            client,
            csv_text(
                [*(f"x{j}" for j in range(D)), "y"],
                [[*map(str, x), str(int(t))] for x, t in zip(X, y, strict=True)],
            ),
            target="y",
        )
        small = wait_for(client, submit(client, uploaded["id"], **config)["id"], timeout=120)
        assert small["status"] == "done", small["error"]
        ours, theirs = big["result"], small["result"]
        assert [f["name"] for f in ours["support"]] == [f["name"] for f in theirs["support"]]
        assert ours["objective"] == pytest.approx(theirs["objective"], rel=1e-8)
        for a, b in zip(ours["support"], theirs["support"], strict=True):
            assert a["coef"] == pytest.approx(b["coef"], rel=1e-6)
        assert ours["train"]["n_samples"] == N
        assert ours["train"]["accuracy"] == pytest.approx(theirs["train"]["accuracy"])
        assert ours["train"]["log_loss"] == pytest.approx(theirs["train"]["log_loss"], rel=1e-8)
        reference = engine.select(X, y, objective="logistic", algorithm="foba-obj", k=3,
                                  path_end="sparsity")  # fmt: skip
        assert [f["index"] for f in ours["support"]] == [int(j) for j in reference.support]
        passes = ours["passes"]
        assert passes["n_samples"] == N and passes["fit_passes"] == 1
        assert passes["rows_read"] == N * passes["passes"]
        assert passes["full_passes"] >= 1 + 3 and passes["passes"] > passes["full_passes"]
        assert "skipped" in ours["certificate"]
        trace = client.get(f"/api/runs/{big['id']}/trace").json()["events"]
        rows_trace = client.get(f"/api/runs/{small['id']}/trace").json()["events"]
        kinds = [e["kind"] for e in trace]
        assert kinds == [e["kind"] for e in rows_trace][: len(kinds)]  # theirs adds checks
        page = client.get(f"/runs/{big['id']}")
        assert page.status_code == 200
        assert f"{passes['passes']} times by one worker" in page.text
        assert f"{passes['rows_read']} rows read" in page.text
        # What needs the rows is not offered, and the page says why: no 'why not' form, no
        # exact-search hint, no stability study (least squares only on such a table).
        text = html.unescape(page.text)
        assert "'Why not' needs the rows in memory" in text
        assert "the exact search needs the rows in memory" in text
        assert 'id="why-not-feature"' not in page.text and 'id="stability-run"' not in page.text
        refused = client.get(f"/api/runs/{big['id']}/why-not/0")
        assert refused.status_code == 422 and "needs the rows" in refused.text

        # The run form's estimate: passes x the statistics pass's time (short here).
        estimate = client.get(
            f"/api/datasets/{ds['id']}/estimate",
            params={"algorithm": "omp", "objective": "logistic", "k": 3},
        )
        assert estimate.status_code == 200 and estimate.json()["estimate"]["steps"] == 3
        refused = client.get(
            f"/api/datasets/{ds['id']}/estimate",
            params={"algorithm": "lasso", "objective": "logistic", "k": 3},
        )
        assert refused.status_code == 422 and "foba-obj, foba-gdt, omp" in refused.text

        # Other algorithms, and settings that would price every exchange by a pass: a 422
        # naming the field and what it offers.
        lasso = client.post(
            "/api/runs",
            json={"dataset_id": ds["id"], "objective": "logistic", "algorithm": "lasso"},
        )
        assert lasso.status_code == 422
        detail = lasso.json()["detail"][0]
        assert detail["loc"][-1] == "algorithm" and "foba-obj, foba-gdt, omp" in detail["msg"]
        replaced = client.post(
            "/api/runs",
            json={"dataset_id": ds["id"], "objective": "logistic", "algorithm": "omp", "k": 2,
                  "params": {"replacement": "full"}},
        )  # fmt: skip
        assert replaced.status_code == 422
        assert replaced.json()["detail"][0]["loc"][-1] == "replacement"


def test_a_target_of_more_than_two_values_fails_the_run_saying_so(tmp_path: Path) -> None:
    X, _ = labelled()
    y = np.arange(N) % 3.0
    root = tmp_path / "volume"
    path = write_parquet_dir(root, X, y)
    settings = make_settings(tmp_path / "data", workers=1, reference_dirs=str(root))
    with serve(settings) as client:
        ds = wait_pass(client, register(client, path, n_parts=1)["id"])
        run = submit(client, ds["id"], algorithm="omp", k=2, objective="logistic")
        failed = wait_for(client, run["id"], timeout=60)
        assert failed["status"] == "failed"
        assert "exactly two distinct labels" in failed["error"]


def _uploaded_run(client, X: np.ndarray, y: np.ndarray, config: dict) -> dict:
    """The same rows uploaded in memory, and the same run on them."""
    text = [[*map(str, x), format(t, ".6f")] for x, t in zip(X, y, strict=True)]
    uploaded = upload_ok(client, csv_text([*(f"x{j}" for j in range(D)), "y"], text), target="y")
    run = wait_for(client, submit(client, uploaded["id"], **config)["id"], timeout=120)
    assert run["status"] == "done", run["error"]
    return run


@pytest.mark.parametrize("objective", ["smoothed_hinge", "smoothed_absolute"])
def test_a_smoothed_loss_run_reads_the_table_in_passes(
    tmp_path: Path, database_url: str, objective: str
) -> None:
    X, y = labelled()
    if objective == "smoothed_absolute":  # a numeric target with heavy-tailed noise
        rng = np.random.default_rng(3)
        y = np.round(0.8 * X[:, 1] - 1.5 * X[:, 4] + rng.standard_t(2, size=N), 6)
    root = tmp_path / "volume"
    path = write_parquet_dir(root, X, y)
    settings = make_settings(
        tmp_path / "data", workers=1, database_url=database_url, reference_dirs=str(root)
    )
    with serve(settings) as client:
        ds = wait_pass(client, register(client, path, n_parts=2, name="big")["id"])
        form = client.get(f"/datasets/{ds['id']}")  # the run form offers the objective
        assert form.status_code == 200 and f'<option value="{objective}"' in form.text
        config = {"algorithm": "foba-obj", "k": 3, "objective": objective}
        config["params"] = {"path_end": "sparsity", "beta": 4.0}
        big = wait_for(client, submit(client, ds["id"], **config)["id"], timeout=120)
        assert big["status"] == "done", big["error"]
        small = _uploaded_run(client, X, y, config)
        ours, theirs = big["result"], small["result"]
        assert [f["name"] for f in ours["support"]] == [f["name"] for f in theirs["support"]]
        assert ours["objective"] == pytest.approx(theirs["objective"], rel=1e-8)
        for a, b in zip(ours["support"], theirs["support"], strict=True):
            assert a["coef"] == pytest.approx(b["coef"], rel=1e-6)
        # The fit metrics of the objective's task, as the in-memory run measures them.
        metrics = ["accuracy", "log_loss"] if objective == "smoothed_hinge" else ["mse", "r2"]
        assert ours["train"]["n_samples"] == N
        for name in metrics:
            assert ours["train"][name] == pytest.approx(theirs["train"][name], rel=1e-8)
        reference = engine.select(X, y, objective=objective, algorithm="foba-obj", k=3,
                                  path_end="sparsity", beta=4.0)  # fmt: skip
        assert [f["index"] for f in ours["support"]] == [int(j) for j in reference.support]
        passes = ours["passes"]
        assert passes["n_samples"] == N and passes["fit_passes"] == 1
        assert passes["rows_read"] == N * passes["passes"]
        assert passes["passes"] > passes["full_passes"] >= 1 + 3
        page = client.get(f"/runs/{big['id']}")
        assert page.status_code == 200 and f"{passes['rows_read']} rows read" in page.text

        estimate = client.get(
            f"/api/datasets/{ds['id']}/estimate",
            params={"algorithm": "omp", "objective": objective, "k": 3},
        )
        assert estimate.status_code == 200 and estimate.json()["estimate"]["steps"] == 3
        lasso = client.post(
            "/api/runs", json={"dataset_id": ds["id"], "objective": objective, "algorithm": "lasso"}
        )
        assert lasso.status_code == 422
        assert lasso.json()["detail"][0]["loc"][-1] == "algorithm"
        bad = client.post(
            "/api/runs",
            json={"dataset_id": ds["id"], "objective": objective, "algorithm": "omp", "k": 2,
                  "params": {"beta": -1.0}},
        )  # fmt: skip
        assert bad.status_code == 422 and "beta" in bad.text
