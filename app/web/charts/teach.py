"""The teaching mode's figure: every candidate's score behind one decision."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.web.charts.style import (
    BLACK,
    BLUE,
    GREEN,
    HOVER,
    VERMILLION,
    Figure,
    empty_figure,
    fmt,
    hatch,
    layout,
)

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
                "hovertemplate": f"%{{y}}: {score_label} %{{x:{HOVER}}}<extra></extra>",
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
