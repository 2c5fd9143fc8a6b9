"""Wide tables (issue 25): a d >> n table's few-row blocks are read by one pandas call per
batch, and its numbers are counted with array operations, not a Series per column. Small
pieces (PIECE_BYTES) make a narrow test file behave as a 63 x 20,000 one: many blocks of few
records each. The results and messages are those of the block-by-block reading."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
import pytest
from ingest_helpers import csv_text, parse

from app.errors import InvalidInput
from app.ingest import stream, table
from app.ingest.upload import ParsedCsv

N, D = 63, 120


def wide(rng: np.random.Generator, n: int = N, d: int = D) -> tuple[list[str], list[list[Any]]]:
    header = [f"g{j}" for j in range(d)] + ["y"]
    rows: list[list[Any]] = [
        [f"{v:.3f}" for v in x] + [i % 2] for i, x in enumerate(rng.normal(size=(n, d)))
    ]
    return header, rows


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "PIECE_BYTES", 2048)  # about two records a block


class Counter:
    """Calls of a Table method, passed on to the real one."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
        self.calls = 0
        real = getattr(table.Table, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(table.Table, name, counted)


def block_by_block(monkeypatch: pytest.MonkeyPatch, content: str, **form: Any) -> Any:
    """The reading before batching, as the reference: one pandas call per block."""
    with monkeypatch.context() as m:
        m.setattr(table, "BATCH_ROWS", 1)
        try:
            return parse(content, **form)
        except InvalidInput as exc:
            return exc


def same(a: ParsedCsv, b: ParsedCsv) -> None:
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.missing, b.missing)
    rest = {k: v for k, v in asdict(a).items() if k not in ("X", "y", "missing")}
    assert rest == {k: v for k, v in asdict(b).items() if k not in ("X", "y", "missing")}


def test_a_wide_table_is_read_in_one_call_per_batch(
    small_pieces: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    content = csv_text(*wide(np.random.default_rng(0)))
    reads = Counter(monkeypatch, "_read")
    numbers = Counter(monkeypatch, "_numbers")
    cells = Counter(monkeypatch, "_cells")
    parsed = parse(content)
    assert parsed.X.shape == (N, D)
    # 63 records of 0.8 KB in 2 KB pieces: about 25 blocks, read as one batch; before, one
    # pandas call per block and a _numbers call per column and block (D x 25 = 3,000).
    assert reads.calls == 1 and numbers.calls == 1 and cells.calls == 0
    block_by_block(monkeypatch, content)
    assert reads.calls > 10  # so many blocks were joined


def test_reads_grow_with_rows_not_columns(
    small_pieces: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The operation count is linear: twice the columns, the same pandas calls; the calls
    follow the records (BATCH_ROWS a batch)."""
    calls = []
    for n, d in ((600, 100), (600, 200)):
        with monkeypatch.context() as m:
            reads = Counter(m, "_read")
            parse(csv_text(*wide(np.random.default_rng(1), n, d)))
            calls.append(reads.calls)
    assert calls[0] == calls[1] <= -(-600 // table.BATCH_ROWS) + 1


def test_batches_give_the_block_by_block_result(
    small_pieces: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(2)
    header, rows = wide(rng)
    rows[3][5] = "NA"
    rows[40][7] = "inf"
    rows[50][9] = ""
    for i, row in enumerate(rows):
        row[11] = ["a", "b", "c"][i % 3] if i >= 30 else i % 4  # text from a later block on
    content = csv_text(header, rows)
    reference = block_by_block(monkeypatch, content, text_columns="onehot", missing="impute")
    same(parse(content, text_columns="onehot", missing="impute"), reference)
    refused = block_by_block(monkeypatch, content)
    with pytest.raises(InvalidInput) as caught:
        parse(content)
    assert caught.value.body() == refused.body()


@pytest.mark.parametrize("cell", ['1"2', '"1.5"', '"1,5"', '"a""b"'])
def test_quotes_in_a_batch_read_as_block_by_block(
    small_pieces: None, monkeypatch: pytest.MonkeyPatch, cell: str
) -> None:
    header, rows = wide(np.random.default_rng(3))
    rows[45][4] = cell
    content = csv_text(header, rows)
    reference = block_by_block(monkeypatch, content)
    try:
        parsed = parse(content)
    except InvalidInput as exc:
        assert isinstance(reference, InvalidInput)
        assert exc.body() == reference.body()
    else:
        assert isinstance(reference, ParsedCsv)
        same(parsed, reference)
