"""HTML pages (Jinja2 + HTMX): home, data set, run, comparison and the teaching mode.

Routes stay thin: read through the services, build figures with ``services.charts``, render.
HTMX requests (``HX-Request``) get fragments. Forms post to the JSON API (/api/...) from the
browser; the pages only read.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates
from sqlmodel import Session, select

import engine as fs

from ..deps import BackendDep, SessionDep, SettingsDep
from ..errors import AppError, NotFound
from ..models import (
    ACTIVE,
    Comparison,
    ComparisonPublic,
    Dataset,
    Run,
    RunResult,
    RunStatus,
    Task,
)
from ..services import catalog, charts, lessons, teach
from ..services import datasets as dataset_service
from ..services import runs as run_service
from ..services.charts import DASH

ROOT = Path(__file__).resolve().parents[2]


def asset_dir(name: str) -> Path:
    """templates/ or static/ beside the app package (a source checkout or an editable
    install), else in the working directory (the container copies them next to it)."""
    beside = ROOT / name
    return beside if beside.is_dir() else Path.cwd() / name


templates = Jinja2Templates(directory=str(asset_dir("templates")))
EventDict = dict[str, Any]


# --------------------------------------------------------------------------- template helpers


def _num(x: Any, digits: int = 4) -> str:
    return charts.fmt(x, digits)


def _plain(x: Any) -> str:
    """A bound as people write it: 100,000 rather than 1e+05."""
    value = charts.num(x)
    if value is None:
        return DASH
    return f"{int(value):,}" if value.is_integer() and abs(value) < 1e15 else f"{value:g}"


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else DASH


def _seconds(value: float | None) -> str:
    if value is None:
        return DASH
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


templates.env.filters.update(num=_num, plain=_plain, when=_when, seconds=_seconds)
templates.env.globals.update(ACTIVE=[s.value for s in ACTIVE])


class PageRoute(APIRoute):
    """Errors on pages are pages: a missing run or data set answers an HTML 404."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                return await handler(request)
            except AppError as exc:
                return templates.TemplateResponse(
                    request,
                    "error.html",
                    {"message": exc.message, "status": exc.status_code},
                    status_code=exc.status_code,
                )

        return route


router = APIRouter(
    route_class=PageRoute, include_in_schema=False, default_response_class=HTMLResponse
)


def is_htmx(request: Request) -> bool:
    return request.headers.get("HX-Request") == "true"


def render(request: Request, name: str, status_code: int = 200, **context: Any) -> Response:
    return templates.TemplateResponse(request, name, context, status_code=status_code)


# --------------------------------------------------------------------------- catalogue


def algorithm_specs() -> list[dict[str, Any]]:
    return [spec.to_dict() for spec in fs.ALGORITHMS.values()]


def objective_specs(dataset: Dataset) -> list[dict[str, Any]]:
    """Objectives usable on the data set (a classification objective needs binary labels)."""
    return [
        spec.to_dict()
        for spec in catalog.OBJECTIVES.values()
        if spec.task != Task.classification or dataset.task == Task.classification
    ]


def default_k(dataset: Dataset) -> int:
    if dataset.true_support:
        return min(len(dataset.true_support), dataset.n_features)
    return min(5, dataset.n_features)


def runnable(spec: dict[str, Any], dataset: Dataset) -> str | None:
    """Why the algorithm cannot run with its defaults on this data set, or None."""
    required = [p["name"] for p in spec["params"] if p["required"]]
    if required:
        return f"needs {', '.join(required)}"
    if spec["uses_groups"] and not dataset.groups:
        return "needs feature groups"
    return None


