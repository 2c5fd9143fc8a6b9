"""The progress of a cross-validation fold over its engine runs (one per k when the path's
sizes are not answers): each run is an equal share, and the fold is below 1 until stored."""

from __future__ import annotations

from app.jobs.study_part import PartMeter as FoldMeter
from app.jobs.tasks import ProgressMeter
from engine import datasets
from engine.cv import fold_errors, kfold, plan_cv


def test_a_fold_of_one_run_per_k_reports_each_run_as_an_equal_share() -> None:
    problem = datasets.generate("gaussian_regression", random_state=0, n=60, d=8, k_true=2)
    plan = plan_cv("lasso", k_max=3, n_features=8)
    assert plan.mode == "per-k" and len(plan.runs) == 3
    meter = FoldMeter([ProgressMeter(config) for config in plan.runs])
    seen: list[tuple[str, float]] = []

    def recorder(event):
        meter.observe(event)
        seen.append((event.kind, meter.progress))
        return True

    train, test = kfold(60, 3)[0]
    fold_errors(problem.X, problem.y, train, test, algorithm="lasso", k_max=3, callback=recorder)
    progress = [p for _, p in seen]
    assert all(0 <= p <= 0.99 for p in progress) and progress[-1] == 0.99
    stops = [p for kind, p in seen if kind == "stop"]
    assert stops == [1 / 3, 2 / 3, 0.99]
    # Within the second run, progress is past the first run's share.
    second = progress[progress.index(1 / 3) + 1 : progress.index(2 / 3)]
    assert second and all(1 / 3 <= p <= 2 / 3 for p in second)
