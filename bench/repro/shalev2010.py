"""Shalev-Shwartz, Srebro & Zhang (SIAM J. Optim. 2010): trading accuracy for sparsity.

The paper has no experiments: it bounds the number of features an algorithm needs to come
within eps of a reference predictor w_bar. What this reproduction shows
(``python bench/reproduce.py shalev2010``) is the objective against sparsity k = 1..K of the
paper's algorithms on two of the engine's generators, the sparsity each needs to reach
``Q(w_bar) + eps`` as eps shrinks (the trade-off the theorems are about), and those numbers
beside the theorems' bounds:

* Algorithm 3, fully corrective forward greedy (``forward-obj``; and its gradient selection
  rule, ``omp``, for which the paper says identical results hold), Theorem 2.7:
  ``k >= 2 beta ||w_bar||_1^2 / eps`` features suffice; Theorem 2.8 (sparse strong convexity
  lambda): ``k >= ||w_bar||_0 (beta / lambda) log((Q(0) - Q(w_bar)) / eps)``.
* Algorithm 4, replacement steps after Algorithm 3 (``forward-obj`` with ``replacement=full``,
  and the simpler gradient / smallest-weight swap, ``replacement`` with ``variant=simple``),
  Theorem 2.9: ``k + 1 >= ||w_bar||_0 (1 + 4 beta^2 / lambda^2)`` features reach any eps; only
  the running time grows with 1/eps.
* Algorithm 2, forward greedy selection on the l1 ball of radius B1 (``frank-wolfe``; at most
  one new feature per iteration, so we read the best objective with at most k features along
  its iterates), Theorem 2.4: ``8 beta B1^2 / eps`` iterations reach ``Q(w*) + eps``, w* the
  l1-constrained optimum.
* Algorithm 1, randomized sparsification of w* with k draws (``randomized-sparsification``,
  best of 10 draws), Theorem 2.1: ``k >= beta ||w*||_1^2 / eps`` (with probability 1/2).

So: the l1-based methods pay in B1^2 / eps, the fully corrective one in ||w_bar||_1^2 / eps for
every w_bar at once (no B1 to tune), and, under sparse strong convexity, only in
``log(1/eps)`` (Theorem 2.8) or not at all (Theorem 2.9). The paper's qualitative statements
are checked as claims: fully corrective greedy is never worse than Frank-Wolfe at equal
sparsity, replacement steps never worsen the objective at fixed k, randomized sparsification
needs more features for the same objective, and the observed sparsities respect the bounds.

Our choices (the paper has no experimental setting to deviate from):

* **Problems.** Least squares on ``zhang2008`` (n = 100, d = 500, 5 true features, decoy
  columns correlated 0.85 with mixes of true ones, columns of squared norm n): the decoys fool
  forward greedy, which is what replacement steps repair. Logistic loss with lambda = 0.01 (Liu
  et al.'s synthetic setting, which also makes the risk strongly convex, Remark 2.1) on
  ``liu2014_logistic`` with 10 true features and ``||beta*|| = 2`` instead of 5: at norm 5 the
  classes are nearly separable and every method reaches the ridge floor within 5 features, so
  there is no trade-off to see.
* **Reference predictor** w_bar: the minimiser of Q on the true support (any w_bar is allowed
  by the theorems; this one is sparse and nearly optimal). eps is a fraction of
  ``Q(0) - Q(w_bar)``, Q(0) the intercept-only objective.
* **beta** is the l1-smoothness of our objective, ``c max_j ||x_j - mean_j||^2 / n + lam``
  (c = 1 for least squares, 1/4 for logistic): the paper's beta-smooth loss on x in [-1, 1]^d
  is the case of columns bounded by 1. **lambda** for Theorems 2.8-2.9: for least squares the
  smallest eigenvalue of the (centred) Gram matrix / n on supp(w_bar) union the K-feature
  greedy support, an upper estimate of the sparse strong convexity constant (so the bounds
  printed are lower estimates of the theorems' requirements); for logistic the ridge weight,
  a valid lower bound.
* **B1** = ||w_bar||_1 for Frank-Wolfe and the sparsification; Frank-Wolfe also at 0.5 and 2
  x ||w_bar||_1 to show the B1 side of the trade-off. Frank-Wolfe runs 3000 iterations; the
  sparsification's l1 solution 1000 (its gap is reported).
* **Repetitions:** 20 seeds in full mode, 3 in quick mode (K = 12 instead of 20). Repetition r
  of problem j uses ``numpy.random.default_rng([seed, j, r])``. Bands are the quartiles over
  repetitions (the objective spans orders of magnitude, so mean +- sd would go negative on the
  log scale).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

import engine
from engine.datasets import generate
from engine.registry import REGISTRY

from .report import Report, ReproConfig, fmt

TITLE = (
    "Shalev-Shwartz, Srebro & Zhang (SIAM J. Optim. 2010): trading accuracy for sparsity "
    "in optimization problems with sparsity constraints"
)

# Curves: label -> colour. "FW xB1" are Frank-Wolfe at B1 = x ||w_bar||_1.
CURVES = {
    "fully corrective (Alg. 3)": "#111111",
    "OMP (Alg. 3, gradient rule)": "#7f7f7f",
    "+ replacement (Alg. 4)": "#d62728",
    "+ simple replacement": "#ff9896",
    "Frank-Wolfe (Alg. 2)": "#1f77b4",
    "randomized sparsification (Alg. 1)": "#2ca02c",
}
FC, OMP, REP, SIMPLE, FW, RS = CURVES
B1_MULTIPLIERS = (0.5, 1.0, 2.0)


@dataclass(frozen=True)
class ProblemSpec:
    """One generator with its objective."""

    key: str
    label: str
    objective: str
    generator: str
    params: dict[str, Any]
    obj_params: dict[str, Any]


PROBLEMS = (
    ProblemSpec(
        "least_squares", "least squares on zhang2008", "least_squares", "zhang2008", {}, {}
    ),
    ProblemSpec(
        "logistic",
        "logistic (lambda = 0.01) on liu2014_logistic, s = 10, norm 2",
        "logistic",
        "liu2014_logistic",
        {"s": 10, "norm": 2.0},
        {"lam": 0.01},
    ),
)


@dataclass(frozen=True)
class Config:
    reps: int
    K: int
    fractions: tuple[float, ...]
    fw_max_iter: int
    rs_max_iter: int
    rs_repeats: int
    quick: bool

    @classmethod
    def for_context(cls, ctx: ReproConfig) -> Config:
        fractions = (0.3, 0.1, 0.03, 0.01)
        if ctx.quick:
            return cls(3, 12, fractions, 3000, 1000, 10, True)
        return cls(20, 20, fractions, 3000, 1000, 10, False)


# ----------------------------------------------------------------------------- one problem


@dataclass
class Reference:
    """w_bar (the fit on the true support) and the constants of the bounds."""

    q0: float
    q_bar: float
    l1_bar: float
    l0_bar: int
    beta: float
    lam: float


def reference(
    X: np.ndarray, y: np.ndarray, support: np.ndarray, spec: ProblemSpec, greedy_support: np.ndarray
) -> Reference:
    obj = REGISTRY.objective(spec.objective).factory(X, y, **spec.obj_params)
    bar = obj.fit_support(sorted(support.tolist()))
    q0 = obj.fit_support([]).value
    if spec.objective == "least_squares":
        # Sparse strong convexity estimated on one set of size <= K + ||w_bar||_0 (docstring).
        cols = np.union1d(support, greedy_support)
        Xc = X[:, cols] - X[:, cols].mean(axis=0)
        lam = float(np.linalg.eigvalsh(Xc.T @ Xc / X.shape[0])[0])
    else:
        lam = float(spec.obj_params["lam"])
    return Reference(
        float(q0),
        float(bar.value),
        float(np.abs(bar.coef).sum()),
        int(support.size),
        float(obj.l1_smoothness()),
        lam,
    )


def path_curve(X, y, spec: ProblemSpec, K: int, algorithm: str) -> tuple[list[float], np.ndarray]:
    """Objective after each forward step of a greedy path to K features (the path is nested,
    so one run gives every k), and the final support."""
    res = engine.select(
        X,
        y,
        algorithm=algorithm,
        objective=spec.objective,
        k=K,
        **spec.obj_params,
        standardize=False,
    )
    values = [float(e.objective) for e in res.trace if e.kind == "add"]
    return values, res.support


def replacement_curve(X, y, spec: ProblemSpec, K: int, variant: str) -> list[float]:
    """Objective of Algorithm 3 to k features followed by Algorithm 4, for every k (a run per
    k: replacement steps are post-processing at a fixed k)."""
    out = []
    for k in range(1, K + 1):
        if variant == "full":
            res = engine.select(
                X,
                y,
                algorithm="forward-obj",
                objective=spec.objective,
                k=k,
                replacement="full",
                **spec.obj_params,
                standardize=False,
            )
        else:
            res = engine.select(
                X,
                y,
                algorithm="replacement",
                objective=spec.objective,
                k=k,
                variant="simple",
                **spec.obj_params,
                standardize=False,
            )
        out.append(float(res.objective))
    return out


def frank_wolfe_curve(X, y, spec: ProblemSpec, K: int, B1: float, max_iter: int) -> dict[str, Any]:
    """Best objective among Algorithm 2's iterates with at most k nonzeros, k = 1..K (nan
    before the first iterate of that size), and iterations run; the duality-gap stop is
    disabled (epsilon tiny) so that the run shows the whole path up to max_iter."""
    res = engine.select(
        X,
        y,
        algorithm="frank-wolfe",
        objective=spec.objective,
        B1=B1,
        epsilon=1e-12,
        max_iter=max_iter,
        **spec.obj_params,
        standardize=False,
    )
    best = np.full(K + 1, np.inf)
    for e in res.trace:
        if e.kind in ("add", "iterate", "remove") and e.support_size <= K:
            best[e.support_size] = min(best[e.support_size], float(e.objective))
    best = np.minimum.accumulate(best)[1:]
    return {
        "curve": [float(v) if math.isfinite(v) else math.nan for v in best],
        "iterations": sum(e.kind != "stop" for e in res.trace),
    }


def sparsification_curve(
    X, y, spec: ProblemSpec, K: int, B1: float, setup: Config, seed: int
) -> dict[str, Any]:
    """Algorithm 1 with k = 1..K draws (best of ``rs_repeats``): objective and the support
    size actually used (draws can repeat a coordinate)."""
    values, sizes, gap, l1 = [], [], math.nan, math.nan
    for k in range(1, K + 1):
        res = engine.select(
            X,
            y,
            algorithm="randomized-sparsification",
            objective=spec.objective,
            k=k,
            B1=B1,
            n_repeats=setup.rs_repeats,
            max_iter=setup.rs_max_iter,
            random_state=seed + k,
            **spec.obj_params,
            standardize=False,
        )
        values.append(float(res.objective))
        sizes.append(int(res.support.size))
        stop = res.trace[-1].info
        gap, l1 = float(stop["l1_gap"]), float(stop["l1_norm"])
    return {"curve": values, "sizes": sizes, "l1_gap": gap, "l1_norm": l1}


def run_problem(spec: ProblemSpec, j: int, r: int, setup: Config, seed: int) -> dict[str, Any]:
    """Every curve on repetition r of problem j."""
    rng = np.random.default_rng([seed, j, r])
    prob = generate(spec.generator, random_state=rng, **spec.params)
    X, y = np.asarray(prob.X), np.asarray(prob.y)
    K = setup.K
    fc, fc_support = path_curve(X, y, spec, K, "forward-obj")
    ref = reference(X, y, np.asarray(prob.support), spec, fc_support)
    curves = {
        FC: fc,
        OMP: path_curve(X, y, spec, K, "omp")[0],
        REP: replacement_curve(X, y, spec, K, "full"),
        SIMPLE: replacement_curve(X, y, spec, K, "simple"),
    }
    fw = {
        m: frank_wolfe_curve(X, y, spec, K, m * ref.l1_bar, setup.fw_max_iter)
        for m in B1_MULTIPLIERS
    }
    curves[FW] = fw[1.0]["curve"]
    rs = sparsification_curve(X, y, spec, K, ref.l1_bar, setup, int(rng.integers(2**31)))
    curves[RS] = rs["curve"]
    return {
        "ref": dataclasses.asdict(ref),
        "curves": curves,
        "rs_sizes": rs["sizes"],
        "rs_l1": {"gap": rs["l1_gap"], "norm": rs["l1_norm"]},
        "fw_b1": {str(m): v["curve"] for m, v in fw.items()},
        "fw_iterations": fw[1.0]["iterations"],
    }


def run_all(setup: Config, ctx: ReproConfig) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for j, spec in enumerate(PROBLEMS):
        start = time.perf_counter()
        out[spec.key] = [run_problem(spec, j, r, setup, ctx.seed) for r in range(setup.reps)]
        ctx.progress(
            f"shalev2010: {spec.key}, {setup.reps} repetitions "
            f"({time.perf_counter() - start:.1f} s)"
        )
    return out


# ----------------------------------------------------------------------------- aggregation


def needed(curve: Sequence[float], target: float, sizes: Sequence[int] | None = None) -> float:
    """Fewest features with objective <= target (nan when never reached): the first k of a
    curve, or, with ``sizes``, the smallest support size among the k that reach it."""
    hits = [i for i, v in enumerate(curve) if math.isfinite(v) and v <= target]
    if not hits:
        return math.nan
    if sizes is None:
        return float(hits[0] + 1)
    return float(min(sizes[i] for i in hits))


def features_needed(runs: list[dict[str, Any]], fraction: float) -> dict[str, list[float]]:
    """Per curve, the features needed in every repetition to reach Q(w_bar) + eps with
    eps = fraction (Q(0) - Q(w_bar))."""
    out: dict[str, list[float]] = {name: [] for name in CURVES}
    for run in runs:
        ref = run["ref"]
        target = ref["q_bar"] + fraction * (ref["q0"] - ref["q_bar"])
        for name in CURVES:
            sizes = run["rs_sizes"] if name == RS else None
            out[name].append(needed(run["curves"][name], target, sizes))
    return out


def bounds(ref: dict[str, float], fraction: float) -> dict[str, float]:
    """The theorems' sufficient sparsity for eps = fraction (Q(0) - Q(w_bar))."""
    eps = fraction * (ref["q0"] - ref["q_bar"])
    beta, lam, l1, l0 = ref["beta"], ref["lam"], ref["l1_bar"], ref["l0_bar"]
    return {
        "Thm 2.1 (Alg. 1)": beta * l1**2 / eps,
        "Thm 2.4 (Alg. 2)": math.ceil(8 * beta * l1**2 / eps),
        "Thm 2.7 (Alg. 3)": 2 * beta * l1**2 / eps,
        "Thm 2.8 (Alg. 3)": l0 * beta / lam * math.log((ref["q0"] - ref["q_bar"]) / eps),
        "Thm 2.9 (Alg. 3+4)": l0 * (1 + 4 * beta**2 / lam**2) - 1,
    }


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    a = np.asarray(values, dtype=float)
    a = a[np.isfinite(a)]
    if a.size == 0:
        return math.nan, math.nan, math.nan
    q = np.percentile(a, [25, 50, 75])
    return float(q[0]), float(q[1]), float(q[2])


