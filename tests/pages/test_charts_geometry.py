"""The teaching page's geometry of a step (app/web/charts/geometry.py), checked against an
independent numpy computation: the residual from a least-squares refit from scratch (with a
column of ones for the intercept, on the raw columns), cosines and drops by their definitions;
OMP picks the most aligned column, FoBa-obj the largest one-coordinate drop; Zhang's Figure 2
in the 3-D view; and the page carrying it all in its frames."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from service_helpers import submit, wait_for
from test_pages import frames_of, html_of

import engine
from app.models import Dataset, Run
from app.services.lessons import figure2_problem
from app.web.charts import geometry
from engine.trace import supports_in_order

RTOL = 2e-3  # the page keeps four significant digits


def problem(seed: int = 3, n: int = 60, d: int = 9) -> tuple[np.ndarray, np.ndarray]:
    """Correlated columns in very different units, an offset: the intercept and the scaling
    both matter to a careless reimplementation."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 0.5 * rng.standard_normal((n, 1))
    X = X * np.logspace(-2, 2, d) + 3.0
    y = X[:, 1] / X[:, 1].std() - 2 * X[:, 4] / X[:, 4].std() + X[:, 6] / X[:, 6].std()
    return X, y + 0.3 * rng.standard_normal(n) + 5.0


def select(X, y, algorithm, names=None, **kw):
    result = engine.select(X, y, algorithm=algorithm, record_candidates=True, **kw)
    run = Run(
        dataset_id=1,
        algorithm=algorithm,
        objective="least_squares",
        k=kw.get("k"),
        params=result.params,
        standardize=kw.get("standardize", True),
    )
    p = geometry.Problem(X, y, fit_intercept=True, standardize=run.standardize)
    names = names or [f"x{j}" for j in range(X.shape[1])]
    _, frames = geometry.geometry_doc(p, run, names, result.trace, range(len(result.trace)))
    return result.trace, frames


def residual(X, y, support):
    """y minus its least-squares fit on an intercept and the support, from scratch."""
    A = np.column_stack([np.ones(len(y)), X[:, sorted(support)]])
    return y - A @ np.linalg.lstsq(A, y, rcond=None)[0]


def objective(X, y, support):
    r = residual(X, y, support)
    return r @ r / (2 * len(y))


def by_definition(X, y, support):
    """Each column's cosine with the residual and its one-coordinate drop."""
    r = residual(X, y, support)
    Xc = X - X.mean(axis=0)
    cos = Xc.T @ r / (np.linalg.norm(Xc, axis=0) * np.linalg.norm(r))
    drop = (Xc.T @ r) ** 2 / (Xc**2).sum(axis=0) / (2 * len(y))
    return cos, drop


def test_forward_numbers_are_the_definitions_and_the_recorded_scores():
    X, y = problem()
    trace, frames = select(X, y, "foba-obj", k=3)
    supports = supports_in_order(trace)
    adds = 0
    for i, (e, g) in enumerate(zip(trace, frames, strict=True)):
        if e.kind != "add":
            continue
        adds += 1
        fw = g["forward"]
        cos, drop = by_definition(X, y, supports[i - 1] if i else [])
        cols = fw["candidates"]
        np.testing.assert_allclose(fw["numbers"]["cos"], cos[cols], rtol=RTOL)
        np.testing.assert_allclose(fw["numbers"]["drop"], drop[cols], rtol=RTOL)
        # FoBa-obj's recorded scores are these drops, and its pick is the largest.
        recorded = dict(zip(e.candidates.features, e.candidates.scores, strict=True))
        for j, value in zip(cols, fw["numbers"]["drop"], strict=True):
            assert value == pytest.approx(recorded[j], rel=RTOL)
        outside = [j for j in range(X.shape[1]) if j not in (supports[i - 1] if i else [])]
        assert e.feature == max(outside, key=lambda j: drop[j])
        assert e.feature == max(outside, key=lambda j: abs(cos[j]))  # the same column
        assert fw["best"]["drop"] == fw["best"]["cos"] == e.feature and fw["agrees"]
        assert fw["residual"] == pytest.approx(
            np.linalg.norm(residual(X, y, supports[i - 1] if i else [])) / math.sqrt(len(y)),
            rel=RTOL,
        )
    assert adds >= 3


