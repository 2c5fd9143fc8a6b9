"""``foba-lab select`` on a table larger than memory: a Parquet file (or --stream on a CSV) is
read in bounded chunks into least squares' sufficient statistics, with the same output as the
loaded table gives; what needs the rows is refused saying so."""

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
    rng = np.random.default_rng(3)
    X = np.round(rng.standard_normal((500, 7)), 6)
    X[:, 3] += 500.0
    y = np.round(3.0 * X[:, 1] - 2.0 * X[:, 5] + 1.0 + 0.1 * rng.standard_normal(500), 6)
    root = tmp_path_factory.mktemp("stream")
    names = [f"x{j}" for j in range(7)]
    columns = {n: X[:, j] for j, n in enumerate(names)} | {"y": y}
    parquet = root / "big.parquet"
    pq.write_table(pa.table(columns), parquet, row_group_size=128)
    csv = root / "big.csv"
    lines = [",".join([*names, "y"])]
    lines += [",".join(f"{v:.6f}" for v in [*row, t]) for row, t in zip(X, y, strict=True)]
    csv.write_text("\n".join(lines) + "\n")
    return parquet, csv, X, y


def select_json(capsys, *args: str) -> dict:
    assert main(["select", *args, "--json", "--no-certify"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_parquet_file_is_streamed_with_the_output_of_a_loaded_table(tables, capsys) -> None:
    parquet, csv, X, y = tables
    streamed = select_json(capsys, str(parquet), "--target", "y", "--k", "3")
    loaded = select_json(capsys, str(csv), "--target", "y", "--k", "3")
    assert streamed["streamed"] is True and "streamed" not in loaded
    reference = engine.select(X, y, algorithm=engine.REGISTRY.default_algorithm, k=3)
    for out in (streamed, loaded):
        assert [s["index"] for s in out["selected"]] == [int(j) for j in reference.support]
        assert out["objective_value"] == pytest.approx(reference.objective, rel=1e-8)
        assert out["intercept"] == pytest.approx(reference.intercept, rel=1e-7)
        assert out["n_samples"] == 500 and out["n_features"] == 7
    for a, b in zip(streamed["selected"], loaded["selected"], strict=True):
        assert a["coef"] == pytest.approx(b["coef"], rel=1e-7)
    # --stream on the CSV: the same answer as the Parquet file.
    forced = select_json(capsys, str(csv), "--target", "y", "--k", "3", "--stream")
    assert [s["feature"] for s in forced["selected"]] == [
        s["feature"] for s in streamed["selected"]
    ]
    assert [s["coef"] for s in forced["selected"]] == pytest.approx(
        [s["coef"] for s in streamed["selected"]], rel=1e-9
    )
    # A CSV above the size threshold streams without the flag.
    small = select_json(capsys, str(csv), "--target", "y", "--k", "3", "--stream-above-mb", "0.001")
    assert small.get("streamed") is True


def test_the_text_output_says_the_table_was_streamed(tables, capsys) -> None:
    parquet = tables[0]
    assert main(["select", str(parquet), "--target", "y", "--k", "2", "--no-certify"]) == 0
    out = capsys.readouterr()
    assert "2 of 7 features, k = 2" in out.out and "(intercept)" in out.out
    assert "streamed 500 rows" in out.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--objective", "logistic", "--algorithm", "lasso"], "foba-obj, foba-gdt, omp"),
        (["--objective", "smoothed_hinge"], "later step"),
        (["--cv"], "--cv needs the rows"),
        (["--missing", "impute"], "--missing impute"),
        (["--algorithm", "lasso"], "least squares from sufficient"),
    ],
)
def test_what_needs_the_rows_is_refused(tables, capsys, args, message) -> None:
    parquet = tables[0]
    assert main(["select", str(parquet), "--target", "y", *args]) == 2
    assert message in capsys.readouterr().err
