"""Lines, fields and the header: field counts checked against the header, line endings,
quoting across read blocks, and the delimiter detected (or given)."""

from __future__ import annotations

import numpy as np
import pytest
from ingest_helpers import parse, refused

# --------------------------------------------------------------------------- field counts


def test_rows_longer_than_the_header_are_refused_not_shifted() -> None:
    """pandas made the first column an index and shifted every value left."""
    text = "a,b,y\n10,1,2,3\n20,4,5,6\n30,7,8,9\n40,1,1,1\n"
    [error] = refused(text)
    assert error["loc"] == ["body", "file"]
    assert error["msg"].startswith("line 2 has 4 fields but the header has 3")
    assert "3 more lines differ too (line 3: 4, line 4: 4, line 5: 4)" in error["msg"]
    assert "row name" in error["msg"]  # R's write.table: the likely cause, said plainly
    assert error["ctx"]["lines"] == [2, 3, 4, 5] and error["ctx"]["header_fields"] == 3


def test_short_rows_are_refused_not_filled_with_missing_values() -> None:
    [error] = refused("a,b,y\n1,2,3\n4,5\n6,7,8\n")
    assert error["msg"].startswith("line 3 has 2 fields but the header has 3")
    assert "check the delimiter and the quoting" in error["msg"]


def test_a_trailing_delimiter_on_the_data_lines_is_named() -> None:
    [error] = refused("a,b,y\n1,2,3,\n4,5,6,\n7,8,9,\n")
    assert "every data line ends with ',' but the header line does not" in error["msg"]
    assert "missing" not in error["msg"]


def test_a_trailing_delimiter_on_every_line_is_no_column() -> None:
    parsed = parse("a;b;y;\n1;2;3;\n4;5;6;\n7;8;1;\n")
    assert parsed.feature_names == ["a", "b"] and parsed.X.shape == (3, 2)
    assert any("every line ends with ';'" in note for note in parsed.meta["notes"])


def test_a_header_ending_in_a_delimiter_over_plain_lines() -> None:
    [error] = refused("a,b,y,\n1,2,3\n4,5,6\n")
    assert "the header line ends with ',' but the data lines do not" in error["msg"]


# --------------------------------------------------------------------------- lines


@pytest.mark.parametrize(
    "text",
    [
        "a,b,y\r1,2,3.5\r4,5,7\r6,0,1\r",  # old Mac: carriage returns only
        "a,b,y\r\n1,2,3.5\r\n4,5,7\r\n6,0,1\r\n",  # Windows
        "a,b,y\n1,2,3.5\r\n4,5,7\n6,0,1",  # mixed, no final newline
    ],
    ids=["cr", "crlf", "mixed"],
)
def test_line_endings(text) -> None:
    parsed = parse(text)
    assert parsed.X.tolist() == [[1, 2], [4, 5], [6, 0]] and parsed.y.tolist() == [3.5, 7, 1]


def test_blank_lines_are_no_records() -> None:
    parsed = parse("a,y\n\n1,2.5\n\n3,4\n5,1\n\n\n")
    assert parsed.X.tolist() == [[1], [3], [5]] and parsed.y.tolist() == [2.5, 4, 1]


def test_an_empty_file_is_refused() -> None:
    [error] = refused("  \n\n")
    assert error["msg"] == "the file is empty" and error["loc"] == ["body", "file"]


def test_quoted_fields_across_read_blocks() -> None:
    """Quoted delimiters and newlines in a file of several 1 MiB blocks: every record is
    counted and converted right, wherever a block ends."""
    rng = np.random.default_rng(1)
    n = 40_000
    X = rng.normal(size=(n, 3))
    notes = [
        f'"note {i % 50}, with a comma\nand a newline"' if i % 3 else f"n{i % 7}" for i in range(n)
    ]
    lines = ["note,x0,x1,x2,y"]
    lines += [
        f"{t},{a:.6f},{b:.6f},{c:.6f},{a - c:.6f}" for t, (a, b, c) in zip(notes, X, strict=True)
    ]
    text = "\n".join(lines) + "\n"
    assert len(text) > 2 * 2**20  # three blocks
    parsed = parse(text, text_columns="drop")
    assert parsed.X.shape == (n, 3) and parsed.feature_names == ["x0", "x1", "x2"]
    assert parsed.meta["excluded"] == {"note": "text"}
    np.testing.assert_allclose(parsed.X, np.round(X, 6), atol=1e-12)
    np.testing.assert_allclose(parsed.y, np.round(X[:, 0], 6) - np.round(X[:, 2], 6), atol=2e-6)


# --------------------------------------------------------------------------- header


def test_the_target_must_be_a_column_of_the_header() -> None:
    [error] = refused("a,b,c\n1,2,3\n4,5,6\n")
    assert error["loc"] == ["body", "target"] and error["ctx"]["column"] == "y"
    assert error["msg"] == "target column 'y' is not in the file; its columns are 'a', 'b', 'c'"


def test_named_features_keep_the_file_order_and_exclude_the_target() -> None:
    parsed = parse("a,b,c,y\n1,2,3,4\n5,6,7,8\n9,1,2,3\n", features="c,a")
    assert parsed.feature_names == ["a", "c"] and parsed.X.tolist()[0] == [1, 3]
    [error] = refused("a,b,y\n1,2,3\n4,5,6\n", features="a,y")
    assert error["loc"] == ["body", "features"]
    assert "include the target column 'y'; a column cannot predict itself" in error["msg"]
    [error] = refused("a,b,y\n1,2,3\n4,5,6\n", features="a,zz")
    assert "names 'zz', which is not among the allowed columns" in error["msg"]


def test_a_file_with_only_the_target_has_no_features() -> None:
    [error] = refused("y\n1\n2\n3\n")
    assert "there are no feature columns" in error["msg"]


def test_a_long_column_name_is_refused() -> None:
    [error] = refused("x" * 1500 + ",y\n1,2\n3,4\n")
    assert "the name of column 1 is 1,500 characters long" in error["msg"]


# --------------------------------------------------------------------------- delimiters


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_the_delimiter_is_detected(delimiter) -> None:
    rows = [[f"{i * 0.5:.1f}", i % 3, i * 2] for i in range(8)]
    text = "\n".join(delimiter.join(map(str, r)) for r in [["a", "b", "y"], *rows]) + "\n"
    parsed = parse(text)
    assert parsed.delimiter == delimiter and parsed.feature_names == ["a", "b"]
    assert parsed.X[:, 0].tolist() == [i * 0.5 for i in range(8)]


def test_a_delimiter_the_header_lacks_does_not_mislead_the_detection() -> None:
    """Semicolons inside quoted text cells, commas between the fields."""
    text = 'a,note,y\n1,"x;y;z",2\n3,"p;q",4\n5,"r;s",6\n'
    parsed = parse(text, text_columns="drop")
    assert parsed.delimiter == "," and parsed.feature_names == ["a"]


def test_a_given_delimiter_wins_and_tab_may_be_named() -> None:
    assert parse("a,b;y\n1;2.5\n3;4\n5;1\n", delimiter=";").feature_names == ["a,b"]
    assert parse("a\tb\ty\n1\t2\t3\n4\t5\t6\n", delimiter="tab").delimiter == "\t"
    [error] = refused("a,y\n1,2\n", delimiter="ab")
    assert error["loc"] == ["body", "delimiter"]
    assert "delimiter must be one character other than a quote or a newline" in error["msg"]
