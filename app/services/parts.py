"""What every study made of runs shares (a cross-validation, a stability study): it is stored
with its parts and their jobs in one transaction, and its status is its parts'."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from app.jobs.backend import JobBackend
from app.models import CVStudy, Dataset, IdempotencyKey, Run, RunStatus, StabilityStudy, stored_id
from app.services import idempotency

# A data set registered by reference is one too: its parts are the ranges of its statistics pass.
Study = TypeVar("Study", CVStudy, StabilityStudy, Dataset)

# A failed or cancelled part decides the study's status before the ones still going.
_STATUS_ORDER = (RunStatus.failed, RunStatus.cancelled, RunStatus.running, RunStatus.queued)


def status_of(parts: Sequence[Run]) -> RunStatus:
    """Done when every part is; failed or cancelled when a part is; running once a part has
    started; else queued."""
    statuses = {RunStatus(r.status) for r in parts}
    if statuses <= {RunStatus.done}:
        return RunStatus.done
    if RunStatus.done in statuses and statuses <= {RunStatus.done, RunStatus.queued}:
        return RunStatus.running  # between two parts
    return next(s for s in _STATUS_ORDER if s in statuses)


def store_study(
    session: Session,
    backend: JobBackend,
    study: Study,
    make_parts: Callable[[int], list[Run]],
    *,
    kind: str,
    key: str | None,
    request_hash: str,
    dataset_id: int,
) -> tuple[Study, int | None]:
    """Store ``study``, its parts (``make_parts(study_id)``) and the Idempotency-Key in one
    transaction, with every part's job or none; then hand the jobs to the backend.

    Returns the study and None, or, when a concurrent request with the same key won (or the
    data set went meanwhile), the study and the id of the study the key names (``kind``:
    ``cv`` or ``stability``, the key's column ``<kind>_id``), which the caller returns instead.
    """
    try:
        session.add(study)
        session.flush()
        parts = make_parts(stored_id(study))
        session.add_all(parts)
        if key is not None:
            used = IdempotencyKey(key=key, request_hash=request_hash)
            setattr(used, f"{kind}_id", stored_id(study))
            session.add(used)
        session.flush()  # a repeated key fails here, before any job is queued
        backend.enqueue(session, [stored_id(run) for run in parts])  # every job, or none
        session.commit()
    except IntegrityError:  # the same key used concurrently, or the data set deleted meanwhile
        session.rollback()
        seen = idempotency.winner(session, key, request_hash, dataset_id)
        return study, idempotency.created(getattr(seen, f"{kind}_id"), key)
    for run in parts:
        backend.submit(stored_id(run))
    return study, None
