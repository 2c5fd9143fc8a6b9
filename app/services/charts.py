"""Plotly figures built from run traces: the server builds the figure JSON, the browser only
renders it (``Plotly.react``).

Every figure names features (never indices), titles its axes, keeps a legend, and uses the
Okabe-Ito colour-blind-safe palette; additions and deletions differ by marker shape too
(triangle up / cross), so the charts read in greyscale and for colour-blind readers.

Events are ``engine.Event`` objects; how a trace reads as a path (supports, membership, the
best support of each size) comes from ``engine.trace``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine import metrics
from engine.trace import Event, best_along_path, membership, replay

Figure = dict[str, Any]

# Okabe & Ito (2008), "Color Universal Design".
BLUE, VERMILLION, GREEN, ORANGE = "#0072B2", "#D55E00", "#009E73", "#E69F00"
SKY, PURPLE, YELLOW, BLACK, GREY = "#56B4E9", "#CC79A7", "#F0E442", "#000000", "#8c8c8c"
SERIES = (BLUE, VERMILLION, GREEN, ORANGE, PURPLE, SKY, BLACK, YELLOW)
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "star", "hexagon", "pentagon")

ADD = {"color": BLUE, "symbol": "triangle-up", "label": "addition"}
REMOVE = {"color": VERMILLION, "symbol": "x", "label": "deletion"}
SWAP_IN = {"color": GREEN, "symbol": "diamond", "label": "swap: in"}
SWAP_OUT = {"color": VERMILLION, "symbol": "diamond-open", "label": "swap: out"}
CHECK = {"color": GREY, "symbol": "circle-open", "label": "backward check: kept"}

DASH = "\u2013"  # shown for a missing number
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
MAX_PATH_ROWS = 120  # features shown in the feature-by-step view
MAX_FRAMES = 2000  # player frames; iterate events are thinned beyond this


# --------------------------------------------------------------------------- helpers


def num(x: Any) -> float | None:
    """A stored number as a float (None for missing or non-finite: JSON has no NaN)."""
    if x is None or isinstance(x, bool):
        return None
    try:
        value = float(x)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def fmt(x: Any, digits: int = 4) -> str:
    value = num(x)
    return DASH if value is None else f"{value:.{digits}g}"


def feature_name(names: Sequence[str], j: Any) -> str:
    if j is None:
        return DASH
    j = int(j)
    return names[j] if 0 <= j < len(names) else f"feature {j}"


def layout(
    title: str, xtitle: str, ytitle: str, *, height: int = 360, legend: bool = True
) -> dict[str, Any]:
    """Title at the top left, the legend in a row under it (never over the plot), axis titles."""
    axis = {"gridcolor": "#e6e6e6", "zeroline": False, "linecolor": "#444", "ticks": "outside"}
    return {
        "title": {
            "text": title,
            "x": 0.01,
            "xanchor": "left",
            "yref": "container",
            "y": 1,
            "yanchor": "top",
            "pad": {"t": 12},
            "font": {"size": 16},
        },
        "font": {"family": FONT, "size": 13, "color": "#1f2328"},
        "height": height + (40 if legend else 0),
        "margin": {"l": 80, "r": 24, "t": 86 if legend else 56, "b": 56},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "xaxis": {**axis, "title": {"text": xtitle}},
        "yaxis": {**axis, "title": {"text": ytitle}},
        "showlegend": legend,
        "legend": {
            "orientation": "h",
            "x": 0,
            "xanchor": "left",
            "y": 1.02,
            "yanchor": "bottom",
            "font": {"size": 12},
        },
        "hoverlabel": {"font": {"family": FONT}},
    }


def hatch(shape: str = "/") -> dict[str, Any]:
    """A hatching drawn over the bar's own colour (a second cue besides colour)."""
    return {"shape": shape, "fillmode": "overlay", "fgcolor": "#ffffff", "solidity": 0.35}


def empty_figure(title: str, message: str) -> Figure:
    lay = layout(title, "", "", height=220, legend=False)
    lay["xaxis"].update(visible=False)
    lay["yaxis"].update(visible=False)
    lay["annotations"] = [
        {
            "text": message,
            "showarrow": False,
            "x": 0.5,
            "y": 0.5,
            "xref": "paper",
            "yref": "paper",
            "font": {"size": 14, "color": "#555"},
        }
    ]
    return {"data": [], "layout": lay}


