"""Progress is measured against the path's real end (its path_end), not against max_steps,
and a running run says how long it has left at the pace of its progress so far."""

from __future__ import annotations

from datetime import timedelta

import engine
from app.models import Run, RunStatus, seconds_left, utcnow


def test_a_default_foba_path_reports_progress_against_its_real_end() -> None:
    config = engine.check_config("foba-obj", "least_squares", k=10, n_features=1000)
    # Zhang's budget is 5k = 50 steps; the default path ends after about k + 5 = 15.
    assert config.budget.likely_steps == 15
    assert config.progress(10, 10) == 10 / 15
    assert config.progress(14, 12) == 14 / 15
    assert config.progress(40, 14) == 0.99  # below 1 until the result is stored
    full = engine.check_config(
        "foba-obj", "least_squares", k=10, n_features=1000, params={"path_end": "zhang"}
    )
    assert full.progress(10, 10) == 10 / 50


def test_time_left_follows_the_pace_so_far() -> None:
    now = utcnow()
    run = Run(dataset_id=1, algorithm="omp", objective="least_squares", status=RunStatus.running)
    run.started_at, run.progress = now - timedelta(seconds=30), 0.25
    assert seconds_left(run, now) == 90.0
    run.progress = 0.0
    assert seconds_left(run, now) is None  # no step yet: no pace to go by
    run.status, run.progress = RunStatus.done, 1.0
    assert seconds_left(run, now) is None
