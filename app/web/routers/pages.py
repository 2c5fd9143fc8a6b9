"""HTML pages (Jinja2 + HTMX): home, data set, runs, run, comparison and the teaching mode.

Each route asks its page's module in ``services.views`` for the view model and renders it with
``rendering.render`` (the whole page, or the fragment HTMX asked for). Forms post to the JSON
API (/api/...) from the browser; the pages only read (the lesson button aside, which starts a
lesson's runs).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

from app.errors import NotFound
from app.models import MAX_ID
from app.services import datasets as dataset_service
from app.services import lessons
from app.web.deps import BackendDep, Id, SessionDep, StoreDep
from app.web.rendering import PageRoute, is_htmx, render
from app.web.views import compare as compare_view
from app.web.views import cv as cv_view
from app.web.views import home as home_view
from app.web.views import judge as judge_view
from app.web.views import run as run_view
from app.web.views import runs_table
from app.web.views import saved_lessons as saved_lesson_view
from app.web.views import stability as stability_view
from app.web.views import table_pass as table_pass_view
from app.web.views import teach as teach_view

router = APIRouter(
    route_class=PageRoute, include_in_schema=False, default_response_class=HTMLResponse
)


# --------------------------------------------------------------------------- home, data sets


@router.get("/")
def home(request: Request, session: SessionDep, generator: str | None = None) -> Response:
    return render(request, "home.html", home_view.home(session, generator))


@router.get("/partials/generator")
def generator_params(request: Request, generator: str) -> Response:
    context = home_view.generator_form(generator)
    return render(request, "partials/generator_params.html", context)


@router.get("/datasets/{dataset_id}")
def dataset_page(
    request: Request,
    session: SessionDep,
    store: StoreDep,
    dataset_id: Id,
    algorithm: str | None = None,
    objective: str | None = None,
    columns: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> Response:
    context = home_view.dataset_page(session, store, dataset_id, algorithm, objective, columns)
    context.update(cv_view.dataset_section(session, dataset_id))
    context.update(stability_view.dataset_section(session, dataset_id))
    return render(request, "dataset.html", context)


@router.get("/datasets/{dataset_id}/pass")
def table_pass(request: Request, session: SessionDep, store: StoreDep, dataset_id: Id) -> Response:
    """The statistics pass of a table registered by reference (the polled fragment)."""
    dataset = dataset_service.get_dataset(session, dataset_id)
    tp = table_pass_view.table_pass(session, store, dataset)
    if tp is None:
        raise NotFound(f"data set {dataset_id} is not a table registered by reference")
    context = {"tp": tp, "left": table_pass_view.seconds_text(tp["seconds_left"])}
    return _live(render(request, "partials/table_pass.html", context), tp["live"])


@router.get("/datasets/{dataset_id}/run-params")
def run_params(
    request: Request,
    session: SessionDep,
    dataset_id: Id,
    algorithm: str | None = None,
    objective: str | None = None,
    k: str | None = None,
) -> Response:
    dataset = dataset_service.get_dataset(session, dataset_id)
    context = home_view.run_form(dataset, algorithm, objective, k)
    return render(request, "partials/run_params.html", context)


@router.get("/datasets/{dataset_id}/run-estimate")
def run_estimate(
    request: Request,
    session: SessionDep,
    dataset_id: Id,
    algorithm: str | None = None,
    objective: str | None = None,
    k: str | None = None,
) -> Response:
    """The run form's warning of a long run (empty when the run is short or the form's
    values are not a valid run yet: submitting says what to fix)."""
    dataset = dataset_service.get_dataset(session, dataset_id)
    context = home_view.run_estimate(dataset, algorithm, objective, k, request.query_params)
    return render(request, "partials/run_estimate.html", context)


@router.get("/datasets/{dataset_id}/cv-params")
def cv_params(
    request: Request,
    session: SessionDep,
    dataset_id: Id,
    algorithm: str | None = None,
    objective: str | None = None,
) -> Response:
    dataset = dataset_service.get_dataset(session, dataset_id)
    context = {"cv": cv_view.cv_form(dataset, algorithm, objective)}
    return render(request, "partials/cv_params.html", context)


# --------------------------------------------------------------------------- runs


@router.get("/runs")
def runs_page(request: Request, session: SessionDep) -> Response:
    """Every run, filtered, sorted and paged by the query parameters (a URL to share); HTMX
    asks for the table alone when a filter, a heading or a page link changes it."""
    query = runs_table.TableQuery.parse(dict(request.query_params))
    if is_htmx(request, "runs-table"):
        context = runs_table.table(session, query)
        response = render(request, "partials/runs_table.html", context)
        response.headers["HX-Push-Url"] = context["q"].url()  # without the blank filters
        return response
    return render(request, "runs.html", runs_table.page(session, query))


@router.get("/runs/{run_id}")
def run_page(request: Request, session: SessionDep, run_id: Id) -> Response:
    """The run; while it runs, the browser follows its trace through the API."""
    context = run_view.run_page(session, run_id)
    return render(request, "run.html", {**context, **stability_view.run_section(session, run_id)})


@router.get("/runs/{run_id}/live")
def run_live(request: Request, session: SessionDep, run_id: Id) -> Response:
    """A running run's live fragment, polled by HTMX; once it has ended, HX-Refresh."""
    context = run_view.run_live(session, run_id)
    return _live(render(request, "partials/run_live.html", context), context["live"])


