"""The stability page's figures: the stability path (selection frequency against k, one line
per feature, the threshold and the bound on false selections drawn), the features x k heatmap
of frequencies, and the methods' stability index against k."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from app.web.charts.style import (
    BLACK,
    BLUE,
    DASHES,
    GREY,
    SERIES,
    SYMBOLS,
    VERMILLION,
    Figure,
    empty_figure,
    layout,
)

MAX_NAMED = 12  # features drawn in colour, with a legend entry; the others thin and grey
MAX_HEATMAP_ROWS = 60
# The features' colours: the palette without the threshold's (vermillion) and the bound's
# (black-grey), so that neither is mistaken for a feature.
LINES = tuple(c for c in SERIES if c not in (VERMILLION, BLACK))


def ranked_units(summary: dict[str, Any]) -> list[int]:
    """Units by decreasing largest frequency over k, then by decreasing mean frequency."""
    freq = summary["frequency"]
    n_units = len(summary["frequency_max"])

    def key(u: int) -> tuple[float, float, int]:
        column = [row[u] or 0.0 for row in freq]
        return (-(summary["frequency_max"][u] or 0.0), -sum(column), u)

    return sorted(range(n_units), key=key)


def path_figure(
    summary: dict[str, Any], names: Sequence[str], *, method: str, run_k: int | None = None
) -> Figure:
    """Frequency of every feature against k; the most frequent ``MAX_NAMED`` in colour, the
    rest grey; the threshold pi (dashed) and, on the right axis, the bound on the expected
    number of false selections in the stable set at each k."""
    title = f"Stability path of {method}: selection frequency by k"
    if summary is None:
        return empty_figure(title, "No subsample has finished.")
    ks = summary["k"]
    freq = summary["frequency"]
    order = ranked_units(summary)
    named = [u for u in order[:MAX_NAMED] if (summary["frequency_max"][u] or 0) > 0]
    rest = [u for u in order if u not in named and (summary["frequency_max"][u] or 0) > 0]
    data: list[dict[str, Any]] = []
    if rest:
        xs: list[Any] = []
        ys: list[Any] = []
        text: list[Any] = []
        for u in rest:
            xs += [*ks, None]
            ys += [*(row[u] for row in freq), None]
            text += [names[u]] * len(ks) + [None]
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"{len(rest)} other features",
                "x": xs,
                "y": ys,
                "text": text,
                "line": {"color": GREY, "width": 1},
                "opacity": 0.6,
                "hovertemplate": "%{text}<br>k = %{x}: %{y:.2f}<extra></extra>",
            }
        )
    for i, u in enumerate(named):
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": names[u],
                "x": ks,
                "y": [row[u] for row in freq],
                "customdata": [u] * len(ks),
                "line": {
                    "color": LINES[i % len(LINES)],
                    "width": 2.5,
                    "dash": DASHES[(i // len(LINES)) % len(DASHES)],
                },
                "marker": {"size": 6},
                "hovertemplate": f"{names[u]}<br>k = %{{x}}: frequency %{{y:.2f}}<extra></extra>",
            }
        )
    pi = summary["threshold"]
    data.append(
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"threshold π = {pi:g}",
            "x": [ks[0] - 0.5, ks[-1] + 0.5],
            "y": [pi, pi],
            "line": {"color": VERMILLION, "dash": "dash", "width": 2},
            "hovertemplate": f"threshold {pi:g}<extra></extra>",
        }
    )
    bound = summary["bound"]
    data.append(
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "bound on E[false selections] (right axis)",
            "x": ks,
            "y": bound,
            "yaxis": "y2",
            "line": {"color": "#444", "dash": "dot", "width": 1.5},
            "marker": {"symbol": "x", "size": 7, "color": "#444"},
            "hovertemplate": "k = %{x}: E[V] ≤ %{y:.3g}<extra></extra>",
        }
    )
    lay = layout(title, "k (features selected per half sample)", "selection frequency", height=440)
    lay["yaxis"].update(range=[-0.02, 1.02])
    top = max((b for b in bound if b is not None and math.isfinite(b)), default=1.0)
    lay["yaxis2"] = {
        "title": {"text": "E[false selections] ≤"},
        "overlaying": "y",
        "side": "right",
        "range": [0, max(top, 1.0) * 1.05],
        "tickmode": "auto",
        "nticks": 6,
        "showgrid": False,
        "zeroline": False,
        "ticks": "outside",
    }
    # Many lines: the legend goes to the right of the plot, one entry a line.
    lay["legend"] = {
        "orientation": "v",
        "x": 1.08,
        "xanchor": "left",
        "y": 1,
        "yanchor": "top",
        "font": {"size": 12},
    }
    lay["margin"].update(r=260, t=56)
    lay["height"] = 460
    if len(ks) <= 25:
        lay["xaxis"]["dtick"] = 1
    if run_k is not None and ks[0] <= run_k <= ks[-1]:
        lay["shapes"] = [
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": run_k,
                "x1": run_k,
                "y0": 0,
                "y1": 1,
                "line": {"color": BLUE, "width": 1.5, "dash": "dot"},
            }
        ]
        lay["annotations"] = [
            {
                "x": run_k,
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "text": f"the run's k = {run_k}",
                "showarrow": False,
                "yanchor": "bottom",
                "font": {"size": 11, "color": BLUE},
            }
        ]
    return {"data": data, "layout": lay}


def heatmap_figure(summary: dict[str, Any], names: Sequence[str], *, method: str) -> Figure:
    """Features (rows, most frequent first) x k (columns), coloured by frequency; a click
    on a cell opens the feature's 'why not' answer at that k (static/js/stability.js reads
    ``customdata``)."""
    title = f"Selection frequency of each feature at each k ({method})"
    if summary is None:
        return empty_figure(title, "No subsample has finished.")
    ks = summary["k"]
    order = ranked_units(summary)[:MAX_HEATMAP_ROWS]
    z = [[summary["frequency"][i][u] for i in range(len(ks))] for u in order]
    rows = len(order)
    lay = layout(title, "k", "feature", height=max(260, 22 * rows + 80), legend=False)
    lay["yaxis"].update(autorange="reversed", automargin=True, ticks="", type="category")
    lay["xaxis"].update(dtick=1 if len(ks) <= 30 else None, side="bottom")
    return {
        "data": [
            {
                "type": "heatmap",
                "x": ks,
                "y": [names[u] for u in order],
                "z": z,
                "zmin": 0,
                "zmax": 1,
                "customdata": [[u] * len(ks) for u in order],
                "colorscale": [[0, "#ffffff"], [0.5, "#9ecae1"], [1, BLUE]],
                "colorbar": {"title": {"text": "frequency"}, "thickness": 14},
                "xgap": 1,
                "ygap": 1,
                "hovertemplate": "%{y}, k = %{x}: %{z:.2f}<br>click: why (not) this feature"
                "<extra></extra>",
            }
        ],
        "layout": lay,
    }


def index_figure(methods: Sequence[dict[str, Any]]) -> Figure:
    """Nogueira et al.'s stability index against k for every method, with its jackknife
    standard error over pairs."""
    title = "How stable is each method? Stability index by k (1: the same set every time)"
    shown = [m for m in methods if m["summary"] is not None]
    if not shown:
        return empty_figure(title, "No subsample has finished.")
    data = []
    for i, m in enumerate(shown):
        s = m["summary"]
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": m["algorithm"],
                "x": s["k"],
                "y": s["nogueira"],
                "error_y": {
                    "type": "data",
                    "array": [e if e is not None else 0 for e in s["nogueira_se"]],
                    "visible": True,
                    "color": SERIES[i % len(SERIES)],
                },
                # Dashes and symbols too: equal indices put one method's line on another's.
                "line": {
                    "color": SERIES[i % len(SERIES)],
                    "width": 2.5,
                    "dash": DASHES[i % len(DASHES)],
                },
                "marker": {"size": 8, "symbol": SYMBOLS[i % len(SYMBOLS)]},
                "hovertemplate": f"{m['algorithm']}<br>k = %{{x}}: %{{y:.3f}}<extra></extra>",
            }
        )
    lay = layout(title, "k", "stability index (Nogueira et al. 2018)", height=360)
    if len(shown[0]["summary"]["k"]) <= 25:
        lay["xaxis"]["dtick"] = 1
    return {"data": data, "layout": lay}