def curve_quartiles(
    runs: list[dict[str, Any]], name: str, source: str = "curves"
) -> list[tuple[float, float, float]]:
    K = len(runs[0]["curves"][FC])
    return [quartiles([run[source][name][k] for run in runs]) for k in range(K)]


# ----------------------------------------------------------------------------- figures


def _band(
    fig: go.Figure,
    x: list[int],
    q: list[tuple[float, float, float]],
    name: str,
    color: str,
    row: int,
    col: int,
    show: bool,
    dash: str | None = None,
) -> None:
    lo, mid, hi = zip(*q, strict=True)
    fig.add_trace(
        go.Scatter(
            x=x + x[::-1],
            y=list(hi) + list(lo)[::-1],
            fill="toself",
            fillcolor=color,
            opacity=0.15,
            line={"width": 0},
            hoverinfo="skip",
            showlegend=False,
            legendgroup=name,
        ),
        row=row,
        col=col,
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=list(mid),
            mode="lines+markers",
            name=name,
            line={"color": color, "dash": dash},
            marker={"size": 5},
            legendgroup=name,
            showlegend=show,
        ),
        row=row,
        col=col,
    )


SHORT_TITLES = ("least squares (zhang2008)", "logistic (liu2014_logistic)")
LEGEND_BELOW = {"orientation": "h", "y": -0.22, "x": 0.5, "xanchor": "center", "font": {"size": 10}}


