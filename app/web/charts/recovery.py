"""Support recovery: the ROC of a run's admission order against the true support (run and
compare pages)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.web.charts.style import DASHES, GREY, SERIES, Figure, empty_figure, layout
from engine import metrics
from engine.trace import Event

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
