#!/usr/bin/env python
"""Rerun one paper's experiments and write a report beside the paper's numbers.

Usage (from the repository root)::

    python bench/reproduce.py zhang2008            # full mode: what the report quotes
    python bench/reproduce.py liu2014 --quick      # fewer repetitions, smaller sizes (< 2 min)
    python bench/reproduce.py all --quick

PAPER is one of zhang2008, liu2014, shalev2010, elenberg2016, xiang2014 (or ``all``). The report
goes to ``bench/results/PAPER/REPORT.md`` with its figures (HTML, and PNG when kaleido can
drive a Chromium). Every run is seeded (``--seed``) and prints its wall time.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path

# One BLAS thread, set before numpy loads: the engine's many small products lose to thread
# hand-offs on 2 cores (bench/README.md).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.repro import PAPERS  # noqa: E402
from bench.repro.report import RESULTS, Report, ReproConfig  # noqa: E402


def reproduce(ctx: ReproConfig) -> Report:
    """Run one paper's module and write its report; returns the report (for the tests)."""
    module = importlib.import_module(f"bench.repro.{ctx.paper}")
    report = module.run(ctx)
    report.write()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paper", choices=(*PAPERS, "all"))
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, smaller sizes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS, help="output directory")
    parser.add_argument("--no-png", action="store_true", help="HTML figures only")
    parser.add_argument(
        "--deletion-cost",
        choices=("fixed", "refit"),
        default="fixed",
        help="FoBa's backward cost in zhang2008 (refit: Zhang's R package); the report then "
        "goes to PAPER-refit",
    )
    args = parser.parse_args(argv)
    papers = PAPERS if args.paper == "all" else (args.paper,)
    for paper in papers:
        start = time.perf_counter()
        ctx = ReproConfig(
            paper,
            quick=args.quick,
            seed=args.seed,
            out_dir=args.out,
            png=not args.no_png,
            deletion_cost=args.deletion_cost,
        )
        report = reproduce(ctx)
        held = sum(c.holds for c in report.claims)
        print(
            f"{paper}: {held}/{len(report.claims)} claims hold; "
            f"report {report.dir / 'REPORT.md'}; wall time {time.perf_counter() - start:.1f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