def cursor_shapes(x: float, x_max: float) -> list[dict[str, Any]]:
    """shapes[0]: the player's cursor; shapes[1]: a veil over the steps after it. The player
    moves both with ``Plotly.relayout`` (the figure's other shapes come after these two)."""
    return [
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": x,
            "x1": x,
            "y0": 0,
            "y1": 1,
            "line": {"color": ORANGE, "width": 3},
        },
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": x + 0.5,
            "x1": x_max + 0.5,
            "y0": 0,
            "y1": 1,
            "fillcolor": "rgba(255,255,255,0.65)",
            "line": {"width": 0},
            "layer": "above",
        },
    ]


def event_text(e: Event, names: Sequence[str]) -> str:
    """One line for the player: what this event did."""
    f = feature_name(names, e.feature)
    if e.kind == "add":
        return f"add {f} (objective falls by {fmt(e.gain)})"
    if e.kind == "remove":
        return f"delete {f} (costs {fmt(e.gain)}, below the threshold {fmt(e.threshold)})"
    if e.kind == "check":
        return (
            f"backward check: deleting {f} would cost {fmt(e.gain)}, not below "
            f"{fmt(e.threshold)}; nothing deleted"
        )
    if e.kind == "swap":
        return f"swap: {f} in, {feature_name(names, e.feature_out)} out"
    if e.kind == "iterate":
        return "iteration (support unchanged)"
    if e.kind == "stop":
        return f"stop: {e.reason or 'done'}"
    return e.kind


def player_frames(events: Sequence[Event], names: Sequence[str]) -> dict[str, Any]:
    """What the trace player steps through: one frame per event (iterate events thinned when
    there are more than MAX_FRAMES), each pointing at the support after it (supports are
    listed once each time they change)."""
    keep = _thin(events)
    supports: list[list[int]] = []
    frames: list[dict[str, Any]] = []
    last: frozenset[int] | None = None
    for e, support, kept in zip(events, replay(events), keep, strict=True):
        if not kept:
            continue
        if support != last:
            supports.append(sorted(support))
            last = support
        frames.append(
            {
                "step": e.step,
                "kind": e.kind,
                "text": event_text(e, names),
                "objective": num(e.objective),
                "size": e.support_size,
                "support": len(supports) - 1,
            }
        )
    return {"names": list(names), "supports": supports, "frames": frames}


def _thin(events: Sequence[Event]) -> list[bool]:
    n = len(events)
    if n <= MAX_FRAMES:
        return [True] * n
    iterates = [i for i, e in enumerate(events) if e.kind == "iterate"]
    budget = max(MAX_FRAMES - (n - len(iterates)), 1)
    stride = math.ceil(len(iterates) / budget)
    dropped = {i for pos, i in enumerate(iterates) if pos % stride}
    return [i not in dropped for i in range(n)]


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

    lay = layout(
        title + note,
        "Step (event number)",
        "Feature (first admitted at the top)",
        height=max(300, min(1500, 150 + 26 * len(rows))),
    )
    lay["yaxis"].update(
        type="category",
        categoryorder="array",
        categoryarray=[label[j] for j in rows],
        autorange="reversed",
        automargin=True,
        ticks="",
        gridcolor="#f0f0f0",
    )
    lay["xaxis"].update(range=[-0.5, last + 0.5])
    lay["shapes"] = cursor_shapes(last, last)
    if best_step is not None:
        lay["shapes"].append(_best_line(best_step))
        lay["annotations"] = [_best_note(best_step, k)]
    if truth:
        lay["yaxis"]["title"]["text"] = "Feature (★ = in the true support)"
    return {"data": data, "layout": lay}


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