def _two_panels() -> go.Figure:
    return make_subplots(rows=1, cols=len(PROBLEMS), subplot_titles=SHORT_TITLES)


def objective_figure(results: dict[str, list[dict[str, Any]]]) -> go.Figure:
    fig = _two_panels()
    for col, spec in enumerate(PROBLEMS, start=1):
        runs = results[spec.key]
        x = list(range(1, len(runs[0]["curves"][FC]) + 1))
        for name, color in CURVES.items():
            _band(fig, x, curve_quartiles(runs, name), name, color, 1, col, col == 1)
        # A line trace rather than add_hline: hline annotations misplace on log axes.
        q_bar = float(np.median([run["ref"]["q_bar"] for run in runs]))
        fig.add_trace(
            go.Scatter(
                x=[x[0], x[-1]],
                y=[q_bar, q_bar],
                mode="lines",
                name="Q(w_bar): fit on the true support",
                line={"dash": "dot", "color": "#888"},
                legendgroup="qbar",
                showlegend=col == 1,
            ),
            row=1,
            col=col,
        )
        fig.update_yaxes(type="log", title_text="objective" if col == 1 else None, row=1, col=col)
        fig.update_xaxes(title_text="sparsity k", row=1, col=col)
    fig.update_layout(
        title="Objective against sparsity (median, quartile bands)",
        template="plotly_white",
        legend=LEGEND_BELOW,
        margin={"b": 130},
    )
    return fig


