"""The runs table's query: filters, sorting and a page of rows, all in SQL, so that a database
of thousands of runs answers with only the rows shown.

Metrics live in the run's ``result`` JSON; SQLAlchemy's JSON paths read them the same way on
SQLite (json_extract) and PostgreSQL (#>>), so the table sorts on them without extra columns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

from sqlalchemy import String, cast, func, or_
from sqlmodel import Session, select

from ..models import Dataset, Run, RunStatus

PAGE_SIZE = 50


def _result(*path: str) -> Any:
    return Run.result[path].as_float()


# Sortable columns: the key in the URL and the SQL expression it sorts on.
SORTS: dict[str, Any] = {
    "id": Run.id,
    "dataset": func.lower(Dataset.name),
    "algorithm": Run.algorithm,
    "k": Run.k,
    "status": Run.status,
    "objective": _result("objective"),
    # Test MSE for regression, classification error (1 - accuracy) for classification.
    "test_error": func.coalesce(_result("test", "mse"), 1 - _result("test", "accuracy")),
    "f_measure": _result("recovery", "f_measure"),
    "auc": _result("recovery", "auc"),
    "time": _result("engine_seconds"),
}
DEFAULT_SORT = "id"


@dataclass(frozen=True)
class RunQuery:
    """The table's state as it appears in the URL (unknown or empty values mean "any")."""

    dataset: int | None = None
    algorithm: str | None = None
    status: str | None = None
    tag: str | None = None
    q: str | None = None
    sort: str = DEFAULT_SORT
    order: str = "desc"
    page: int = 1

    @classmethod
    def parse(cls, params: dict[str, str]) -> RunQuery:
        """Lenient: a shared URL with a stale or mistyped value still opens the table."""

        def text(name: str) -> str | None:
            value = (params.get(name) or "").strip()
            return value[:200] or None

        def number(name: str) -> int | None:
            value = text(name)
            return int(value) if value and value.isdigit() else None

        sort = text("sort")
        status = text("status")
        return cls(
            dataset=number("dataset"),
            algorithm=text("algorithm"),
            status=status if status in RunStatus.__members__ else None,
            tag=text("tag"),
            q=text("q"),
            sort=sort if sort in SORTS else DEFAULT_SORT,
            order="asc" if text("order") == "asc" else "desc",
            page=max(1, min(number("page") or 1, 100_000)),
        )

    def url(self, **changes: Any) -> str:
        """This table's URL with ``changes`` (a new filter or sort starts again at page 1)."""
        state = replace(self, **changes)
        if "page" not in changes:
            state = replace(state, page=1)
        fields = {
            "dataset": state.dataset,
            "algorithm": state.algorithm,
            "status": state.status,
            "tag": state.tag,
            "q": state.q,
            "sort": state.sort if state.sort != DEFAULT_SORT else None,
            "order": state.order if state.order != "desc" else None,
            "page": state.page if state.page > 1 else None,
        }
        query = urlencode({k: v for k, v in fields.items() if v is not None})
        return "/runs" + (f"?{query}" if query else "")

    def sort_url(self, key: str) -> str:
        """Click a heading: sort on it (descending first), or flip its order."""
        if key == self.sort:
            return self.url(order="asc" if self.order == "desc" else "desc")
        return self.url(sort=key, order="desc")


def _like(text: str) -> str:
    """``text`` as a LIKE pattern matching it anywhere, its wildcards escaped (with '!')."""
    escaped = text.replace("!", "!!").replace("%", "!%").replace("_", "!_")
    return f"%{escaped}%"


def _filtered(statement: Any, query: RunQuery) -> Any:
    if query.dataset is not None:
        statement = statement.where(Run.dataset_id == query.dataset)
    if query.algorithm:
        statement = statement.where(Run.algorithm == query.algorithm)
    if query.status:
        statement = statement.where(Run.status == query.status)
    if query.tag:
        # Tags are a JSON list of strings: match the tag's JSON spelling, quotes included, in
        # the stored text (the same serializer wrote it), so "a" does not match "ab".
        pattern = _like(json.dumps(query.tag))
        statement = statement.where(cast(Run.tags, String).like(pattern, escape="!"))
    if query.q:
        pattern = _like(query.q.lower())
        columns = (Run.name, Run.notes, Run.algorithm, Dataset.name)
        statement = statement.where(
            or_(*(func.lower(c).like(pattern, escape="!") for c in columns))
        )
    return statement


def page_of_runs(session: Session, query: RunQuery) -> tuple[list[tuple[Run, str]], int]:
    """The page's runs with their data set's name, and how many runs match in all."""
    base = select(Run, Dataset.name).join(Dataset, Dataset.id == Run.dataset_id)
    statement = _filtered(base, query)
    total = session.exec(
        _filtered(select(func.count()).select_from(Run).join(Dataset), query)
    ).one()
    key = SORTS[query.sort]
    ordered = key.asc() if query.order == "asc" else key.desc()
    rows = session.exec(
        statement.order_by(ordered.nulls_last(), Run.id.desc())
        .offset((query.page - 1) * PAGE_SIZE)
        .limit(PAGE_SIZE)
    ).all()
    return [(run, name) for run, name in rows], total


def choices(session: Session) -> dict[str, Any]:
    """What the filters offer: the data sets, the algorithms run so far, and the tags used."""
    datasets = session.exec(select(Dataset.id, Dataset.name).order_by(Dataset.name)).all()
    algorithms = session.exec(select(Run.algorithm).distinct().order_by(Run.algorithm)).all()
    # Distinct lists as text (PostgreSQL cannot compare json values), usually a few.
    as_text = cast(Run.tags, String)
    tag_lists = session.exec(select(as_text).where(as_text != "[]").distinct()).all()
    tags = sorted({tag for text in tag_lists if text for tag in json.loads(text)})
    return {
        "datasets": list(datasets),
        "algorithms": list(algorithms),
        "statuses": [s.value for s in RunStatus],
        "tags": tags,
    }
