"""The chunked reader's options on a European CSV: what the dialect and missing=impute cost.

Writes a Latin-1 CSV of ``--rows`` rows (';' between the fields, decimal commas, ``--features``
numeric columns with 1% empty cells, a text column of three accented levels with ~1% empty
cells) and, in a fresh process per case (so each peak resident memory is its own), times
``app.ingest.chunked.scan_table`` and the statistics pass over ``--parts`` ranges for:

* ``drop``: rows with a missing cell dropped (the scan: the text column's levels);
* ``impute``: the same plus the scan's pass for the means and most frequent levels;
* ``impute, detected``: the delimiter detected from the first 64 KiB.

On a shared machine the timings are figures to read, never pass/fail (the load average is
printed)::

    python bench/reader_options.py [--rows 1000000] [--features 8] [--parts 4]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES = {
    "drop": {"missing": "drop", "delimiter": ";"},
    "impute": {"missing": "impute", "delimiter": ";"},
    "impute, detected": {"missing": "impute", "delimiter": None},
}


def write(path: Path, rows: int, d: int, seed: int = 0) -> None:
    """The CSV, written block by block (bounded memory)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    levels = np.array(["Île", "Gâtinais", "Périgord"])
    with open(path, "w", encoding="latin-1") as out:
        out.write(";".join([*(f"x{j}" for j in range(d)), "région", "y"]) + "\n")
        for start in range(0, rows, 100_000):
            m = min(100_000, rows - start)
            X = np.round(rng.normal(size=(m, d)), 4)
            y = np.round(X[:, 0] - 2 * X[:, min(3, d - 1)] + rng.normal(size=m), 4)
            cells = X.astype(str)
            cells[rng.random((m, d)) < 0.01] = ""
            text = levels[rng.integers(0, 3, m)].astype(object)
            text[rng.random(m) < 0.01] = ""
            lines = [
                ";".join([*row, t, str(v)]).replace(".", ",")
                for row, t, v in zip(cells, text, y, strict=True)
            ]
            out.write("\n".join(lines) + "\n")


def case(path: str, options: dict[str, object], parts: int) -> dict[str, float]:
    """One case, in this (fresh) process: seconds of the scan and the pass, peak memory."""
    import resource

    sys.path.insert(0, str(ROOT))
    from app.ingest.chunked import plan_parts, scan_table, table_statistics

    start = time.perf_counter()
    schema = scan_table(path, "y", decimal=",", encoding="latin-1", **options)  # type: ignore[arg-type]
    scanned = time.perf_counter()
    stats = table_statistics(schema, plan_parts(schema, n_parts=parts))
    done = time.perf_counter()
    return {
        "scan_s": scanned - start,
        "pass_s": done - scanned,
        "rows": stats.n,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=8)
    parser.add_argument("--parts", type=int, default=4)
    parser.add_argument("--case", help=argparse.SUPPRESS)  # the child's: a case, as JSON
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case is not None:
        print(json.dumps(case(args.path, json.loads(args.case), args.parts)))
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "eu.csv"
        write(path, args.rows, args.features)
        size = path.stat().st_size / 2**20
        print(f"{args.rows:,} rows, {args.features} numeric columns, {size:.0f} MB (Latin-1)")
        print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print("| case | scan s | pass s | rows | peak MB |\n|---|---|---|---|---|")
        for name, options in CASES.items():
            child = [sys.executable, __file__, "--case", json.dumps(options), "--path", str(path)]
            out = subprocess.run(
                [*child, "--parts", str(args.parts)], capture_output=True, text=True, check=True
            )
            r = json.loads(out.stdout)
            print(
                f"| {name} | {r['scan_s']:.2f} | {r['pass_s']:.2f} | {r['rows']:,} | "
                f"{r['peak_mb']:.0f} |"
            )
        print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
