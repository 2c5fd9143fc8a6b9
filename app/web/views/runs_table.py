"""The runs table (/runs): every run (not the folds of a cross-validation), filtered, sorted
and paged in the database, so thousands of runs cost one page of rows.

The filters and the sort are query parameters (a shared URL shows the same table); values
a person may have typed are read leniently: an unknown sort or a page past the end shows the
default or the last page rather than an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlencode

from sqlalchemy import Select, Text, cast, func, or_
from sqlmodel import Session, col, select

import engine
from app.models import ACTIVE, Dataset, Run, RunStatus, standalone
from app.models.fields import MAX_ID

PAGE_SIZE = 50
FILTERS = ("dataset", "algorithm", "status", "tag", "q")
Query = TypeVar("Query", bound=Select[*tuple[Any, ...]])


def _result(*path: str) -> Any:
    return col(Run.result)[path if len(path) > 1 else path[0]].as_float()


# Sortable columns: the name in the URL, the expression, and the first direction (the
# direction a click on the heading asks for first: newest, largest F-measure, ...).
SORTS: dict[str, tuple[Any, str]] = {
    "id": (Run.id, "desc"),
    "name": (Run.name, "asc"),
    "dataset": (Dataset.name, "asc"),
    "algorithm": (Run.algorithm, "asc"),
    "k": (Run.k, "asc"),
    "status": (Run.status, "asc"),
    "objective": (_result("objective"), "asc"),
    # Regression: test MSE; classification: test error rate (1 - accuracy).
    "test_error": (func.coalesce(_result("test", "mse"), 1 - _result("test", "accuracy")), "asc"),
    "f_measure": (_result("recovery", "f_measure"), "desc"),
    "auc": (_result("recovery", "auc"), "desc"),
    "time": (_result("engine_seconds"), "asc"),
}


@dataclass(frozen=True)
class TableQuery:
    dataset: int | None = None
    algorithm: str | None = None
    status: str | None = None
    tag: str | None = None
    q: str | None = None
    sort: str = "id"
    dir: str = "desc"
    page: int = 1

    @classmethod
    def parse(cls, params: dict[str, str | None]) -> TableQuery:
        def text(name: str) -> str | None:
            value = (params.get(name) or "").strip()
            return value[:200] or None

        sort = given if (given := text("sort")) in SORTS else "id"
        direction = given if (given := text("dir")) in ("asc", "desc") else SORTS[sort][1]
        status = text("status") if text("status") in {s.value for s in RunStatus} else None
        return cls(
            dataset=_int(text("dataset")),
            algorithm=text("algorithm"),
            status=status,
            tag=text("tag"),
            q=text("q"),
            sort=sort,
            dir=direction,
            page=max(1, _int(text("page")) or 1),
        )

    def url(self, **changes: Any) -> str:
        """/runs with these filters, the sort and page changed as given (defaults left out)."""
        values = {**self.__dict__, **changes}
        keep = {k: v for k, v in values.items() if v not in (None, "")}
        if keep.get("page") == 1:
            del keep["page"]
        if keep.get("sort") == "id" and keep.get("dir") == "desc":
            del keep["sort"], keep["dir"]
        return "/runs" + (f"?{urlencode(keep)}" if keep else "")

    def sort_url(self, column: str) -> str:
        """A click on a heading: sort by it, or turn the direction round if it is sorted."""
        if column == self.sort:
            return self.url(dir="asc" if self.dir == "desc" else "desc", page=1)
        return self.url(sort=column, dir=SORTS[column][1], page=1)

    @property
    def filtered(self) -> bool:
        return any(getattr(self, name) is not None for name in FILTERS)


def _int(value: str | None) -> int | None:
    """A filter or page number; anything else (or beyond what the database holds) is ignored."""
    try:
        number = int(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and 0 < number <= MAX_ID else None


def _where(query: Any, q: TableQuery) -> Any:
    # The parts of a study are read through their study, not listed as runs.
    query = query.where(standalone())
    if q.dataset is not None:
        query = query.where(col(Run.dataset_id) == q.dataset)
    if q.algorithm:
        query = query.where(col(Run.algorithm) == q.algorithm)
    if q.status:
        query = query.where(col(Run.status) == q.status)
    if q.tag:
        # Tags are a JSON list of strings without double quotes: the quoted tag is an element.
        query = query.where(cast(Run.tags, Text).contains(json.dumps(q.tag), autoescape=True))
    if q.q:
        words = q.q.lower()
        number = words.lstrip("#")
        query = query.where(
            or_(
                func.lower(Run.name).contains(words, autoescape=True),
                func.lower(Run.notes).contains(words, autoescape=True),
                func.lower(Run.algorithm).contains(words, autoescape=True),
                func.lower(Dataset.name).contains(words, autoescape=True),
                func.lower(cast(Run.tags, Text)).contains(words, autoescape=True),
                col(Run.id) == (int(number) if number.isdigit() else -1),
            )
        )
    return query


def table(session: Session, q: TableQuery) -> dict[str, Any]:
    """One page of rows, the total, and what the filter controls offer."""
    base = select(Run, Dataset.name).join(Dataset, col(Dataset.id) == Run.dataset_id)
    total = session.exec(
        _where(select(func.count(col(Run.id))).join(Dataset, col(Dataset.id) == Run.dataset_id), q)
    ).one()
    pages = max(1, -(-total // PAGE_SIZE))
    q = TableQuery(**{**q.__dict__, "page": min(q.page, pages)})
    column = SORTS[q.sort][0]
    order = column.asc() if q.dir == "asc" else column.desc()
    rows = session.exec(
        _where(base, q)
        .order_by(column.is_(None), order, col(Run.id).desc())  # unknown values last
        .offset((q.page - 1) * PAGE_SIZE)
        .limit(PAGE_SIZE)
    ).all()
    return {
        "q": q,
        "rows": [_row(run, dataset_name) for run, dataset_name in rows],
        "total": total,
        "pages": pages,
        "first_row": (q.page - 1) * PAGE_SIZE + 1 if total else 0,
        "sorts": SORTS,
    }


def page(session: Session, q: TableQuery) -> dict[str, Any]:
    """The whole page: the table and the filter controls' choices."""
    return {
        **table(session, q),
        "datasets": session.exec(select(Dataset.id, Dataset.name).order_by(Dataset.name)).all(),
        "algorithms": sorted(engine.ALGORITHMS),
        "statuses": [s.value for s in RunStatus],
        "known_tags": _known_tags(session),
    }


