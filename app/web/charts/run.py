"""The run page's figures and player data, as pure functions of a run's trace: the
feature-by-step path, the objective by step and by support size, the coefficients, and the
support-recovery ROC.

How a trace reads as a path (supports, membership, the best support of each size) comes from
``engine.trace``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from app.web.charts.player import event_text
from app.web.charts.style import (
    ADD,
    BLACK,
    BLUE,
    CHECK,
    HOVER,
    MAX_PATH_ROWS,
    ORANGE,
    REMOVE,
    SKY,
    SWAP_IN,
    SWAP_OUT,
    Figure,
    cursor_shapes,
    empty_figure,
    feature_name,
    hatch,
    layout,
    num,
)
from engine.trace import Event, best_along_path, membership

# --------------------------------------------------------------------------- run figures


def path_figure(
    events: Sequence[Event],
    names: Sequence[str],
    *,
    true_support: Iterable[int] | None = None,
    best_step: int | None = None,
    k: int | None = None,
    title: str = "Forward/backward path: features by step",
) -> Figure:
    """Feature-by-step view: a bar while a feature is in the support, a blue triangle where
    it was added, a vermillion cross where it was deleted."""
    if not events:
        return empty_figure(title, "No steps recorded yet.")
    last = events[-1].step
    member = membership(events)
    rows = member.order
    note = ""
    if len(rows) > MAX_PATH_ROWS:

        def time_in(j: int) -> int:
            return sum((end if end is not None else last + 1) - s for s, end in member.segments[j])

        final = {j for j, segs in member.segments.items() if segs and segs[-1][1] is None}
        ranked = sorted(rows, key=lambda j: (j not in final, -time_in(j)))
        shown = set(ranked[:MAX_PATH_ROWS])
        rows = [j for j in rows if j in shown]
        note = f" ({len(rows)} of {len(member.order)} features shown)"
    truth = set(true_support or ())
    label = {j: names[j] if j < len(names) else f"feature {j}" for j in rows}
    if truth:
        label = {j: f"{name} ★" if j in truth else name for j, name in label.items()}

    bar_x: list[float | None] = []
    bar_y: list[str | None] = []
    for j in rows:
        for start, end in member.segments[j]:
            bar_x += [start, end if end is not None else last + 0.5, None]
            bar_y += [label[j], label[j], None]
    width = max(4, min(14, int(420 / max(len(rows), 1))))
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "in the support",
            "x": bar_x,
            "y": bar_y,
            "line": {"color": SKY, "width": width},
            "opacity": 0.55,
            "hoverinfo": "skip",
        }
    ]
    shown_rows = set(rows)

    def markers(style: dict[str, str], picks: list[tuple[Event, int]], visible=True):
        picks = [(e, j) for e, j in picks if j in shown_rows]
        if not picks:
            return
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": style["label"],
                "x": [e.step for e, _ in picks],
                "y": [label[j] for _, j in picks],
                "marker": {
                    "color": style["color"],
                    "symbol": style["symbol"],
                    "size": 12,
                    "line": {"width": 1.5, "color": style["color"]},
                },
                "text": [f"step {e.step}: {event_text(e, names)}" for e, _ in picks],
                "hoverinfo": "text",
                "visible": True if visible else "legendonly",
            }
        )

    def pick(kind: str, key: str = "feature") -> list[tuple[Event, int]]:
        return [(e, getattr(e, key)) for e in events if e.kind == kind]

    markers(ADD, pick("add"))
    markers(REMOVE, pick("remove"))
    markers(SWAP_IN, pick("swap"))
    markers(SWAP_OUT, pick("swap", "feature_out"))
    markers(CHECK, pick("check"), visible=False)

    lay = path_layout(title + note, rows=len(rows), truth=bool(truth))
    lay["yaxis"]["categoryarray"] = [label[j] for j in rows]
    lay["xaxis"].update(range=[-0.5, last + 0.5])
    lay["shapes"] = cursor_shapes(last, last)
    if best_step is not None:
        # Features first admitted after the answer's step sit in the bottom rows, to the right
        # of its line: the corner below and right of the line is free for the label.
        lay["shapes"].append(_best_line(best_step))
        lay["annotations"] = [_best_note(best_step, k, top=False)]
    return {"data": data, "layout": lay}


def path_layout(title: str, *, rows: int, truth: bool = False) -> dict[str, Any]:
    """The feature-by-step view's layout (also what the live page draws its path into)."""
    lay = layout(
        title,
        "Step (event number)",
        "Feature (★ = in the true support)" if truth else "Feature (first admitted at the top)",
        height=max(300, min(1500, 150 + 26 * rows)),
    )
    lay["yaxis"].update(
        type="category",
        categoryorder="array",
        autorange="reversed",
        automargin=True,
        ticks="",
        gridcolor="#f0f0f0",
    )
    return lay


