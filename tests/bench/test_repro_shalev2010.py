"""Shalev-Shwartz, Srebro & Zhang (2010) reproduction, quick mode: the report and figures are
written, the theorems' bounds are quoted beside the observed sparsities, the robust claims
hold, and the curves behave as the algorithms guarantee."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.repro.report import ReproConfig
from bench.repro.shalev2010 import CURVES, FC, FW, REP, SIMPLE, bounds
from bench.reproduce import reproduce


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("shalev2010")
    ctx = ReproConfig("shalev2010", quick=True, seed=0, out_dir=out, png=False, log=lambda _: None)
    return reproduce(ctx)


def test_report_and_figures_are_written(report):
    text = (report.dir / "REPORT.md").read_text()
    assert text.startswith("# Shalev-Shwartz, Srebro & Zhang")
    assert "Mode: **quick**" in text and "Wall time" in text
    for name in ("objective_vs_sparsity", "tradeoff", "frank_wolfe_b1"):
        assert (report.dir / f"{name}.html").is_file()


def test_report_quotes_the_theorems_bounds(report):
    text = (report.dir / "REPORT.md").read_text()
    for thm in (
        "Thm 2.1 (Alg. 1)",
        "Thm 2.4 (Alg. 2)",
        "Thm 2.7 (Alg. 3)",
        "Thm 2.8 (Alg. 3)",
        "Thm 2.9 (Alg. 3+4)",
    ):
        assert thm in text
    for name in CURVES:
        assert name in text


def test_every_robust_claim_holds(report):
    robust = [c for c in report.claims if c.robust]
    assert len(robust) >= 6
    failed = [f"{c.text}: {c.detail}" for c in robust if not c.holds]
    assert not failed, failed


def test_curves_behave_as_the_algorithms_guarantee(report):
    results = report.data["results"]
    assert report.data["settings"]["K"] == 12
    for runs in results.values():
        assert len(runs) == 3
        for run in runs:
            c = {name: np.asarray(v, dtype=float) for name, v in run["curves"].items()}
            assert all(v.shape == (12,) for v in c.values())
            # Fully corrective: nested supports, each step refitted -> nonincreasing.
            assert np.all(np.diff(c[FC]) <= 1e-12)
            # Replacement steps only accept improvements.
            assert np.all(c[REP] <= c[FC] * (1 + 1e-9) + 1e-12)
            assert np.all(c[SIMPLE] <= c[FC] * (1 + 1e-9) + 1e-12)
            # Best Frank-Wolfe objective with at most k features cannot rise with k.
            fw = c[FW][np.isfinite(c[FW])]
            assert np.all(np.diff(fw) <= 0)
            assert np.all(np.asarray(run["rs_sizes"]) <= np.arange(1, 13))
            ref = run["ref"]
            assert ref["q_bar"] < ref["q0"] and ref["l0_bar"] in (5, 10)


def test_tradeoff_numbers(report):
    stats = report.data["stats"]
    assert stats["fc_le_fw_fraction"] >= 0.95 and stats["fw_over_fc_median"] > 1.5
    assert stats["rs_over_fc_median"] > 1.2
    table = report.data["tradeoff"]
    for key, per_fraction in table.items():
        needed = [np.nanmedian(per_fraction[f]["needed"][FC]) for f in sorted(per_fraction)]
        assert needed == sorted(needed, reverse=True), key  # smaller eps, more features
    ref = {"q0": 1.0, "q_bar": 0.0, "beta": 1.0, "lam": 0.5, "l1_bar": 2.0, "l0_bar": 3}
    b = bounds(ref, 0.1)  # eps = 0.1
    assert math.isclose(b["Thm 2.7 (Alg. 3)"], 2 * 4 / 0.1)
    assert b["Thm 2.4 (Alg. 2)"] == math.ceil(8 * 4 / 0.1)
    assert math.isclose(b["Thm 2.8 (Alg. 3)"], 3 * 2 * math.log(10))
    assert math.isclose(b["Thm 2.9 (Alg. 3+4)"], 3 * (1 + 4 * 4) - 1)
