"""Liu, Fujimaki & Ye (ICML 2014), Appendix D.1: FoBa-obj / FoBa-gdt against forward greedy on
L2-regularised logistic regression.

What the paper does (Appendix D.1.1): two Gaussian classes ``N(+beta*, I)`` and ``N(-beta*, I)``
in ``d = 500`` with ``n = 100`` samples, ``beta*`` with ``S`` nonzeros drawn from ``U[0, 1]`` and
rescaled to norm 5, ``S = 5..14``, 50 trials; the objective is
``Q(beta) = (1/n) sum_i log(1 + exp(-y_i X_i beta)) + (lambda/2) ||beta||^2`` with
``lambda = 0.01`` and no intercept. The four algorithms stop by thresholds computed from the
true solution ``beta_bar`` (the minimiser of Q on the true support): FoBa-obj and Forward-obj
when the best one-coordinate objective drop falls below ``delta = Q(beta_bar) -
min_{alpha, j not in F_bar} Q(beta_bar + alpha e_j)``, FoBa-gdt and Forward-gdt (= OMP) when
the largest |gradient| falls below ``epsilon = ||grad Q(beta_bar)||_inf``. Figure 3 plots
F-measure, estimation error ``||beta^(k) - beta_bar|| / ||beta_bar||``, objective value and
nnz against S; Table 3 (top) gives the run times at S = 5, 8, 11, 14.

We run exactly that through ``engine.select``. Where we deviate, and why:

* Figure 3 has no numbers in the text, so the comparison is against the paper's written
  observations (checked as claims), not against its curves.
* Table 3's seconds are Matlab on 2014 hardware; ours are Python/numpy on this machine, and our
  FoBa-obj does not solve the 1-D problems one by one: the engine finds the best coordinate drop
  by a vectorised Newton iteration pruned with self-concordance bounds. The ratio FoBa-obj /
  FoBa-gdt is therefore the number to compare, and we add a scoring-pass benchmark with a plain
  per-candidate 1-D solver loop (our own, scipy's Brent) to show where the paper's ratio comes
  from.
* Table 4 (UCI a1a, a2a, w1a) is quoted but not rerun: those data sets are not bundled and the
  reproduction makes no network access.
* The CRF study (Appendix D.2: Figure 4, Table 3 bottom) lives in ``liu2014_crf``.
* Quick mode (the test suite's) runs 20 trials at S = 5, 8, 11, 14, the sparsities of Table 3.

Seeds: trial ``r`` at true sparsity ``S`` draws its problem from numpy's generator seeded with
the entropy ``[ctx.seed, S, r]`` (not ``ctx.seed + r``: with that, seeds 0 and 1 would share all
trials but one), so every (seed, S, trial) has its own data and every run is reproducible.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy.optimize import minimize_scalar

import engine
from engine.datasets import Problem, generate
from engine.metrics import estimation_error, f_measure
from engine.objectives import ActiveSet
from engine.registry import REGISTRY

from .report import Report, ReproConfig, mean_sd

TITLE = (
    "Liu, Fujimaki & Ye (ICML 2014): forward-backward greedy for general smooth convex losses "
    "(Appendix D.1, logistic regression)"
)

LAM = 0.01  # the paper's lambda in the synthetic study
N_SAMPLES, N_FEATURES, BETA_NORM = 100, 500, 5.0


@dataclass(frozen=True)
class Method:
    """One of the paper's four algorithms, as the engine names it and stops it."""

    label: str  # the paper's name
    algorithm: str  # engine.ALGORITHMS key
    threshold: str  # "delta" (objective-drop rule) or "epsilon" (gradient rule)

    @property
    def backward(self) -> bool:
        return self.label.startswith("FoBa")


METHODS = (
    Method("FoBa-obj", "foba-obj", "delta"),
    Method("FoBa-gdt", "foba-gdt", "epsilon"),
    Method("Forward-obj", "forward-obj", "delta"),
    Method("Forward-gdt", "omp", "epsilon"),
)
LABELS = tuple(m.label for m in METHODS)
METRICS = ("f_measure", "est_error", "objective", "nnz")
METRIC_TITLES = {
    "f_measure": "F-measure",
    "est_error": "estimation error",
    "objective": "objective value",
    "nnz": "nnz",
}

# Table 3 (top), seconds per run, columns in the paper's order.
PAPER_TABLE3_COLUMNS = ("FoBa-gdt", "Forward-gdt", "FoBa-obj", "Forward-obj")
PAPER_TABLE3 = {
    5: (1.96e-2, 0.65e-2, 1.25e1, 1.24e1),
    8: (1.16e-2, 0.76e-2, 1.52e1, 1.52e1),
    11: (1.53e-2, 1.05e-2, 1.83e1, 1.80e1),
    14: (1.51e-2, 1.00e-2, 2.29e1, 2.25e1),
}
# The same numbers as the paper prints them (quoted verbatim in the report).
PAPER_TABLE3_TEXT = {
    5: ("1.96e-2", "0.65e-2", "1.25e+1", "1.24e+1"),
    8: ("1.16e-2", "0.76e-2", "1.52e+1", "1.52e+1"),
    11: ("1.53e-2", "1.05e-2", "1.83e+1", "1.80e+1"),
    14: ("1.51e-2", "1.00e-2", "2.29e+1", "2.25e+1"),
}

