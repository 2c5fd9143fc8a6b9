#!/usr/bin/env python
"""Logistic refits before and after a change: same answers, fewer Hessians?

Usage (from the repository root)::

    PYTHONPATH=. python bench/refit_check.py dump after.json        # this tree
    PYTHONPATH=/path/to/old/tree python bench/refit_check.py dump before.json
    python bench/refit_check.py compare before.json after.json

``dump`` runs the logistic cases of ``bench/path_end.py --quick`` (every generator, the
bundled tables) with FoBa-obj, FoBa-gdt and Lasso-refit, under ``path_end`` auto and zhang,
and stores each run's support, objective, step count, wall time and the number of Hessians the
refits built (``glm._hessian`` calls). ``compare`` prints whether supports and step counts are
identical, the largest relative objective difference, and the Hessian and time totals.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ALGORITHMS = ("foba-obj", "foba-gdt", "lasso-refit")


def dump(path: Path) -> None:
    import engine
    import engine.objectives.glm as glm
    from bench.path_end import cases

    count = {"hessians": 0}
    original = glm._hessian

    def counted(*args: Any, **kwargs: Any) -> Any:
        count["hessians"] += 1
        return original(*args, **kwargs)

    glm._hessian = counted  # type: ignore[assignment]
    out: dict[str, Any] = {}
    for case in cases(True):
        if case.objective != "logistic":
            continue
        for algorithm in ALGORITHMS:
            for path_end in ("auto", "zhang"):
                count["hessians"] = 0
                t0 = time.perf_counter()
                res = engine.select(
                    case.X,
                    case.y,
                    algorithm=algorithm,
                    objective=case.objective,
                    k=case.k,
                    path_end=path_end,
                    **case.params,
                )
                out[f"{case.label}|{algorithm}|{path_end}"] = {
                    "support": sorted(res.support.tolist()),
                    "objective": res.objective,
                    "seconds": time.perf_counter() - t0,
                    "hessians": count["hessians"],
                    "steps": res.n_steps,
                }
    path.write_text(json.dumps(out), encoding="utf-8")


def compare(before_path: Path, after_path: Path) -> None:
    before = json.loads(before_path.read_text(encoding="utf-8"))
    after = json.loads(after_path.read_text(encoding="utf-8"))
    keys = [k for k in before if k in after]
    same = [
        k
        for k in keys
        if before[k]["support"] == after[k]["support"] and before[k]["steps"] == after[k]["steps"]
    ]
    worst = max(abs(after[k]["objective"] / before[k]["objective"] - 1.0) for k in keys)
    print(
        f"{len(keys)} runs: same support and step count in {len(same)}/{len(keys)}; "
        f"largest |objective ratio - 1| {worst:.2e}"
    )
    print("| algorithm | path_end | Hessians before | after | ratio | seconds before | after |")
    print("|---|---|---|---|---|---|---|")
    for algorithm in ALGORITHMS:
        for path_end in ("auto", "zhang"):
            ks = [k for k in keys if k.endswith(f"|{algorithm}|{path_end}")]
            hb = sum(before[k]["hessians"] for k in ks)
            ha = sum(after[k]["hessians"] for k in ks)
            tb = sum(before[k]["seconds"] for k in ks)
            ta = sum(after[k]["seconds"] for k in ks)
            print(
                f"| {algorithm} | {path_end} | {hb} | {ha} | {ha / max(hb, 1):.3f} | "
                f"{tb:.2f} | {ta:.2f} |"
            )
    for k in sorted(set(keys) - set(same)):
        print(f"* differs: {k}")


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "dump":
        dump(Path(argv[1]))
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        compare(Path(argv[1]), Path(argv[2]))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