def tradeoff_figure(results: dict[str, list[dict[str, Any]]], setup: Config) -> go.Figure:
    """Features needed against eps; a point is left out where fewer than half of the
    repetitions reach the target within K (its median would be 'more than K')."""
    fig = _two_panels()
    for col, spec in enumerate(PROBLEMS, start=1):
        runs = results[spec.key]
        per_fraction = [features_needed(runs, f) for f in setup.fractions]
        for name, color in CURVES.items():
            q = [_reached_quartiles(fn[name], setup.K) for fn in per_fraction]
            lo, mid, hi = zip(*q, strict=True)
            fig.add_trace(
                go.Scatter(
                    x=list(setup.fractions),
                    y=list(mid),
                    mode="lines+markers",
                    name=name,
                    line={"color": color},
                    legendgroup=name,
                    showlegend=col == 1,
                    error_y={
                        "type": "data",
                        "symmetric": False,
                        "array": [h - m for h, m in zip(hi, mid, strict=True)],
                        "arrayminus": [m - lo_ for m, lo_ in zip(mid, lo, strict=True)],
                    },
                ),
                row=1,
                col=col,
            )
        fig.update_xaxes(
            type="log",
            autorange="reversed",
            tickvals=list(setup.fractions),
            ticktext=[f"{f:g}" for f in setup.fractions],
            title_text="eps / (Q(0) - Q(w_bar))",
            row=1,
            col=col,
        )
        fig.update_yaxes(title_text="features needed" if col == 1 else None, row=1, col=col)
    fig.update_layout(
        title=f"Sparsity needed to reach Q(w_bar) + eps (median, quartiles; left out: not "
        f"reached within K = {setup.K} in most repetitions)",
        template="plotly_white",
        legend=LEGEND_BELOW,
        margin={"b": 130},
        title_font_size=14,
    )
    return fig