# Table 4: S, then objective / training error / testing error as "FoBa-obj/FoBa-gdt".
PAPER_TABLE4 = {
    "a1a (n = 1605/30956, d = 123)": (
        (10, "556/558", "0.169/0.17", "0.165/0.164"),
        (20, "517/529", "0.163/0.16", "0.163/0.160"),
        (30, "499/515", "0.151/0.145", "0.162/0.158"),
        (40, "490/509", "0.150/0.146", "0.162/0.159"),
        (50, "484/494", "0.146/0.141", "0.162/0.161"),
        (60, "481/484", "0.14/0.141", "0.166/0.161"),
        (70, "480/480", "0.138/0.139", "0.166/0.163"),
    ),
    "a2a (n = 2205/30296, d = 123)": (
        (10, "870/836", "0.191/0.185", "0.174/0.160"),
        (20, "801/810", "0.18/0.177", "0.163/0.157"),
        (30, "775/790", "0.172/0.168", "0.165/0.156"),
        (40, "758/776", "0.162/0.167", "0.163/0.155"),
        (50, "749/764", "0.163/0.166", "0.162/0.157"),
        (60, "743/750", "0.162/0.161", "0.163/0.160"),
        (70, "740/742", "0.162/0.158", "0.163/0.161"),
    ),
    "w1a (n = 2477/47272, d = 300)": (
        (10, "574/595", "0.135/0.125", "0.142/0.127"),
        (20, "424/487", "0.0969/0.0959", "0.11/0.104"),
        (30, "341/395", "0.0813/0.0805", "0.0993/0.0923"),
        (40, "288/337", "0.0704/0.0715", "0.089/0.0853"),
        (50, "238/282", "0.06/0.0658", "0.0832/0.0825"),
        (60, "215/226", "0.0547/0.0553", "0.0814/0.0818"),
        (70, "198/206", "0.0511/0.0511", "0.0776/0.0775"),
    ),
}

# Small x offsets in Figure 3 so that the four methods' error bars do not hide one another.
X_OFFSET = {"FoBa-obj": -0.15, "Forward-obj": -0.05, "FoBa-gdt": 0.05, "Forward-gdt": 0.15}
COLORS = {
    "FoBa-obj": "#1f77b4",
    "Forward-obj": "#6baed6",
    "FoBa-gdt": "#d62728",
    "Forward-gdt": "#fc9272",
}


# --------------------------------------------------------------------------- set-up


@dataclass(frozen=True)
class Config:
    """Sizes of one run: the paper's in full mode, fewer trials and sparsities in quick mode."""

    sparsities: tuple[int, ...]
    trials: int
    scoring_problems: int  # problems on which the scoring-pass benchmark runs

    @classmethod
    def for_context(cls, ctx: ReproConfig) -> Config:
        if ctx.quick:
            return cls(sparsities=(5, 8, 11, 14), trials=20, scoring_problems=1)
        return cls(sparsities=tuple(range(5, 15)), trials=50, scoring_problems=3)


def make_problem(seed: int, s: int, r: int) -> Problem:
    """Trial ``r`` of true sparsity ``s`` under base seed ``seed``."""
    rng = np.random.default_rng([seed, s, r])
    return generate(
        "liu2014_logistic", random_state=rng, n=N_SAMPLES, d=N_FEATURES, s=s, norm=BETA_NORM
    )


# --------------------------------------------------------------------------- one trial


@dataclass
class Truth:
    """The paper's reference point: ``beta_bar`` = argmin of Q on the true support, and the
    stopping thresholds computed from it (Appendix D, first strategy)."""

    state: ActiveSet
    coef: np.ndarray
    value: float
    delta: float
    epsilon: float


# The thresholds are the scores at beta_bar itself, so a path that reaches F_bar meets a score
# equal to its threshold, up to the rounding of its refit: "score < threshold" would then be a
# coin flip. Raising the thresholds by this relative margin resolves the tie as the strategy
# intends (stop at the true support); no genuine score lies within 1e-6 of the threshold.
TIE_MARGIN = 1e-6


def true_solution(problem: Problem, lam: float = LAM) -> Truth:
    """``beta_bar``, ``delta = Q(beta_bar) - min_{alpha, j not in F_bar} Q(beta_bar + alpha e_j)``
    and ``epsilon = ||grad Q(beta_bar)||_inf`` (each raised by ``TIE_MARGIN``)."""
    objective = REGISTRY.objective("logistic").factory(
        problem.X, problem.y, lam=lam, fit_intercept=False
    )
    state = objective.fit_support(problem.support)
    return Truth(
        state=state,
        coef=state.coef.copy(),
        value=float(state.value),
        delta=float(state.coordinate_drops().max()) * (1.0 + TIE_MARGIN),
        epsilon=float(np.abs(state.gradient()).max()) * (1.0 + TIE_MARGIN),
    )


@dataclass
class Run:
    """One algorithm on one problem: Figure 3's four measures, its time and its path."""

    f_measure: float
    est_error: float
    objective: float
    nnz: int
    seconds: float
    deletions: int  # backward steps taken
    closest_deletion: float  # min over backward checks of cost / threshold (< 1 deletes)
    path: list[float] = field(default_factory=list)  # Q after each forward step

    def metric(self, name: str) -> float:
        return float(getattr(self, name))