def run_form_context(
    dataset: Dataset, algorithm: str | None, objective: str | None, k: str | None
) -> dict[str, Any]:
    specs = {s["name"]: s for s in algorithm_specs()}
    name = (
        algorithm
        if algorithm in specs
        else ("foba-obj" if "foba-obj" in specs else next(iter(specs)))
    )
    spec = specs[name]
    usable = objective_specs(dataset)
    if spec["objectives"]:
        usable = [o for o in usable if o["name"] in spec["objectives"]] or usable
    names = [o["name"] for o in usable]
    preferred = "logistic" if dataset.task == Task.classification else "least_squares"
    chosen = objective if objective in names else (preferred if preferred in names else names[0])
    return {
        "dataset": dataset,
        "algorithms": list(specs.values()),
        "algorithm": spec,
        "objectives": usable,
        "objective": next(o for o in usable if o["name"] == chosen),
        "k_value": k if k not in (None, "") else default_k(dataset),
    }


# --------------------------------------------------------------------------- home


@router.get("/")
def home(request: Request, session: SessionDep, generator: str | None = None) -> Response:
    all_datasets = dataset_service.list_datasets(session, 0, 1000)
    by_id = {ds.id: ds for ds in all_datasets}
    recent = run_service.list_runs(session, None, None, 0, 15)
    comparisons = session.exec(select(Comparison).order_by(Comparison.id.desc()).limit(8)).all()
    specs = [spec.to_dict() for spec in catalog.GENERATORS.values()]
    chosen = next((s for s in specs if s["name"] == generator), specs[0] if specs else None)
    order = {"bundled": 0, "generator": 1, "upload": 2, "lesson": 3}
    return render(
        request,
        "home.html",
        datasets=sorted(all_datasets, key=lambda ds: (order.get(ds.source, 9), ds.id)),
        datasets_by_id=by_id,
        runs=recent,
        comparisons=comparisons,
        generators=specs,
        generator=chosen,
    )


@router.get("/partials/generator")
def generator_params(request: Request, generator: str) -> Response:
    spec = catalog.GENERATORS.get(generator)
    if spec is None:
        raise NotFound(f"unknown generator {generator!r}")
    return render(request, "partials/generator_params.html", generator=spec.to_dict())


# --------------------------------------------------------------------------- data sets


@router.get("/datasets/{dataset_id}")
def dataset_page(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    dataset_id: int,
    algorithm: str | None = None,
    objective: str | None = None,
) -> Response:
    dataset = dataset_service.get_dataset(session, dataset_id)
    public = dataset_service.describe(settings.data_dir, dataset)
    preview = dataset_service.preview(settings.data_dir, dataset, 0, 15)
    algorithms = algorithm_specs()
    compare_default = {"foba-obj", "foba-gdt", "forward-obj", "omp"}
    return render(
        request,
        "dataset.html",
        ds=public,
        preview=preview,
        groups=_groups(dataset),
        runs=run_service.list_runs(session, dataset_id, None, 0, 50),
        compare_algorithms=[
            {**spec, "blocked": runnable(spec, dataset), "checked": spec["name"] in compare_default}
            for spec in algorithms
        ],
        compare_objectives=objective_specs(dataset),
        default_objective="logistic" if dataset.task == Task.classification else "least_squares",
        **run_form_context(dataset, algorithm, objective, None),
    )


def _groups(dataset: Dataset) -> list[tuple[str, list[str]]]:
    if not dataset.groups:
        return []
    out: dict[str, list[str]] = {}
    for name, label in zip(dataset.feature_names, dataset.groups, strict=True):
        out.setdefault(label, []).append(name)
    return list(out.items())


@router.get("/datasets/{dataset_id}/run-params")
def run_params(
    request: Request,
    session: SessionDep,
    dataset_id: int,
    algorithm: str | None = None,
    objective: str | None = None,
    k: str | None = None,
) -> Response:
    dataset = dataset_service.get_dataset(session, dataset_id)
    return render(
        request, "partials/run_params.html", **run_form_context(dataset, algorithm, objective, k)
    )


# --------------------------------------------------------------------------- runs


def _true_coef(data_dir: Path, dataset: Dataset) -> np.ndarray | None:
    if dataset.true_support is None:
        return None
    with np.load(data_dir / dataset.file, allow_pickle=False) as npz:
        return npz["true_coef"] if "true_coef" in npz.files else None


