"""The geometry of each step of a least-squares run, for the teaching page (issue 27).

For least squares greedy selection is geometry. With the intercept profiled out, the engine
fits the centred (and, with ``standardize``, scaled) columns x_j to the centred target; the
residual r of the support before a step is orthogonal to the support's span, and

* a candidate's one-coordinate objective drop is (x_j'r)^2 / (2n |x_j|^2) = |r|^2 cos^2 / (2n):
  FoBa-obj (and the quadratic rule, exact here) picks the column most aligned with r;
* OMP and FoBa-gdt pick the largest |gradient| = |x_j'r| / n = |x_j| |r| |cos| / n: the same
  column when the columns have equal norms (standardised), not always otherwise;
* forward stepwise picks the largest refitted drop, |r|^2 cos'^2 / (2n) with cos' the cosine of
  the part of x_j orthogonal to the support;
* a deletion costs w_j^2 |x_j|^2 / (2n) without a refit and w_j^2 / (2n [(X_S'X_S)^-1]_jj)
  with one: the column whose removal the fit barely notices is the cheapest, set against the
  bar nu x delta the trace recorded.

Everything is recomputed from the data set's training rows (the run's split), independently
of the engine's incremental algebra, so the page shows what the trace's numbers mean. The
frames document (charts/player.py) gets ``doc["geometry"]`` (what is drawn, or why nothing
is) and ``frame["geometry"]`` in each frame (None when the step has nothing to draw), drawn by
static/js/geometry.js. The cost is bounded: only below MAX_CELLS training cells, only the
first MAX_STEPS steps, the TOP best candidates.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

import engine
from app.jobs.evaluation import split_rows
from app.models import Dataset, Run
from app.storage import ArraysMissing, ArrayStore, unpack_matrix
from app.web.charts.style import DASH, feature_name, num
from engine.scaling import column_scale
from engine.threads import small_products
from engine.trace import Event, supports_in_order

MAX_CELLS = 250_000  # training rows x columns: one dense copy, a few X'r products per step
MAX_STEPS = 400  # frames given a geometry; later ones get the sentence below
TOP = 12  # candidates (forward) and selected columns (deletion) drawn per step
OTHERS_3D = 4  # other columns drawn in the 3-D view, those most inside its space
MIN_INSIDE = 0.3  # other columns drawn hold at least this much of their length in the view
RESIDUAL_SHOWN = 0.05  # below this share of |y| the residual's direction is not an axis
LEAST_SQUARES = "least_squares"
_attaching = threading.Lock()
BAR = "\u03bd \u00d7 \u03b4"  # nu x delta, the deletion bar

# The column a forward rule picks by, as a key of the candidates' numbers.
CRITERION = {
    "obj": "drop",
    "quad": "drop",
    "gdt": "gradient",
    "refit": "refit_drop",
    "alone": "alone",
}
CRITERION_WORDS = {
    "drop": "the largest one-coordinate drop, i.e. the column most aligned with the residual",
    "gradient": "the largest |gradient| = |x_j'r|/n, i.e. |x_j| times the cosine",
    "refit_drop": "the largest refitted drop, i.e. the column whose part orthogonal to the "
    "support is most aligned with the residual",
    "alone": "the largest drop on its own, i.e. the column most aligned with y",
}


def _r(x: float) -> float:
    """Four significant digits: enough to read and to check, small in the page's JSON."""
    return float(f"{x:.4g}") if math.isfinite(x) else 0.0


# --------------------------------------------------------------------------- the numbers


