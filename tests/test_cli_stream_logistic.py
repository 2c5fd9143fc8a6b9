"""``foba-lab select --objective logistic`` (and the smoothed hinge and absolute losses) on a
streamed table: passes over the rows (app.ingest.table_rows, engine.select_from_rows), the
answer of the loaded table, the passes in the output."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import engine
from foba_lab.cli import main


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> tuple[Path, Path, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    X = np.round(rng.standard_normal((300, 20)), 6)
    X[:, 2] = X[:, 2] * 40.0 + 7.0
    y = X[:, 1] - 0.05 * X[:, 2] + 0.8 * X[:, 6] + 0.5 * rng.standard_normal(300) > -0.3
    y = y.astype(np.int64)
    root = tmp_path_factory.mktemp("stream-logistic")
    names = [f"x{j}" for j in range(20)]
    columns = {n: X[:, j] for j, n in enumerate(names)} | {"y": y}
    parquet = root / "big.parquet"
    pq.write_table(pa.table(columns), parquet, row_group_size=70)
    csv = root / "big.csv"
    lines = [",".join([*names, "y"])]
    lines += [",".join([*(f"{v:.6f}" for v in row), str(t)]) for row, t in zip(X, y, strict=True)]
    csv.write_text("\n".join(lines) + "\n")
    return parquet, csv, X, y


def select_json(capsys, *args: str) -> dict:
    assert main(["select", *args, "--json", "--no-certify"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("algorithm", ["foba-obj", "foba-gdt", "omp"])
def test_logistic_streams_with_the_answer_of_the_loaded_table(tables, capsys, algorithm) -> None:
    parquet, csv, X, y = tables
    extra = [] if algorithm == "omp" else ["--param", "path_end=sparsity"]
    args = ["--target", "y", "--objective", "logistic", "--algorithm", algorithm, "--k", "3"]
    streamed = select_json(capsys, str(parquet), *args, *extra)
    forced = select_json(capsys, str(csv), *args, *extra, "--stream")
    loaded = select_json(capsys, str(csv), *args, *extra)
    assert "streamed" not in loaded
    params = {} if algorithm == "omp" else {"path_end": "sparsity"}
    reference = engine.select(X, y, algorithm=algorithm, objective="logistic", k=3, **params)
    for out in (streamed, forced, loaded):
        assert [s["index"] for s in out["selected"]] == [int(j) for j in reference.support]
        assert out["objective_value"] == pytest.approx(reference.objective, rel=1e-8)
        assert out["n_samples"] == 300 and out["n_features"] == 20
    for out in (streamed, forced):
        assert out["streamed"] is True and out["task"] == "classification"
        passes = out["passes"]
        assert passes["n_samples"] == 300
        assert passes["rows_read"] == 300 * passes["passes"]
        # The first pass, then one per forward step (FoBa-obj's short list of exact drops may
        # reach every column on a table this narrow).
        if algorithm == "foba-obj":
            assert passes["full_passes"] >= 1 + 3
        else:
            assert passes["full_passes"] == 1 + 3
        assert passes["passes"] > passes["full_passes"]
        for a, b in zip(out["selected"], loaded["selected"], strict=True):
            assert a["coef"] == pytest.approx(b["coef"], rel=1e-6)


def test_the_text_output_says_how_many_passes(tables, capsys) -> None:
    parquet = tables[0]
    args = ["select", str(parquet), "--target", "y", "--objective", "logistic"]
    assert main([*args, "--algorithm", "omp", "--k", "2", "--no-certify"]) == 0
    out = capsys.readouterr()
    assert "2 of 20 features, k = 2" in out.out and "(intercept)" in out.out
    assert "streamed 300 rows" in out.err and "3 passes over every column" in out.err


def test_other_algorithms_and_three_classes_are_refused(tables, capsys, tmp_path) -> None:
    parquet = tables[0]
    args = ["select", str(parquet), "--target", "y", "--objective", "logistic", "--k", "2"]
    assert main([*args, "--algorithm", "forward-obj"]) == 2
    assert "foba-obj, foba-gdt, omp" in capsys.readouterr().err
    three = tmp_path / "three.parquet"
    pq.write_table(pa.table({"a": np.arange(9.0), "y": np.arange(9) % 3}), three)
    assert main(["select", str(three), "--target", "y", "--objective", "logistic", "--k", "1",
                 "--algorithm", "omp"]) == 2  # fmt: skip
    assert "exactly two distinct labels" in capsys.readouterr().err


@pytest.mark.parametrize("objective", ["smoothed_hinge", "smoothed_absolute"])
def test_smoothed_losses_stream_with_the_answer_of_the_loaded_table(
    tmp_path, capsys, objective
) -> None:
    rng = np.random.default_rng(8)
    X = np.round(rng.standard_normal((240, 12)), 6)
    signal = X[:, 3] - 0.7 * X[:, 8] + 0.4 * rng.standard_t(2, size=240)
    y = (signal > 0).astype(np.int64) if objective == "smoothed_hinge" else np.round(signal, 6)
    parquet = tmp_path / "t.parquet"
    columns = {f"x{j}": X[:, j] for j in range(12)} | {"y": y}
    pq.write_table(pa.table(columns), parquet, row_group_size=50)
    args = ["--target", "y", "--objective", objective, "--algorithm", "foba-obj", "--k", "3"]
    out = select_json(capsys, str(parquet), *args, "--param", "path_end=sparsity")
    reference = engine.select(
        X, y, algorithm="foba-obj", objective=objective, k=3, path_end="sparsity"
    )
    assert [s["index"] for s in out["selected"]] == [int(j) for j in reference.support]
    assert out["objective_value"] == pytest.approx(reference.objective, rel=1e-8)
    assert out["streamed"] is True and out["objective"] == objective
    task = "classification" if objective == "smoothed_hinge" else "regression"
    assert out["task"] == task
    assert out["classes"] == ([0, 1] if task == "classification" else None)
    assert out["passes"]["rows_read"] == 240 * out["passes"]["passes"]
    for a, j in zip(out["selected"], reference.support, strict=True):
        assert a["coef"] == pytest.approx(reference.coef[j], rel=1e-6)