def best_step(run: Run, events: Sequence[EventDict]) -> int | None:
    """The step where the run's answer (Zhang's best size-k support) was found, when the path
    went on past it."""
    if not run.k or not events:
        return None
    best = charts.best_by_size(events).get(run.k)
    if best is None:
        return None
    final = teach.supports(events)[-1]
    return best[2] if sorted(final) != best[0] else None


def run_context(
    run: Run, dataset: Dataset, events: list[EventDict], data_dir: Path
) -> dict[str, Any]:
    names = dataset.feature_names
    spec = fs.ALGORITHMS.get(run.algorithm)
    result = RunResult.model_validate(run.result) if run.result else None
    live = run.status in ACTIVE
    step = None if live else best_step(run, events)
    figures: dict[str, Any] = {
        "path": charts.path_figure(
            events,
            names,
            true_support=dataset.true_support,
            best_step=step,
            k=run.k,
            title="Features by step (live)" if live else "Forward/backward path: features by step",
        ),
        "objective_step": charts.objective_step_figure(
            events,
            best_step=step,
            k=run.k,
            cursor=not live,
            title="Objective by step (live)" if live else "Objective by step",
        ),
    }
    context: dict[str, Any] = {
        "run": run,
        "ds": dataset,
        "spec": spec.to_dict() if spec else None,
        "result": result,
        "events_count": len(events),
        "live": live,
        "figures": figures,
        "support_now": [charts.feature_name(names, j) for j in teach.supports(events)[-1]]
        if events
        else [],
        "last_event": charts.event_text(events[-1], names) if events else None,
        "run_seconds": (run.finished_at - run.started_at).total_seconds()
        if run.finished_at and run.started_at
        else None,
    }
    if live:
        return context
    figures["objective_size"] = charts.objective_size_figure(events, k=run.k)
    context["frames"] = charts.player_frames(events, names)
    truth = dataset.true_support
    if result is not None:
        figures["coef"] = charts.coef_figure(
            [f.model_dump() for f in result.support],
            true_support=truth,
            true_coef=_true_coef(data_dir, dataset),
            names=names,
        )
        if truth is not None:
            roc = charts.roc_of(events, truth, dataset.n_features, run.algorithm)
            context["roc"] = roc
            figures["roc"] = charts.roc_figure([roc] if roc else [])
        context["truth_names"] = set(names[j] for j in truth) if truth else set()
    return context


@router.get("/runs/{run_id}")
def run_page(request: Request, session: SessionDep, settings: SettingsDep, run_id: int) -> Response:
    run = run_service.get_run(session, run_id)
    dataset = dataset_service.get_dataset(session, run.dataset_id)
    events = run_service.trace_events(session, run_id)
    return render(request, "run.html", **run_context(run, dataset, events, settings.data_dir))


@router.get("/runs/{run_id}/live")
def run_live(request: Request, session: SessionDep, settings: SettingsDep, run_id: int) -> Response:
    """The polled fragment: status, progress and the charts so far; once the run has ended,
    HX-Refresh makes the browser load the full results page."""
    run = run_service.get_run(session, run_id)
    dataset = dataset_service.get_dataset(session, run.dataset_id)
    events = run_service.trace_events(session, run_id)
    response = render(
        request, "partials/run_live.html", **run_context(run, dataset, events, settings.data_dir)
    )
    if run.status not in ACTIVE:
        response.headers["HX-Refresh"] = "true"
    return response


# --------------------------------------------------------------------------- comparisons


def _label(run: Any, runs: Sequence[Any]) -> str:
    same = [r for r in runs if r.algorithm == run.algorithm]
    return run.algorithm if len(same) == 1 else f"{run.algorithm} #{run.id}"


