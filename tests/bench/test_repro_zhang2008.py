"""Zhang (2008) reproduction, quick mode: the report is written, quotes the paper's Table 1, its
robust claims hold, and its numbers are those of the experiments it describes."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from bench.repro.report import ReproConfig
from bench.repro.zhang2008 import BOSTON_LABELS, K_MAX, PAPER_TABLE1_TEXT
from bench.reproduce import reproduce

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("zhang2008")
    ctx = ReproConfig("zhang2008", quick=True, seed=0, out_dir=out, png=False, log=lambda _: None)
    return reproduce(ctx)


def test_report_and_figures_are_written(report):
    text = (report.dir / "REPORT.md").read_text()
    assert text.startswith("# Zhang (NIPS 2008)")
    assert "Mode: **quick**" in text
    for name in ("figure4_boston", "figure5_boston"):
        assert (report.dir / f"{name}.html").is_file()


def test_report_quotes_the_papers_table1(report):
    text = (report.dir / "REPORT.md").read_text()
    for cells in PAPER_TABLE1_TEXT.values():
        for cell in cells:
            assert f"| {cell} |" in text
    assert "| FoBa: feature selection error | 0.76 |" in text
    assert "rel. diff" in text


def test_every_robust_claim_holds(report):
    robust = [c for c in report.claims if c.robust]
    assert len(robust) >= 8
    failed = [f"{c.text}: {c.detail}" for c in robust if not c.holds]
    assert not failed, failed


def test_table1_ordering_and_scale(report):
    t1 = report.data["table1"]
    fs = {label: t1[label]["fs"]["mean"] for label in ("FoBa", "Forward-greedy", "L1")}
    assert fs["FoBa"] < fs["Forward-greedy"] < fs["L1"], fs
    assert 2.5 <= fs["L1"] <= 4.0  # the paper: 3.2 ± 0.77
    # Where FoBa finds the true features its training error is the noise level, as the paper's.
    exact = report.data["foba_exact_runs"]
    assert exact["count"] >= 15
    assert 0.06 < exact["train"] < 0.13


def test_boston_curves_are_complete_and_sane(report):
    boston = report.data["boston"]
    assert set(boston) == set(BOSTON_LABELS)
    for label in ("FoBa", "FoBa-aggressive", "Forward-greedy", "Backward-greedy"):
        train = boston[label]["train_mean"]
        assert len(train) == K_MAX and None not in train
        assert 10.0 < train[-1] < train[0] < 90.0  # MEDV in $1000s: variance about 84
    for label in ("Forward-greedy", "Backward-greedy"):
        # Nested supports: the training error cannot rise with the sparsity.
        train = boston[label]["train_mean"]
        assert all(a >= b - 1e-9 for a, b in itertools.pairwise(train)), label
    # At k = 1 every greedy method takes the best single feature.
    assert boston["FoBa"]["train_mean"][0] == pytest.approx(
        boston["Forward-greedy"]["train_mean"][0]
    )
    # eps' = 10 on the paper's R stops the heuristic early; on the n R scale it goes on.
    assert boston["SAS heuristic, eps'=10 on R"]["reached"][-1] == 0
    assert (
        boston["SAS heuristic, eps'=10 on nR"]["reached"][1]
        == report.data["settings"]["boston_splits"]
    )


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium for kaleido to drive")
def test_png_figures_are_written(tmp_path):
    pytest.importorskip("kaleido")
    ctx = ReproConfig(
        "zhang2008", quick=True, seed=0, out_dir=tmp_path, png=True, log=lambda _: None
    )
    report = reproduce(ctx)
    assert report.png_note is None, report.png_note
    png = report.dir / "figure4_boston.png"
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "(figure4_boston.png)" in (report.dir / "REPORT.md").read_text()
    shutil.rmtree(report.dir)


def test_no_browser_means_html_figures_and_the_reason(tmp_path, monkeypatch):
    """Without a usable Chromium, kaleido would fail in its own thread and leave the main
    thread waiting forever; the report detects it first and writes HTML figures only."""
    pytest.importorskip("kaleido")
    from bench.repro import report as report_module

    fake = tmp_path / "not-a-browser"
    fake.write_text("")  # exists, not executable
    monkeypatch.setenv("BROWSER_PATH", str(fake))
    why = report_module.png_unavailable()
    assert why is not None and "not executable" in why
    ctx = ReproConfig(
        "zhang2008", quick=True, seed=0, out_dir=tmp_path, png=True, log=lambda _: None
    )
    report = reproduce(ctx)
    assert report.png_note is not None and "HTML only" in report.png_note
    assert not list(report.dir.glob("*.png"))
    assert list(report.dir.glob("*.html"))
    assert "HTML only" in (report.dir / "REPORT.md").read_text()
