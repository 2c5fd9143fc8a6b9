"""``foba-lab stability``: the engine's stability selection on a CSV file, as text, JSON or
CSV; the frequencies are engine.stability's with the same seed."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from engine import datasets
from engine.stability import compare_stability
from foba_lab.cli import main


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> tuple[Path, np.ndarray, np.ndarray]:
    problem = datasets.generate("gaussian_regression", random_state=0, n=100, d=8, k_true=2)
    path = tmp_path_factory.mktemp("cli") / "data.csv"
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([f"x{j}" for j in range(8)] + ["y"])
        writer.writerows([*row, t] for row, t in zip(problem.X.tolist(), problem.y, strict=True))
    return path, problem.X, problem.y


def test_json_frequencies_are_the_engine_s(table, capsys) -> None:
    path, X, y = table
    argv = ["stability", str(path), "--target", "y", "--k-max", "3", "--pairs", "4"]
    assert main([*argv, "--seed", "5", "--compare", "omp,lasso", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    want = compare_stability(
        X, y, algorithms=["foba-obj", "omp", "lasso"], k_max=3, n_pairs=4, random_state=5
    )
    assert out["methods"] == ["foba-obj", "omp", "lasso"]
    assert out["steadiest"] == want.steadiest
    for name, result in want.results.items():
        np.testing.assert_array_equal(
            np.array(out["summaries"][name]["frequency"]), result.summary.frequency
        )
    assert out["feature_names"] == [f"x{j}" for j in range(8)]


def test_text_and_csv(table, capsys) -> None:
    path, *_ = table
    argv = ["stability", str(path), "--target", "y", "--k-max", "3", "--pairs", "3"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "3 pairs of half samples (6 x 50 rows)" in text and "stable over the path" in text
    assert main([*argv, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 3 * 8 and rows[0]["name"] == "x0" and rows[0]["method"] == "foba-obj"


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--compare", "magic"], "--compare: magic"),
        (["--k-max", "9"], "--k-max"),
        (["--threshold", "0.5"], "--threshold"),
        (["--compare", "foba-obj"], "named twice"),
    ],
)
def test_refusals_say_what_to_fix(table, capsys, extra: list[str], words: str) -> None:
    path, *_ = table
    assert main(["stability", str(path), "--target", "y", "--pairs", "2", *extra]) == 2
    assert words in capsys.readouterr().err
