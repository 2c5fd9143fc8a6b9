#!/usr/bin/env python
"""SGHT projection timings (Xiang, Yang & Ye 2014, Section 5.1) and variant convergence (5.2).

Usage (from the repository root)::

    python bench/sght_projection.py             # all four scenarios + convergence, ~2-4 min
    python bench/sght_projection.py --quick     # p <= 1,000,000, fewer points, 1 repeat
    python bench/sght_projection.py --only 3,conv
    python bench/sght_projection.py > sght.md 2>/dev/null

Part 1 times ``engine.projections.sght`` (the exact dynamic program of Algorithms 3-4) on the
four scenarios of Table 2 / Section 5.1. v ~ N(0, 1). Scenarios 1-3 do not say how features are
assigned to groups: we draw every feature's group uniformly at random (unequal, scattered
groups: the harder layout, which needs the grouping pass). Scenario 4 uses "groups of equal
size", contiguous. The group index (sorting features by group) is built once per grouping, as
the iterative algorithms do, and timed separately; ``projection`` is one call of ``sght``
(extracting each group's top-s1 entries, the candidate groups, the table and the backtracking),
median of the repeats. Target: every p = 1,000,000 projection under 1 s (PASS/MISS). Scenario 5
is ours: scenario 3's budgets with half of the features in one group, so that the padded
(groups x largest group) layout would be too large and the per-group loop is used instead.

Part 2 runs the four variants of Table 1 on the Section 5.2 set (n, p) = (100, 2000), groups of
100 (|G| = 20), s2 in {0.1|G|, 0.2|G|}, s1 = 5 s2, tol 1e-6: iterations, wall time, and the
objective of the last iterate (before the refit, as Figure 4 plots it) and after the refit.

The machine is shared: the load average is printed; read the figures relative to each other.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
import engine.algorithms.sght  # noqa: E402  (registers sght until __init__ imports it)
from engine import projections as pj  # noqa: E402
from engine.datasets import generate  # noqa: E402

TARGET_SECONDS = 1.0
TARGET_P = 1_000_000


@dataclass(frozen=True)
class Case:
    scenario: str
    p: int
    n_groups: int
    s1: int
    s2: int
    layout: str  # "random" (scattered labels), "equal" (contiguous, equal sizes) or "skewed"


@dataclass
class Timing:
    case: Case
    index_s: float
    top_s: float
    projection_s: float
    candidates: int
    kept: int
    groups_used: int


def scenarios(quick: bool) -> list[Case]:
    """Table 2 of the paper: which quantity varies, which are fixed."""
    out: list[Case] = []
    sizes = [1_000, 10_000, 100_000, 1_000_000] + ([] if quick else [5_000_000])
    for p in sizes:  # Scenario 1: p grows, |G| = 100, s2 = 20/40/60% of |G|, s1 = 5 s2
        for frac in (0.2, 0.4, 0.6):
            s2 = int(frac * 100)
            out.append(Case("1", p, 100, 5 * s2, s2, "random"))
    for G in (10, 50, 100, 150, 200):  # Scenario 2: |G| grows with the budgets, p = 10^6
        for frac in (0.2, 0.6) if quick else (0.2, 0.4, 0.6):
            s2 = max(1, int(frac * G))
            out.append(Case("2", 1_000_000, G, 5 * s2, s2, "random"))
    for G in (50, 100, 500, 1000, 5000, 10000):  # Scenario 3: |G| grows, s1 = 50, s2 = 5
        out.append(Case("3", 1_000_000, G, 50, 5, "random"))
    for frac in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6):  # Scenario 4: 100 equal groups, 20 per group
        s2 = int(frac * 100)
        out.append(Case("4", 1_000_000, 100, 20 * s2, s2, "equal"))
    for G in (1000, 10000):  # Ours: half the features in one group (the per-group loop path)
        out.append(Case("5", 1_000_000, G, 50, 5, "skewed"))
    return out


def make_groups(case: Case, rng: np.random.Generator) -> np.ndarray:
    if case.layout == "equal":
        return np.repeat(np.arange(case.n_groups), case.p // case.n_groups)
    groups = rng.integers(0, case.n_groups, case.p)
    if case.layout == "skewed":
        groups[rng.random(case.p) < 0.5] = 0
    return groups


def time_case(case: Case, v: np.ndarray, groups: np.ndarray, repeats: int) -> Timing:
    t0 = time.perf_counter()
    index = pj.group_index(groups, case.n_groups)
    index_s = time.perf_counter() - t0
    runs, tops = [], []
    result = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = pj.sght(v, index, case.s1, case.s2)
        runs.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        top = pj.top_entries(v * v, index, case.s1)
        tops.append(time.perf_counter() - t0)
    candidates = len(pj.candidate_groups(np.cumsum(top.values, axis=1), case.s2))
    return Timing(
        case,
        index_s,
        statistics.median(tops),
        statistics.median(runs),
        candidates,
        len(result.support),
        len(np.unique(groups[result.support])),
    )


def projection_table(cases: list[Case], repeats: int, seed: int) -> list[Timing]:
    rng = np.random.default_rng(seed)
    by_p: dict[int, np.ndarray] = {}
    timings = []
    print("## SGHT projection (Section 5.1)\n")
    print(
        "| scenario | p | groups | layout | s1 | s2 | index (s) | top-s1 pass (s) | "
        "projection (s) | candidate groups | kept | groups used | target |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for case in cases:
        if case.p not in by_p:
            by_p.clear()  # keep one v in memory at p = 5,000,000
            by_p[case.p] = rng.standard_normal(case.p)
        v = by_p[case.p]
        groups = make_groups(case, rng)
        reps = 1 if case.p > TARGET_P else repeats
        t = time_case(case, v, groups, reps)
        timings.append(t)
        mark = ""
        if case.p == TARGET_P:
            mark = "PASS" if t.projection_s < TARGET_SECONDS else "MISS"
        print(
            f"| {case.scenario} | {case.p:,} | {case.n_groups:,} | {case.layout} | {case.s1} | "
            f"{case.s2} | {t.index_s:.3f} | {t.top_s:.3f} | {t.projection_s:.3f} | "
            f"{t.candidates} | {t.kept} | {t.groups_used} | {mark} |",
            flush=True,
        )
    return timings


# --------------------------------------------------------------------------- convergence


def section52_problem(n: int, p: int, s2: int, seed: int):
    """The Section 5.2 set from ``engine.datasets`` (``xiang2014_convergence``): A ~ N(0, 1);
    groups of 100 contiguous features; y from s2 random groups with 5 random N(0, 1)
    coefficients each, plus N(0, 0.1^2) noise (the paper only says "randomly generated"; a
    planted model of the same budgets makes the objective values comparable)."""
    problem = generate("xiang2014_convergence", random_state=seed, n=n, p=p, active_groups=s2)
    return problem.X, problem.y, problem.groups


def convergence_table(repeats: int, seed: int) -> None:
    n, p = 100, 2000
    G = p // 100
    print("\n## Variant convergence (Section 5.2, (n, p) = (100, 2000), groups of 100)\n")
    print(
        "| s2 | s1 | variant | iterations | time (s) | objective (last iterate) | "
        "objective (refitted) | Q at iterations 1 / 5 / 10 / 20 | stop |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---|---|")
    for s2 in (int(0.1 * G), int(0.2 * G)):
        s1 = 5 * s2
        X, y, groups = section52_problem(n, p, s2, seed)
        for variant in ("ISTA", "ISTA-L", "FISTA", "FISTA-C"):
            times, res = [], None
            for _ in range(repeats):
                t0 = time.perf_counter()
                res = engine.select(
                    X,
                    y,
                    algorithm="sght",
                    groups=groups,
                    s1=s1,
                    s2=s2,
                    variant=variant,
                    standardize=False,
                )
                times.append(time.perf_counter() - t0)
            its = [e for e in res.trace if e.kind == "iterate"]
            path = " / ".join(
                f"{its[i - 1].objective:.4g}" if i <= len(its) else "-" for i in (1, 5, 10, 20)
            )
            why = res.stop_reason.split(" after")[0].split(";")[0]
            print(
                f"| {s2} | {s1} | {variant} | {len(its)} | {statistics.median(times):.3f} | "
                f"{its[-1].objective:.6g} | {res.objective:.6g} | {path} | {why} |",
                flush=True,
            )


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="p <= 10^6, fewer points, 1 repeat")
    ap.add_argument("--only", default="1,2,3,4,5,conv", help="parts to run, e.g. 3,4,conv")
    ap.add_argument("--repeats", type=int, default=None, help="timing repeats (default 3)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 3)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print("# SGHT: projection timings and variant convergence\n")
    print(
        f"Python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
        f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1 / 5 / 15 min), "
        f"seed {args.seed}, {repeats} repeat(s).\n"
    )
    cases = [c for c in scenarios(args.quick) if c.scenario in only]
    if cases:
        timings = projection_table(cases, repeats, args.seed)
        at_target = [t for t in timings if t.case.p == TARGET_P]
        if at_target:
            worst = max(at_target, key=lambda t: t.projection_s)
            n_pass = sum(t.projection_s < TARGET_SECONDS for t in at_target)
            print(
                f"\nTarget (p = {TARGET_P:,} in under {TARGET_SECONDS:g} s): {n_pass} of "
                f"{len(at_target)} PASS; slowest {worst.projection_s:.3f} s (scenario "
                f"{worst.case.scenario}, {worst.case.n_groups} groups, s1 = {worst.case.s1}, "
                f"s2 = {worst.case.s2})."
            )
    if "conv" in only:
        convergence_table(repeats, args.seed)


if __name__ == "__main__":
    main()
