"""What every study made of runs shares (a cross-validation, a stability study): its status is
its parts'."""

from __future__ import annotations

from collections.abc import Sequence

from app.models import Run, RunStatus

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
