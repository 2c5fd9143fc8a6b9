"""The cross-validation form (on the data set page) and the cross-validation page."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

import engine
from app.models import ACTIVE, Dataset, Run, stored_id
from app.services import catalog
from app.services import cv as cv_service
from app.services import datasets as dataset_service
from app.web.charts.cv import RULE_NAMES, cv_curve_figure
from app.web.views.home import run_form
from engine.cv import RULES, plan_cv

ERROR_NAMES = {
    "mse": "mean squared error",
    "mae": "mean absolute error",
    "log_loss": "log-loss",
    "error": "misclassification rate",
}


# --------------------------------------------------------------------------- the form


def default_k_max(dataset: Dataset) -> int:
    """Room past the k a run would default to: the curve should show the error rising."""
    return min(dataset.n_features, max(10, 2 * catalog.default_k(dataset)))


def cv_form(dataset: Dataset, algorithm: str | None, objective: str | None) -> dict[str, Any]:
    """The run form's choices restricted to algorithms that take k, k_max instead of k, and
    how each fold will run (one path, or one run per k) with these choices."""
    form = run_form(dataset, algorithm, objective, None)
    if form["algorithm"]["k"] == "unused":  # the registry's default takes k
        form = run_form(dataset, engine.REGISTRY.default_algorithm, objective, None)
    takes_k = [a for a in form["algorithms"] if a["k"] != "unused"]
    k_max = default_k_max(dataset)
    return {
        **form,
        "algorithms": takes_k,
        "k_max": k_max,
        "rules": {name: f"{RULE_NAMES[name]}: {text}" for name, text in RULES.items()},
        "mode": _mode(dataset, form["algorithm"]["name"], form["objective"]["name"], k_max),
    }


def _mode(dataset: Dataset, algorithm: str, objective: str, k_max: int) -> str | None:
    try:
        plan = plan_cv(algorithm, objective, k_max=k_max, n_features=dataset.n_features)
    except engine.ConfigError:
        return None
    if plan.mode == "path":
        return f"Each fold runs the algorithm once and reads every k off its path ({plan.reason})."
    why = plan.reason.split(": ", 1)[-1]
    return f"Each fold runs the algorithm once per k, {k_max} times ({why})."


def dataset_section(session: Session, dataset_id: int) -> dict[str, Any]:
    """What the data set page adds for cross-validation: the form and the earlier studies."""
    dataset = dataset_service.get_dataset(session, dataset_id)
    return {"cv": cv_form(dataset, None, None), "cv_studies": dataset_studies(session, dataset_id)}


def dataset_studies(session: Session, dataset_id: int) -> list[dict[str, Any]]:
    """The data set's cross-validations, newest first, with their status and chosen k."""
    out = []
    for study in cv_service.list_studies(session, dataset_id, limit=10):
        folds = cv_service.fold_runs(session, stored_id(study))
        summary = cv_service.curve(study, folds)
        out.append(
            {
                "study": study,
                "status": cv_service.status_of(folds) if folds else "failed",
                "k_best": summary.k_best if summary else None,
            }
        )
    return out


# --------------------------------------------------------------------------- the page


def cv_page(session: Session, cv_id: int) -> dict[str, Any]:
    study = cv_service.get_study(session, cv_id)
    dataset = dataset_service.get_dataset(session, study.dataset_id)
    public = cv_service.public(session, study)
    spec = engine.ALGORITHMS.get(study.algorithm)
    final = session.get(Run, public.final_run_id) if public.final_run_id else None
    context: dict[str, Any] = {
        "cv": public,
        "ds": dataset,
        "spec": spec.to_dict() if spec else None,
        "live": public.status in ACTIVE,
        "error_name": ERROR_NAMES.get(public.metric, public.metric),
        "rule_names": RULE_NAMES,
        "final": final,
        "work_done": sum(1.0 if f.status == "done" else f.progress for f in public.folds)
        / max(public.folds_total, 1),
    }
    curve = public.curve
    if curve is None:
        return context
    folds = [
        f.errors.tolist() for f in cv_service.fold_results(cv_service.fold_runs(session, cv_id))
    ]
    context["fold_errors"] = folds
    context["curve_figure"] = cv_curve_figure(
        curve.k,
        curve.mean,
        curve.se,
        k_min=curve.k_min,
        k_1se=curve.k_1se,
        rule=public.rule,
        error_name=context["error_name"],
        folds=folds,
        title=f"Held-out {context['error_name']} by k, {public.n_folds}-fold cross-validation",
    )
    other = curve.k_1se if public.rule == "min" else curve.k_min
    context["other_k"] = other if other != curve.k_best else None
    context["other_rule"] = "1se" if public.rule == "min" else "min"
    return context