def test_deletion_costs_are_the_objective_rises_against_the_recorded_bar():
    X, y = figure2_problem().X, figure2_problem().y
    trace, frames = select(X, y, "foba-obj", k=2)
    supports = supports_in_order(trace)
    checked = 0
    for i, (e, g) in enumerate(zip(trace, frames, strict=True)):
        if e.kind not in ("remove", "check"):
            continue
        de = g["deletion"]
        support = supports[i - 1]
        assert not de["refitted"]  # FoBa-obj prices a deletion without a refit
        r = residual(X, y, support)
        A = np.column_stack([np.ones(len(y)), X[:, support]])
        w = np.linalg.lstsq(A, y, rcond=None)[0][1:]
        for j, no_refit, refit in zip(de["columns"], de["no_refit"], de["refit"], strict=True):
            col = X[:, j] - X[:, j].mean()
            wj = w[list(support).index(j)]
            zeroed = (r + wj * col) @ (r + wj * col) / (2 * len(y)) - r @ r / (2 * len(y))
            rest = [s for s in support if s != j]
            assert no_refit == pytest.approx(zeroed, rel=RTOL, abs=1e-12)
            assert refit == pytest.approx(
                objective(X, y, rest) - objective(X, y, support), rel=RTOL, abs=1e-12
            )
        assert de["chosen"] == e.feature == de["columns"][0]  # the cheapest one
        assert de["cost"][0] == pytest.approx(e.gain, rel=RTOL)
        assert de["bar"] == e.threshold
        assert (de["cost"][0] < de["bar"]) == (e.kind == "remove")
        checked += 1
    assert checked >= 3
    removal = next(i for i, e in enumerate(trace) if e.kind == "remove")
    assert trace[removal].feature == 2  # f3
    assert "below the bar" in frames[removal]["deletion"]["sentence"]


def test_omp_picks_the_most_aligned_column_when_standardised():
    X, y = problem(seed=5)
    for standardize in (True, False):
        trace, frames = select(X, y, "omp", k=4, standardize=standardize)
        supports = supports_in_order(trace)
        for i, (e, g) in enumerate(zip(trace, frames, strict=True)):
            if e.kind != "add":
                continue
            fw = g["forward"]
            assert fw["criterion"] == "gradient" and fw["agrees"]
            assert fw["best"]["gradient"] == e.feature
            if standardize:  # equal norms: the largest |gradient| is the smallest angle
                cos, _ = by_definition(X, y, supports[i - 1] if i else [])
                outside = [j for j in range(X.shape[1]) if j not in (supports[i - 1] if i else [])]
                assert e.feature == max(outside, key=lambda j: abs(cos[j]))
                assert fw["best"]["cos"] == e.feature
    # On the raw columns a long column wins at a wider angle: the sentence says why.
    trace, frames = select(X, y, "omp", k=4, standardize=False)
    first = frames[0]["forward"]
    assert first["best"]["gradient"] != first["best"]["cos"]
    assert "not standardised" in first["sentence"]


def test_forward_stepwise_picks_by_the_part_orthogonal_to_the_support():
    X, y = problem(seed=7)
    trace, frames = select(X, y, "stepwise", k=4)
    for e, g in zip(trace, frames, strict=True):
        if e.kind == "add":
            fw = g["forward"]
            assert fw["criterion"] == "refit_drop" and fw["agrees"]
            at = fw["candidates"].index(e.feature)
            assert fw["numbers"]["refit_drop"][at] == pytest.approx(e.gain, rel=RTOL)


