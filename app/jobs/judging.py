"""How good is a run's answer: the engine's judging tools (``engine.judge``) on the problem the
run solved, its training rows and settings.

The worker judges a finished run (``judge_run``: the swap certificate, and the exact optimum
when the run asks for it) and stores the outcome with the result, the certificate's events
appended to the trace. "Why not this feature?" (``why_not_feature``) is answered on demand, in
the web process, only for problems small enough to answer within a bounded time.

Cost: a certificate or a why-not prices k x (d - k) exchanges, each a refit on the n training
rows, so it grows like n x d x k. A refit without a closed form (logistic, the smoothed losses)
iterates: measured on the shared 2-core machine, least squares took 0.03 s at n x d x k =
5e5, 0.12 s at 4e6 and 0.7 s at 2e7; logistic 0.56 s at 1e5, 0.94 s at 3e5, 1.3 s at 5e5, but
52 s at 1e6 (n = 500, d = 200, k = 10) and 215 s at 4e6 (n = 1000, d = 200, k = 20), where
nearly separable classes make each refit slow. The bounds below weigh a non-quadratic
objective ``ITERATIVE_WEIGHT`` times a quadratic one, and stop the worker's certificate below
those logistic sizes.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

import engine
from app import storage
from app.jobs.evaluation import split_rows
from app.jobs.run_errors import describe
from app.models import Dataset, Run
from app.storage import ArrayStore
from engine import SelectionResult
from engine.judge import settings_of
from engine.trace import Event

log = logging.getLogger(__name__)

ITERATIVE_WEIGHT = 200
# n x d x k (weighted) a why-not may cost in the web process: about 1 s at most.
WEB_BUDGET = 2e7
# ... and the certificate in the worker: a few seconds (logistic: n x d x k up to 5e5).
WORKER_BUDGET = 1e8
EXACT_SECONDS = 10.0  # the branch and bound's time budget in the worker (engine default)
# Weighted n x d x k the certificate prices per second, read off the timings above on the slow
# side (least squares 2e7 in 0.7 s; logistic 5e5 x 200 in 1.3 s): how much of MAX_RUN_SECONDS
# a certificate would take, before starting it.
COST_PER_SECOND = 2.5e7
# Less time than this left under MAX_RUN_SECONDS: the exact search is not started.
MIN_EXACT_SECONDS = 0.5


def judging_cost(objective: str, n: int, d: int, k: int) -> float:
    """The weighted n x d x k of pricing every exchange of a size-k support."""
    quadratic = "quadratic" in engine.OBJECTIVES[objective].capabilities
    return float(n) * d * max(k, 1) * (1 if quadratic else ITERATIVE_WEIGHT)


def too_large(objective: str, n: int, d: int, k: int, budget: float, what: str) -> str | None:
    """Why ``what`` is not computed for this problem size, or None."""
    cost = judging_cost(objective, n, d, k)
    if cost <= budget:
        return None
    weight = "" if cost == n * d * max(k, 1) else f" x {ITERATIVE_WEIGHT} for the {objective} loss"
    return (
        f"{what} is not computed for this problem: rows x features x k = {n} x {d} x {k}"
        f"{weight} = {cost:.3g} is above the bound of {budget:.3g} "
        f"(about {'a second' if budget <= WEB_BUDGET else 'a few seconds'})"
    )


@dataclass(frozen=True)
class Judged:
    """What the worker adds to a run's result, and the certificate's trace events."""

    judged_as: dict[str, Any]
    certificate: dict[str, Any] | None
    exact: dict[str, Any] | None
    events: list[Event]


def judge_run(
    run: Run, result: SelectionResult, X: Any, y: np.ndarray, seconds_left: float | None = None
) -> Judged:
    """The certificate (``run.certify``) and the exact optimum (``run.exact``) of a run's
    answer, on the training rows ``X``, ``y`` it was selected on.

    Judging counts against the run's time limit: ``seconds_left`` (None: unbounded) is what
    MAX_RUN_SECONDS leaves after the selection; a certificate predicted to take longer is
    skipped, and the exact search gets at most what is left."""
    settings = settings_of(result)
    support = [int(j) for j in result.support]
    n, d, k = X.shape[0], X.shape[1], len(support)
    certificate: dict[str, Any] | None = None
    exact: dict[str, Any] | None = None
    events: list[Event] = []
    started = time.monotonic()
    if run.certify:
        if reason := too_large(run.objective, n, d, k, WORKER_BUDGET, "the swap certificate"):
            certificate = {"skipped": reason}
        elif reason := _out_of_time(
            judging_cost(run.objective, n, d, k) / COST_PER_SECOND,
            seconds_left,
            "the swap certificate",
        ):
            certificate = {"skipped": reason}
        else:
            try:
                cert = engine.certify(X, y, support, **settings)
                certificate = {**cert.to_dict(), "events": None}
                events = cert.events(len(result.trace))
            except Exception as exc:  # judging never fails the run it judges
                log.info("certificate of run %s failed", run.id, exc_info=True)
                certificate = {"skipped": f"the certificate failed: {describe(exc)}"}
    if run.exact:
        left = None if seconds_left is None else seconds_left - (time.monotonic() - started)
        budget = EXACT_SECONDS if left is None else min(EXACT_SECONDS, left)
        if reason := _out_of_time(MIN_EXACT_SECONDS, left, "the exact search"):
            exact = {"skipped": reason}
        else:
            exact = _exact(run, X, y, support, settings, budget)
    return Judged(_plain(settings), certificate, exact, events)


def _out_of_time(needed: float, seconds_left: float | None, what: str) -> str | None:
    """Why ``what`` (about ``needed`` seconds) is not started under the run's time limit."""
    if seconds_left is None or needed <= seconds_left:
        return None
    return (
        f"{what} is not computed: it would need about {needed:.2g} s and the run's time limit "
        f"(MAX_RUN_SECONDS) leaves {seconds_left:.2g} s"
    )


