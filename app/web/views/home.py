"""The home page, the data set page and the run form."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlmodel import Session, col, select

import engine
from app.errors import InvalidInput, NotFound
from app.jobs import table_pass
from app.models import Comparison, Dataset, RunConfig, SplitOptions, Task
from app.services import catalog, estimates
from app.services import datasets as dataset_service
from app.services import runs as run_service
from app.storage import ArrayStore
from app.web.views import table_pass as table_pass_view
from engine.estimate import duration

# --------------------------------------------------------------------------- forms


def objective_specs(dataset: Dataset) -> list[dict[str, Any]]:
    """Objectives usable on the data set (a classification objective needs binary labels; a
    table registered by reference offers the streamed classification losses too, their two
    labels checked as they are read)."""
    streamed = table_pass.is_reference(dataset)
    return [
        spec.to_dict()
        for spec in catalog.OBJECTIVES.values()
        if spec.task != Task.classification
        or dataset.task == Task.classification
        or (streamed and table_pass.reads_rows(spec.name))
    ]


def run_form(
    dataset: Dataset, algorithm: str | None, objective: str | None, k: str | None
) -> dict[str, Any]:
    """The run form: the chosen algorithm (the registry's default otherwise), the objectives
    it can work with on this data set, and k."""
    specs = {name: spec.to_dict() for name, spec in engine.ALGORITHMS.items()}
    spec = specs[algorithm if algorithm in specs else engine.REGISTRY.default_algorithm]
    needs = set(spec["requires"]["capabilities"])
    usable = objective_specs(dataset)
    usable = [o for o in usable if needs <= set(o["capabilities"])] or usable
    names = [o["name"] for o in usable]
    preferred = catalog.default_objective(dataset)
    chosen = objective if objective in names else (preferred if preferred in names else names[0])
    default_k = catalog.run_k(dataset, spec["name"], str(chosen))
    return {
        "dataset": dataset,
        "algorithms": [{**s, "blocked": _blocked(s["name"], dataset)} for s in specs.values()],
        "algorithm": spec,
        "objectives": usable,
        "objective": next(o for o in usable if o["name"] == chosen),
        "k_value": k if k not in (None, "") else ("" if default_k is None else default_k),
        "compare_k": catalog.default_k(dataset),
    }


def run_estimate(
    dataset: Dataset,
    algorithm: str | None,
    objective: str | None,
    k: str | None,
    query: Mapping[str, str],
) -> dict[str, Any]:
    """The run form's estimate block: the estimate, or None while the form's values are no
    valid run (the form says what to fix when it is submitted)."""
    try:
        k_value = int(k) if k not in (None, "") else None
        found = estimates.for_dataset(dataset, algorithm, objective, k_value, query, strict=False)
    except (ValueError, InvalidInput):
        found = None
    return {"dataset": dataset, "estimate": found, "duration": duration}


def _blocked(name: str, dataset: Dataset) -> str | None:
    """Why the run form cannot offer the algorithm on this data set (a required parameter is
    no reason: the form asks for it)."""
    spec = engine.ALGORITHMS[name]
    return None if any(p.required for p in spec.params) else catalog.blocked_reason(spec, dataset)


# --------------------------------------------------------------------------- home, data sets


def home(session: Session, generator: str | None) -> dict[str, Any]:
    all_datasets = dataset_service.list_datasets(session, 0, 1000)
    specs = [spec.to_dict() for spec in catalog.GENERATORS.values()]
    chosen = next((s for s in specs if s["name"] == generator), specs[0] if specs else None)
    order = {"bundled": 0, "generator": 1, "upload": 2, "lesson": 3}
    return {
        "datasets": sorted(all_datasets, key=lambda ds: (order.get(ds.source, 9), ds.id)),
        "datasets_by_id": {ds.id: ds for ds in all_datasets},
        "runs": run_service.list_runs(session, None, None, 0, 15),
        "comparisons": session.exec(
            select(Comparison).order_by(col(Comparison.id).desc()).limit(8)
        ).all(),
        "generators": specs,
        "generator": chosen,
    }


def generator_form(name: str) -> dict[str, Any]:
    spec = catalog.GENERATORS.get(name)
    if spec is None:
        raise NotFound(f"unknown generator {name!r}")
    return {"generator": spec.to_dict()}


def dataset_page(
    session: Session,
    store: ArrayStore,
    dataset_id: int,
    algorithm: str | None,
    objective: str | None,
    columns_from: int = 0,
) -> dict[str, Any]:
    dataset = dataset_service.get_dataset(session, dataset_id)
    tp = table_pass_view.table_pass(session, store, dataset)  # None but for reference tables
    described = dataset_service.describe(store, dataset)
    return {
        "tp": tp,
        "left": table_pass_view.seconds_text(tp["seconds_left"]) if tp else "",
        "ds": described,
        "column_page": column_page(described.columns, columns_from),
        "feature_chips": FEATURE_CHIPS,
        "preview": dataset_service.preview(store, dataset, 0, 15),
        "groups": _groups(dataset),
        "runs": run_service.list_runs(session, dataset_id, None, 0, 50),
        "goes_with": dataset_service.what_goes_with(session, dataset_id),
        "compare_algorithms": catalog.compare_choices(dataset),
        "compare_objectives": objective_specs(dataset),
        "default_objective": catalog.default_objective(dataset),
        "judging_options": judging_options(),
        "run_defaults": run_defaults(),
        **run_form(dataset, algorithm, objective, None),
    }


def judging_options() -> list[dict[str, Any]]:
    """The run options that judge the answer (certify, exact), with the defaults and help
    declared once in RunConfig, for the run and compare forms."""
    labels = {"certify": "Swap certificate", "exact": "Exact optimum (gap to the best size-k)"}
    fields = RunConfig.model_fields
    return [
        {"name": n, "label": label, "default": fields[n].default, "help": fields[n].description}
        for n, label in labels.items()
    ]


# A wide table (gene expression: 2,000 to 20,000+ features) keeps its page light: the feature
# names and the column summary show a page of columns each, the rest one link away (and all of
# them in GET /api/datasets/{id}). 20,000 rows of statistics were 4 MB of HTML.
FEATURE_CHIPS = 200
COLUMN_PAGE = 100


def column_page(columns: list[Any], start: int) -> dict[str, Any]:
    """A page of the column summary from ``start``, the target always shown, with the starts of
    the previous and next pages (None at either end)."""
    target = [c for c in columns if c.role == "target"]
    features = [c for c in columns if c.role != "target"]
    start = min(max(start, 0), max(len(features) - 1, 0)) // COLUMN_PAGE * COLUMN_PAGE
    end = min(start + COLUMN_PAGE, len(features))
    return {
        "rows": target + features[start:end],
        "first": start + 1,
        "last": end,
        "total": len(features),
        "previous": start - COLUMN_PAGE if start > 0 else None,
        "next": end if end < len(features) else None,
    }


def run_defaults() -> dict[str, Any]:
    """The run and compare forms' starting values of the options every door shares, read from
    the API models that declare them (the schema shows the same defaults)."""
    config, split = RunConfig.model_fields, SplitOptions.model_fields
    return {
        "test_fraction": split["test_fraction"].default,
        "seed": split["seed"].default or 0,
        "record_candidates": config["record_candidates"].default,
        "standardize": config["standardize"].default,
    }


def _groups(dataset: Dataset) -> list[tuple[str, list[str]]]:
    if not dataset.groups:
        return []
    out: dict[str, list[str]] = {}
    for name, label in zip(dataset.feature_names, dataset.groups, strict=True):
        out.setdefault(label, []).append(name)
    return list(out.items())