class Problem:
    """The columns and target exactly as the engine fits them: the training rows, scaled as
    ``engine.select(standardize=...)`` scales them, centred when there is an intercept."""

    def __init__(self, X: Any, y: np.ndarray, *, fit_intercept: bool, standardize: bool):
        X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64).ravel()
        if standardize:  # cosines and drops do not depend on the scale; |gradient| does
            X = X / column_scale(X, centered=fit_intercept)
        if fit_intercept:
            X = X - X.mean(axis=0)
            y = y - y.mean()
        self.X, self.y = X, y
        self.n = X.shape[0]
        self.sq = np.einsum("ij,ij->j", X, X)
        self.sq[self.sq <= 1e-12 * max(float(self.sq.max(initial=0.0)), 1e-300)] = 0.0
        self.norms = np.sqrt(self.sq)

    def refit(self, support: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Least-squares coefficients on ``support`` and the residual."""
        if not support:
            return np.zeros(0), self.y.copy()
        w = np.linalg.lstsq(self.X[:, list(support)], self.y, rcond=None)[0]
        return w, self.y - self.X[:, list(support)] @ w

    def basis(self, support: Sequence[int]) -> np.ndarray:
        """An orthonormal basis (columns) of the support's span."""
        if not support:
            return np.zeros((self.n, 0))
        q, rr = np.linalg.qr(self.X[:, list(support)])
        keep = np.abs(np.diag(rr)) > 1e-10 * max(float(np.abs(rr).max()), 1e-300)
        return q[:, keep]


def _cos(dot: np.ndarray, norms: np.ndarray, length: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        c = dot / (norms * length)
    return np.where((norms > 0) & (length > 0), c, 0.0)


def forward(p: Problem, before: Sequence[int], chosen: int | None, rule: str | None) -> dict:
    """Every candidate's cosine with the residual of ``before`` and its drops; which column
    each criterion picks, and whether the run's pick is the rule's."""
    q = p.basis(before)
    r = p.y - q @ (q.T @ p.y)  # the refit's residual: y minus its projection on the span
    length = float(np.linalg.norm(r))
    xr = p.X.T @ r
    qx = q.T @ p.X
    perp_sq = np.maximum(p.sq - np.einsum("ij,ij->j", qx, qx), 0.0)
    perp_sq[perp_sq <= 1e-10 * np.maximum(p.sq, 1e-300)] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        drop = np.where(p.sq > 0, xr**2 / p.sq, 0.0) / (2 * p.n)
        refit_drop = np.where(perp_sq > 0, xr**2 / perp_sq, 0.0) / (2 * p.n)
    numbers = {
        "cos": _cos(xr, p.norms, length),
        "cos_perp": _cos(xr, np.sqrt(perp_sq), length),
        "drop": drop,
        "gradient": np.abs(xr) / p.n,
        "refit_drop": refit_drop,
        "alone": _cos(p.X.T @ p.y, p.norms, float(np.linalg.norm(p.y))) ** 2,
    }
    out = np.zeros(p.X.shape[1], dtype=bool)
    out[list(before)] = True
    out |= p.sq == 0
    candidates = np.flatnonzero(~out)
    criterion = CRITERION.get(rule or "")
    rank_by = np.abs(numbers[criterion] if criterion else numbers["cos"])
    order = candidates[np.argsort(-rank_by[candidates], kind="stable")]
    best = {key: int(candidates[np.argmax(np.abs(v[candidates]))]) for key, v in numbers.items()}
    shown = [int(j) for j in order[:TOP]]
    if chosen is not None and chosen not in shown and chosen in candidates:
        shown.append(int(chosen))
    agrees = None
    if criterion and chosen is not None and candidates.size:
        top = float(rank_by[candidates].max())
        agrees = bool(abs(rank_by[chosen]) >= top * (1 - 1e-9))
    return {
        "residual": _r(length / math.sqrt(p.n)),  # root mean square of r
        "objective": _r(length**2 / (2 * p.n)),
        "candidates": shown,
        "n_candidates": int(candidates.size),
        "numbers": {key: [_r(float(v[j])) for j in shown] for key, v in numbers.items()},
        "best": best,
        "criterion": criterion,
        "agrees": agrees,
    }


def deletion(p: Problem, support: Sequence[int], refit: bool) -> dict:
    """Each selected column's removal cost on ``support``, without and with a refit."""
    w, r = p.refit(support)
    cols = p.X[:, list(support)]
    no_refit = w**2 * p.sq[list(support)] / (2 * p.n)
    inv = np.linalg.pinv(cols.T @ cols)
    with np.errstate(divide="ignore", invalid="ignore"):
        with_refit = np.where(np.diag(inv) > 0, w**2 / np.diag(inv), 0.0) / (2 * p.n)
    cost = with_refit if refit else no_refit
    order = np.argsort(cost, kind="stable")[:TOP]
    fit = p.y - r
    return {
        "columns": [int(support[i]) for i in order],
        "cost": [_r(float(cost[i])) for i in order],
        "no_refit": [_r(float(no_refit[i])) for i in order],
        "refit": [_r(float(with_refit[i])) for i in order],
        "coef": [_r(float(w[i])) for i in order],
        "cheapest": int(support[int(np.argmin(cost))]) if len(support) else None,
        "fit_objective": _r(float(fit @ fit) / (2 * p.n)),  # how much the fit explains
        "refitted": refit,
    }


def _part_of(p: Problem, j: int, basis: list[np.ndarray]) -> np.ndarray | None:
    """The unit direction of column j's part orthogonal to ``basis``, None when it has none."""
    v = p.X[:, j].copy()
    for b in basis:
        v -= b * (b @ v)
    size = float(np.linalg.norm(v))
    return v / size if size > 1e-6 * p.norms[j] else None


def view3d(p: Problem, support: Sequence[int], names: Sequence[str]) -> dict | None:
    """y, the fit and the span of a support of one or two columns in an orthonormal basis,
    lengths relative to |y|, the columns as unit vectors. Always: e1 is the fit's direction
    (so y is in the plane of e1 and e3), e3 the residual's (y's part outside the span);
    e2 is the span's other direction (two columns) or the part of the other column most
    aligned with the residual (one column). When y lies in the span (a residual under
    RESIDUAL_SHOWN of |y|) its direction is noise: e3 is then the part of the column most
    aligned with y that is not selected, the one a reader wants to see leave the plane."""
    support = list(support)
    if not 1 <= len(support) <= 2 or p.n < 3:
        return None
    ynorm = float(np.linalg.norm(p.y))
    q = p.basis(support)
    if ynorm == 0 or q.shape[1] != len(support):
        return None
    _, r = p.refit(support)
    fit = p.y - r
    if np.linalg.norm(fit) <= 1e-9 * ynorm:
        return None  # y is orthogonal to the span: there is no fit to draw
    e1 = fit / np.linalg.norm(fit)
    others = [j for j in range(p.X.shape[1]) if j not in support and p.sq[j] > 0]
    axes = ["the fit's direction (y's projection onto the span)"]
    basis = [e1]
    if len(support) == 2:
        # The span's direction orthogonal to the fit, signed so the first column's e2 >= 0.
        rests = [q[:, i] - e1 * (e1 @ q[:, i]) for i in range(2)]
        e2 = max(rests, key=lambda v: float(np.linalg.norm(v)))
        e2 = e2 / np.linalg.norm(e2)
        basis.append(e2 if e2 @ p.X[:, support[0]] >= 0 else -e2)
        axes.append("the span's other direction")
    shown = float(np.linalg.norm(r)) > RESIDUAL_SHOWN * ynorm
    if shown:
        e3 = r / np.linalg.norm(r)
    if len(support) == 1:
        cos_r = np.abs(_cos(p.X.T @ r, p.norms, float(np.linalg.norm(r))))
        for j in sorted(others, key=lambda j: -cos_r[j]):
            part = _part_of(p, j, basis + ([e3] if shown else []))
            if part is not None:
                basis.append(part)
                axes.append(f"the part of {feature_name(names, j)} orthogonal to e1 and e3")
                break
    if shown:
        basis.append(e3)
        axes.append("the residual's direction (y minus the fit)")
    else:
        cos_y = np.abs(_cos(p.X.T @ p.y, p.norms, ynorm))
        for j in sorted(others, key=lambda j: -cos_y[j]):
            part = _part_of(p, j, basis)
            if part is not None:
                basis.append(part)
                axes.append(
                    f"the part of {feature_name(names, j)} outside the span (y lies in the "
                    "span: its residual is under 5% of |y|)"
                )
                break
    if len(basis) < 3:
        return None
    B = np.column_stack(basis)

    def coords(v: np.ndarray, scale: float) -> list[float]:
        return [_r(float(x)) for x in B.T @ v / scale]

    unit = p.X / np.where(p.norms > 0, p.norms, 1.0)
    inside = np.linalg.norm(B.T @ unit, axis=0)  # how much of each unit column the view holds
    # Other columns mostly outside the view would be short stubs crowding the origin.
    near = [j for j in sorted(others, key=lambda j: -inside[j]) if inside[j] >= MIN_INSIDE]
    drawn = support + near[:OTHERS_3D]
    return {
        "axes": axes,
        "y": coords(p.y, ynorm),
        "fit": coords(fit, ynorm),
        "columns": [
            {
                "name": feature_name(names, j),
                "selected": j in support,
                "at": coords(unit[:, j], 1.0),
                "inside": _r(float(inside[j])),
            }
            for j in drawn
        ],
        "span": len(support),
    }


# --------------------------------------------------------------------------- sentences


def _g(x: float | None) -> str:
    return DASH if x is None else f"{x:.3g}"


def _angle(c: float) -> str:
    return f"{math.degrees(math.acos(min(abs(c), 1.0))):.0f}°"


def forward_sentence(fw: dict, names: Sequence[str], title: str, standardized: bool) -> str:
    """What the forward chart shows, in words: the pick's angle and why the rule picks it."""
    chosen = fw["chosen"]
    at = fw["candidates"].index(chosen) if chosen in fw["candidates"] else None
    name = feature_name(names, chosen)
    if at is None:
        return f"{name} was added; it is not among the columns drawn."
    cos = fw["numbers"]["cos"][at]
    text = (
        f"{name} makes an angle of {_angle(cos)} with the residual (cosine {_g(abs(cos))}); "
        f"its one-coordinate drop is |r|² cos² / (2n) = {_g(fw['numbers']['drop'][at])}."
    )
    criterion = fw["criterion"]
    if criterion is None:
        return text + f" {title} does not add by a score of the candidates."
    text += f" {title} adds by {CRITERION_WORDS[criterion]}"
    best = feature_name(names, fw["best"]["cos"])
    if criterion == "gradient":
        same = "the same column as" if fw["best"]["gradient"] == fw["best"]["cos"] else "not"
        why = (
            "the columns are standardised, so all |x_j| are equal"
            if standardized
            else "the columns are not standardised, so a long column can win at a wider angle"
        )
        text += f": {why}; the most aligned column is {best}, {same} the pick"
    if fw["agrees"] is False:
        text += "; the recorded pick is not this criterion's largest (a tie, or rounding)"
    return text + "."


def deletion_sentence(de: dict, names: Sequence[str]) -> str:
    """The cheapest deletion set against the bar nu x delta."""
    chosen = de["chosen"]
    if chosen not in de["columns"]:
        return ""
    at = de["columns"].index(chosen)
    cost, bar, fit = de["cost"][at], de["bar"], de["fit_objective"]
    share = f" ({100 * cost / fit:.2g}% of what the fit explains)" if fit > 0 else ""
    how = "with the others refitted" if de["refitted"] else "its coefficient set to zero"
    text = (
        f"Deleting {feature_name(names, chosen)} ({how}) raises the objective by {_g(cost)}{share}"
    )
    if bar is None:
        return text + ": the cheapest of the selected columns."
    if de["removed"]:
        return text + f", below the bar {BAR} = {_g(bar)}: the fit barely notices, it goes."
    return text + f", not below the bar {BAR} = {_g(bar)}: the fit would notice, it stays."


def view_sentence(view: dict) -> str:
    y, fit = view["y"], view["fit"]
    cos = math.sqrt(sum(x * x for x in fit)) / max(math.sqrt(sum(x * x for x in y)), 1e-300)
    span = "line" if view["span"] == 1 else "plane"
    return (
        f"The fit is y's orthogonal projection onto the {span} the selected columns span; y "
        f"is {_angle(cos)} from it (lengths relative to |y|, the columns as unit vectors)."
    )


# --------------------------------------------------------------------------- per frame


def step_geometry(
    p: Problem,
    run: Run,
    names: Sequence[str],
    events: Sequence[Event],
    index: int,
    supports: Sequence[Sequence[int]],
) -> dict | None:
    """What the Geometry card draws at ``events[index]``: a forward choice, a deletion, and
    the 3-D view of the support after it; None when none applies."""
    e = events[index]
    before = list(supports[index - 1]) if index else []
    after = list(supports[index])
    spec = engine.ALGORITHMS.get(run.algorithm)
    traits = spec.traits if spec is not None else None
    title = spec.title if spec is not None else run.algorithm
    out: dict[str, Any] = {"view": view3d(p, after, names)}
    if out["view"] is not None:
        out["view"]["sentence"] = view_sentence(out["view"])
    if e.kind == "add" and e.feature is not None:
        rule = traits.rule(run.params) if traits else None
        fw = forward(p, before, e.feature, rule)
        fw.update(chosen=e.feature, rule=rule)
        fw["sentence"] = forward_sentence(fw, names, title, run.standardize)
        out["forward"] = fw
    elif e.kind in ("remove", "check") and e.feature_out is None and before:
        rule = traits.deletion_for(run.params) if traits else None
        de = deletion(p, before, refit=rule == "refit")
        de.update(chosen=e.feature, bar=num(e.threshold), removed=e.kind == "remove")
        de["sentence"] = deletion_sentence(de, names)
        out["deletion"] = de
    if len(out) == 1 and out["view"] is None:
        return None
    return out


def unavailable(run: Run, dataset: Dataset) -> str | None:
    """Why the run's steps get no geometry, or None."""
    if run.objective != LEAST_SQUARES:
        return (
            "The geometry is drawn for least squares, where a greedy step is an angle between "
            f"a column and the residual; this run's objective is {run.objective}, where it is not."
        )
    if dataset.n_samples * dataset.n_features > MAX_CELLS:
        return (
            f"The geometry is computed for data sets of at most {MAX_CELLS:,} cells (rows x "
            f"columns); this one has {dataset.n_samples * dataset.n_features:,}."
        )
    return None


def geometry_doc(
    p: Problem, run: Run, names: Sequence[str], events: Sequence[Event], kept: Sequence[int]
) -> tuple[dict[str, Any], list[dict | None]]:
    """The document's ``geometry`` entry and each kept frame's."""
    supports = supports_in_order(events)
    frames: list[dict | None] = []
    with small_products():  # many small products: one BLAS thread, as a run has (engine.threads)
        for n, i in enumerate(kept):
            g = step_geometry(p, run, names, events, i, supports) if n < MAX_STEPS else None
            frames.append(g)
    note = ""
    if len(kept) > MAX_STEPS:
        note = f"The geometry is drawn for the first {MAX_STEPS} steps only."
    return {"note": note, "n": p.n}, frames


def attach(
    doc: dict[str, Any], store: ArrayStore, run: Run, dataset: Dataset, events: Sequence[Event]
) -> None:
    """Give the frames document (views/teach.py ``teach_frames``, built once and kept) its
    geometry, once: ``doc["geometry"]`` and ``frame["geometry"]`` in each frame."""
    if "geometry" in doc:
        return
    geometry: dict[str, Any] = {"note": unavailable(run, dataset) or ""}
    frames: list[dict | None] = [None] * len(doc["frames"])
    if not geometry["note"]:
        try:
            arrays = store.load(dataset.file)
        except ArraysMissing:
            arrays = None
        if arrays is None:
            geometry["note"] = "The data set's arrays are gone: there is no geometry to draw."
        else:
            X, y = unpack_matrix(arrays), np.asarray(arrays["y"])
            train, _ = split_rows(y, dataset.task, run.test_fraction, run.seed)
            p = Problem(
                X[train],
                y[train],
                fit_intercept=bool(run.params.get("fit_intercept", True)),
                standardize=run.standardize,
            )
            index = {e.step: i for i, e in enumerate(events)}
            kept = [index[f["step"]] for f in doc["frames"]]
            geometry, frames = geometry_doc(p, run, dataset.feature_names, events, kept)
    # The document is shared by the page's requests: it changes once, under the lock, and
    # "geometry" is set last, so a request that finds it renders a finished document.
    with _attaching:
        if "geometry" not in doc:
            for frame, g in zip(doc["frames"], frames, strict=True):
                frame["geometry"] = g
            doc["geometry"] = geometry
