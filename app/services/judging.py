"""How good is a run's answer: "why not this feature?" on demand, and the judging outcome the
worker stored (certificate, exact optimum) read for the pages and the API.

A why-not is computed in the web process, so only for problems small enough to answer within
about a second (``app.jobs.judging.WEB_BUDGET`` on rows x features x k); larger ones are
refused with a 422 that points at the run's certificate. Answers are cached per (run,
feature): a finished run never changes, and run ids are never reused.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from typing import Any

from sqlmodel import Session

from app.errors import Conflict, InvalidInput, NotFound
from app.jobs import judging, table_pass
from app.models import Dataset, NamedExchange, Run, RunStatus, WhyNot, stored_id
from app.services.runs import get_selection_run
from app.storage import ArrayStore

CACHE_SIZE = 512
_cache: OrderedDict[tuple[int, int], WhyNot] = OrderedDict()
_lock = threading.Lock()


def why_not(session: Session, store: ArrayStore, run_id: int, feature: int) -> WhyNot:
    """Why ``feature`` is not in run ``run_id``'s answer (or, selected, what replacing it
    would cost), with the equally good alternatives."""
    with _lock:
        if (cached := _cache.get((run_id, feature))) is not None:
            _cache.move_to_end((run_id, feature))
            return cached
    run = get_selection_run(session, run_id)
    if run.status != RunStatus.done or not run.result:
        raise Conflict(f"run {run_id} is {run.status}: it has no answer to judge")
    dataset = session.get(Dataset, run.dataset_id)
    if dataset is None:  # deleted meanwhile, and the run with it
        raise NotFound(f"data set {run.dataset_id} does not exist")
    if table_pass.is_reference(dataset):
        raise InvalidInput(
            table_pass.needs_rows("'why not this feature?'"), loc=("path", "feature")
        )
    if not 0 <= feature < dataset.n_features:
        raise InvalidInput(
            f"feature must be a column index from 0 to {dataset.n_features - 1}",
            loc=("path", "feature"),
        )
    k = len(run.result["support"])
    n = judging.n_training_rows(run, dataset, store)
    if reason := judging.too_large(
        run.objective, n, dataset.n_features, k, judging.WEB_BUDGET, "'why not this feature?'"
    ):
        raise InvalidInput(
            f"{reason}; the run's swap certificate (run option certify, computed by the worker) "
            "judges every exchange at once",
            loc=("path", "feature"),
        )
    start = time.perf_counter()
    verdict = judging.why_not_feature(run, dataset, store, feature)
    answer = _named(run, dataset.feature_names, verdict, time.perf_counter() - start)
    with _lock:
        _cache[(run_id, feature)] = answer
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return answer


def _named(run: Run, names: list[str], verdict: dict[str, Any], seconds: float) -> WhyNot:
    objective = verdict["objective"]
    cost = verdict["cost"]
    return WhyNot(
        run_id=stored_id(run),
        feature=verdict["feature"],
        feature_name=names[verdict["feature"]],
        selected=verdict["selected"],
        objective=_float(objective),
        best=exchange(verdict["best"], names),
        cost=_float(cost),
        relative_cost=(
            _float(cost) / abs(objective) if _float(cost) is not None and objective else None
        ),
        alternatives=[named_exchange(e, names) for e in verdict["alternatives"]],
        change_alone=_float(verdict["change_alone"]),
        explanation=name_features(verdict["explanation"], names),
        tie_tolerance=verdict["tie_tolerance"],
        judged_as=judging.stored_settings(run),
        seconds=seconds,
    )


def exchange(e: dict[str, Any] | None, names: list[str]) -> NamedExchange | None:
    return None if e is None else named_exchange(e, names)


def named_exchange(e: dict[str, Any], names: list[str]) -> NamedExchange:
    return NamedExchange(
        feature_out=e["feature_out"],
        feature_out_name=names[e["feature_out"]],
        feature_in=e["feature_in"],
        feature_in_name=names[e["feature_in"]],
        objective=_float(e["objective"]),
        gain=_float(e["gain"]),
        relative_gain=_float(e["relative_gain"]),
    )


_FEATURE = re.compile(r"\bfeature (\d+)")


def name_features(text: str, names: list[str]) -> str:
    """The engine's sentences name features by index; a page names them by column."""

    def named(m: re.Match[str]) -> str:
        j = int(m.group(1))
        return f"feature {names[j]!r}" if j < len(names) else m.group(0)

    return _FEATURE.sub(named, text)


def _float(x: Any) -> float | None:
    # The engine writes a non-finite number as a string ("inf", "nan"); JSON has none.
    return float(x) if isinstance(x, int | float) and x == x and abs(x) != float("inf") else None


# --------------------------------------------------------------------------- comparisons


def test_error(result: Any) -> float | None:
    """A result's test error: MSE (regression) or 1 - accuracy (classification); None
    without a test split."""
    test = result.test
    if test is None:
        return None
    if test.mse is not None:
        return test.mse
    return None if test.accuracy is None else 1.0 - test.accuracy


def certified(result: Any) -> bool | None:
    """True: a local optimum under swaps; False: an exchange improves it; None: not judged
    (certify off, skipped, or stored before certificates)."""
    cert = result.certificate
    if not cert or "local_optimum" not in cert:
        return None
    return bool(cert["local_optimum"])


def standings(runs: list[Any], rel: float = 1e-9) -> dict[str, Any]:
    """Among a comparison's finished runs (``RunPublic``): which reach the best objective
    (among runs of the same objective, ties within ``rel``), which the best test error, and
    which are certified local optima."""
    done = [r for r in runs if r.result is not None]
    best_objective: set[int] = set()
    for name in {r.objective for r in done}:
        values = {
            r.id: r.result.objective
            for r in done
            if r.objective == name and r.result.objective is not None
        }
        if len(values) > 1:
            low = min(values.values())
            best_objective |= {i for i, v in values.items() if v <= low + rel * abs(low)}
    errors = {r.id: e for r in done if (e := test_error(r.result)) is not None}
    best_test: set[int] = set()
    if len(errors) > 1:
        low = min(errors.values())
        best_test = {i for i, v in errors.items() if v <= low + rel * abs(low)}
    return {
        "best_objective": best_objective,
        "best_test": best_test,
        "certified": {r.id: certified(r.result) for r in done},
    }