def _best_note(step: int, k: int | None) -> dict[str, Any]:
    what = f"best {k}-feature support" if k else "answer"
    return {
        "x": step,
        "y": 1,
        "xref": "x",
        "yref": "paper",
        "yanchor": "top",
        "xanchor": "left",
        "xshift": 4,
        "text": f"{what}<br>(step {step})",
        "showarrow": False,
        "align": "left",
        "font": {"size": 11},
        "bgcolor": "rgba(255,255,255,0.85)",
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
            "hovertemplate": "step %{x}<br>objective %{y:.5g}<extra></extra>",
        }
    ]
    data += _event_markers(
        events, steps, values, "step %{customdata}: {label}<br>objective %{y:.5g}<extra></extra>"
    )
    lay = layout(title, "Step (event number)", "Objective (training loss)")
    last = steps[-1]
    lay["xaxis"].update(range=[-0.5, last + 0.5])
    lay["shapes"] = cursor_shapes(last, last) if cursor else []
    if best_step is not None:
        lay["shapes"].append(_best_line(best_step))
        lay["annotations"] = [_best_note(best_step, k)]
    return {"data": data, "layout": lay}


def _event_markers(
    events: Sequence[Event], xs: Sequence[float], values: Sequence[float], hover: str
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
        "step %{customdata}: {label}<br>size %{x}, objective %{y:.5g}<extra></extra>",
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
                "hovertemplate": "best size-%{x} support<br>objective %{y:.5g}<extra></extra>",
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
                "hovertemplate": "%{y}: true %{x:.4g}<extra></extra>",
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
        "hovertemplate": "%{y}: %{x:.4g}<extra></extra>",
    }


# --------------------------------------------------------------------------- support recovery


@dataclass
class Roc:
    label: str
    fpr: list[float]
    tpr: list[float]
    auc: float


def roc_of(
    events: Sequence[Event], true_support: Sequence[int], n_features: int, label: str
) -> Roc | None:
    """Support-recovery ROC with features ranked by the order the path first admitted them
    (``engine.metrics.path_order``); None when the truth has no true or no false feature."""
    try:
        curve = metrics.roc_curve(metrics.path_order(events), list(true_support), n_features)
    except ValueError:
        return None
    return Roc(
        label, [float(v) for v in curve.fpr], [float(v) for v in curve.tpr], float(curve.auc)
    )


def roc_figure(curves: Sequence[Roc], title: str = "Support-recovery ROC") -> Figure:
    if not curves:
        return empty_figure(title, "The true support is unknown for this data set.")
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "chance",
            "x": [0, 1],
            "y": [0, 1],
            "line": {"color": GREY, "dash": "dash", "width": 1},
            "hoverinfo": "skip",
        }
    ]
    for i, c in enumerate(curves):
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"{c.label} (AUC {c.auc:.3f})",
                "x": c.fpr,
                "y": c.tpr,
                "line": {
                    "color": SERIES[i % len(SERIES)],
                    "width": 2.5,
                    "dash": DASHES[i % len(DASHES)],
                },
                "hovertemplate": f"{c.label}<br>FPR %{{x:.3f}}, TPR %{{y:.3f}}<extra></extra>",
            }
        )
    lay = layout(title, "False positive rate", "True positive rate (recall)", height=400)
    lay["xaxis"].update(range=[-0.02, 1.02], constrain="domain")
    lay["yaxis"].update(range=[-0.02, 1.02], scaleanchor="x", scaleratio=1)
    lay["legend"].update(
        orientation="v",
        yanchor="bottom",
        y=0.02,
        xanchor="right",
        x=0.98,
        bgcolor="rgba(255,255,255,0.85)",
    )
    lay["margin"]["t"] = 50
    return {"data": data, "layout": lay}


# --------------------------------------------------------------------------- comparisons


@dataclass
class Series:
    label: str
    x: list[float]
    y: list[float | None]


def by_k_figure(series: Sequence[Series], *, title: str, ytitle: str) -> Figure:
    if not any(s.x for s in series):
        return empty_figure(title, "No finished run has a path yet.")
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": s.label,
            "x": s.x,
            "y": s.y,
            "line": {"color": SERIES[i % len(SERIES)], "dash": DASHES[i % len(DASHES)], "width": 2},
            "marker": {
                "symbol": SYMBOLS[i % len(SYMBOLS)],
                "size": 8,
                "color": SERIES[i % len(SERIES)],
            },
            "hovertemplate": f"{s.label}<br>k = %{{x}}: %{{y:.5g}}<extra></extra>",
        }
        for i, s in enumerate(series)
    ]
    lay = layout(title, "k (support size)", ytitle, height=380)
    xs = [x for s in series for x in s.x]
    if xs and max(xs) <= 25:
        lay["xaxis"]["dtick"] = 1
    return {"data": data, "layout": lay}


