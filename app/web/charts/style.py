"""What every figure shares: the palette, the markers of each event kind, number formatting,
the layout, and the empty figure.

The server builds the figure JSON and the browser only renders it (``Plotly.react``). Every
figure names features (never indices), titles its axes, keeps a legend, and uses the
Okabe-Ito colour-blind-safe palette; additions and deletions differ by marker shape too
(triangle up / cross), so the charts read in greyscale and for colour-blind readers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from app.web.charts.kinds import EVENT_KINDS

Figure = dict[str, Any]

# Okabe & Ito (2008), "Color Universal Design".
BLUE, VERMILLION, GREEN, ORANGE = "#0072B2", "#D55E00", "#009E73", "#E69F00"
SKY, PURPLE, YELLOW, BLACK, GREY = "#56B4E9", "#CC79A7", "#F0E442", "#000000", "#8c8c8c"
SERIES = (BLUE, VERMILLION, GREEN, ORANGE, PURPLE, SKY, BLACK, YELLOW)
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "star", "hexagon", "pentagon")

# The event kinds' markers; their names are the pages' one vocabulary (charts/kinds.py).
ADD = {"color": BLUE, "symbol": "triangle-up", "label": EVENT_KINDS["add"].name}
REMOVE = {"color": VERMILLION, "symbol": "x", "label": EVENT_KINDS["remove"].name}
SWAP_IN = {"color": GREEN, "symbol": "diamond", "label": f"{EVENT_KINDS['swap'].name}: in"}
SWAP_OUT = {
    "color": VERMILLION,
    "symbol": "diamond-open",
    "label": f"{EVENT_KINDS['swap'].name}: out",
}
CHECK = {"color": GREY, "symbol": "circle-open", "label": f"{EVENT_KINDS['check'].name}: kept"}

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


# Plotly's hover format for a number: ``digits`` significant digits in plain decimals with
# thousands separators (d3's "r"), never 1.508e+05 for an ordinary objective.
HOVER = ",.5~r"


def fmt(x: Any, digits: int = 4) -> str:
    """A number as people write it: ``digits`` significant digits, thousands separated, in
    plain decimals from 0.001 to a billion (150,812 rather than 1.508e+05); scientific
    notation only beyond."""
    value = num(x)
    if value is None:
        return DASH
    size = abs(value)
    if size == 0 or not 1e-3 <= size < 1e9:
        return f"{value:.{digits}g}"
    decimals = max(digits - 1 - math.floor(math.log10(size)), 0)
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


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
