"""Logistic regression on a streamed table: passes per step, seconds per pass, peak memory.

Writes a Parquet and a CSV table of ``--rows`` x ``--features`` (Gaussian columns, labels drawn
from a logistic model on 10 of them), then runs
``engine.select_from_rows`` on ``app.ingest.table_rows.TableRows`` for foba-obj, foba-gdt
(``path_end="sparsity"``) and omp at ``--k``: the passes (all, full width), the passes each
forward step took, the seconds, and the process's peak resident memory; and ``engine.select``
on the table in memory for the same answer and its time. Figures to read, not pass/fail::

    python bench/streamed_logistic.py --rows 200000 --features 50 --k 5
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.csv as pacsv  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import engine  # noqa: E402
from app.ingest.chunked import scan_table  # noqa: E402
from app.ingest.table_rows import TableRows  # noqa: E402
from engine.from_rows import select_from_rows  # noqa: E402

SPARSITY = {"path_end": "sparsity"}
PATHS = (("foba-obj", SPARSITY), ("foba-gdt", SPARSITY), ("omp", {}))


def write(root: Path, rows: int, d: int) -> tuple[Path, Path, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((rows, d))
    X[:, 1] = X[:, 1] * 30.0 + 100.0  # a column in other units
    beta = np.zeros(d)
    beta[rng.choice(d, min(10, d), replace=False)] = rng.uniform(0.3, 1.0, min(10, d))
    y = (rng.random(rows) < 1.0 / (1.0 + np.exp(-(X - X.mean(0)) / X.std(0) @ beta))).astype(int)
    table = pa.table({**{f"x{j}": X[:, j] for j in range(d)}, "y": y})
    parquet, csv = root / "t.parquet", root / "t.csv"
    pq.write_table(table, parquet, row_group_size=65536)
    pacsv.write_csv(table, csv)
    return parquet, csv, X, y


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        parquet, csv, X, y = write(Path(tmp), args.rows, args.features)
        print(f"load average {open('/proc/loadavg').read().split()[:3]}")
        print(f"{args.rows} x {args.features}: parquet {parquet.stat().st_size / 2**20:.0f} MB, "
              f"csv {csv.stat().st_size / 2**20:.0f} MB")  # fmt: skip
        for algorithm, params in PATHS:
            start = time.perf_counter()
            ref = engine.select(X, y, algorithm=algorithm, objective="logistic", k=args.k, **params)
            memory = time.perf_counter() - start
            for path in (parquet, csv):
                rows = TableRows(scan_table(path, "y"))
                marks: list[int] = []
                start = time.perf_counter()
                holder: dict[str, object] = {}

                def mark(event, holder=holder, marks=marks):
                    if event.kind == "add":
                        marks.append(int(holder.get("passes", 0)))

                counting = _Counting(rows, holder)
                got = select_from_rows(
                    counting, algorithm=algorithm, k=args.k, recorder=mark, **params
                )
                seconds = time.perf_counter() - start
                per_step = np.diff([0, *marks]).tolist()
                same = list(got.support) == list(ref.support)
                print(
                    f"{algorithm:9} {path.suffix:8} passes {got.passes:4} (full {got.full_passes})"
                    f" per step {per_step}  {seconds:6.1f} s ({seconds / got.passes:.3f} s a pass)"
                    f"  in memory {memory:5.2f} s  same support {same}, objective rel. diff "
                    f"{abs(got.objective - ref.objective) / abs(ref.objective):.1e}"
                )
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak resident memory of this process (the in-memory runs included): {peak:.0f} MB")


class _Counting:
    """Counts the passes as they start, for the passes per step."""

    def __init__(self, rows: TableRows, holder: dict[str, object]) -> None:
        self.rows, self.holder = rows, holder
        self.n_features = rows.n_features

    def chunks(self, columns):
        self.holder["passes"] = int(self.holder.get("passes", 0)) + 1  # type: ignore[call-overload]
        return self.rows.chunks(columns)


if __name__ == "__main__":
    main()