def _reached_quartiles(values: Sequence[float], K: int) -> tuple[float, float, float]:
    """Quartiles with 'not reached' counted as K + 1; nan when most did not reach."""
    a = np.asarray(values, dtype=float)
    if np.isfinite(a).sum() * 2 <= a.size:
        return math.nan, math.nan, math.nan
    return quartiles(np.where(np.isfinite(a), a, K + 1))


def b1_figure(results: dict[str, list[dict[str, Any]]]) -> go.Figure:
    fig = _two_panels()
    colors = {"0.5": "#9ecae1", "1.0": "#1f77b4", "2.0": "#08306b"}
    for col, spec in enumerate(PROBLEMS, start=1):
        runs = results[spec.key]
        x = list(range(1, len(runs[0]["curves"][FC]) + 1))
        for m, color in colors.items():
            q = curve_quartiles(runs, m, "fw_b1")
            _band(fig, x, q, f"Frank-Wolfe, B1 = {m} ||w_bar||_1", color, 1, col, col == 1)
        _band(fig, x, curve_quartiles(runs, FC), FC, CURVES[FC], 1, col, col == 1, dash="dot")
        fig.update_yaxes(type="log", title_text="objective" if col == 1 else None, row=1, col=col)
        fig.update_xaxes(title_text="sparsity k", row=1, col=col)
    fig.update_layout(
        title="Frank-Wolfe: the B1 side of the trade-off (median, quartile bands)",
        template="plotly_white",
        legend=LEGEND_BELOW,
        margin={"b": 120},
    )
    return fig


# ----------------------------------------------------------------------------- report


