"""Wide-table upload time (issue 25): parse_csv and POST /api/datasets on d >> n CSVs, the
table reader of this checkout against an older commit's, in the same process, interleaved.

The older reader is ``app/ingest/table.py`` at ``--before`` (default ``a9cdc32``, before the
batching), loaded from git and put in place of the current one for the "before" rounds; the
rest of the app is this checkout's. Shapes: 63 x 2,308 (the SRBCT gene-expression shape),
63 x 20,000 and 200 x 20,000, numbers with 3 decimals and a 0/1 target. The machine is shared:
each line prints the load average, and the report compares by ratio (before / after).

    PYTHONPATH=. python bench/upload_wide.py [--before REV] [--repeats N] [--shapes 63x2308,...]
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHAPES = "63x2308,63x20000,200x20000"


def wide_csv(n: int, d: int, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    lines = [",".join([f"g{j}" for j in range(d)] + ["y"])]
    lines += [",".join(f"{v:.3f}" for v in x) + f",{i % 2}" for i, x in enumerate(X)]
    return ("\n".join(lines) + "\n").encode()


def old_table(rev: str) -> types.ModuleType:
    """``app.ingest.table`` as it was at ``rev``, with the ``add_all`` the upload now calls
    (the block-by-block loop it replaced)."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:app/ingest/table.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    spec = importlib.util.spec_from_loader("old_table", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_table"] = module  # dataclasses look their module up there
    exec(compile(source, f"{rev}:app/ingest/table.py", "exec"), module.__dict__)
    table = module.Table
    if not hasattr(table, "add_all"):

        def add_all(self: Any, blocks: Any) -> None:
            for block in blocks:
                self.add(block)

        table.add_all = add_all
    return module


@contextmanager
def reader(module: types.ModuleType | None) -> Iterator[None]:
    from app.ingest import upload

    current = upload.Table
    if module is not None:
        upload.Table = module.Table  # type: ignore[misc]
    try:
        yield
    finally:
        upload.Table = current  # type: ignore[misc]


def parse(body: bytes) -> None:
    from app.config import Settings
    from app.ingest.upload import parse_csv
    from app.models import UploadOptions
    from app.services.datasets import upload_limits

    limits = upload_limits(Settings(_env_file=None))
    parsed = parse_csv(io.BytesIO(body), UploadOptions(target="y"), limits)
    assert parsed.X.shape[0] > 0


def timed(work: Callable[[bytes], object], body: bytes) -> float:
    start = time.perf_counter()
    work(body)
    return time.perf_counter() - start


def load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", default="a9cdc32")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--no-api", action="store_true", help="parse_csv only")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from service_helpers import make_settings, serve

    before = old_table(args.before)
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    print(
        f"# Wide uploads: {args.before} (before) vs this checkout (after), median of "
        f"{args.repeats}, interleaved\n"
    )
    print("| shape | MB | step | before s | after s | before/after | load (1 5 15 min) |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp, serve(make_settings(Path(tmp) / "data")) as client:

        def post(body: bytes) -> None:
            answer = client.post(
                "/api/datasets",
                files={"file": ("wide.csv", body, "text/csv")},
                data={"target": "y"},
            )
            assert answer.status_code == 201, answer.text

        for n, d in shapes:
            body = wide_csv(n, d)
            steps: dict[str, Callable[[bytes], None]] = {"parse_csv": parse}
            if not args.no_api:
                steps["POST /api/datasets"] = post
            for step, work in steps.items():
                times: dict[str, list[float]] = {"before": [], "after": []}
                for _ in range(args.repeats):
                    for label, module in (("before", before), ("after", None)):
                        with reader(module):
                            times[label].append(timed(work, body))
                b, a = (statistics.median(times[k]) for k in ("before", "after"))
                print(
                    f"| {n} x {d:,} | {len(body) / 1e6:.1f} | {step} | {b:.2f} | {a:.2f} "
                    f"| {b / a:.1f} | {load()} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
