"""Elenberg et al. (2016) reproduction, quick mode: the report is written, names the paper's
setting and the data set it cannot ship, its robust claims hold, and its curves are sane."""

from __future__ import annotations

import numpy as np
import pytest

from bench.repro.elenberg2016 import METHODS, METRICS
from bench.repro.report import ReproConfig
from bench.reproduce import reproduce


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("elenberg2016")
    ctx = ReproConfig(
        "elenberg2016", quick=True, seed=0, out_dir=out, png=False, log=lambda _: None
    )
    return reproduce(ctx)


def test_report_and_figure_are_written(report):
    text = (report.dir / "REPORT.md").read_text()
    assert text.startswith("# Elenberg, Khanna, Dimakis & Negahban (2016)")
    assert "Mode: **quick**" in text
    assert (report.dir / "figure1.html").is_file()
    # The paper's setting beside ours, and RCV1 named as not rerun, with the reason.
    assert "| training samples n | 600 | 600 | +0% |" in text
    assert "| features p | 200 | 200 | +0% |" in text
    assert "RCV1" in text and "not bundled" in text and "network" in text


def test_every_robust_claim_holds(report):
    robust = [c for c in report.claims if c.robust]
    assert len(robust) >= 6
    failed = [f"{c.text}: {c.detail}" for c in robust if not c.holds]
    assert not failed, failed


def test_curves_cover_every_sparsity(report):
    k_max = report.data["settings"]["k_max"]
    summary = report.data["summary"]
    assert set(summary) == set(METHODS)
    for name in METHODS:
        for m in METRICS:
            assert len(summary[name][m]["mean"]) == k_max


def test_greedy_numbers_are_plausible(report):
    summary = report.data["summary"]
    rec = {name: np.array(summary[name]["recovered"]["mean"]) for name in METHODS}
    obj = {name: np.array(summary[name]["objective"]["mean"]) for name in METHODS}
    # A forward path adds one feature per step: the objective grows with the sparsity, and
    # forward stepwise at s = 1 takes the best single feature, as Oblivious does.
    assert np.all(np.diff(obj["Forward stepwise"]) > 0)
    assert obj["Forward stepwise"][0] == pytest.approx(obj["Oblivious"][0])
    # 50 true features among 200: s features recover at most 2s percent of them.
    s = np.arange(1, len(rec["OMP"]) + 1)
    for name in METHODS:
        assert np.all(rec[name] <= np.minimum(100.0, 2.0 * s) + 1e-9), name
    assert rec["Forward stepwise"][49] > 75.0  # the greedy methods find most of the support
    acc = np.array(summary["FoBa"]["accuracy"]["mean"])
    assert 0.7 < acc[49] < 0.95
    # Lasso-Pipeline refits the Lasso's supports: same recovery, higher likelihood.
    assert np.allclose(rec["Lasso"], rec["Lasso-Pipeline"])
    assert np.all(obj["Lasso-Pipeline"] > obj["Lasso"])
