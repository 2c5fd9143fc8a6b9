"""app.ingest.chunked: chunked reading of CSV and Parquet into sufficient statistics.

The reference is the table read whole by pandas, one-hot encoded with pandas.get_dummies,
rows with a missing cell dropped, and engine.select run on it in memory.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import engine
from app.ingest.chunked import (
    StreamError,
    TableSchema,
    iter_batches,
    part_statistics,
    plan_parts,
    scan_table,
    table_statistics,
)
from engine.from_statistics import select_from_statistics
from engine.statistics import SufficientStatistics, merge_all


def _frame(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 5)) * [1, 2, 3, 1, 5] + 1e3, columns=list("abcde"))
    # A category whose last level appears only near the end of the file: every chunk must
    # still get its indicator column (the first pass finds it).
    df["site"] = rng.choice(["north", "south", "east"], n)
    df.loc[n - 5 :, "site"] = "west"
    df["y"] = 2 * df.a - df.d + (df.site == "east") * 1.5 + rng.normal(size=n)
    df.loc[[3, 100, n // 2], "c"] = np.nan
    df.loc[50, "y"] = np.nan
    return df


def _write(df: pd.DataFrame, folder: Path, kind: str, n_files: int = 1) -> Path:
    if n_files == 1:
        path = folder / f"t.{kind}"
        _write_one(df, path, kind)
        return path
    folder = folder / "dir"
    folder.mkdir()
    bounds = np.linspace(0, len(df), n_files + 1).astype(int)
    for i in range(n_files):
        _write_one(df.iloc[bounds[i] : bounds[i + 1]], folder / f"part{i:02d}.{kind}", kind)
    return folder


def _write_one(df: pd.DataFrame, path: Path, kind: str) -> None:
    if kind == "csv":
        df.to_csv(path, index=False)
    else:
        df.to_parquet(path, row_group_size=400)


def _reference(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    kept = df.dropna()
    X = pd.get_dummies(kept.drop(columns="y"), columns=["site"], dtype=float, prefix_sep="=")
    return X.to_numpy(), kept.y.to_numpy()


@pytest.mark.parametrize("kind", ["csv", "parquet"])
@pytest.mark.parametrize("n_files", [1, 3])
def test_statistics_from_1_2_3_parts_equal_the_in_memory_selection(tmp_path, kind, n_files):
    df = _frame()
    schema = scan_table(_write(df, tmp_path, kind, n_files), "y", missing="drop")
    assert schema.feature_names == [*"abcde", "site=east", "site=north", "site=south", "site=west"]
    assert schema.groups[-4:] == ["site"] * 4
    X, y = _reference(df)
    whole = SufficientStatistics.from_arrays(X, y)
    for n_parts in (1, 2, 3):
        parts = plan_parts(schema, n_parts=n_parts * n_files)
        partials = [part_statistics(schema, p, batch_rows=256, block_bytes=1 << 14) for p in parts]
        stats = merge_all(partials[::-1])
        assert stats.n == len(y)
        np.testing.assert_allclose(stats.xx, whole.xx, rtol=1e-9, atol=1e-7)
        np.testing.assert_allclose(stats.mean, whole.mean, rtol=1e-12)
        for algorithm in ("foba-obj", "stepwise", "omp"):
            ref = engine.select(X, y, algorithm=algorithm, k=4, groups=schema.groups)
            got = select_from_statistics(stats, algorithm=algorithm, k=4, groups=schema.groups)
            assert list(got.support) == list(ref.support)
            np.testing.assert_allclose(got.objective, ref.objective, rtol=1e-8)


def test_csv_byte_ranges_cover_every_row_once(tmp_path):
    df = _frame(n=1000).dropna()
    schema = scan_table(_write(df, tmp_path, "csv"), "y")
    for n_parts in (1, 2, 3, 7, 50):
        rows = [y for p in plan_parts(schema, n_parts=n_parts) for _, y in iter_batches(schema, p)]
        np.testing.assert_array_equal(np.concatenate(rows), df.y.to_numpy())


def test_missing_cells_are_refused_by_default(tmp_path):
    schema = scan_table(_write(_frame(n=200), tmp_path, "parquet"), "y")
    with pytest.raises(StreamError, match="missing='drop'"):
        list(iter_batches(schema))


def test_schema_round_trips_and_bounds_batches(tmp_path):
    schema = scan_table(_write(_frame(n=900), tmp_path, "csv"), "y", missing="drop")
    again = TableSchema.from_dict(schema.to_dict())
    assert again == schema
    sizes = [len(y) for _, y in iter_batches(again, batch_rows=100, block_bytes=4096)]
    assert max(sizes) < 100  # a 4 kB block holds well under 100 rows of this table
    assert sum(sizes) == 900 - 4


def test_categories_given_skip_the_first_pass_and_refuse_unknown_levels(tmp_path):
    path = _write(_frame(n=300), tmp_path, "csv")
    schema = scan_table(path, "y", missing="drop", categories={"site": ["north", "south", "east"]})
    with pytest.raises(StreamError, match="not among its categories"):
        list(iter_batches(schema))


@pytest.mark.parametrize("categorical_missing", ["most_frequent", "level"])
def test_a_european_latin1_csv_streamed_with_impute_equals_the_upload(
    tmp_path, categorical_missing
):
    """Delimiter, decimal comma, encoding and missing=impute as the upload's options: the
    statistics streamed in 3 ranges equal those of the uploaded table's X and y."""
    from ingest_helpers import european_csv, parse

    data = european_csv()
    path = tmp_path / "eu.csv"
    path.write_bytes(data)
    options = {
        "delimiter": ";",
        "decimal": ",",
        "encoding": "latin-1",
        "missing": "impute",
        "categorical_missing": categorical_missing,
    }
    uploaded = parse(data, text_columns="onehot", **options)
    schema = scan_table(path, "y", **options)
    assert TableSchema.from_dict(schema.to_dict()) == schema  # every worker reads the same
    parts = plan_parts(schema, n_parts=3)
    assert len(parts) == 3
    streamed = merge_all([part_statistics(schema, p, batch_rows=250) for p in parts])
    expected = SufficientStatistics.from_arrays(uploaded.X, uploaded.y)
    assert schema.feature_names == uploaded.feature_names
    assert set(schema.fill) == {"a", "b"} and set(schema.fill_levels) == {"région"}
    assert schema.imputed == uploaded.meta["imputed"] == {"a": 2, "b": 3, "région": 3}
    assert streamed.n == expected.n == 1198  # the two rows without a target dropped
    np.testing.assert_allclose(streamed.mean, expected.mean, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(streamed.xx, expected.xx, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(streamed.xy, expected.xy, rtol=1e-10, atol=1e-10)
    assert streamed.yy == pytest.approx(expected.yy, rel=1e-10)
    assert streamed.y_mean == pytest.approx(expected.y_mean, rel=1e-10)
    # The delimiter detected from the file, as the upload detects it.
    assert scan_table(path, "y", **{**options, "delimiter": None}).delimiter == ";"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"delimiter": "ab"}, "delimiter"),
        ({"delimiter": '"'}, "delimiter"),
        ({"delimiter": ",", "decimal": ","}, "decimal"),
        ({"decimal": "x"}, "decimal"),
        ({"encoding": "utf-16"}, "encoding"),
        ({"encoding": "rot13"}, "encoding"),
        ({"encoding": "no-such-codec"}, "encoding"),
        ({"missing": "guess"}, "missing"),
        ({"missing": "impute", "categorical_missing": "mode"}, "categorical_missing"),
    ],
)
def test_hostile_reader_options_are_refused_naming_the_option(tmp_path, options, field):
    path = tmp_path / "t.csv"
    path.write_text("a,b,y\n1,2,3\n4,5,6\n")
    with pytest.raises(StreamError) as caught:
        scan_table(path, "y", **options)
    assert caught.value.field == field, str(caught.value)