def angle_between(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return math.degrees(math.acos(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))


def test_figure2_view_shows_f3_between_f1_and_f2_and_closer_to_y():
    prob = figure2_problem()
    X, y = prob.X, prob.y
    trace, frames = select(X, y, "foba-obj", names=list(prob.feature_names), k=2)
    removal = next(i for i, e in enumerate(trace) if e.kind == "remove")
    view = frames[removal]["view"]  # the support after it: f1 and f2
    assert view["span"] == 2 and view["y"][2] == pytest.approx(0, abs=0.01)  # y in the plane
    at = {c["name"]: np.array(c["at"]) for c in view["columns"]}
    assert {"f1", "f2", "f3"} <= set(at)
    y3 = np.array(view["y"])
    # The view holds y, so a dot product with its coordinates is the true cosine with y.
    yc = y - y.mean()
    for name in ("f1", "f2", "f3"):
        col = X[:, prob.feature_names.index(name)]
        col = col - col.mean()
        true = col @ yc / (np.linalg.norm(col) * np.linalg.norm(yc))
        assert at[name] @ y3 == pytest.approx(true, abs=1e-2)
    # f3 lies between f1 and f2 and is closer to y than either.
    to_y = {name: angle_between(v, y3) for name, v in at.items()}
    assert to_y["f3"] < min(to_y["f1"], to_y["f2"])
    plane = {n: math.atan2(v[1], v[0]) for n, v in at.items()}
    assert min(plane["f1"], plane["f2"]) < plane["f3"] < max(plane["f1"], plane["f2"])
    assert view["fit"][2] == pytest.approx(0, abs=1e-6)  # the fit lies in the span
    # Step 0: f3 alone, along the fit (e1); y leaves it along the residual (e3) at 26 degrees.
    first = frames[0]["view"]
    assert first["span"] == 1 and "fit" in first["axes"][0] and "residual" in first["axes"][2]
    assert first["fit"] == pytest.approx([0.9, 0, 0], abs=2e-3)
    assert first["y"] == pytest.approx([0.9, 0, math.sqrt(1 - 0.81)], abs=2e-3)
    f3 = next(c for c in first["columns"] if c["name"] == "f3")
    assert f3["selected"] and f3["at"] == pytest.approx([1, 0, 0], abs=1e-3)
    # After the deletion y lies in the plane of f1 and f2: e3 shows f3 leaving it.
    assert "f3 outside the span" in view["axes"][2]
    assert re.search(r"26°", frames[0]["forward"]["sentence"])


def test_bounded_cost_and_other_objectives_say_why_not():
    ds = Dataset(name="big", n_samples=10_000, n_features=100, file="x")
    run = Run(dataset_id=1, algorithm="foba-obj", objective="least_squares", k=3, params={})
    assert "at most 250,000 cells" in (geometry.unavailable(run, ds) or "")
    small = Dataset(name="small", n_samples=50, n_features=8, file="x")
    assert geometry.unavailable(run, small) is None
    logistic = Run(dataset_id=1, algorithm="foba-obj", objective="logistic", k=3, params={})
    assert "least squares" in (geometry.unavailable(logistic, small) or "")
    # Only the best TOP candidates are drawn, the pick always among them.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 30))
    trace, frames = select(X, X[:, 3] + X[:, 17], "foba-obj", k=2)
    fw = frames[0]["forward"]
    assert len(fw["candidates"]) == geometry.TOP and fw["n_candidates"] == 30
    assert trace[0].feature in fw["candidates"]


def test_the_teaching_page_carries_the_geometry_of_each_frame(site):
    """The stored run's training rows (test_fraction 0.25) and scaling, as the worker had
    them: the page's drops equal the candidate scores the worker recorded."""
    run = site.foba
    page = html_of(site.client, f"/teach/{run['id']}?step=0")
    assert 'id="geometry-card"' in page
    doc = frames_of(page)
    assert doc["geometry"]["note"] == ""
    trace = site.client.get(f"/api/runs/{run['id']}/trace").json()["events"]
    by_step = {e["step"]: e for e in trace}
    compared = 0
    for frame in doc["frames"]:
        e = by_step[frame["step"]]
        g = frame["geometry"]
        if e["kind"] == "add":
            fw = g["forward"]
            assert fw["chosen"] == e["feature"] and fw["agrees"]
            cand = e["candidates"]
            recorded = dict(zip(cand["features"], cand["scores"], strict=True))
            for j, drop in zip(fw["candidates"], fw["numbers"]["drop"], strict=True):
                assert drop == pytest.approx(recorded[j], rel=RTOL)
                compared += 1
        elif e["kind"] in ("remove", "check") and e.get("feature_out") is None:
            assert g["deletion"]["cost"][0] == pytest.approx(e["gain"], rel=RTOL)
    assert compared >= 10
    # The swap certificate's checks (after the run) are no deletion: nothing is drawn for them.
    assert any(e.get("feature_out") is not None for e in trace)


def test_a_logistic_run_gets_a_sentence_instead(site):
    """(The run is deleted after: the shared site's other tests expect no logistic run.)"""
    run = submit(site.client, site.logistic["id"], algorithm="foba-obj", objective="logistic", k=2)
    try:
        assert wait_for(site.client, run["id"])["status"] == "done"
        doc = frames_of(html_of(site.client, f"/teach/{run['id']}?step=0"))
    finally:
        assert site.client.delete(f"/api/runs/{run['id']}").status_code == 204
    assert "drawn for least squares" in doc["geometry"]["note"]
    assert "logistic" in doc["geometry"]["note"]
    assert all(frame["geometry"] is None for frame in doc["frames"])
