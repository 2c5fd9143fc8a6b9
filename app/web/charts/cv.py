"""The cross-validation page's figure: held-out error against k, with standard-error bars,
each fold's own curve beneath, and the k each rule chooses."""

from __future__ import annotations

from collections.abc import Sequence

from app.web.charts.style import BLUE, GREY, HOVER, ORANGE, VERMILLION, Figure, empty_figure, layout

RULE_NAMES = {"min": "minimum rule", "1se": "one-standard-error rule"}


def cv_curve_figure(
    k: Sequence[int],
    mean: Sequence[float],
    se: Sequence[float],
    *,
    k_min: int,
    k_1se: int,
    rule: str,
    error_name: str,
    folds: Sequence[Sequence[float]] = (),
    title: str = "Held-out error by k",
) -> Figure:
    """``mean[i]`` and ``se[i]``: the error at ``k[i]`` over the folds; ``folds``: each
    fold's errors (drawn thin, grey); the chosen k (``rule``) is marked, and so is the other
    rule's k when it differs, with the bound the one-standard-error rule reads."""
    if not k:
        return empty_figure(title, "No fold has finished.")
    ks, chosen = list(k), k_min if rule == "min" else k_1se
    other = k_1se if rule == "min" else k_min
    data: list[dict] = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "each fold",
            "legendgroup": "folds",
            "showlegend": i == 0,
            "x": ks,
            "y": list(errors),
            "line": {"color": GREY, "width": 1},
            "opacity": 0.6,
            "hovertemplate": f"fold {i + 1}<br>k = %{{x}}: %{{y:{HOVER}}}<extra></extra>",
        }
        for i, errors in enumerate(folds)
    ]
    best = min(range(len(ks)), key=lambda i: (mean[i], i))
    bound = mean[best] + se[best]
    data.append(
        {
            "type": "scatter",
            "mode": "lines",
            "name": "minimum + 1 standard error",
            "x": [ks[0] - 0.5, ks[-1] + 0.5],
            "y": [bound, bound],
            "line": {"color": ORANGE, "dash": "dash", "width": 1.5},
            "hovertemplate": f"minimum + 1 SE: %{{y:{HOVER}}}<extra></extra>",
        }
    )
    data.append(
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "mean over the folds ± 1 standard error",
            "x": ks,
            "y": list(mean),
            "error_y": {"type": "data", "array": list(se), "visible": True, "color": BLUE},
            "line": {"color": BLUE, "width": 2.5},
            "marker": {"color": BLUE, "size": 7, "symbol": "circle"},
            "hovertemplate": f"k = %{{x}}: %{{y:{HOVER}}} ± %{{error_y.array:{HOVER}}}"
            "<extra></extra>",
        }
    )
    if other != chosen:
        data.append(_mark(other, mean, ks, f"{RULE_NAMES[_other(rule)]}: k = {other}", False))
    data.append(_mark(chosen, mean, ks, f"chosen ({RULE_NAMES[rule]}): k = {chosen}", True))
    lay = layout(title, "k (features selected)", f"held-out {error_name}", height=400)
    if len(ks) <= 25:
        lay["xaxis"]["dtick"] = 1
    lay["shapes"] = [
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": chosen,
            "x1": chosen,
            "y0": 0,
            "y1": 1,
            "line": {"color": VERMILLION, "width": 2, "dash": "dot"},
        }
    ]
    return {"data": data, "layout": lay}


def _other(rule: str) -> str:
    return "1se" if rule == "min" else "min"


def _mark(k: int, mean: Sequence[float], ks: list[int], name: str, chosen: bool) -> dict:
    color = VERMILLION if chosen else ORANGE
    return {
        "type": "scatter",
        "mode": "markers",
        "name": name,
        "x": [k],
        "y": [mean[ks.index(k)]],
        "marker": {
            "color": color if chosen else "white",
            "size": 18 if chosen else 15,
            "symbol": "star" if chosen else "diamond",
            "line": {"color": color, "width": 2},
        },
        "hovertemplate": f"{name}<br>mean %{{y:{HOVER}}}<extra></extra>",
    }