def time_figure(
    labels: Sequence[str],
    engine_seconds: Sequence[float | None],
    run_seconds: Sequence[float | None],
    title: str = "Time",
) -> Figure:
    if not labels:
        return empty_figure(title, "No run yet.")
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": "engine (selection only)",
            "y": list(labels),
            "x": list(engine_seconds),
            "marker": {"color": BLUE},
            "hovertemplate": "%{y}: %{x:.3g} s in the engine<extra></extra>",
        },
        {
            "type": "bar",
            "orientation": "h",
            "name": "whole run (load, select, evaluate)",
            "y": list(labels),
            "x": list(run_seconds),
            "marker": {
                "color": ORANGE,
                "pattern": hatch(),
            },
            "hovertemplate": "%{y}: %{x:.3g} s in all<extra></extra>",
        },
    ]
    lay = layout(title, "Seconds", "Run", height=max(240, 120 + 50 * len(labels)))
    lay["barmode"] = "group"
    lay["yaxis"].update(type="category", autorange="reversed", automargin=True)
    return {"data": data, "layout": lay}


# --------------------------------------------------------------------------- teaching


def candidates_figure(
    names: Sequence[str],
    scores: Sequence[float | None],
    *,
    chosen: int | None,
    backward: bool,
    accepted: bool | None,
    threshold: float | None,
    score_label: str,
    title: str,
) -> Figure:
    """Every recorded candidate's score, best first, the chosen one highlighted (colour,
    hatching and a label); backward checks also draw the deletion threshold nu * delta."""
    if not names:
        return empty_figure(title, "No candidate scores were recorded for this step.")
    if backward:
        pick = VERMILLION if accepted else GREEN
        pick_name = "deleted" if accepted else "cheapest deletion (kept)"
        other_name = "other selected features"
    else:
        pick, pick_name, other_name = BLUE, "chosen", "other candidates"
    rows = list(zip(names, scores, strict=True))
    data = []
    for is_pick, label, colour in ((False, other_name, "#b9b9b9"), (True, pick_name, pick)):
        part = [(n, s) for i, (n, s) in enumerate(rows) if (i == chosen) == is_pick]
        if not part:
            continue
        marker: dict[str, Any] = {
            "color": colour,
            "line": {"color": "#333" if is_pick else colour, "width": 1.5},
        }
        if is_pick:
            marker["pattern"] = hatch()
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": label,
                "y": [n for n, _ in part],
                "x": [s for _, s in part],
                "marker": marker,
                "text": [fmt(s, 3) for _, s in part],
                "textposition": "outside",
                "cliponaxis": False,
                "hovertemplate": f"%{{y}}: {score_label} %{{x:.5g}}<extra></extra>",
            }
        )
    lay = layout(
        title,
        score_label,
        "Feature",
        height=max(260, min(1300, 130 + 24 * len(rows))),
    )
    lay["yaxis"].update(
        type="category",
        categoryorder="array",
        categoryarray=list(names),
        autorange="reversed",
        automargin=True,
    )
    lay["barmode"] = "overlay"
    lay["bargap"] = 0.25
    finite = [s for s in scores if s is not None]
    top = max([*finite, threshold or 0.0, 0.0])
    lay["xaxis"].update(range=[min(0.0, *finite) if finite else 0.0, top * 1.18 or 1.0])
    if backward and threshold is not None:
        lay["shapes"] = [
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": threshold,
                "x1": threshold,
                "y0": 0,
                "y1": 1,
                "line": {"color": BLACK, "width": 2, "dash": "dash"},
            }
        ]
        lay["annotations"] = [
            {
                "x": threshold,
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "yanchor": "top",
                "xanchor": "left",
                "xshift": 4,
                "showarrow": False,
                "text": f"threshold {fmt(threshold, 3)}",
                "font": {"size": 12},
                "bgcolor": "rgba(255,255,255,0.85)",
            }
        ]
    return {"data": data, "layout": lay}