@pytest.mark.parametrize(
    ("content", "options", "field"),
    [
        (b"a,b,y\n1,2,3\n4,5,6\n", {"delimiter": "a"}, "delimiter"),  # records do not split
        (b"a,b,y\n1,2,3\n4,5,6,7\n", {}, "delimiter"),
        (b"a,b,y\n1,\x81x,3\n4,5,6\n", {"encoding": "cp1252"}, "encoding"),
        (b"a,b,y\n1,\xffx,3\n4,5,6\n", {}, "encoding"),
    ],
)
def test_a_file_the_options_cannot_read_is_a_stream_error(tmp_path, content, options, field):
    """Never an Arrow or codec exception (an API would answer 500): a StreamError naming the
    option that decides it."""
    path = tmp_path / "t.csv"
    path.write_bytes(content)
    with pytest.raises(StreamError) as caught:
        table_statistics(scan_table(path, "y", **options))
    assert caught.value.field == field, str(caught.value)


def test_utf8_with_a_byte_order_mark_is_utf8(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes("\ufeffa;b;y\n1,5;2;3\n4;5;6\n".encode())
    schema = scan_table(path, "y", encoding="utf-8-sig", delimiter=None, decimal=",")
    assert schema.columns == ("a", "b", "y") and schema.delimiter == ";"
    assert table_statistics(schema).mean.tolist() == [2.75, 3.5]