def objective_section(
    report: Report, results: dict[str, list[dict[str, Any]]], setup: Config
) -> None:
    report.section(
        "Objective against sparsity",
        f"{setup.reps} repetitions per problem, k = 1..{setup.K}. Median objective (quartiles "
        "in brackets) at a few sparsities; Q(w_bar) is the fit on the true support.",
    )
    for spec in PROBLEMS:
        runs = results[spec.key]
        ks = sorted({1, 3, 5, 8, 12, setup.K} & set(range(1, setup.K + 1)))
        rows = []
        for name in CURVES:
            q = curve_quartiles(runs, name)
            rows.append(
                [name]
                + [
                    f"{fmt(q[k - 1][1], 3)} [{fmt(q[k - 1][0], 2)}, {fmt(q[k - 1][2], 2)}]"
                    for k in ks
                ]
            )
        ref = [run["ref"] for run in runs]
        report.text(
            f"**{spec.label}**: median Q(0) = {fmt(np.median([r['q0'] for r in ref]))}, "
            f"Q(w_bar) = {fmt(np.median([r['q_bar'] for r in ref]))}, ||w_bar||_1 = "
            f"{fmt(np.median([r['l1_bar'] for r in ref]))}, ||w_bar||_0 = "
            f"{ref[0]['l0_bar']}, beta = {fmt(np.median([r['beta'] for r in ref]))}, "
            f"lambda = {fmt(np.median([r['lam'] for r in ref]))}."
        )
        report.table(("method", *(f"k = {k}" for k in ks)), rows)
    report.figure(
        objective_figure(results),
        "objective_vs_sparsity",
        "Objective against sparsity for every algorithm (log scale; median and "
        "quartile band over repetitions).",
    )


def tradeoff_section(
    report: Report, results: dict[str, list[dict[str, Any]]], setup: Config
) -> dict[str, Any]:
    report.section(
        "The trade-off: features needed for accuracy eps, against the theorems' bounds",
        "Median features needed (over repetitions; '>K' when fewer than half reach the target "
        f"within K = {setup.K}) to reach Q(w_bar) + eps, and the sparsity each theorem says "
        "suffices (median over repetitions of the bound computed from that repetition's "
        "constants). The bounds are worst-case guarantees and come out orders of magnitude "
        "above what the algorithms need on these problems; what they predict correctly is "
        "the order of the methods and how the requirement grows as eps shrinks.",
    )
    table: dict[str, Any] = {}
    for spec in PROBLEMS:
        runs = results[spec.key]
        rows = []
        table[spec.key] = {}
        for f in setup.fractions:
            fn = features_needed(runs, f)
            med = {name: _median_or_more(vals, setup.K) for name, vals in fn.items()}
            bd = {
                k: float(np.median([bounds(run["ref"], f)[k] for run in runs]))
                for k in bounds(runs[0]["ref"], f)
            }
            table[spec.key][f] = {"needed": fn, "bounds": bd}
            rows.append([f"{f:g}"] + [med[n] for n in CURVES] + [fmt(v, 3) for v in bd.values()])
        report.text(f"**{spec.label}**")
        report.table(("eps / (Q(0) - Q(w_bar))", *CURVES, *bounds(runs[0]["ref"], 0.1)), rows)
    report.figure(
        tradeoff_figure(results, setup),
        "tradeoff",
        "Features needed to reach Q(w_bar) + eps as eps shrinks (median and "
        "quartiles over repetitions).",
    )
    report.figure(
        b1_figure(results),
        "frank_wolfe_b1",
        "Frank-Wolfe at B1 = 0.5, 1 and 2 x ||w_bar||_1 against fully corrective "
        "greedy: a small ball stalls above Q(w_bar) (its optimum is worse), a large "
        "one spends its first features on overshooting vertices (Theorem 2.4's "
        "B1^2 / eps).",
    )
    return table


def _median_or_more(values: Sequence[float], K: int) -> str:
    a = np.asarray(values, dtype=float)
    if np.isfinite(a).sum() * 2 <= a.size:
        return f">{K}"
    return fmt(float(np.median(np.where(np.isfinite(a), a, K + 1))), 3)


# ----------------------------------------------------------------------------- claims


def _pairs(results: dict[str, list[dict[str, Any]]], a: str, b: str, source: str = "curves"):
    """(a, b) objective pairs over every problem, repetition and k where both exist."""
    for runs in results.values():
        for run in runs:
            for va, vb in zip(
                run["curves"][a] if source == "curves" else run[source][a],
                run["curves"][b],
                strict=True,
            ):
                if math.isfinite(va) and math.isfinite(vb):
                    yield va, vb