def _known_tags(session: Session, most: int = 200) -> list[str]:
    tagged = session.exec(
        select(Run.tags).where(standalone(), cast(Run.tags, Text) != "[]").limit(2000)
    )
    seen: dict[str, None] = {}
    for tags in tagged:
        seen.update(dict.fromkeys(tags or []))
    return sorted(seen)[:most]


def _row(run: Run, dataset_name: str) -> dict[str, Any]:
    result = run.result or {}
    test = result.get("test") or {}
    recovery = result.get("recovery") or {}
    if test.get("mse") is not None:
        test_error = ("MSE", test["mse"])
    elif test.get("accuracy") is not None:
        test_error = ("error", 1 - test["accuracy"])
    else:
        test_error = None
    params = _key_params(run.params)
    return {
        "run": run,
        "dataset_name": dataset_name,
        "params": ", ".join(f"{k}={_short(v)}" for k, v in list(params.items())[:4])
        + (" …" if len(params) > 4 else ""),
        "params_title": ", ".join(f"{k}={v}" for k, v in params.items()),
        "objective": result.get("objective"),
        "test_error": test_error,
        "f_measure": recovery.get("f_measure"),
        "auc": recovery.get("auc"),
        "seconds": result.get("engine_seconds"),
        "active": run.status in ACTIVE,
    }


def _key_params(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters that say something in a row: not the unset ones (None, "none"), nor the
    intercept, which nearly every run fits."""
    return {
        name: value
        for name, value in params.items()
        if value not in (None, "none") and not (name == "fit_intercept" and value is True)
    }


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    text = "none" if value is None else str(value)
    return text if len(text) <= 12 else text[:11] + "…"
