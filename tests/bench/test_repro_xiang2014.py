"""Xiang, Yang & Ye (2014) reproduction, quick mode: the report and figures are written, the
paper's Tables 3 and 4 are quoted beside ours, the robust claims hold, and the numbers are
those of the experiments it describes. Also checks the module's sparse group lasso solver."""

from __future__ import annotations

import numpy as np
import pytest

from bench.repro.report import ReproConfig
from bench.repro.sparse_group_lasso import sgl_lambda_max, sgl_path, sgl_prox
from bench.repro.xiang2014 import METHODS, VARIANTS
from bench.reproduce import reproduce


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("xiang2014")
    ctx = ReproConfig("xiang2014", quick=True, seed=0, out_dir=out, png=False, log=lambda _: None)
    return reproduce(ctx)


def test_report_and_figures_are_written(report):
    text = (report.dir / "REPORT.md").read_text()
    assert text.startswith("# Xiang, Yang & Ye")
    assert "Mode: **quick**" in text and "Wall time" in text
    for name in ("table3", "table4", "figure4", "figure3"):
        assert (report.dir / f"{name}.html").is_file()
    assert "paper only" in text  # FRAC and DC are quoted, not rerun


def test_report_quotes_the_papers_numbers(report):
    text = (report.dir / "REPORT.md").read_text()
    # Table 3, case 1, sgLasso groups NO 19.10 and SGHT features NO 19.60, with rel. diffs.
    assert "(19.1, " in text and "(19.6, " in text and "%)" in text
    assert "| FRAC(1,2) (paper only) | 8.9 | 2.9 | 0 | 59.7 | 41.7 | 0 | 15.7 |" in text
    # Table 4: SGHT's 2.10 groups, 3.00 features and MSE 545.27.
    assert "(2.1, " in text and "(545, " in text


def test_every_robust_claim_holds(report):
    robust = [c for c in report.claims if c.robust]
    assert len(robust) >= 5
    failed = [f"{c.text}: {c.detail}" for c in robust if not c.holds]
    assert not failed, failed


def test_table3_counts_are_consistent_with_the_truth(report):
    """NO - FP + FN is the true count in every replication: 6 groups, 18 / 60 features."""
    t3 = report.data["table3"]
    for case, true_features in ((1, 18), (2, 60)):
        for name in METHODS:
            s = t3[case][name]
            for no, fp, fn in zip(
                s["groups_no"]["values"],
                s["groups_fp"]["values"],
                s["groups_fn"]["values"],
                strict=True,
            ):
                assert no - fp + fn == 6
            for no, fp, fn in zip(
                s["feat_no"]["values"], s["feat_fp"]["values"], s["feat_fn"]["values"], strict=True
            ):
                assert no - fp + fn == true_features
    # The sparse group lasso keeps most groups; SGHT stays within its budget of 10 groups.
    assert t3[1]["sgLasso"]["groups_no"]["mean"] > t3[1]["SGHT"]["groups_no"]["mean"]
    assert max(t3[1]["SGHT"]["groups_no"]["values"]) <= 10


def test_table4_and_convergence_numbers(report):
    t4 = report.data["table4"]
    for name in METHODS:
        assert 0 < t4[name]["groups"]["mean"] <= 13 and t4[name]["features"]["mean"] <= 37
        assert 5 < t4[name]["mse"]["mean"] < 60  # MEDV has variance about 84
    f4 = report.data["figure4"]
    assert len(f4) == 4  # quick: (100, 2000) and (100, 5000), two s2 each
    for res in f4.values():
        ista = np.asarray(res["ISTA"]["objectives"])
        assert np.all(np.diff(ista) <= 1e-12 * ista[:-1])  # sufficient decrease: monotone
        for v in VARIANTS:
            assert res[v]["iterations"] == len(res[v]["objectives"]) >= 1
    rows = report.data["figure3"]
    assert {r["scenario"] for r in rows} == {"1", "2", "3", "4"}
    assert all(r["projection_s"] > 0 and r["kept"] == r["s1"] for r in rows)


def test_sparse_group_lasso_solver():
    """alpha = 1 is the lasso (checked against scikit-learn); lambda_max zeroes every group;
    the prox shrinks a group exactly to zero below its threshold."""
    from sklearn.linear_model import Lasso

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 30))
    groups = np.repeat(np.arange(6), 5)
    y = X[:, :3] @ np.array([2.0, -1.5, 1.0]) + 0.1 * rng.standard_normal(60)
    ((w, b),) = sgl_path(X, y, groups, [(1.0, 0.05)])
    sk = Lasso(alpha=0.05, tol=1e-12, max_iter=100_000).fit(X, y)
    np.testing.assert_allclose(w, sk.coef_, atol=1e-4)
    assert abs(b - sk.intercept_) < 1e-4
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    top = sgl_lambda_max(Xc, yc, groups, 0.5)
    (w_top, _), (w_below, _) = sgl_path(X, y, groups, [(0.5, 1.001 * top), (0.5, 0.98 * top)])
    assert np.count_nonzero(w_top) == 0 and np.count_nonzero(w_below) > 0
    v = np.array([3.0, -0.5, 0.2, 0.1])
    out = sgl_prox(v, np.array([0, 0, 1, 1]), 0.3, np.array([1.0, 1.0]))
    np.testing.assert_allclose(out[2:], 0.0)  # group 1 soft-thresholds to zero
    u = np.array([2.7, -0.2])
    np.testing.assert_allclose(out[:2], u * (1 - 1 / np.linalg.norm(u)))
