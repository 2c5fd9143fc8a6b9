"""What if: a small run's decisions recomputed at once with another k or nu, for the teaching
mode. It runs in the web process, so only on small problems, and stores nothing: the page
shows the new path beside the stored run, one decision at a time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from sqlmodel import Field, Session, SQLModel

import engine
from app import storage
from app.errors import InvalidInput
from app.jobs import table_pass
from app.jobs.backend import JobBackend
from app.jobs.evaluation import select_run, split_rows
from app.models import Dataset, Run, RunCreate
from app.models.fields import MAX_K, STRICT
from app.services import runs as run_service
from app.storage import ArrayStore
from engine.trace import Event

MAX_FEATURES = 50  # the "small problem"
MAX_CELLS = 250_000  # rows x features: a FoBa path on this many takes well under a second


@dataclass(frozen=True)
class WhatIf:
    run: Run  # the stored run's settings with the changes (never stored)
    events: list[Event]
    answer: list[str]  # the selected feature names
    changes: dict[str, Any]  # what differs from the stored run
    query: str  # the changes as URL parameters, for the page's links ("&k=3&nu=0.4")


def unavailable(dataset: Dataset) -> str | None:
    """Why instant reruns are not offered on this data set, or None."""
    if table_pass.is_reference(dataset):
        return table_pass.needs_rows("an instant rerun")
    if dataset.n_features > MAX_FEATURES:
        return f"instant reruns are for data sets of at most {MAX_FEATURES} features"
    if dataset.n_samples * dataset.n_features > MAX_CELLS:
        return f"instant reruns are for data sets of at most {MAX_CELLS:,} cells"
    return None


def changes_of(run: Run, k: str | None, nu: str | None) -> dict[str, Any]:
    """The asked-for changes that differ from the run (raw text from the URL, checked)."""
    changes: dict[str, Any] = {}
    if k not in (None, ""):
        if not k.isdigit():
            raise InvalidInput(f"k must be a whole number, got {k!r}", loc=("query", "k"))
        if int(k) != run.k:
            changes["k"] = int(k)
    if nu not in (None, ""):
        try:
            value = float(nu)
        except ValueError:
            raise InvalidInput(f"nu must be a number, got {nu!r}", loc=("query", "nu")) from None
        if value != run.params.get("nu"):
            changes["nu"] = value
    return changes


MAX_KEPT = 16  # what-ifs kept: each arrow key of a what-if page asks for the same one again
_kept: OrderedDict[tuple[Any, ...], WhatIf] = OrderedDict()
_lock = threading.Lock()


def recompute(store: ArrayStore, run: Run, dataset: Dataset, changes: dict[str, Any]) -> WhatIf:
    """The run again with ``changes`` (k and nu), on the same rows, recording every decision's
    candidate scores; computed once per run and set of changes (the last MAX_KEPT are kept,
    so stepping through a what-if does not run the engine at every step)."""
    key = (run.id, run.attempt, run.finished_at, dataset.id, tuple(sorted(changes.items())))
    with _lock:
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    found = _recompute(store, run, dataset, changes)
    with _lock:
        _kept[key] = found
        while len(_kept) > MAX_KEPT:
            _kept.popitem(last=False)
    return found


def _recompute(store: ArrayStore, run: Run, dataset: Dataset, changes: dict[str, Any]) -> WhatIf:
    if reason := unavailable(dataset):
        raise InvalidInput(reason, loc=("query",))
    k = changes.get("k", run.k)
    params = run.params
    params = {**params, **({"nu": changes["nu"]} if "nu" in changes else {})}
    try:
        checked = engine.check_config(
            run.algorithm,
            run.objective,
            k=k,
            params=params,
            n_samples=dataset.n_samples,
            n_features=dataset.n_features,
            has_groups=dataset.groups is not None,
            task=dataset.task,
        )
    except engine.ConfigError as exc:
        raise InvalidInput(str(exc), loc=("query", exc.field)) from None
    changed = Run(**{**run.model_dump(), "k": checked.k, "params": checked.params})
    changed.record_candidates = True
    arrays = store.load(dataset.file)
    X, y = storage.unpack_matrix(arrays), arrays["y"]
    train, _ = split_rows(y, dataset.task, run.test_fraction, run.seed)
    result = select_run(changed, dataset, X[train], y[train])
    names = dataset.feature_names
    return WhatIf(
        run=changed,
        events=result.trace,
        answer=[names[j] for j in result.support],
        changes=changes,
        query="&" + urlencode(changes),
    )


# --------------------------------------------------------------------------- saving a what-if


class RerunChanges(SQLModel):
    """What differs from the stored run; everything else (data set, algorithm, objective,
    parameters, standardize, split, seed) is the stored run's."""

    model_config = STRICT

    k: int | None = Field(None, ge=1, le=MAX_K, description="Another k; none keeps the run's.")
    nu: float | None = Field(None, description="Another backward ratio nu (FoBa); none keeps it.")
    record_candidates: bool = Field(
        True, description="Keep the candidate scores behind each decision (teaching mode)."
    )


def rerun_body(run: Run, changes: RerunChanges) -> RunCreate:
    """The stored run's configuration with ``changes``, as a client would submit it."""
    params = dict(run.params)
    if changes.nu is not None:
        params["nu"] = changes.nu
    return RunCreate(
        dataset_id=run.dataset_id,
        algorithm=run.algorithm,
        objective=run.objective,
        k=changes.k if changes.k is not None else run.k,
        params=params,
        record_candidates=changes.record_candidates,
        standardize=run.standardize,
        test_fraction=run.test_fraction,
        seed=run.seed,
    )


def rerun(
    session: Session, backend: JobBackend, store: ArrayStore, run_id: int, changes: RerunChanges
) -> Run:
    """Queue the stored run again with ``changes`` (a what-if saved as a run, or the run again
    recording candidate scores)."""
    run = run_service.get_selection_run(session, run_id)
    return run_service.submit_run(session, backend, store, rerun_body(run, changes), None)