def _best_line(step: int) -> dict[str, Any]:
    return {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": step,
        "x1": step,
        "y0": 0,
        "y1": 1,
        "line": {"color": BLACK, "width": 1.5, "dash": "dot"},
    }


def _best_note(step: int, k: int | None, *, top: bool = True) -> dict[str, Any]:
    """The label of the answer's line, beside it at the top or the bottom of the plot, with
    no background, so that nothing it overlaps looks erased."""
    what = f"best {k}-feature support" if k else "answer"
    return {
        "x": step,
        "y": 1 if top else 0,
        "xref": "x",
        "yref": "paper",
        "yanchor": "top" if top else "bottom",
        "xanchor": "left",
        "xshift": 4,
        "text": f"{what}<br>(step {step})",
        "showarrow": False,
        "align": "left",
        "font": {"size": 11},
    }


def objective_step_figure(
    events: Sequence[Event],
    *,
    best_step: int | None = None,
    k: int | None = None,
    title: str = "Objective by step",
    cursor: bool = True,
) -> Figure:
    if not events:
        return empty_figure(title, "No steps recorded yet.")
    steps = [e.step for e in events]
    values = [num(e.objective) for e in events]
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "objective after the step",
            "x": steps,
            "y": values,
            "line": {"color": "#555", "width": 2},
            "hovertemplate": f"step %{{x}}<br>objective %{{y:{HOVER}}}<extra></extra>",
        }
    ]
    data += _event_markers(
        events,
        steps,
        values,
        f"step %{{customdata}}: {{label}}<br>objective %{{y:{HOVER}}}<extra></extra>",
    )
    lay = objective_step_layout(title)
    last = steps[-1]
    lay["xaxis"].update(range=[-0.5, last + 0.5])
    lay["shapes"] = cursor_shapes(last, last) if cursor else []
    if best_step is not None:
        lay["shapes"].append(_best_line(best_step))
        lay["annotations"] = [_best_note(best_step, k)]
    return {"data": data, "layout": lay}


def objective_step_layout(title: str) -> dict[str, Any]:
    return layout(title, "Step (event number)", "Objective (training loss)")


def _event_markers(
    events: Sequence[Event], xs: Sequence[float], values: Sequence[float | None], hover: str
) -> list[dict[str, Any]]:
    """One marker trace per support-changing kind (add, remove, swap) at (xs, values); each
    point carries its step as customdata. ``hover`` is a Plotly template in which ``{label}``
    names the kind."""
    traces = []
    for style, kind in ((ADD, "add"), (REMOVE, "remove"), (SWAP_IN, "swap")):
        idx = [i for i, e in enumerate(events) if e.kind == kind]
        if not idx:
            continue
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": style["label"],
                "x": [xs[i] for i in idx],
                "y": [values[i] for i in idx],
                "customdata": [events[i].step for i in idx],
                "marker": {
                    "color": style["color"],
                    "symbol": style["symbol"],
                    "size": 10,
                    "line": {"width": 1.5, "color": style["color"]},
                },
                "hovertemplate": hover.replace("{label}", style["label"]),
            }
        )
    return traces


