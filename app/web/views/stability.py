"""How stable is a selection: the form (on the data set page), the offer on the run page, the
stability page and a feature's 'why not' answer."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from sqlmodel import Session, col, select

import engine
from app.jobs import table_pass
from app.models import ACTIVE, Dataset, Run, RunStatus, StabilityStudy, stored_id
from app.services import catalog
from app.services import datasets as dataset_service
from app.services import stability as service
from app.services.parts import status_of
from app.storage import ArrayStore
from app.web.charts.stability import heatmap_figure, index_figure, path_figure, ranked_units
from app.web.charts.style import DASH
from engine.from_statistics import OBJECTIVE

PEERS = ("omp", "lasso", "abess")  # compared by default, when they can run on the data set
MAX_TABLE_ROWS = 40


# --------------------------------------------------------------------------- the form


def takes_k(dataset: Dataset) -> list[dict[str, Any]]:
    """Algorithms that take k and can run on the data set with their defaults (on a table
    registered by reference: from its statistics, ``catalog.blocked_reason``)."""
    return [
        spec.to_dict()
        for spec in engine.ALGORITHMS.values()
        if spec.k != "unused" and catalog.blocked_reason(spec, dataset) is None
    ]


def stability_form(dataset: Dataset) -> dict[str, Any]:
    algorithms = takes_k(dataset)
    names = [a["name"] for a in algorithms]
    default = engine.REGISTRY.default_algorithm
    return {
        "algorithms": algorithms,
        "algorithm": default if default in names else names[0] if names else None,
        "k_max": min(dataset.n_features, max(10, 2 * catalog.default_k(dataset))),
        "peers": [p for p in PEERS if p in names],
    }


def studies_of(session: Session, studies: list[StabilityStudy]) -> list[dict[str, Any]]:
    out = []
    for study in studies:
        parts = service.part_runs(session, stored_id(study))
        out.append(
            {
                "study": study,
                "status": status_of(parts) if parts else RunStatus.failed,
                "methods": [m["algorithm"] for m in study.methods],
            }
        )
    return out


def dataset_section(session: Session, dataset_id: int) -> dict[str, Any]:
    """What the data set page adds: the form and the earlier studies."""
    dataset = dataset_service.get_dataset(session, dataset_id)
    return {
        "stability": stability_form(dataset),
        "stability_studies": studies_of(session, service.list_studies(session, dataset_id, 10)),
    }


def run_section(session: Session, run_id: int) -> dict[str, Any]:
    """What the run page adds: the offer (a done run that took k) and its earlier studies."""
    run = session.get(Run, run_id)
    if run is None:
        return {}
    query = select(StabilityStudy).where(col(StabilityStudy.run_id) == run_id)
    studies = list(session.exec(query.order_by(col(StabilityStudy.id).desc()).limit(5)))
    dataset = session.get(Dataset, run.dataset_id)
    names = [a["name"] for a in takes_k(dataset)] if dataset else []
    return {
        "stability_offer": run.k is not None
        and run.status == RunStatus.done
        and (dataset is None or _studies_run(run, dataset, names)),
        "stability_peers": [p for p in PEERS if p in names and p != run.algorithm],
        "stability_studies": studies_of(session, studies),
    }


def _studies_run(run: Run, dataset: Dataset, names: list[str]) -> bool:
    """Whether a study of the run can run: on a table registered by reference, only least
    squares from its statistics (an algorithm ``takes_k`` lists)."""
    if not table_pass.is_reference(dataset):
        return True
    return run.objective == OBJECTIVE and run.algorithm in names


# --------------------------------------------------------------------------- the page


def stability_page(session: Session, study_id: int, method: str | None) -> dict[str, Any]:
    study = service.get_study(session, study_id)
    dataset = dataset_service.get_dataset(session, study.dataset_id)
    public = service.public(session, study)
    methods = [m.model_dump() for m in public.methods]
    chosen = next((m for m in methods if m["algorithm"] == method), methods[0])
    summary = chosen["summary"]
    run = session.get(Run, study.run_id) if study.run_id else None
    names = public.unit_names
    context: dict[str, Any] = {
        "st": public,
        "ds": dataset,
        "run": run,
        "methods": methods,
        "chosen": chosen,
        "live": public.status in ACTIVE,
        "pct": round(100 * public.progress),
        "live_setup": {"url": public.url, "total": public.parts_total},
        # 'why not' reads the rows: not on groups, nor on a table registered by reference.
        "why_not": dataset.groups is None and dataset.source != "reference",
        "names": names,
    }
    if summary is None:
        return context
    run_k = run.k if run is not None else None
    context["path_figure"] = path_figure(summary, names, method=chosen["algorithm"], run_k=run_k)
    context["heatmap_figure"] = heatmap_figure(summary, names, method=chosen["algorithm"])
    if len(methods) > 1:
        context["index_figure"] = index_figure(methods)
    context["table"] = _table(study, summary, names, chosen["algorithm"], run_k)
    context["stable_path"] = [names[u] for u in summary["stable_path"]]
    context["steadiest"] = _steadiest(public.steadiest, summary["k"])
    return context


def why_not_url(study_id: int, unit: int, k: int, method: str) -> str:
    query = urlencode({"feature": unit, "k": k, "method": method})
    return f"/stability/{study_id}/why-not?{query}"


def _table(
    study: StabilityStudy, summary: dict[str, Any], names: list[str], method: str, k: int | None
) -> list[dict[str, Any]]:
    """The most frequent units: frequency at every k, largest frequency, stable or not, and
    the link to each one's 'why not' answer (at the run's k, else at the largest k)."""
    at = k if k is not None and 1 <= k <= study.k_max else study.k_max
    stable = set(summary["stable_path"])
    rows = []
    for u in ranked_units(summary)[:MAX_TABLE_ROWS]:
        rows.append(
            {
                "unit": u,
                "name": names[u],
                "frequency": [row[u] for row in summary["frequency"]],
                "max": summary["frequency_max"][u],
                "stable": u in stable,
                "why_not": why_not_url(stored_id(study), u, at, method),
                "why_k": at,
            }
        )
    return rows


def _steadiest(steadiest: list[list[str]] | None, ks: list[int]) -> list[tuple[int, str]]:
    if not steadiest:
        return []
    return [(k, " / ".join(m) or DASH) for k, m in zip(ks, steadiest, strict=True)]


def why_not_page(
    session: Session, store: ArrayStore, study_id: int, unit: int, k: int, method: str | None
) -> dict[str, Any]:
    answer = service.why_not(session, store, study_id, unit, k, method)
    study = service.get_study(session, study_id)
    dataset = dataset_service.get_dataset(session, study.dataset_id)
    names = dataset.feature_names

    def exchange(e: dict[str, Any] | None) -> dict[str, Any] | None:
        if e is None:
            return None
        return {**e, "out": names[e["feature_out"]], "in": names[e["feature_in"]]}

    verdict = answer["verdict"]
    # The engine names features by column; the page by name.
    explanation = re.sub(
        r"feature (\d+)",
        lambda m: names[int(m.group(1))] if int(m.group(1)) < len(names) else m.group(0),
        verdict["explanation"],
    )
    return {
        "explanation": explanation,
        "answer": answer,
        "best": exchange(verdict["best"]),
        "alternatives": [exchange(e) for e in verdict["alternatives"]],
        "study": study,
        "ds": dataset,
        "ks": list(range(1, study.k_max + 1)),
        "url": lambda kk: why_not_url(study_id, unit, kk, answer["method"]),
    }
