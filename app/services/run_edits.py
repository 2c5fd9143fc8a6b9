"""What people change on runs after the fact: a name, notes and tags; deleting a run; a
comparison made from runs that exist (``ComparisonRun`` links, a run may be in several).

A comparison's own runs (those it queued) point to it through ``Run.comparison_id``; runs
compared later are linked. ``runs.get_comparison`` reads both.
"""

from __future__ import annotations

from sqlalchemy import delete, exists, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.errors import Conflict, InvalidInput, NotFound
from app.models import (
    ACTIVE,
    Comparison,
    ComparisonFromRuns,
    ComparisonPublic,
    ComparisonRun,
    CVStudy,
    Run,
    RunUpdate,
    part_of,
    stored_id,
)
from app.services.runs import get_comparison, get_run, get_selection_run
from app.services.updates import apply_update


def update_run(session: Session, run_id: int, body: RunUpdate) -> Run:
    """Set the fields the body names (and only those)."""
    return apply_update(session, get_selection_run(session, run_id), body, _clear_it)


def _clear_it(field: str) -> str:
    empty = "[]" if field == "tags" else '""'
    return f"{field} cannot be null; send {empty} to clear it"


def delete_run(session: Session, run_id: int) -> None:
    """Delete a finished run with its trace; a queued or running one is refused (cancel it
    first). It leaves the comparisons it was in; a comparison left with no run goes too."""
    run = get_run(session, run_id)
    if part := part_of(run):
        raise Conflict(f"run {run_id} is {part.label}; it goes with its study, not alone")
    comparisons = set(
        session.exec(
            select(col(ComparisonRun.comparison_id)).where(col(ComparisonRun.run_id) == run_id)
        )
    )
    if run.comparison_id is not None:
        comparisons.add(run.comparison_id)
    # One statement: a run cannot start between the check and the deletion.
    deleted = session.exec(
        delete(Run).where(col(Run.id) == run_id, col(Run.status).not_in(ACTIVE))
    ).rowcount
    if deleted == 0:
        session.rollback()
        current = session.get(Run, run_id)
        if current is None:
            raise NotFound(f"run {run_id} does not exist")  # deleted meanwhile
        raise Conflict(
            f"run {run_id} is {current.status}; cancel it first "
            f"(POST /api/runs/{run_id}/cancel), then delete it"
        )
    # A cross-validation's final run has no foreign key (runs point to studies): unset it.
    session.exec(
        update(CVStudy).where(col(CVStudy.final_run_id) == run_id).values(final_run_id=None)
    )
    if comparisons:
        owned = exists().where(col(Run.comparison_id) == Comparison.id)
        linked = exists().where(col(ComparisonRun.comparison_id) == Comparison.id)
        session.exec(delete(Comparison).where(col(Comparison.id).in_(comparisons), ~owned, ~linked))
    session.commit()


def comparison_from_runs(session: Session, body: ComparisonFromRuns) -> ComparisonPublic:
    """A comparison of runs that exist, all on one data set (not folds of a
    cross-validation); InvalidInput names the runs that do not fit."""
    ids = list(dict.fromkeys(body.run_ids))
    loc = ("body", "run_ids")
    if len(ids) < 2:
        raise InvalidInput("give at least two different runs to compare", loc=loc)
    runs = {r.id: r for r in session.exec(select(Run).where(col(Run.id).in_(ids)))}
    if missing := [i for i in ids if i not in runs]:
        raise InvalidInput(f"no run {_ids(missing)}", loc=loc)
    if parts := [i for i in ids if part_of(runs[i]) is not None]:
        raise InvalidInput(
            f"run {_ids(parts)}: parts of a study (cross-validation folds, stability "
            "subsamples) are compared on its page",
            loc=loc,
        )
    datasets = sorted({r.dataset_id for r in runs.values()})
    if len(datasets) > 1:
        by = "; ".join(
            f"data set {d}: run {_ids([i for i in ids if runs[i].dataset_id == d])}"
            for d in datasets
        )
        raise InvalidInput(
            f"the runs are on {len(datasets)} data sets ({by}); compare runs of one data set",
            loc=loc,
        )
    comparison = Comparison(dataset_id=datasets[0], name=body.name)
    session.add(comparison)
    try:
        session.flush()
        session.add_all(ComparisonRun(comparison_id=stored_id(comparison), run_id=i) for i in ids)
        session.commit()
    except IntegrityError:  # a run was deleted meanwhile
        session.rollback()
        raise InvalidInput(
            "a run was deleted while the comparison was made; try again", loc=loc
        ) from None
    return get_comparison(session, stored_id(comparison))


def _ids(ids: list[int]) -> str:
    return ", ".join(str(i) for i in ids)