def _exact(
    run: Run,
    X: Any,
    y: np.ndarray,
    support: list[int],
    settings: dict[str, Any],
    time_budget: float = EXACT_SECONDS,
) -> dict[str, Any]:
    k, d = len(support), X.shape[1]
    if k == 0:
        return {"skipped": "the answer selects no feature: there is nothing to search"}
    try:
        best = engine.exact_best(X, y, k, support=support, time_budget=time_budget, **settings)
    except Exception as exc:
        log.info("exact search of run %s failed", run.id, exc_info=True)
        return {"skipped": f"the exact search failed: {describe(exc)}"}
    out = best.to_dict()
    out["n_supports"] = float(out["n_supports"]) if out["n_supports"] > 2**53 else out["n_supports"]
    out["n_features"] = d
    return out


def _plain(settings: dict[str, Any]) -> dict[str, Any]:
    return {n: (v.item() if isinstance(v, np.generic) else v) for n, v in settings.items()}


# --------------------------------------------------------------------------- on demand


def stored_settings(run: Run) -> dict[str, Any]:
    """The judging settings of a stored run: those its worker recorded (``judged_as``), or,
    for a run stored before they were, the same derived from its columns."""
    judged = (run.result or {}).get("judged_as")
    if judged:
        return dict(judged)
    spec = engine.OBJECTIVES[run.objective]
    own = {p.name for p in spec.params}
    return {
        "objective": run.objective,
        "standardize": bool(run.standardize) and "linear" in spec.capabilities,
        **{n: v for n, v in run.params.items() if n in own},
    }


def n_training_rows(run: Run, dataset: Dataset, store: ArrayStore) -> int:
    if not run.test_fraction:
        return dataset.n_samples
    y = store.load(dataset.file, ("y",))["y"]
    return len(split_rows(y, dataset.task, run.test_fraction, run.seed)[0])


def why_not_feature(run: Run, dataset: Dataset, store: ArrayStore, feature: int) -> dict[str, Any]:
    """``engine.why_not`` for a stored run's answer and one feature, on its training rows.

    Callers check the size first (``too_large`` with ``WEB_BUDGET``)."""
    arrays = store.load(dataset.file)
    X, y = storage.unpack_matrix(arrays), arrays["y"]
    train, _ = split_rows(y, dataset.task, run.test_fraction, run.seed)
    support = [f["index"] for f in (run.result or {}).get("support", [])]
    verdict = engine.why_not(X[train], y[train], support, feature, **stored_settings(run))
    return verdict.to_dict()