def comparison_context(
    session: Session, comparison: ComparisonPublic, dataset: Dataset
) -> dict[str, Any]:
    runs = comparison.runs
    labels = {r.id: _label(r, runs) for r in runs}
    truth = dataset.true_support
    rocs, selected = [], {}
    for r in runs:
        if r.result is None:
            continue
        selected[r.id] = [f.name for f in r.result.support]
        if truth is not None:
            roc = charts.roc_of(
                run_service.trace_events(session, r.id), truth, dataset.n_features, labels[r.id]
            )
            if roc:
                rocs.append(roc)
    finished = [r for r in runs if r.result is not None]
    counts: dict[str, int] = {}
    for names in selected.values():
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    truth_names = {dataset.feature_names[j] for j in truth} if truth else set()
    rows = sorted(counts, key=lambda n: (-counts[n], dataset.feature_names.index(n)))
    return {
        "comparison": comparison,
        "ds": dataset,
        "labels": labels,
        "live": any(r.status in ACTIVE for r in runs),
        "selected": {rid: set(names) for rid, names in selected.items()},
        "feature_rows": rows,
        "counts": counts,
        "n_finished": len(selected),
        "everyone": [n for n in rows if counts[n] == len(selected)] if selected else [],
        "some": [n for n in rows if counts[n] < len(selected)],
        "truth_names": truth_names,
        "figures": {
            "roc": charts.roc_figure(rocs) if truth is not None else None,
            "time": charts.time_figure(
                [labels[r.id] for r in finished],
                [r.result.engine_seconds for r in finished],
                [r.run_seconds for r in finished],
                title="Time per run",
            ),
        },
        "rocs": {roc.label: roc for roc in rocs},
    }


@router.get("/comparisons/{comparison_id}")
def comparison_page(request: Request, session: SessionDep, comparison_id: int) -> Response:
    comparison = run_service.get_comparison(session, comparison_id)
    dataset = dataset_service.get_dataset(session, comparison.dataset_id)
    return render(request, "comparison.html", **comparison_context(session, comparison, dataset))


@router.get("/comparisons/{comparison_id}/live")
def comparison_live(request: Request, session: SessionDep, comparison_id: int) -> Response:
    comparison = run_service.get_comparison(session, comparison_id)
    dataset = dataset_service.get_dataset(session, comparison.dataset_id)
    context = comparison_context(session, comparison, dataset)
    response = render(request, "partials/comparison_runs.html", **context)
    if not context["live"]:
        response.headers["HX-Refresh"] = "true"
    return response


@router.get("/comparisons/{comparison_id}/by-k")
def comparison_by_k(
    request: Request, session: SessionDep, settings: SettingsDep, comparison_id: int
) -> Response:
    """Objective and test error against k, from Zhang's best size-k support along each path
    (refitted on the training rows, scored on the held-out ones). Loaded after the page."""
    comparison = run_service.get_comparison(session, comparison_id)
    dataset = dataset_service.get_dataset(session, comparison.dataset_id)
    labels = {r.id: _label(r, comparison.runs) for r in comparison.runs}
    objective, error = [], []
    error_label = None
    for r in comparison.runs:
        events = run_service.trace_events(session, r.id)
        best = charts.best_by_size(events)
        ks = sorted(k for k in best if k > 0)
        objective.append(charts.Series(labels[r.id], ks, [best[k][1] for k in ks]))
        if r.test_fraction and r.status == RunStatus.done and ks:
            run = run_service.get_run(session, r.id)
            errors, error_label = charts.refit_errors(
                run, dataset, settings.data_dir, {k: best[k][0] for k in ks}
            )
            error.append(charts.Series(labels[r.id], ks, [errors[k] for k in ks]))
    figures = {
        "objective_k": charts.by_k_figure(
            objective,
            title="Training objective of the best k-feature support along the path",
            ytitle="Objective (training loss)",
        ),
        "error_k": charts.by_k_figure(
            error,
            title=f"Test {error_label or 'error'} of the best k-feature support",
            ytitle=f"Test {error_label or 'error'}",
        )
        if error
        else None,
    }
    return render(
        request,
        "partials/comparison_by_k.html",
        figures=figures,
        has_split=any(r.test_fraction for r in comparison.runs),
    )


# --------------------------------------------------------------------------- teaching


