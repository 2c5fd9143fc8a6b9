#!/usr/bin/env python
"""Stability selection (``engine.stability``): its time against independent runs of the same
algorithm, on one worker and on two, and the stability of FoBa, OMP, the Lasso and abess on
the same complementary pairs.

Usage (from the repository root)::

    python bench/stability.py            # n = 400, d = 200, 8 true features, k = 1..16, B = 50
    python bench/stability.py --quick    # a small problem, one round
    python bench/stability.py --algorithm omp --repeats 5

Timed, each as the median of ``--repeats`` interleaved rounds after a warm-up:

* ``stability``: ``stability_selection(B=50)``: 100 runs on half samples, each one path read
  at every k = 1..k_max (FoBa: the best size-k support along the path), then the merge;
* ``100 runs at k_max``: ``engine.select(k=k_max)`` on the same 100 half samples, nothing
  else: what a hand-made loop of 100 independent runs costs, for one k only;
* ``runs at every k``: ``engine.select(k=k)`` for every k on every half sample, what the
  frequencies at every k cost without reading them off one path; timed on ``--per-k-halves``
  half samples and scaled to 100 (it is 100 x k_max runs).

With 1 worker everything runs in this process; with 2, in joblib's process pool (started by
the warm-up). BLAS is pinned to one thread in every process. The machine is shared, so read
the ratios; the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.datasets import generate  # noqa: E402
from engine.stability import (  # noqa: E402
    compare_stability,
    plan_stability,
    stability_selection,
)

try:  # optional peer: reported as n/a when missing
    import abess
except ImportError:  # pragma: no cover
    abess = None
try:
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    threadpool_limits = None


def abess_select(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """abess at support size k, one thread (module level: joblib workers import it)."""
    model = abess.LinearRegression(support_size=k, thread=1)
    model.fit(X, y)
    return np.flatnonzero(model.coef_)


def _select_support(X, y, algorithm: str, k: int) -> np.ndarray:
    return engine.select(X, y, algorithm=algorithm, k=k).support


def _runs(
    X, y, halves: list[np.ndarray], algorithm: str, ks: list[int], workers: int
) -> list[np.ndarray]:
    """engine.select on every half sample at every k in ks, independently."""
    jobs = [(rows, k) for rows in halves for k in ks]
    if workers == 1:
        return [_select_support(X[r], y[r], algorithm, k) for r, k in jobs]
    from joblib import Parallel, delayed

    return Parallel(n_jobs=workers)(
        delayed(_select_support)(X[r], y[r], algorithm, k) for r, k in jobs
    )


def timed(f: Callable[[], Any]) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def run_timings(args: argparse.Namespace, X: np.ndarray, y: np.ndarray) -> None:
    plan = plan_stability(
        args.algorithm,
        k_max=args.k_max,
        n_samples=X.shape[0],
        n_features=X.shape[1],
        n_pairs=args.pairs,
        random_state=args.seed,
    )
    halves = plan.subsamples
    few = halves[: args.per_k_halves]
    ks = list(range(1, args.k_max + 1))
    cases: dict[str, Callable[[], Any]] = {}
    for w in (1, 2):
        name = f"stability, B = {args.pairs} ({len(halves)} paths), {w} worker(s)"
        cases[name] = partial(
            stability_selection,
            X,
            y,
            algorithm=args.algorithm,
            k_max=args.k_max,
            n_pairs=args.pairs,
            random_state=args.seed,
            n_jobs=w,
        )
        name = f"{len(halves)} runs at k = {args.k_max}, {w} worker(s)"
        cases[name] = partial(_runs, X, y, halves, args.algorithm, [args.k_max], w)
    per_k = f"runs at every k: {len(few)} halves x {args.k_max}, 1 worker"
    cases[per_k] = partial(_runs, X, y, few, args.algorithm, ks, 1)
    seconds: dict[str, list[float]] = {name: [] for name in cases}
    for name, f in cases.items():  # warm-up (starts joblib's workers)
        log(f"warm-up: {name}")
        f()
    for r in range(args.repeats):
        for name, f in cases.items():
            seconds[name].append(timed(f))
        log(f"round {r + 1}/{args.repeats} done")
    medians = {name: statistics.median(s) for name, s in seconds.items()}
    medians[per_k] *= len(halves) / len(few)
    base = next(v for n, v in medians.items() if n.startswith(f"{len(halves)} runs"))
    print(f"## Time ({args.algorithm}, median of {args.repeats} rounds)\n")
    print("| case | seconds | / 100 runs at k_max, 1 worker |")
    print("|---|---:|---:|")
    for name, m in medians.items():
        label = name if name != per_k else f"{name} (scaled to {len(halves)} halves)"
        print(f"| {label} | {m:.2f} | {m / base:.2f} |")
    print()


def run_comparison(args: argparse.Namespace, X: np.ndarray, y: np.ndarray, support) -> None:
    selectors = {"abess": abess_select} if abess is not None else {}
    t = time.perf_counter()
    c = compare_stability(
        X,
        y,
        algorithms=args.compare,
        selectors=selectors,
        k_max=args.k_max,
        n_pairs=args.compare_pairs,
        random_state=args.seed,
        n_jobs=2,
    )
    elapsed = time.perf_counter() - t
    names = list(c.results)
    print(
        f"## Stability on the same {2 * args.compare_pairs} half samples "
        f"({elapsed:.1f} s on 2 workers; abess {'included' if selectors else 'not installed'})\n"
    )
    print(
        "Nogueira et al.'s stability index at each k (1: the same set on every half sample), "
        "± its jackknife standard error over pairs\n"
    )
    print("| k | " + " | ".join(names) + " | steadiest |")
    print("|---:|" + "---:|" * len(names) + "---|")
    for i, k in enumerate(c.k):
        cells = " | ".join(f"{c.nogueira[m][i]:.3f} ± {c.nogueira_se[m][i]:.3f}" for m in names)
        print(f"| {k} | {cells} | {', '.join(c.steadiest[i])} |")
    kt = len(support)
    print(f"\nAt the true k = {kt}: frequency ranks of the true features (1 = most frequent)\n")
    print("| method | ranks | min true freq | max other freq | stable at 0.6 |")
    print("|---|---|---:|---:|---|")
    for m, r in c.results.items():
        f = r.summary.frequency[kt - 1]
        rank = np.empty(len(f), dtype=int)
        rank[np.argsort(-f, kind="stable")] = np.arange(1, len(f) + 1)
        other = np.delete(f, list(support)).max()
        print(
            f"| {m} | {sorted(int(rank[j]) for j in support)} | {f[list(support)].min():.2f} "
            f"| {other:.2f} | {sorted(r.summary.stable[kt - 1])} |"
        )
    print(f"\nTrue support: {sorted(int(j) for j in support)}\n")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small problem, one round")
    parser.add_argument("--algorithm", default="foba-obj")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--d", type=int, default=200)
    parser.add_argument("--k-true", type=int, default=8)
    parser.add_argument("--k-max", type=int, default=16)
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--per-k-halves", type=int, default=10)
    parser.add_argument("--compare", nargs="*", default=["foba-obj", "omp", "lasso"])
    parser.add_argument("--compare-pairs", type=int, default=10)
    parser.add_argument("--no-compare", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.n, args.d, args.k_true, args.k_max = 1, 120, 40, 4, 6
        args.pairs, args.per_k_halves, args.compare_pairs = 10, 4, 4

    p = generate(
        "gaussian_regression",
        random_state=args.seed,
        n=args.n,
        d=args.d,
        k_true=args.k_true,
        rho=0.5,
        snr=3.0,
    )
    X, y = np.asarray(p.X), np.asarray(p.y)
    print("# Stability selection: one path per half sample\n")
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, abess "
        f"{getattr(abess, '__version__', 'n/a')}, {os.cpu_count()} cores; "
        f"load average before: {_load()}\n"
    )
    print(
        f"gaussian_regression: n = {args.n}, d = {args.d}, {args.k_true} true features "
        f"(rho = 0.5, snr = 3), seed {args.seed}; k = 1..{args.k_max}; half samples of "
        f"{args.n // 2} rows\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if threadpool_limits is not None:
            with threadpool_limits(limits=1):
                run_timings(args, X, y)
                if not args.no_compare:
                    run_comparison(args, X, y, p.support)
        else:  # pragma: no cover
            run_timings(args, X, y)
            if not args.no_compare:
                run_comparison(args, X, y, p.support)
    print(f"Load average after: {_load()}")
    return 0


def _load() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "n/a"


if __name__ == "__main__":
    raise SystemExit(main())