def run_method(problem: Problem, truth: Truth, method: Method, lam: float = LAM) -> Run:
    """Run one algorithm with the paper's truth-based threshold (no sparsity target, k=None).

    The time is the wall time of the whole ``engine.select`` call (data checks, objective set-up
    and the path), which is what a Matlab call of the paper's code would also have included.
    """
    threshold = {method.threshold: getattr(truth, method.threshold)}
    start = time.perf_counter()
    result = engine.select(
        problem.X,
        problem.y,
        algorithm=method.algorithm,
        objective="logistic",
        lam=lam,
        fit_intercept=False,
        **threshold,
        standardize=False,
    )
    seconds = time.perf_counter() - start
    checks = [e.gain / e.threshold for e in result.trace if e.kind in ("check", "remove")]
    return Run(
        f_measure=f_measure(result.support, problem.support),
        est_error=estimation_error(result.coef, truth.coef, relative=True),
        objective=float(result.objective),
        nnz=len(result.support),
        seconds=seconds,
        deletions=sum(e.kind == "remove" for e in result.trace),
        closest_deletion=min(checks, default=math.inf),
        path=[float(e.objective) for e in result.trace if e.kind == "add"],
    )


# --------------------------------------------------------------------------- the study

Runs = dict[int, dict[str, list[Run]]]  # sparsity -> method label -> one Run per trial
Summary = dict[str, dict[str, dict[str, list[float]]]]  # method -> metric -> stat -> per S


def simulate(setup: Config, ctx: ReproConfig) -> Runs:
    """Every (sparsity, trial, method); the four methods run back to back on each problem so
    that a busy machine slows them alike (the timing ratios are what we compare)."""
    _warm_up()
    runs: Runs = {}
    for s in setup.sparsities:
        start = time.perf_counter()
        runs[s] = {label: [] for label in LABELS}
        for r in range(setup.trials):
            problem = make_problem(ctx.seed, s, r)
            truth = true_solution(problem)
            for method in METHODS:
                runs[s][method.label].append(run_method(problem, truth, method))
        ctx.progress(
            f"liu2014: S = {s}: {setup.trials} trials x 4 methods in "
            f"{time.perf_counter() - start:.1f} s"
        )
    return runs


def _warm_up() -> None:
    """One untimed run of each method, so that first-call costs (lazy imports, allocator
    warm-up) do not land in the first trial's timings."""
    problem = make_problem(0, 5, 0)
    truth = true_solution(problem)
    for method in METHODS:
        run_method(problem, truth, method)


def summarise(runs: Runs) -> Summary:
    """method -> metric -> {"mean": [...], "sd": [...], "median": [...]} over sparsities."""
    out: Summary = {}
    for label in LABELS:
        out[label] = {}
        for metric in (*METRICS, "seconds"):
            means, sds, medians = [], [], []
            for s in runs:
                values = [run.metric(metric) for run in runs[s][label]]
                mean, sd = mean_sd(values)
                means.append(mean)
                sds.append(sd)
                medians.append(float(np.median(values)))
            out[label][metric] = {"mean": means, "sd": sds, "median": medians}
    return out


def path_comparison(runs: Runs, obj_label: str, gdt_label: str) -> dict[str, float]:
    """How often the objective-rule path is at or below the gradient-rule path after the same
    number of forward steps (the paper: the obj rules "decrease objective values more quickly").

    Compared on the steps both paths took, over every trial and sparsity; the mean relative
    excess is ``(Q_gdt(m) - Q_obj(m)) / Q_obj(m)``, positive when the obj rule is ahead.
    """
    at_or_below, total, excess = 0, 0, []
    for by_method in runs.values():
        for a, b in zip(by_method[obj_label], by_method[gdt_label], strict=True):
            m = min(len(a.path), len(b.path))
            qa, qb = np.asarray(a.path[:m]), np.asarray(b.path[:m])
            at_or_below += int(np.sum(qa <= qb * (1 + 1e-9)))
            total += m
            excess.extend(((qb - qa) / qa).tolist())
    return {
        "fraction_at_or_below": at_or_below / total if total else math.nan,
        "mean_relative_excess": float(np.mean(excess)) if excess else math.nan,
        "steps": total,
    }


def mean_path(runs: Runs, s: int, label: str) -> tuple[list[float], list[int]]:
    """Mean Q after m forward steps over the trials whose path got that far, and how many did."""
    paths = [run.path for run in runs[s][label]]
    longest = max((len(p) for p in paths), default=0)
    means, counts = [], []
    for m in range(longest):
        reached = [p[m] for p in paths if len(p) > m]
        means.append(float(np.mean(reached)))
        counts.append(len(reached))
    return means, counts


# --------------------------------------------------------------------------- scoring pass