def check_claims(
    report: Report, results: dict[str, list[dict[str, Any]]], table: dict[str, Any], setup: Config
) -> dict[str, float]:
    stats: dict[str, float] = {}
    pairs = list(_pairs(results, FC, FW))
    ok = sum(a <= b * (1 + 1e-9) for a, b in pairs)
    ratio = float(np.median([b / a for a, b in pairs]))
    stats["fc_le_fw_fraction"], stats["fw_over_fc_median"] = ok / len(pairs), ratio
    # The theorems give Alg. 3 the same guarantee as Alg. 2 (and a better one under sparse
    # strong convexity), not a pointwise win: a decoy-fooled greedy path can trail Frank-Wolfe.
    report.claim(
        "Fully corrective greedy (Alg. 3) is at least as good as Frank-Wolfe (Alg. 2, B1 = "
        "||w_bar||_1) at equal sparsity in at least 95% of cases, and better by a factor of "
        "1.5 on the median",
        ok >= 0.95 * len(pairs) and ratio > 1.5,
        f"{ok} of {len(pairs)} (problem, repetition, k); median Frank-Wolfe / fully corrective "
        f"objective {ratio:.2f}; Frank-Wolfe ahead at: {_where_fw_ahead(results) or 'nowhere'}",
        robust=True,
    )
    for name in (REP, SIMPLE):
        pairs = list(_pairs(results, name, FC))
        worse = sum(a > b * (1 + 1e-9) + 1e-12 for a, b in pairs)
        better = sum(a < b * (1 - 1e-6) for a, b in pairs)
        stats["replacement_better" if name == REP else "simple_better"] = better
        report.claim(
            f"Replacement steps ({'Algorithm 4' if name == REP else 'simple variant'}) never "
            "worsen the objective at fixed k",
            worse == 0,
            f"worse in {worse}, strictly better in {better} of {len(pairs)} "
            "(problem, repetition, k)",
            robust=True,
        )
    ls = table["least_squares"][0.01]["needed"]
    fc_need, rep_need = _median(ls[FC], setup.K), _median(ls[REP], setup.K)
    stats["ls_fc_needed_1pct"], stats["ls_rep_needed_1pct"] = fc_need, rep_need
    report.claim(
        "Least squares: replacement steps reach Q(w_bar) + 1% with fewer features than fully "
        "corrective greedy alone (the decoys fool the forward steps; Theorem 2.9)",
        rep_need < fc_need,
        f"median features {rep_need:g} with replacement, {fc_need:g} without",
        robust=True,
    )
    sparsification_claim(report, results, table, setup, stats)
    growth_claim(report, table, setup, stats)
    violations = _bound_violations(table)
    report.claim(
        "Observed sparsities respect Theorems 2.1, 2.4 and 2.7 (needed <= bound wherever the "
        "target is reached)",
        not violations,
        "; ".join(violations) or "no violation",
        robust=True,
    )
    b1_claim(report, results, stats)
    return stats


def _where_fw_ahead(results: dict[str, list[dict[str, Any]]]) -> str:
    """Where Frank-Wolfe beats the greedy path, as 'problem repetition r: k a-b'."""
    spots = []
    for key, runs in results.items():
        for r, run in enumerate(runs):
            ks = [
                k
                for k, (a, b) in enumerate(
                    zip(run["curves"][FC], run["curves"][FW], strict=True), 1
                )
                if math.isfinite(b) and a > b * (1 + 1e-9)
            ]
            if ks:
                spots.append(f"{key} repetition {r}: k {ks[0]}-{ks[-1]}")
    return ", ".join(spots)


def _median(values: Sequence[float], K: int) -> float:
    a = np.asarray(values, dtype=float)
    return float(np.median(np.where(np.isfinite(a), a, K + 1)))


def _bound_violations(table: dict[str, Any]) -> list[str]:
    pairs = {"Thm 2.1 (Alg. 1)": RS, "Thm 2.4 (Alg. 2)": FW, "Thm 2.7 (Alg. 3)": FC}
    out = []
    for key, per_fraction in table.items():
        for f, entry in per_fraction.items():
            for thm, name in pairs.items():
                worst = np.nanmax(np.asarray(entry["needed"][name], dtype=float), initial=0.0)
                if worst > entry["bounds"][thm]:
                    out.append(
                        f"{key} eps {f:g}: {name} needs {worst:g} > {thm} "
                        f"{entry['bounds'][thm]:.3g}"
                    )
    return out


