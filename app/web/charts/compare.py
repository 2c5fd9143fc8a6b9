"""The compare page's figures: objective and test error against k, and time per run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.web.charts.style import (
    BLUE,
    DASHES,
    HOVER,
    ORANGE,
    SERIES,
    SYMBOLS,
    Figure,
    empty_figure,
    hatch,
    layout,
)

# --------------------------------------------------------------------------- comparisons


@dataclass
class Series:
    label: str
    x: Sequence[float]
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
            "hovertemplate": f"{s.label}<br>k = %{{x}}: %{{y:{HOVER}}}<extra></extra>",
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
            "hovertemplate": f"%{{y}}: %{{x:{HOVER}}} s in the engine<extra></extra>",
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
            "hovertemplate": f"%{{y}}: %{{x:{HOVER}}} s in all<extra></extra>",
        },
    ]
    lay = layout(title, "Seconds", "Run", height=max(240, 120 + 50 * len(labels)))
    lay["barmode"] = "group"
    lay["yaxis"].update(type="category", autorange="reversed", automargin=True)
    return {"data": data, "layout": lay}