def naive_coordinate_drops(state: ActiveSet, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """FoBa-obj's forward scores the way the paper describes them: one 1-D minimisation of
    ``alpha -> Q(beta + alpha e_j)`` per candidate (scipy's Brent), in a Python loop.

    Only the data term and ``(lambda/2) alpha^2`` depend on alpha (``beta_j = 0`` off the
    support), so the constant ``(lambda/2) ||beta||^2`` cancels from the drop.
    """
    eta = X @ state.coef
    base = float(np.mean(np.logaddexp(0.0, -y * eta)))
    drops = np.zeros(X.shape[1])
    selected = set(state.support)
    for j in range(X.shape[1]):
        if j in selected:
            continue
        margin, x = -y * eta, -y * X[:, j]

        def q(alpha: float, margin=margin, x=x) -> float:
            return float(np.mean(np.logaddexp(0.0, margin + alpha * x))) + 0.5 * LAM * alpha**2

        drops[j] = base - minimize_scalar(q).fun
    return drops


def _best_time(fn, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def scoring_pass(setup: Config, ctx: ReproConfig) -> dict[str, float]:
    """Cost of one forward scoring pass at ``beta_bar`` (S = largest sparsity), best of several
    repeats: the gradient (FoBa-gdt), the engine's exact drops for every candidate, the
    engine's pruned best-drop search (what its FoBa-obj runs), and the plain 1-D solver loop.
    Also checks the engine's drops against the loop's (they must agree)."""
    s = max(setup.sparsities)
    times: dict[str, list[float]] = {"gradient": [], "drops": [], "best": [], "naive": []}
    worst_diff, largest_drop = 0.0, 0.0
    for r in range(setup.scoring_problems):
        problem = make_problem(ctx.seed, s, r)
        state = true_solution(problem).state
        y = np.where(problem.y == 1, 1.0, -1.0)
        times["gradient"].append(_best_time(state.gradient, 20))
        times["drops"].append(_best_time(state.coordinate_drops, 10))
        times["best"].append(_best_time(lambda st=state: st.best_candidate("obj", set()), 10))
        start = time.perf_counter()
        naive = naive_coordinate_drops(state, problem.X, y)
        times["naive"].append(time.perf_counter() - start)
        engine_drops = state.coordinate_drops()
        worst_diff = max(worst_diff, float(np.max(np.abs(naive - engine_drops))))
        largest_drop = max(largest_drop, float(engine_drops.max()))
    out = {name: float(np.median(v)) for name, v in times.items()}
    out["max_abs_drop_diff"] = worst_diff
    out["largest_drop"] = largest_drop
    out["sparsity"] = s
    return out


def naive_estimate(runs: Runs, scoring: dict[str, float]) -> dict[str, float]:
    """What a FoBa-obj run at the scoring pass's sparsity would cost if every forward scoring
    pass were the per-candidate loop: our run time plus, for each pass (one per forward step
    and the final stopping check), the loop's cost minus the engine's pruned search."""
    s = int(scoring["sparsity"])
    obj, gdt = runs[s]["FoBa-obj"], runs[s]["FoBa-gdt"]
    passes = float(np.mean([len(run.path) + 1 for run in obj]))
    seconds = float(np.mean([run.seconds for run in obj]))
    naive = seconds + passes * (scoring["naive"] - scoring["best"])
    return {
        "passes_per_run": passes,
        "naive_foba_obj_seconds": naive,
        "naive_ratio": naive / float(np.mean([run.seconds for run in gdt])),
    }


# --------------------------------------------------------------------------- report sections


def setup_section(report: Report, setup: Config) -> None:
    report.section(
        "Set-up",
        "Appendix D.1.1 of the paper, run through `engine.select` with the logistic objective "
        f"(`lam={LAM}`, `fit_intercept=False`: the paper's Q has no intercept). Each algorithm "
        "stops by the paper's first strategy: thresholds computed from the true solution "
        "`beta_bar` (the minimiser of Q on the true support `F_bar`), "
        "`delta = Q(beta_bar) - min_{alpha, j not in F_bar} Q(beta_bar + alpha e_j)` for "
        "FoBa-obj and Forward-obj, `epsilon = ||grad Q(beta_bar)||_inf` for FoBa-gdt and "
        "Forward-gdt (= OMP); no sparsity target. Estimation error is "
        "`||beta^(k) - beta_bar|| / ||beta_bar||`, as in the paper (`beta_bar`, not `beta*`).",
    )
    report.table(
        ("", "paper", "ours"),
        [
            ("samples n / features d", "100 / 500", f"{N_SAMPLES} / {N_FEATURES}"),
            ("classes", "N(+beta*, I), N(-beta*, I), equal sizes", "same (rows shuffled)"),
            ("beta*", "S nonzeros U[0, 1], norm 5", f"same, norm {BETA_NORM:g}"),
            ("lambda", "0.01", f"{LAM:g}"),
            ("true sparsity S", "5..14", ", ".join(map(str, setup.sparsities))),
            ("trials per S", "50", setup.trials),
            ("backward ratio", "1/2 (Algorithm 1, line 17)", "nu = 0.5"),
            ("implementation", "Matlab", "Python / numpy (engine)"),
        ],
    )
    report.text(
        "Trial r at sparsity S draws its data from numpy's generator seeded with "
        "`[seed, S, r]`; the four methods run back to back on the same data."
    )


def _mean_sd_cell(summary: Summary, label: str, metric: str, i: int) -> str:
    mean, sd = summary[label][metric]["mean"][i], summary[label][metric]["sd"][i]
    digits = 3 if metric != "objective" else 4
    return f"{mean:.{digits}g} ± {sd:.2g}"


def figure3_section(report: Report, runs: Runs, summary: Summary) -> None:
    sparsities = list(runs)
    report.section(
        "Figure 3: F-measure, estimation error, objective, nnz against the true sparsity",
        "The paper's Figure 3 is a plot without numbers in the text, so we give ours (mean ± "
        "standard deviation over the trials) and check the paper's written observations as "
        "claims below.",
    )
    report.figure(
        figure3(sparsities, summary),
        "figure3",
        "Figure 3 (ours): mean ± sd over the trials against the true sparsity S. Forward "
        "curves are dashed with open markers; the four methods are offset by up to ±0.15 "
        "along S so that their error bars stay visible where they coincide.",
    )
    for metric in METRICS:
        report.text(f"**{METRIC_TITLES[metric]}** (mean ± sd)")
        rows = [
            (s, *(_mean_sd_cell(summary, label, metric, i) for label in LABELS))
            for i, s in enumerate(sparsities)
        ]
        report.table(("S", *LABELS), rows)


def figure3(sparsities: Sequence[int], summary: Summary) -> go.Figure:
    fig = make_subplots(rows=2, cols=2, subplot_titles=[METRIC_TITLES[m] for m in METRICS])
    for k, metric in enumerate(METRICS):
        row, col = divmod(k, 2)
        for method in METHODS:
            stats = summary[method.label][metric]
            shift = X_OFFSET[method.label]
            fig.add_trace(
                go.Scatter(
                    x=[s + shift for s in sparsities],
                    y=stats["mean"],
                    error_y={"type": "data", "array": stats["sd"], "thickness": 1},
                    mode="lines+markers",
                    name=method.label,
                    legendgroup=method.label,
                    showlegend=k == 0,
                    line={
                        "color": COLORS[method.label],
                        "dash": None if method.backward else "dash",
                    },
                    marker={"symbol": "circle" if method.backward else "circle-open"},
                ),
                row=row + 1,
                col=col + 1,
            )
        fig.update_xaxes(title_text="true sparsity S", row=row + 1, col=col + 1)
    fig.update_layout(
        title="Liu et al. 2014, Figure 3 (ours): logistic regression, truth-based stopping",
        legend={"orientation": "h", "y": -0.15},
        margin={"t": 70},
    )
    return fig


SMALL_LAM = 1e-4  # the paper's UCI setting: the control for the backward-step reading


def deletions_at(lam: float, seed: int, s: int, trials: int) -> tuple[int, int]:
    """(FoBa-obj runs that deleted at least once, runs) at ridge ``lam`` on the problems of
    sparsity s, with thresholds from the true solution at that lam."""
    method = next(m for m in METHODS if m.label == "FoBa-obj")
    hits = 0
    for r in range(trials):
        problem = make_problem(seed, s, r)
        run = run_method(problem, true_solution(problem, lam), method, lam=lam)
        hits += run.deletions > 0
    return hits, trials


def backward_section(report: Report, runs: Runs, seed: int = 0) -> dict[str, float]:
    """Why FoBa and forward coincide (or not): how many backward steps fired, how close the
    cheapest deletion came to its threshold, and the same problems at a small ridge."""
    foba = [run for by in runs.values() for label in ("FoBa-obj", "FoBa-gdt") for run in by[label]]
    deletions = sum(run.deletions for run in foba)
    closest = min(run.closest_deletion for run in foba)
    identical = sum(
        a.nnz == b.nnz and np.isclose(a.objective, b.objective, rtol=1e-9, atol=0.0)
        for by in runs.values()
        for fb, fw in (("FoBa-obj", "Forward-obj"), ("FoBa-gdt", "Forward-gdt"))
        for a, b in zip(by[fb], by[fw], strict=True)
    )
    pairs = sum(len(by["FoBa-obj"]) + len(by["FoBa-gdt"]) for by in runs.values())
    s_max = max(runs)
    trials = len(runs[s_max]["FoBa-obj"])
    small_hits, small_runs = deletions_at(SMALL_LAM, seed, s_max, trials)
    here_hits = sum(run.deletions > 0 for run in runs[s_max]["FoBa-obj"])
    report.text(
        f"**Backward steps.** Over {len(foba)} FoBa runs the backward step deleted "
        f"{deletions} feature(s); the cheapest deletion ever tested cost {closest:.3g} times its "
        "threshold (Algorithm 1 deletes below 1). FoBa and its forward counterpart ended with "
        f"the same support size and objective in {identical} of {pairs} paired runs. This is "
        f"the ridge lambda = {LAM:g} at work, not the data design: on the same problems "
        f"(S = {s_max}, same thresholds rule) FoBa-obj deleted in {here_hits} of {trials} runs "
        f"at lambda = {LAM:g} and in {small_hits} of {small_runs} at lambda = {SMALL_LAM:g}. "
        "(An independent implementation of Algorithm 1 and skscope also make no deletion at "
        f"lambda = {LAM:g}, so it is not an artefact of this engine.) The thresholds are "
        f"raised by a relative {TIE_MARGIN:g} so that reaching the true support stops the path "
        "deterministically (the scores there equal the thresholds up to rounding)."
    )
    return {
        "deletions": int(deletions),
        "closest": float(closest),
        "identical": int(identical),
        "pairs": int(pairs),
        "deleting_runs_at_small_lam": int(small_hits),
        "runs_at_small_lam": int(small_runs),
    }


def path_section(report: Report, runs: Runs) -> dict[str, dict[str, float]]:
    s = max(runs)
    report.section(
        "Objective along the path",
        "The paper's last observation on Figure 3 is that the obj rules \"decrease objective "
        'values more quickly" than the gdt rules. We compare Q after the same number of '
        "forward steps on the steps both paths took (every trial and sparsity).",
    )
    comparison = {
        "FoBa": path_comparison(runs, "FoBa-obj", "FoBa-gdt"),
        "Forward": path_comparison(runs, "Forward-obj", "Forward-gdt"),
    }
    report.table(
        ("pair", "steps compared", "obj at or below gdt", "mean (Q_gdt - Q_obj) / Q_obj"),
        [
            (
                f"{name}-obj vs {name}-gdt",
                c["steps"],
                f"{100 * c['fraction_at_or_below']:.1f}%",
                f"{100 * c['mean_relative_excess']:+.2f}%",
            )
            for name, c in comparison.items()
        ],
    )
    fig = go.Figure()
    for method in METHODS:
        means, counts = mean_path(runs, s, method.label)
        fig.add_trace(
            go.Scatter(
                x=list(range(1, len(means) + 1)),
                y=means,
                customdata=counts,
                hovertemplate="step %{x}: Q %{y:.4g} (%{customdata} trials)",
                mode="lines+markers",
                name=method.label,
                line={"color": COLORS[method.label], "dash": None if method.backward else "dash"},
            )
        )
    fig.update_layout(
        title=f"Objective after m forward steps, S = {s} (mean over the trials that got there)",
        xaxis_title="forward steps m",
        yaxis_title="Q",
        yaxis_type="log",
    )
    report.figure(fig, "path_objective", f"Mean objective along the path at S = {s}.")
    return comparison


def timing_rows(summary: Summary, sparsities: Sequence[int]) -> dict[int, dict[str, float]]:
    """Our mean seconds per run at the sparsities of the paper's Table 3."""
    index = {s: i for i, s in enumerate(sparsities)}
    return {
        s: {label: summary[label]["seconds"]["mean"][index[s]] for label in LABELS}
        for s in PAPER_TABLE3
        if s in index
    }


def ratios(row: dict[str, float]) -> dict[str, float]:
    return {
        "FoBa-obj / FoBa-gdt": row["FoBa-obj"] / row["FoBa-gdt"],
        "Forward-obj / Forward-gdt": row["Forward-obj"] / row["Forward-gdt"],
        "FoBa-obj / Forward-obj": row["FoBa-obj"] / row["Forward-obj"],
        "FoBa-gdt / Forward-gdt": row["FoBa-gdt"] / row["Forward-gdt"],
    }


def paper_row(s: int) -> dict[str, float]:
    return dict(zip(PAPER_TABLE3_COLUMNS, PAPER_TABLE3[s], strict=True))


def table3_section(
    report: Report, summary: Summary, sparsities: Sequence[int], scoring: dict[str, float]
) -> dict[int, dict[str, float]]:
    ours = timing_rows(summary, sparsities)
    report.section(
        "Table 3 (top): computation time, logistic regression",
        "The paper's seconds per run (Matlab, 2014 hardware), as printed:",
    )
    report.table(
        ("S", *PAPER_TABLE3_COLUMNS),
        [(s, *PAPER_TABLE3_TEXT[s]) for s in PAPER_TABLE3],
    )
    report.text(
        "Ours: mean wall time of one `engine.select` call (data checks, objective set-up, "
        "path) on this machine, one BLAS thread. Absolute seconds are not comparable across "
        "languages and machines; the ratios below are the paper's point."
    )
    report.comparison(
        [
            (f"S = {s}, {label}", paper_row(s)[label], ours[s][label])
            for s in ours
            for label in PAPER_TABLE3_COLUMNS
        ],
        what="seconds",
    )
    report.text("**Ratios** (how many times slower the first is than the second):")
    report.comparison(
        [
            (f"S = {s}, {name}", ratios(paper_row(s))[name], value)
            for s in ours
            for name, value in ratios(ours[s]).items()
        ],
        what="ratio",
    )
    report.figure(
        timing_figure(ours),
        "table3_timing",
        "Table 3 (top): seconds per run (left, log scale) and the obj / gdt time ratio "
        "(right); paper dotted, ours solid.",
    )
    scoring_text(report, scoring)
    return ours


def scoring_text(report: Report, scoring: dict[str, float]) -> None:
    gradient = scoring["gradient"]
    report.text(
        "**Why our obj / gdt ratio is far smaller than the paper's.** One forward scoring pass "
        f"at beta_bar (S = {int(scoring['sparsity'])}, d = {N_FEATURES}), best of repeats:"
    )
    report.table(
        ("scoring pass", "seconds", "x gradient"),
        [
            ("abs(gradient) (FoBa-gdt, Forward-gdt)", gradient, 1.0),
            (
                "exact drops, vectorised Newton, all candidates (engine)",
                scoring["drops"],
                scoring["drops"] / gradient,
            ),
            (
                "best drop, bound-pruned (what the engine's FoBa-obj runs)",
                scoring["best"],
                scoring["best"] / gradient,
            ),
            (
                "one scalar 1-D solve per candidate (Brent loop, ours)",
                scoring["naive"],
                scoring["naive"] / gradient,
            ),
        ],
    )
    report.text(
        'The per-candidate loop is the computation the paper describes ("solve a large number '
        "of optimization problems in each iteration\"); the engine's vectorised, bound-pruned "
        "search does the same job for a small multiple of a gradient pass, which is why our "
        "FoBa-obj runs within a small factor of FoBa-gdt. A FoBa-obj that ran the loop in each "
        f"of its {scoring['passes_per_run']:.1f} scoring passes per run (mean at "
        f"S = {int(scoring['sparsity'])}) would take about "
        f"{scoring['naive_foba_obj_seconds']:.2g} s, {scoring['naive_ratio']:.0f} times our "
        f"FoBa-gdt: within an order of magnitude of the paper's "
        f"{paper_row(14)['FoBa-obj'] / paper_row(14)['FoBa-gdt']:.0f} at S = 14 (the rest "
        "depends on the paper's 1-D solver and Matlab's per-call costs, which the paper does "
        "not describe). The loop's drops agree with the engine's to "
        f"{scoring['max_abs_drop_diff']:.1e} (absolute; the largest drop is "
        f"{scoring['largest_drop']:.1e})."
    )


def timing_figure(ours: dict[int, dict[str, float]]) -> go.Figure:
    fig = make_subplots(rows=1, cols=2, subplot_titles=("seconds per run", "obj / gdt time ratio"))
    xs = list(ours)
    for label in PAPER_TABLE3_COLUMNS:
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[ours[s][label] for s in xs],
                name=f"{label} (ours)",
                mode="lines+markers",
                line={"color": COLORS[label]},
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[paper_row(s)[label] for s in xs],
                name=f"{label} (paper)",
                mode="lines+markers",
                line={"color": COLORS[label], "dash": "dot"},
                marker={"symbol": "x"},
            ),
            row=1,
            col=1,
        )
    for name, color in (
        ("FoBa-obj / FoBa-gdt", "#1f77b4"),
        ("Forward-obj / Forward-gdt", "#6baed6"),
    ):
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[ratios(ours[s])[name] for s in xs],
                name=f"{name} (ours)",
                mode="lines+markers",
                line={"color": color},
            ),
            row=1,
            col=2,
        )
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[ratios(paper_row(s))[name] for s in xs],
                name=f"{name} (paper)",
                mode="lines+markers",
                line={"color": color, "dash": "dot"},
                marker={"symbol": "x"},
            ),
            row=1,
            col=2,
        )
    fig.update_yaxes(type="log")
    fig.update_xaxes(title_text="true sparsity S")
    fig.update_layout(title="Liu et al. 2014, Table 3 (top): logistic regression timings")
    return fig