@router.get("/teach")
def teach_index(request: Request, session: SessionDep) -> Response:
    states = [lessons.state(session, lesson) for lesson in lessons.LESSONS.values()]
    recorded = session.exec(
        select(Run).where(Run.record_candidates).order_by(Run.id.desc()).limit(20)
    ).all()
    names = {ds.id: ds.name for ds in dataset_service.list_datasets(session, 0, 1000)}
    return render(request, "teach_index.html", states=states, recorded=recorded, names=names)


def _lesson(key: str) -> lessons.Lesson:
    lesson = lessons.LESSONS.get(key)
    if lesson is None:
        raise NotFound(f"there is no lesson {key!r}; see /teach for the lessons")
    return lesson


@router.post("/teach/lessons/{key}")
def start_lesson(
    session: SessionDep, backend: BackendDep, settings: SettingsDep, key: str
) -> Response:
    lessons.start(session, backend, settings.data_dir, _lesson(key))
    return RedirectResponse(f"/teach/lessons/{key}", status_code=303)


@router.get("/teach/lessons/{key}")
def lesson_page(request: Request, session: SessionDep, key: str) -> Response:
    state = lessons.state(session, _lesson(key))
    results = {
        run.id: RunResult.model_validate(run.result)
        for _, run in state.runs
        if run is not None and run.result
    }
    live = any(run is not None and run.status in ACTIVE for _, run in state.runs)
    name = "partials/lesson_runs.html" if is_htmx(request) else "lesson.html"
    return render(request, name, state=state, results=results, live=live)


def _step_index(events: Sequence[EventDict], step: int) -> int:
    for i, e in enumerate(events):
        if int(e["step"]) == step:
            return i
    return max(0, min(step, len(events) - 1))


def _lesson_of(session: Session, dataset: Dataset, run: Run) -> dict[str, Any] | None:
    key = (dataset.sample_key or "").removeprefix("lesson:")
    lesson = lessons.LESSONS.get(key) if dataset.sample_key else None
    if lesson is None:
        return None
    state = lessons.state(session, lesson)
    others = [(spec, r) for spec, r in state.runs if r is not None and r.id != run.id]
    return {"lesson": lesson, "others": others}


@router.get("/teach/{run_id}")
def teach_page(
    request: Request,
    session: SessionDep,
    run_id: int,
    step: str = "0",
    play: bool = False,
) -> Response:
    """One decision of a run; ``step`` is the event's step number (a shared URL with a step
    out of range, or not a number, opens the nearest step rather than an error)."""
    run = run_service.get_run(session, run_id)
    dataset = dataset_service.get_dataset(session, run.dataset_id)
    events = run_service.trace_events(session, run_id)
    context: dict[str, Any] = {"run": run, "ds": dataset, "play": play, "events": events}
    if events:
        index = _step_index(events, int(step) if step.lstrip("-").isdigit() else 0)
        result = RunResult.model_validate(run.result) if run.result else None
        context["step"] = teach.explain(
            run,
            dataset.feature_names,
            events,
            index,
            best_step=best_step(run, events),
            answer=[f.name for f in result.support] if result else (),
        )
        context["timeline"] = [
            {
                "step": int(e["step"]),
                "kind": e["kind"],
                "feature": charts.feature_name(dataset.feature_names, e.get("feature"))
                if e.get("feature") is not None
                else "",
            }
            for e in events
        ]
        context["truth"] = (
            {dataset.feature_names[j] for j in dataset.true_support}
            if dataset.true_support
            else set()
        )
        context["live"] = run.status in ACTIVE
    context["lesson"] = _lesson_of(session, dataset, run)
    if is_htmx(request) and request.headers.get("HX-Target") == "teach-panel":
        return render(request, "partials/teach_panel.html", **context)
    context["spec"] = (
        fs.ALGORITHMS[run.algorithm].to_dict() if run.algorithm in fs.ALGORITHMS else None
    )
    return render(request, "teach.html", **context)


__all__ = ["asset_dir", "router"]
