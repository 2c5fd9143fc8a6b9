"""bench/large_table.py at a tiny size: the pass split over 2 and 3 spawned, memory-capped
workers gives the same statistics and the same selection as the table read in one process."""

from __future__ import annotations

import numpy as np

from app.ingest.chunked import part_statistics, plan_parts, scan_table
from bench.large_table import generate, statistics_pass
from engine import select_from_statistics


def test_workers_give_the_answer_of_one_process(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "system")
    path = tmp_path / "t.parquet"
    n = generate(path, 0.003, 10, "parquet", block=4000)
    schema = scan_table(path, "y", categorical=["site"])
    whole = part_statistics(schema)
    ref = select_from_statistics(whole, algorithm="foba-obj", k=4)
    parts = plan_parts(schema, n_parts=6)  # row groups of 4000 rows, dealt round-robin
    assert len(parts) == 6
    for workers in (2, 3):
        stats, _, results = statistics_pass(schema, parts, workers, 1536)
        assert stats.n == n == whole.n
        assert all(r["peak_rss_mb"] > 0 for r in results)
        np.testing.assert_allclose(stats.xx, whole.xx, rtol=1e-12)
        got = select_from_statistics(stats, algorithm="foba-obj", k=4)
        assert list(got.support) == list(ref.support)
        np.testing.assert_allclose(got.objective, ref.objective, rtol=1e-12)