def table4_section(report: Report) -> None:
    report.section(
        "Table 4 (UCI a1a, a2a, w1a): not rerun",
        "Not rerun: the LIBSVM copies of a1a, a2a and w1a are not bundled with the engine "
        "(its bundled data are Boston Housing, diabetes and breast cancer), and the "
        "reproduction runs without network access, so it cannot download them. The paper's "
        "table is quoted for reference only (lambda = 1e-4, stopping by sparsity S; each cell "
        "is FoBa-obj/FoBa-gdt). The paper's observations on it: similar training errors; "
        "FoBa-obj usually reaches a lower objective, FoBa-gdt a lower test error in several "
        'cases; FoBa-gdt "at least 10 times faster" (times not given).',
    )
    for name, rows in PAPER_TABLE4.items():
        report.text(f"*{name}*")
        report.table(("S", "objective", "training error", "testing error"), rows)


# --------------------------------------------------------------------------- claims


def check_claims(
    report: Report, summary: Summary, backward: dict[str, float], paths: dict[str, dict[str, float]]
) -> None:
    """The paper's observations on Figure 3 and Table 3, checked on our numbers.

    ``robust`` marks the claims that held with a margin in quick mode for seeds 0, 1 and 2 (the
    test suite asserts those); the others are reported either way.
    """
    f = {label: np.asarray(summary[label]["f_measure"]["mean"]) for label in LABELS}
    nnz = {label: np.asarray(summary[label]["nnz"]["mean"]) for label in LABELS}
    q = {label: np.asarray(summary[label]["objective"]["mean"]) for label in LABELS}
    err = {label: np.asarray(summary[label]["est_error"]["mean"]) for label in LABELS}
    pairs = (("FoBa-obj", "Forward-obj"), ("FoBa-gdt", "Forward-gdt"))

    gain = {fb: float(np.mean(f[fb] - f[fw])) for fb, fw in pairs}
    report.claim(
        "FoBa outperforms forward greedy, especially in F-measure (mean F-measure over S higher "
        "for FoBa-obj than Forward-obj and for FoBa-gdt than Forward-gdt)",
        all(g > 0 for g in gain.values()),
        "; ".join(f"{fb} minus forward: {g:+.4f}" for fb, g in gain.items())
        + f"; {backward['deletions']} backward deletions in all FoBa runs",
        robust=False,
    )
    fewer = {fb: float(np.mean(nnz[fw] - nnz[fb])) for fb, fw in pairs}
    report.claim(
        "FoBa yields sparser solutions than forward greedy (smaller mean nnz)",
        all(v > 0 for v in fewer.values()),
        "; ".join(f"forward minus {fb} nnz: {v:+.3f}" for fb, v in fewer.items()),
        robust=False,
    )
    q_rel = max(float(np.max(np.abs(q[fb] - q[fw]) / q[fw])) for fb, fw in pairs)
    e_rel = max(float(np.max(np.abs(err[fb] - err[fw]) / err[fw])) for fb, fw in pairs)
    report.claim(
        "Minor differences in estimation error and objective between FoBa and forward (means "
        "within 10% at every S)",
        q_rel <= 0.10 and e_rel <= 0.10,
        f"largest relative gap: objective {100 * q_rel:.2f}%, estimation error {100 * e_rel:.2f}%",
    )
    f_gap = float(np.max(np.abs(f["FoBa-obj"] - f["FoBa-gdt"])))
    q_gap = float(np.max(np.abs(q["FoBa-obj"] - q["FoBa-gdt"]) / q["FoBa-gdt"]))
    report.claim(
        "FoBa-obj and FoBa-gdt perform similarly (mean F-measure within 0.1 and mean objective "
        "within 5% at every S)",
        f_gap <= 0.1 and q_gap <= 0.05,
        f"largest gap: F-measure {f_gap:.3f}, objective {100 * q_gap:.2f}%",
    )
    q_wins = int(np.sum(q["FoBa-obj"] < q["FoBa-gdt"]))
    report.claim(
        "FoBa-obj gives better (lower) objective values than FoBa-gdt (mean Q over all S)",
        float(np.mean(q["FoBa-obj"])) < float(np.mean(q["FoBa-gdt"])),
        f"mean Q {np.mean(q['FoBa-obj']):.5g} vs {np.mean(q['FoBa-gdt']):.5g}; FoBa-obj lower "
        f"at {q_wins} of {len(q['FoBa-obj'])} sparsities",
        robust=False,
    )
    e_wins = int(np.sum(err["FoBa-gdt"] < err["FoBa-obj"]))
    report.claim(
        "FoBa-gdt is better in estimation error than FoBa-obj (mean over all S)",
        float(np.mean(err["FoBa-gdt"])) < float(np.mean(err["FoBa-obj"])),
        f"mean error {np.mean(err['FoBa-gdt']):.4f} (gdt) vs {np.mean(err['FoBa-obj']):.4f} "
        f"(obj); gdt lower at {e_wins} of {len(err['FoBa-obj'])} sparsities",
        robust=False,
    )
    frac = min(c["fraction_at_or_below"] for c in paths.values())
    report.claim(
        "The obj rules decrease the objective more quickly than the gdt rules (Q after the same "
        "number of forward steps at or below the gdt path's in at least 90% of the steps)",
        frac >= 0.9,
        "; ".join(
            f"{name}: {100 * c['fraction_at_or_below']:.1f}% of {c['steps']} steps, mean "
            f"excess of gdt {100 * c['mean_relative_excess']:+.2f}%"
            for name, c in paths.items()
        ),
    )
    timing_claims(report, summary)