def objective_size_figure(
    events: Sequence[Event], *, k: int | None = None, title: str = "Objective by support size"
) -> Figure:
    """The path in (support size, objective) space; Zhang's best objective at each size; the
    player's current point is the last trace (moved with ``Plotly.restyle``)."""
    if not events:
        return empty_figure(title, "No steps recorded yet.")
    sizes = [e.support_size for e in events]
    values = [num(e.objective) for e in events]
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "path",
            "x": sizes,
            "y": values,
            "line": {"color": "#9a9a9a", "width": 1.5},
            "hoverinfo": "skip",
        }
    ]
    data += _event_markers(
        events,
        sizes,
        values,
        f"step %{{customdata}}: {{label}}<br>size %{{x}}, objective %{{y:{HOVER}}}<extra></extra>",
    )
    best = best_along_path(events)
    if best:
        ks = sorted(best)
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "best along the path",
                "x": ks,
                "y": [best[s][1] for s in ks],
                "line": {"color": BLACK, "width": 1, "dash": "dot"},
                "marker": {"color": BLACK, "symbol": "square-open", "size": 9},
                "hovertemplate": (
                    f"best size-%{{x}} support<br>objective %{{y:{HOVER}}}<extra></extra>"
                ),
            }
        )
    data.append(
        {
            "type": "scatter",
            "mode": "markers",
            "name": "current step",
            "x": [sizes[-1]],
            "y": [values[-1]],
            "marker": {
                "color": ORANGE,
                "symbol": "circle-open",
                "size": 20,
                "line": {"width": 3, "color": ORANGE},
            },
            "hoverinfo": "skip",
        }
    )
    lay = layout(title, "Support size (features selected)", "Objective (training loss)")
    lay["xaxis"].update(dtick=1 if max(sizes) <= 25 else None, rangemode="tozero")
    if k:
        lay["shapes"] = [
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": k,
                "x1": k,
                "y0": 0,
                "y1": 1,
                "line": {"color": BLACK, "width": 1, "dash": "dot"},
            }
        ]
    return {"data": data, "layout": lay}


def coef_figure(
    support: Sequence[dict[str, Any]],
    *,
    true_support: Iterable[int] | None = None,
    true_coef: np.ndarray | None = None,
    names: Sequence[str] = (),
    title: str = "Coefficients of the selected model",
) -> Figure:
    """Bars for the selected features' coefficients; true coefficients as black diamonds when
    the data set knows them (true features missed by the run appear with an empty bar)."""
    if not support and true_coef is None:
        return empty_figure(title, "No feature was selected.")
    truth = set(true_support) if true_support is not None else None
    rows = sorted(support, key=lambda f: -abs(f["coef"]))
    selected = {int(f["index"]) for f in rows}
    missed = sorted(truth - selected) if truth else []
    labels = [f["name"] for f in rows] + [feature_name(names, j) for j in missed]
    data: list[dict[str, Any]] = []
    if truth is None:
        data.append(
            _bars("selected feature", [f["name"] for f in rows], [f["coef"] for f in rows], BLUE)
        )
    else:
        hits = [f for f in rows if int(f["index"]) in truth]
        misses = [f for f in rows if int(f["index"]) not in truth]
        if hits:
            data.append(
                _bars(
                    "selected, in the true support",
                    [f["name"] for f in hits],
                    [f["coef"] for f in hits],
                    BLUE,
                )
            )
        if misses:
            data.append(
                _bars(
                    "selected, not in the true support",
                    [f["name"] for f in misses],
                    [f["coef"] for f in misses],
                    ORANGE,
                    pattern="/",
                )
            )
    if true_coef is not None and truth is not None:
        idx = [int(f["index"]) for f in rows] + missed
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": "true coefficient",
                "y": labels,
                "x": [float(true_coef[j]) for j in idx],
                "marker": {"color": BLACK, "symbol": "diamond", "size": 10},
                "hovertemplate": f"%{{y}}: true %{{x:{HOVER}}}<extra></extra>",
            }
        )
    height = max(260, min(1200, 120 + 28 * len(labels)))
    lay = layout(title, "Coefficient", "Feature", height=height)
    lay["yaxis"].update(
        type="category",
        categoryorder="array",
        categoryarray=labels,
        autorange="reversed",
        automargin=True,
    )
    lay["xaxis"].update(zeroline=True, zerolinecolor="#444")
    lay["barmode"] = "overlay"
    return {"data": data, "layout": lay}


def _bars(name: str, y: list[str], x: list[float], color: str, pattern: str = "") -> dict:
    marker: dict[str, Any] = {"color": color, "line": {"color": color, "width": 1}}
    if pattern:
        marker["pattern"] = hatch(pattern)
    return {
        "type": "bar",
        "orientation": "h",
        "name": name,
        "y": y,
        "x": x,
        "marker": marker,
        "hovertemplate": f"%{{y}}: %{{x:{HOVER}}}<extra></extra>",
    }
