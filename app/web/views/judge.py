"""How good is a run's answer, for the pages: the worker's certificate and exact optimum in
words with the features named, and the "why not this feature?" fragment."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from app.errors import Conflict, InvalidInput
from app.jobs import table_pass
from app.models import Dataset, Run, RunResult
from app.services import judging
from app.storage import ArrayStore


def _exchanges(items: list[dict[str, Any]], names: list[str]) -> list[Any]:
    return [judging.exchange(e, names) for e in items]


def run_judgement(run: Run, dataset: Dataset, result: RunResult | None) -> dict[str, Any] | None:
    """The run page's "how good is this answer?" card; None without a result."""
    if result is None:
        return None
    names = dataset.feature_names
    cert, exact = result.certificate, result.exact
    out: dict[str, Any] = {
        "run_id": run.id,
        "dataset_id": dataset.id,
        "certify": run.certify,
        "exact_asked": run.exact,
    }
    if cert is None:
        out["cert_state"] = "off" if not run.certify else "absent"
    elif "skipped" in cert:
        out["cert_state"], out["cert_text"] = "skipped", cert["skipped"]
    else:
        out["cert_state"] = "certified" if cert["local_optimum"] else "improvable"
        out["cert_text"] = judging.name_features(cert["verdict"], names)
        out["improving"] = _exchanges(cert["improving"], names)
        out["alternatives"] = _exchanges(cert["alternatives"], names)
        out["n_exchanges"], out["cert_seconds"] = cert["n_exchanges"], cert["elapsed"]
        out["tie_tolerance"] = cert["tie_tolerance"]
    # A table registered by reference is not held in memory: no exact search to offer, no
    # 'why not' to ask (both refuse it), so the card says why instead of offering them.
    held = not table_pass.is_reference(dataset)
    out["rows_needed"] = None if held else table_pass.needs_rows("'Why not'")
    if exact is None and not held:
        out["exact_state"], out["exact_text"] = "skipped", table_pass.needs_rows("the exact search")
    elif exact is None:
        out["exact_state"] = "off" if not run.exact else "absent"
    elif "skipped" in exact:
        out["exact_state"], out["exact_text"] = "skipped", exact["skipped"]
    else:
        gap = exact["gap"]
        out["exact_state"] = (
            "not affordable"
            if not exact["optimal"]
            else "optimal"
            if exact["verdict"] == "optimal"
            else "above"
        )
        out["exact_text"] = judging.name_features(exact["verdict"], names)
        out["gap"] = gap
        out["best_support"] = [names[j] for j in exact["support"]]
        out["best_objective"] = exact["objective"]
        out["exact_seconds"], out["nodes"] = exact["elapsed"], exact["nodes"]
        out["n_supports"] = exact["n_supports"]
    selected = [f.index for f in result.support]
    mentioned = [
        j
        for e in (out.get("improving", []) + out.get("alternatives", []))
        for j in (e.feature_in, e.feature_out)
    ]
    out["selected"] = [(j, names[j]) for j in selected]
    out["suggested"] = [(j, names[j]) for j in dict.fromkeys(mentioned) if j not in selected][:12]
    # A wide table's 20,000 names made the run page 730 KB: past WHY_NOT_OPTIONS the form
    # takes a feature's index (the data set page's column summary lists them) instead.
    out["features"] = list(enumerate(names)) if len(names) <= WHY_NOT_OPTIONS else None
    out["n_features"] = len(names)
    return out


WHY_NOT_OPTIONS = 500


def why_not_fragment(session: Session, store: ArrayStore, run_id: int, feature: int) -> dict:
    """The answer for one feature, or why there is none (too large, no answer yet, no such
    feature): said in place rather than as an error page."""
    try:
        return {"answer": judging.why_not(session, store, run_id, feature), "refusal": None}
    except (InvalidInput, Conflict) as exc:
        return {"answer": None, "refusal": exc.message}