def timing_claims(report: Report, summary: Summary) -> None:
    """Table 3 claims on median run times (one stalled run on a shared machine cannot flip
    them), pooled over all sparsities."""
    med = {label: float(np.median(summary[label]["seconds"]["median"])) for label in LABELS}
    obj_gdt = min(med["FoBa-obj"] / med["FoBa-gdt"], med["Forward-obj"] / med["Forward-gdt"])
    report.claim(
        "FoBa-gdt and Forward-gdt are faster than FoBa-obj and Forward-obj (Table 3; median-time "
        "ratio obj / gdt above 1.5 for both pairs)",
        obj_gdt > 1.5,
        f"smallest median-time ratio obj / gdt: {obj_gdt:.2f}",
    )
    paper_ratio = min(row[2] / row[0] for row in PAPER_TABLE3.values())
    report.claim(
        f"The gdt rules are orders of magnitude faster, as in Table 3 (obj / gdt >= 100; the "
        f"paper's smallest FoBa-obj / FoBa-gdt ratio is {paper_ratio:.0f})",
        obj_gdt >= 100,
        f"ours: {obj_gdt:.2f} (the engine's FoBa-obj does not loop over 1-D solves)",
        robust=False,
    )
    foba_fwd = med["FoBa-obj"] / med["Forward-obj"]
    report.claim(
        "FoBa-obj and Forward-obj take comparable time on logistic regression (Appendix D.2; "
        "median-time ratio within [0.67, 1.5])",
        0.67 <= foba_fwd <= 1.5,
        f"FoBa-obj / Forward-obj: {foba_fwd:.2f}",
    )


