"""The compare page: runs of one data set side by side."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlmodel import Session

from app.jobs import evaluation
from app.models import ACTIVE, RunStatus
from app.services import datasets as dataset_service
from app.services import judging
from app.services import runs as run_service
from app.storage import ArrayStore
from app.web.charts import compare as compare_charts
from app.web.charts import recovery
from engine.trace import best_along_path

# --------------------------------------------------------------------------- comparisons


def _label(run: Any, runs: Sequence[Any]) -> str:
    """The run's name, else its algorithm; with its number when another run shares it."""
    base = run.name or run.algorithm
    same = [r for r in runs if (r.name or r.algorithm) == base]
    return base if len(same) == 1 else f"{base} #{run.id}"


def setting(runs: Sequence[Any]) -> str:
    """What the runs share, or that they differ: a comparison made from existing runs may mix
    k, objectives and splits (then their test errors are not measured on the same rows)."""
    if not runs:
        return ""

    def listed(values: list[Any]) -> list[str]:
        return sorted({"none" if v is None else str(v) for v in values})

    objectives, ks = listed([r.objective for r in runs]), listed([r.k for r in runs])
    splits = {(r.test_fraction, r.seed) for r in runs}
    parts = [
        f"objective {objectives[0]}"
        if len(objectives) == 1
        else f"objectives {', '.join(objectives)}",
        f"k = {ks[0]}" if len(ks) == 1 else f"k = {', '.join(ks)} (differs between runs)",
    ]
    if len(splits) > 1:
        parts.append("splits differ between runs (their test errors use different rows)")
    else:
        fraction, seed = next(iter(splits))
        parts.append(
            f"{fraction * 100:.3g}% held out for testing (seed {seed})"
            if fraction
            else "no test split"
        )
    scaled = sum(1 for r in runs if r.standardize)
    parts.append(
        "columns standardized"
        if scaled == len(runs)
        else "columns as given (not standardized)"
        if scaled == 0
        else f"columns standardized in {scaled} runs only"
    )
    return ", ".join(parts)


def comparison_page(session: Session, comparison_id: int) -> dict[str, Any]:
    comparison = run_service.get_comparison(session, comparison_id)
    dataset = dataset_service.get_dataset(session, comparison.dataset_id)
    runs = comparison.runs
    labels = {r.id: _label(r, runs) for r in runs}
    truth = dataset.true_support
    rocs, selected = [], {}
    for r in runs:
        if r.result is None:
            continue
        selected[r.id] = [f.name for f in r.result.support]
        if truth is not None:
            roc = recovery.roc_of(
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
    # Where the runs disagree first (chosen by some but not all), then what all chose.
    n_sel = len(selected)
    rows = sorted(
        counts,
        key=lambda n: (counts[n] == n_sel, -counts[n], dataset.feature_names.index(n)),
    )
    return {
        "comparison": comparison,
        "ds": dataset,
        "labels": labels,
        "live": any(r.status in ACTIVE for r in runs),
        "setting": setting(runs),
        "selected": {rid: set(names) for rid, names in selected.items()},
        "feature_rows": rows,
        "counts": counts,
        "n_finished": len(selected),
        "everyone": [n for n in rows if counts[n] == len(selected)] if selected else [],
        "some": [n for n in rows if counts[n] < len(selected)],
        "truth_names": truth_names,
        "figures": {
            "roc": recovery.roc_figure(rocs) if truth is not None else None,
            "time": compare_charts.time_figure(
                [labels[r.id] for r in finished],
                [r.result.engine_seconds for r in finished if r.result is not None],
                [r.run_seconds for r in finished],
                title="Time per run",
            ),
        },
        "rocs": {roc.label: roc for roc in rocs},
        "standings": judging.standings(runs),
        "feature_index": {n: j for j, n in enumerate(dataset.feature_names)},
    }


def comparison_by_k(session: Session, store: ArrayStore, comparison_id: int) -> dict[str, Any]:
    """Objective and test error against k, from Zhang's best size-k support along each path
    (refitted on the training rows, scored on the held-out ones)."""
    comparison = run_service.get_comparison(session, comparison_id)
    dataset = dataset_service.get_dataset(session, comparison.dataset_id)
    labels = {r.id: _label(r, comparison.runs) for r in comparison.runs}
    objective, error = [], []
    error_label = None
    for r in comparison.runs:
        best = best_along_path(run_service.trace_events(session, r.id))
        ks = sorted(k for k in best if k > 0)
        objective.append(compare_charts.Series(labels[r.id], ks, [best[k][1] for k in ks]))
        if r.test_fraction and r.status == RunStatus.done and ks:
            run = run_service.get_run(session, r.id)
            errors, error_label = evaluation.refit_errors(
                run, dataset, store, {k: sorted(best[k][0]) for k in ks}
            )
            error.append(compare_charts.Series(labels[r.id], ks, [errors[k] for k in ks]))
    figures = {
        "objective_k": compare_charts.by_k_figure(
            objective,
            title="Training objective of the best k-feature support along the path",
            ytitle="Objective (training loss)",
        ),
        "error_k": compare_charts.by_k_figure(
            error,
            title=f"Test {error_label or 'error'} of the best k-feature support",
            ytitle=f"Test {error_label or 'error'}",
        )
        if error
        else None,
    }
    return {"figures": figures, "has_split": any(r.test_fraction for r in comparison.runs)}
