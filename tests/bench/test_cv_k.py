"""bench/cv_k.py in quick mode: it runs, reports every method, and the grid search over k and
the one-path CV (same folds, same method at every k) choose the same k. Timings are printed,
never asserted: the machine is shared."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_run_reports_every_method_and_the_same_k_as_the_grid() -> None:
    out = subprocess.run(
        [sys.executable, "bench/cv_k.py", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    for row in ("SparseRegressorCV foba-obj", "GridSearchCV(SparseRegressor foba-obj)", "LassoCV"):
        assert f"| {row} |" in out.stdout
    assert "load average before" in out.stdout and "Load average after" in out.stdout
    assert "Same k chosen by both (same folds, same method at every k): yes" in out.stdout