# --------------------------------------------------------------------------- entry point


def run(ctx: ReproConfig) -> Report:
    """Figure 3 and Table 3 (logistic rows) of Appendix D.1; Table 4 quoted; then the CRF part
    of Appendix D.2 from ``liu2014_crf`` when it exists."""
    setup = Config.for_context(ctx)
    report = Report(ctx, TITLE)
    start = time.perf_counter()
    report.text(
        "Paper: J. Liu, R. Fujimaki, J. Ye, *Forward-Backward Greedy Algorithms for General "
        "Convex Smooth Functions over A Cardinality Constraint*, ICML 2014, Appendix D. This "
        "report covers D.1 (logistic regression): Figure 3 and the logistic rows of Table 3; "
        "Table 4 (UCI) is quoted only."
    )
    setup_section(report, setup)
    runs = simulate(setup, ctx)
    simulation_seconds = time.perf_counter() - start
    summary = summarise(runs)
    figure3_section(report, runs, summary)
    backward = backward_section(report, runs, ctx.seed)
    paths = path_section(report, runs)
    ctx.progress("liu2014: scoring-pass benchmark")
    scoring = scoring_pass(setup, ctx)
    scoring.update(naive_estimate(runs, scoring))
    timing = table3_section(report, summary, list(runs), scoring)
    table4_section(report)
    check_claims(report, summary, backward, paths)
    report.text(
        f"Logistic part: simulation {simulation_seconds:.1f} s "
        f"({len(runs)} sparsities x {setup.trials} trials x {len(METHODS)} methods)."
    )
    report.data.update(
        {
            "sparsities": list(runs),
            "trials": setup.trials,
            "summary": summary,
            "backward": backward,
            "paths": paths,
            "timing": {"ours": timing, "paper": {s: paper_row(s) for s in PAPER_TABLE3}},
            "scoring": scoring,
            "simulation_seconds": simulation_seconds,
        }
    )
    crf_part(report, ctx)
    return report


def crf_part(report: Report, ctx: ReproConfig) -> None:
    """Appendix D.2 (Figure 4, Table 3 bottom), built in its own module."""
    try:
        from .liu2014_crf import crf_sections
    except ImportError:
        report.text("CRF part: not available yet")
        return
    crf_sections(report, ctx)
