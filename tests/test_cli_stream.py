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
        (["--objective", "logistic", "--cv"], "--cv on a streamed table is least squares"),
        (["--objective", "smoothed_hinge", "--algorithm", "lasso"], "foba-obj, foba-gdt, omp"),
        (["--objective", "smoothed_absolute", "--cv"], "smoothed_absolute reads the rows"),
        (["--cv", "--metric", "mae"], "mean squared error (mse) only"),
        (["--cv", "--folds", "5", "--parts", "2"], "read in 2; give --folds between 2 and 2"),
        (["--parts", "4"], "--parts is for --cv"),
        (["--algorithm", "lasso"], "least squares from sufficient"),
    ],
)
def test_what_needs_the_rows_is_refused(tables, capsys, args, message) -> None:
    parquet = tables[0]
    assert main(["select", str(parquet), "--target", "y", *args]) == 2
    assert message in capsys.readouterr().err


def test_cv_on_a_streamed_table_equals_engine_cv_on_its_row_blocks(tables, capsys) -> None:
    """--cv --stream: the table read in --parts ranges (Parquet: whole row groups of 128
    rows), the ranges dealt to the folds from --seed as the app deals a reference table's;
    the curve equals engine.cv on the rows with the same blocks held out, and the output is
    the in-memory --cv's."""
    from engine.cv import fold_errors
    from engine.cv import summarise as cv_summary
    from engine.statistics import fold_blocks

    parquet, _, X, y = tables
    args = ["--target", "y", "--cv", "--k-max", "5", "--folds", "3", "--parts", "4"]
    out = select_json(capsys, str(parquet), *args, "--seed", "7", "--rule", "1se")
    bounds = [0, 128, 256, 384, 500]  # the row groups: 4 ranges
    expected = []
    for held_ranges in fold_blocks(4, 3, shuffle=True, random_state=7):
        held = np.concatenate([np.arange(bounds[i], bounds[i + 1]) for i in held_ranges])
        rest = np.setdiff1d(np.arange(len(y)), held)
        expected.append(fold_errors(X, y, rest, held, algorithm="foba-obj", k_max=5))
    summary = cv_summary(expected, "1se")
    cv = out["cv"]
    np.testing.assert_allclose(cv["mean"], summary.mean, rtol=1e-7)
    np.testing.assert_allclose(cv["se"], summary.se, rtol=1e-6, atol=1e-12)
    for got, want in zip(cv["folds"], expected, strict=True):
        np.testing.assert_allclose(got, want.errors, rtol=1e-7)
    chosen = (summary.k_min, summary.k_1se, summary.k_best)
    assert (cv["k_min"], cv["k_1se"], cv["k_best"]) == chosen
    assert out["k"] == summary.k_best and len(out["selected"]) == summary.k_best
    final = engine.select(X, y, algorithm="foba-obj", k=summary.k_best)
    assert [s["index"] for s in out["selected"]] == [int(j) for j in final.support]
    # The text output is the in-memory --cv's.
    assert main(["select", str(parquet), *args, "--seed", "7", "--no-certify"]) == 0
    text = capsys.readouterr().out
    assert "k chosen by 3-fold cross-validation" in text and "mean error" in text


def test_a_european_csv_streams_with_the_loaders_options(tmp_path, capsys) -> None:
    """--delimiter, --decimal, --encoding and --missing impute read a streamed CSV as the
    loader reads it: the same selection and coefficients."""
    from ingest.ingest_helpers import european_csv

    path = tmp_path / "eu.csv"
    path.write_bytes(european_csv())
    options = [
        "--target", "y", "--k", "3", "--delimiter", ";", "--decimal", ",", "--encoding",
        "latin-1", "--missing", "impute", "--text-columns", "onehot", "--objective",
        "least_squares",
    ]  # fmt: skip
    assert main(["select", str(path), *options, "--stream", "--json", "--no-certify"]) == 0
    out = capsys.readouterr()
    streamed = json.loads(out.out)
    assert "2 missing cells of 'a' imputed" in out.err
    assert "3 missing cells of 'région' imputed as level 'Île'" in out.err
    loaded = select_json(capsys, str(path), *options)
    assert streamed["streamed"] is True and streamed["n_samples"] == loaded["n_samples"] == 1198
    names = [s["feature"] for s in loaded["selected"]]
    assert [s["feature"] for s in streamed["selected"]] == names
    assert [s["coef"] for s in streamed["selected"]] == pytest.approx(
        [s["coef"] for s in loaded["selected"]], rel=1e-8
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--delimiter", "::"], "--delimiter: delimiter must be one character"),
        (["--delimiter", ",", "--decimal", ","], "--decimal: the delimiter and the decimal"),
        (["--encoding", "utf-16"], "--encoding: 'utf-16' does not write ASCII as ASCII"),
        (["--encoding", "nope"], "--encoding: unknown encoding 'nope'"),
        (["--na-values", "[1]"], "--na-values must be a list of strings"),
        (["--target", "zz"], "--target: no column 'zz'"),
    ],
)
def test_hostile_reader_options_are_usage_errors(tables, capsys, args, message) -> None:
    csv = tables[1]
    assert main(["select", str(csv), "--target", "y", "--k", "2", "--stream", *args]) == 2
    assert message in capsys.readouterr().err


def test_stability_on_a_streamed_table_equals_the_engine_on_its_range_halves(
    tables, capsys
) -> None:
    """stability --stream: each half sample is half of the --parts row ranges (Parquet: row
    groups of 128 rows), dealt from --seed; the frequencies equal
    engine.subsample_supports_from_statistics on the same blocks' rows."""
    from engine.from_statistics import subsample_supports_from_statistics
    from engine.stability import plan_stability, summarise
    from engine.statistics import SufficientStatistics, block_pairs

    parquet, _, X, y = tables
    argv = ["stability", str(parquet), "--target", "y", "--k-max", "3", "--pairs", "3"]
    assert main([*argv, "--parts", "4", "--seed", "2", "--compare", "omp", "--format", "json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["streamed"] is True and "in 4 row ranges" in captured.err
    bounds = [0, 128, 256, 384, 500]
    halves = [
        np.concatenate([np.arange(bounds[i], bounds[i + 1]) for i in held])
        for held in block_pairs(4, 3, random_state=2)
    ]
    for method in ("foba-obj", "omp"):
        plan = plan_stability(
            method, k_max=3, n_samples=500, n_features=7, n_pairs=3, random_state=2
        )
        runs = [
            subsample_supports_from_statistics(
                SufficientStatistics.from_arrays(X[r], y[r]), plan, i
            )
            for i, r in enumerate(halves)
        ]
        expected = summarise(runs, plan, threshold=0.6)
        got = out["summaries"][method]
        np.testing.assert_array_equal(got["frequency"], expected.frequency)
        assert got["stable"] == [list(s) for s in expected.stable]
    # What needs the rows, or another objective, is refused.
    assert main([*argv, "--objective", "logistic"]) == 2
    assert "least squares' sufficient statistics only" in capsys.readouterr().err
    assert main(["stability", str(tables[1]), "--target", "y", "--parts", "4"]) == 2
    assert "--parts is for a streamed table" in capsys.readouterr().err