@router.get("/runs/{run_id}/figures")
def run_figures(session: SessionDep, store: StoreDep, run_id: Id) -> Response:
    """A finished run's figures and player frames, fetched by its page (sent compressed)."""
    return JSONResponse(run_view.run_figures(session, store, run_id))


@router.get("/runs/{run_id}/why-not")
def run_why_not(
    request: Request,
    session: SessionDep,
    store: StoreDep,
    run_id: Id,
    feature: Annotated[int, Query(ge=0, le=MAX_ID)],
) -> Response:
    """ "Why not this feature?" answered in place on the run page (an HTMX fragment)."""
    context = judge_view.why_not_fragment(session, store, run_id, feature)
    return render(request, "partials/why_not.html", context)


# --------------------------------------------------------------------------- cross-validation


@router.get("/cv/{cv_id}")
def cv_page(request: Request, session: SessionDep, cv_id: Id) -> Response:
    """Folds done while they run (HTMX polls /cv/{id}/live), then the curve."""
    return render(request, "cv.html", cv_view.cv_page(session, cv_id))


@router.get("/cv/{cv_id}/live")
def cv_live(request: Request, session: SessionDep, cv_id: Id) -> Response:
    context = {**cv_view.cv_page(session, cv_id), "oob": True}
    return _live(render(request, "partials/cv_live.html", context), context["live"])


# --------------------------------------------------------------------------- stability


@router.get("/stability/{study_id}")
def stability_page(
    request: Request, session: SessionDep, study_id: Id, method: str | None = None
) -> Response:
    """Subsamples done while they run (the browser polls the study's JSON), then the
    stability path, the features x k heatmap and, with several methods, their stability."""
    return render(
        request, "stability.html", stability_view.stability_page(session, study_id, method)
    )


@router.get("/stability/{study_id}/why-not")
def stability_why_not(
    request: Request,
    session: SessionDep,
    store: StoreDep,
    study_id: Id,
    feature: int,
    k: int,
    method: str | None = None,
) -> Response:
    """Why is (or is not) this feature selected at k: the best exchange and its cost."""
    context = stability_view.why_not_page(session, store, study_id, feature, k, method)
    return render(request, "stability_why_not.html", context)


# --------------------------------------------------------------------------- comparisons


@router.get("/comparisons/{comparison_id}")
def comparison_page(request: Request, session: SessionDep, comparison_id: Id) -> Response:
    context = compare_view.comparison_page(session, comparison_id)
    return render(request, "comparison.html", context)


@router.get("/comparisons/{comparison_id}/live")
def comparison_live(request: Request, session: SessionDep, comparison_id: Id) -> Response:
    context = compare_view.comparison_page(session, comparison_id)
    return _live(render(request, "partials/comparison_runs.html", context), context["live"])


@router.get("/comparisons/{comparison_id}/by-k")
def comparison_by_k(
    request: Request, session: SessionDep, store: StoreDep, comparison_id: Id
) -> Response:
    """Loaded after the page: objective and test error against k."""
    context = compare_view.comparison_by_k(session, store, comparison_id)
    return render(request, "partials/comparison_by_k.html", context)


# --------------------------------------------------------------------------- API documentation


@router.get("/docs")
def api_docs(request: Request) -> Response:
    """The OpenAPI schema drawn by Swagger UI, served from static/vendor (works offline)."""
    return render(request, "docs.html", {"openapi_url": request.app.openapi_url})


# --------------------------------------------------------------------------- teaching


@router.get("/teach")
def teach_index(request: Request, session: SessionDep) -> Response:
    context = {**teach_view.teach_index(session), **saved_lesson_view.saved(session)}
    return render(request, "teach_index.html", context)


@router.post("/teach/lessons/{key}")
def start_lesson(session: SessionDep, backend: BackendDep, store: StoreDep, key: str) -> Response:
    lessons.start(session, backend, store, teach_view.lesson(key))
    return RedirectResponse(f"/teach/lessons/{key}", status_code=303)


@router.get("/teach/lessons/{key}")
def lesson_page(request: Request, session: SessionDep, key: str) -> Response:
    context = teach_view.lesson_page(session, key)
    return render(request, "lesson.html", context, fragment="partials/lesson_runs.html")


@router.get("/teach/{run_id}")
def teach_page(
    request: Request,
    session: SessionDep,
    store: StoreDep,
    run_id: Id,
    step: str = "0",
    play: bool = False,
    k: str | None = None,
    nu: str | None = None,
) -> Response:
    """One decision of a run (``step`` is the event's step number); ``k`` and ``nu`` recompute
    the run at once with them (small problems)."""
    context = teach_view.teach_page(session, store, run_id, step, play, k, nu)
    return render(
        request,
        "teach.html",
        context,
        fragment="partials/teach_panel.html",
        target="teach-panel",
    )


def _live(response: Response, live: bool) -> Response:
    """A polled fragment (run, cross-validation, comparison): once the work has ended, the
    page is loaded again (HX-Refresh), which shows the results and stops the polling."""
    if not live:
        response.headers["HX-Refresh"] = "true"
    return response


__all__ = ["router"]
