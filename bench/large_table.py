"""Large tables: the sufficient-statistics pass on 1 and 2 workers, then FoBa-obj on the result.

Generates a Parquet (or CSV) table of ``--gb`` gigabytes on disk (default 5; uncompressed, so
the size on disk is what the reader has to move), plus one ten times smaller, and for each:

* the statistics pass (``app.ingest.chunked.part_statistics`` over the planned row ranges) run by
  1 and by 2 spawned worker processes, each capped with ``resource.setrlimit(RLIMIT_AS)``
  (``--mem-mb``), one BLAS thread and one Arrow thread: rows/s and MB/s of the whole pass
  (wall clock, from all workers started and imported to the last partial in), and each
  worker's peak resident memory (VmHWM);
* whether the merged statistics give the same FoBa-obj answer from 1 and 2 workers;
* the time of ``engine.select_from_statistics(algorithm="foba-obj", k=--k)`` after the pass;
* with ``--check-mb`` (default 300): for a table at most that large, the same selection by
  ``engine.select`` on the table read whole, as a reference.

The load average is printed before and after each phase: on a shared machine the timings are
figures to read, never pass/fail::

    python bench/large_table.py --gb 0.2 [--features 50] [--format parquet|csv] [--dir DIR]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from queue import Empty
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import engine  # noqa: E402
from app.ingest.chunked import TablePart, TableSchema, part_statistics, plan_parts, scan_table  # noqa: E402
from engine.statistics import SufficientStatistics, merge_all  # noqa: E402

LEVELS = [f"level{i}" for i in range(8)]


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


# --------------------------------------------------------------------------- generation
def generate(path: Path, gb: float, d: int, fmt: str, seed: int = 0, block: int = 65536) -> int:
    """Write a table of about ``gb`` GB: d numeric columns (correlated, offset), one text column
    of 8 levels and the target. Returns the number of rows."""
    bytes_per_row = 8 * (d + 1) + 8  # float64 columns + the text column (about)
    n = max(1000, int(gb * 1e9 / bytes_per_row))
    rng = np.random.default_rng(seed)
    beta = np.zeros(d)
    beta[rng.choice(d, 8, replace=False)] = rng.normal(scale=2, size=8)
    offsets = rng.normal(scale=100, size=d)
    effects = rng.normal(size=len(LEVELS))
    names = [f"x{j}" for j in range(d)]
    writer: Any = None
    with open(path, "w") if fmt == "csv" else _null() as text:
        for lo in range(0, n, block):
            m = min(block, n - lo)
            r = np.random.default_rng([seed, lo])
            z = r.standard_normal((m, d))
            X = z + 0.5 * np.roll(z, 1, axis=1) + offsets
            cat = r.integers(0, len(LEVELS), m)
            y = (X - offsets) @ beta + effects[cat] + r.standard_normal(m)
            cols = {names[j]: X[:, j] for j in range(d)}
            cols["site"] = np.array(LEVELS, dtype=object)[cat]
            cols["y"] = y
            table = pa.table(cols)
            if fmt == "parquet":
                if writer is None:
                    writer = pq.ParquetWriter(path, table.schema, compression="none")
                writer.write_table(table, row_group_size=block)
            else:
                import pyarrow.csv as pacsv

                buf = pa.BufferOutputStream()
                pacsv.write_csv(
                    table, buf, pacsv.WriteOptions(include_header=lo == 0, quoting_style="none")
                )
                assert text is not None
                text.write(buf.getvalue().to_pybytes().decode())
    if writer is not None:
        writer.close()
    return n


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


# --------------------------------------------------------------------------- workers
def _worker(
    schema_dict: dict[str, Any], parts: list[dict[str, int]], mem_mb: int, queue: Any, go: Any
) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))
    pa.set_cpu_count(1)  # one core per worker: Arrow's decoding threads would oversubscribe
    schema = TableSchema.from_dict(schema_dict)
    queue.put({"ready": os.getpid()})  # imports done: the clock starts when all are ready
    go.wait()
    start = time.perf_counter()
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    try:
        partials = [part_statistics(schema, TablePart(**p)) for p in parts]
    except BaseException as exc:  # reported to the parent, which raises it
        queue.put({"error": f"{type(exc).__name__}: {exc}", "pid": os.getpid()})
        return
    stats = merge_all(partials) if partials else SufficientStatistics.empty(schema.n_features)
    hwm = _status("VmHWM")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    queue.put(
        {
            "stats": stats.to_bytes(),
            "seconds": time.perf_counter() - start,
            "cpu_seconds": usage.ru_utime + usage.ru_stime - cpu0.ru_utime - cpu0.ru_stime,
            "peak_rss_mb": hwm,
            "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "pid": os.getpid(),
        }
    )


def _status(key: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def statistics_pass(
    schema: TableSchema, parts: list[TablePart], workers: int, mem_mb: int
) -> tuple[SufficientStatistics, float, list[dict[str, Any]]]:
    """The pass by ``workers`` spawned processes (parts dealt round-robin), timed from when
    every worker has started and imported its modules to the last partial received."""
    ctx = mp.get_context("spawn")
    queue, go = ctx.Queue(), ctx.Event()
    share = [[p.to_dict() for p in parts[w::workers]] for w in range(workers)]
    procs = [
        ctx.Process(target=_worker, args=(schema.to_dict(), share[w], mem_mb, queue, go))
        for w in range(workers)
    ]
    for p in procs:
        p.start()
    for _ in procs:
        queue.get(timeout=300)
    start = time.perf_counter()
    go.set()
    results: list[dict[str, Any]] = []
    while len(results) < len(procs):
        try:
            results.append(queue.get(timeout=5))
        except Empty:
            if not all(p.is_alive() for p in procs) and queue.empty():
                raise RuntimeError("a worker died without a result") from None
    wall = time.perf_counter() - start
    if errors := [r["error"] for r in results if "error" in r]:
        raise RuntimeError(f"a worker failed: {errors[0]}")
    for p in procs:
        p.join()
        if p.exitcode:
            raise RuntimeError(f"a worker failed (exit code {p.exitcode})")
    stats = merge_all([SufficientStatistics.from_bytes(r["stats"]) for r in results])
    return stats, wall, results


# --------------------------------------------------------------------------- one table
def run_table(path: Path, n_rows: int, args: argparse.Namespace) -> None:
    size_mb = path.stat().st_size / 1e6
    print(f"\n== {path.name}: {n_rows:,} rows, {size_mb:,.0f} MB on disk ({args.format}) ==")
    t = time.perf_counter()
    schema = scan_table(path, "y", categorical=["site"])
    print(
        f"scan (schema + categories of 'site'): {time.perf_counter() - t:.2f} s; "
        f"{schema.n_features} encoded features"
    )
    answers = {}
    for workers in (1, 2):
        parts = plan_parts(schema, n_parts=max(2 * workers, args.parts))
        before = load()
        stats, wall, results = statistics_pass(schema, parts, workers, args.mem_mb)
        print(
            f"{workers} worker(s), {len(parts)} parts: {stats.n / wall:,.0f} rows/s, "
            f"{size_mb / wall:,.0f} MB/s, wall {wall:.2f} s; peak RSS per worker "
            + ", ".join(f"{r['peak_rss_mb']:.0f} MB" for r in results)
            + f" (cap {args.mem_mb} MB address space); {before} -> {load()}"
        )
        cpu = sum(r["cpu_seconds"] for r in results)
        print(
            f"  CPU of the workers during the pass {cpu:.2f} s: "
            f"{stats.n / cpu:,.0f} rows and {size_mb / cpu:,.0f} MB per CPU-second"
        )
        assert stats.n == n_rows
        t = time.perf_counter()
        res = engine.select_from_statistics(
            stats, algorithm="foba-obj", k=args.k, groups=schema.groups
        )
        sel = time.perf_counter() - t
        answers[workers] = (tuple(res.support), res.objective)
        print(
            f"  foba-obj k={args.k} after the pass: {sel * 1e3:.1f} ms; "
            f"objective {res.objective:.12g}; support {[int(j) for j in res.support]}"
        )
    (s1, o1), (s2, o2) = answers[1], answers[2]
    print(f"1 vs 2 workers: same support {s1 == s2}, objective rel. diff {abs(o1 - o2) / o1:.1e}")
    if size_mb <= args.check_mb:
        import pandas as pd

        df = pd.read_parquet(path) if args.format == "parquet" else pd.read_csv(path)
        X = pd.get_dummies(df.drop(columns="y"), columns=["site"], prefix_sep="=", dtype=float)
        assert list(X.columns) == schema.feature_names
        t = time.perf_counter()
        ref = engine.select(X.to_numpy(), df.y.to_numpy(), algorithm="foba-obj", k=args.k)
        print(
            f"in memory (engine.select on the table read whole): {time.perf_counter() - t:.2f} s;"
            f" same support {tuple(ref.support) == s1}, objective rel. diff "
            f"{abs(ref.objective - o1) / ref.objective:.1e}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gb", type=float, default=5.0, help="size of the large table on disk")
    parser.add_argument("--features", type=int, default=50, help="numeric columns")
    parser.add_argument("--format", choices=("parquet", "csv"), default="parquet")
    parser.add_argument("--dir", default=None, help="where to write the tables (default: tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the generated tables")
    parser.add_argument("--mem-mb", type=int, default=1536, help="RLIMIT_AS of a worker")
    parser.add_argument("--parts", type=int, default=8, help="row ranges of the pass")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--check-mb", type=float, default=300)
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # inherited by the spawned workers
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # Arrow's default allocator (jemalloc/mimalloc) reserves address space far beyond what it
    # uses, which RLIMIT_AS counts: the system allocator lets the cap measure real use.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    print(
        f"large_table bench: --gb {args.gb} --features {args.features} --format {args.format} "
        f"--mem-mb {args.mem_mb}; {os.cpu_count()} cores; {load()}"
    )
    folder = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="large_table_"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        for gb in (args.gb, args.gb / 10):
            path = folder / f"table_{gb:g}gb.{args.format}"
            t = time.perf_counter()
            n = generate(path, gb, args.features, args.format)
            print(f"\ngenerated {path} in {time.perf_counter() - t:.1f} s")
            try:
                run_table(path, n, args)
            finally:
                if not args.keep:
                    path.unlink()
    finally:
        if not args.keep and not args.dir:
            folder.rmdir()


if __name__ == "__main__":
    main()