def sparsification_claim(
    report: Report,
    results: dict[str, list[dict[str, Any]]],
    table: dict[str, Any],
    setup: Config,
    stats: dict[str, float],
) -> None:
    """Randomized sparsification against fully corrective greedy at equal sparsity: its
    objective is higher, so it needs more features for the same objective."""
    pairs = list(_pairs(results, FC, RS))
    ok = sum(a <= b for a, b in pairs)
    ratio = float(np.median([b / a for a, b in pairs]))
    need = {
        key: {n: _median(table[key][0.1]["needed"][n], setup.K) for n in (RS, FC)}
        for key in results
    }
    stats["rs_ge_fc_fraction"], stats["rs_over_fc_median"] = ok / len(pairs), ratio
    report.claim(
        "Randomized sparsification (Alg. 1) needs more features than fully corrective greedy "
        "for the same objective: at equal sparsity its objective is higher in at least 90% of "
        "cases",
        ok >= 0.9 * len(pairs),
        f"higher in {ok} of {len(pairs)} (problem, repetition, k), median ratio {ratio:.2f}; "
        "median features for eps = 10%: "
        + "; ".join(f"{key} {v[RS]:g} vs {v[FC]:g}" for key, v in need.items()),
        robust=True,
    )


def growth_claim(
    report: Report, table: dict[str, Any], setup: Config, stats: dict[str, float]
) -> None:
    """Theorem 2.8: under sparse strong convexity the fully corrective sparsity grows like
    log(1/eps), not like 1/eps (Theorem 2.7's worst case)."""
    lo, hi = max(setup.fractions), min(setup.fractions)
    growth = {
        key: _median(t[hi]["needed"][FC], setup.K) / _median(t[lo]["needed"][FC], setup.K)
        for key, t in table.items()
    }
    stats.update({f"{key}_fc_growth": g for key, g in growth.items()})
    report.claim(
        f"Fully corrective greedy's sparsity grows slowly as eps shrinks {lo / hi:g}-fold "
        "(less than 5-fold: Theorem 2.8's log(1/eps), not Theorem 2.7's 1/eps)",
        all(g < 5 for g in growth.values()),
        ", ".join(f"{key}: x{g:.2f}" for key, g in growth.items()),
        robust=True,
    )


def b1_claim(
    report: Report, results: dict[str, list[dict[str, Any]]], stats: dict[str, float]
) -> None:
    """Least squares: Frank-Wolfe in a ball of half the reference's l1 norm stalls above the
    run with B1 = ||w_bar||_1 (its optimum is worse): the B1 side of Theorem 2.4."""
    runs = results["least_squares"]
    half = [run["fw_b1"]["0.5"][-1] for run in runs]
    full = [run["fw_b1"]["1.0"][-1] for run in runs]
    above = sum(h > f for h, f in zip(half, full, strict=True))
    stats["ls_fw_half_above"] = above / len(runs)
    report.claim(
        "Least squares: Frank-Wolfe with B1 = 0.5 ||w_bar||_1 ends (k = K) above the run with "
        "B1 = ||w_bar||_1 in most repetitions (the smaller ball excludes w_bar)",
        above > len(runs) / 2,
        f"{above} of {len(runs)}; median objective at k = K {np.median(half):.3g} vs "
        f"{np.median(full):.3g}",
        robust=True,
    )


# ----------------------------------------------------------------------------- entry point


def run(ctx: ReproConfig) -> Report:
    """Every curve, the trade-off table, figures and claims; ``bench.reproduce`` writes it."""
    setup = Config.for_context(ctx)
    report = Report(ctx, TITLE)
    report.section("What is reproduced", __doc__.split("\n\n", 1)[1])
    report.text(
        f"This run: {setup.reps} repetitions per problem, K = {setup.K}, base seed "
        f"{ctx.seed}{' (quick mode)' if setup.quick else ''}."
    )
    start = time.perf_counter()
    results = run_all(setup, ctx)
    compute_s = time.perf_counter() - start
    objective_section(report, results, setup)
    table = tradeoff_section(report, results, setup)
    stats = check_claims(report, results, table, setup)
    gaps = [run["rs_l1"]["gap"] for runs in results.values() for run in runs]
    report.section(
        "Numerical notes",
        f"Frank-Wolfe iterations per run: {setup.fw_max_iter} (the duality-gap stop is off so "
        "that the whole path is seen). The sparsification's l1 solution after "
        f"{setup.rs_max_iter} Frank-Wolfe iterations has a median duality gap of "
        f"{fmt(float(np.median(gaps)))} (a bound on its distance to the l1 optimum). Compute "
        f"time {compute_s:.1f} s.",
    )
    report.data.update(
        settings=dataclasses.asdict(setup),
        results=results,
        tradeoff=table,
        stats=stats,
        compute_seconds=compute_s,
    )
    ctx.progress(f"shalev2010: done in {report.elapsed:.1f} s")
    return report
