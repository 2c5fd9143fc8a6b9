"""Bounds (line length, cells, categories) and text encodings: each refusal names what to
fix, and a file that is not UTF-8 is read again to say what else it needs."""

from __future__ import annotations

import zlib

import pytest
from ingest_helpers import csv_text, limits, parse, refused, too_large
from pydantic import ValidationError

from app.models import UploadOptions

# --------------------------------------------------------------------------- limits


def test_a_long_line_is_refused_at_once_naming_it() -> None:
    text = "a,y\n1,2\n" + "1," * 800 + "2\n3,4\n"
    message = too_large(text, limit=limits(max_line_kb=1))
    assert message.startswith("line 3 is longer than 1 KiB")
    assert "MAX_LINE_KB" in message


def test_a_single_line_of_8_mb_is_refused() -> None:
    assert too_large("1," * 4_000_000 + "y\n").startswith("line 1 is longer than 1024 KiB")


@pytest.mark.parametrize("quoted", [False, True])
def test_a_header_cell_of_131073_characters_is_refused(quoted) -> None:
    name = "x" * 131_073
    header = f'"{name}"' if quoted else name
    [error] = refused(f"{header},y\n1,2\n3,4\n")
    assert "line 1 holds a field of more than 131,072 characters" in error["msg"]


def test_more_cells_than_max_cells() -> None:
    rows = [[i * 0.5, i % 7, i % 3] for i in range(40)]
    assert "MAX_CELLS" in too_large(csv_text(["a", "b", "y"], rows), limit=limits(max_cells=50))


def test_more_columns_than_max_columns() -> None:
    header = [f"x{j}" for j in range(5)] + ["y"]
    rows = [[j + i for j in range(6)] for i in range(4)]
    with pytest.raises(Exception) as caught:  # a 413 or a 422, naming the setting
        parse(csv_text(header, rows), limit=limits(max_columns=3))
    assert "MAX_COLUMNS" in str(caught.value)


def test_a_text_column_with_too_many_values_for_one_hot() -> None:
    rows = [[f"k{i % 5}", i * 0.5, i] for i in range(20)]
    [error] = refused(
        csv_text(["kind", "x", "y"], rows), text_columns="onehot", limit=limits(max_categories=3)
    )
    assert "5 distinct values, too many to one-hot encode (at most 3" in error["msg"]


# --------------------------------------------------------------------------- encodings


@pytest.mark.parametrize("encoding", ["base64", "rot13", "hex", "zlib", "bz2", "undefined"])
def test_byte_transforms_are_no_encodings(encoding) -> None:
    body = zlib.compress(b"a,y\n1,2\n") if encoding == "zlib" else b"a,y\n1,2\n3,4\n"
    [error] = refused(body, encoding=encoding)
    assert error["loc"] == ["body", "encoding"]
    assert "is not a text encoding" in error["msg"]


@pytest.mark.parametrize("encoding", ["x" * 100, "klingon"])
def test_encoding_names_that_are_nonsense_are_refused(encoding) -> None:
    [error] = refused(b"a,y\n1,2\n3,4\n", encoding=encoding)
    assert error["loc"] == ["body", "encoding"]
    assert "utf-8, cp1252 (Windows), latin-1 or utf-16" in error["msg"]


@pytest.mark.parametrize("encoding", ["utf-8\x00", "utf\x00-16"])
def test_encoding_names_with_nul_are_refused_by_the_options(encoding) -> None:
    """No text field of a request may hold NUL (app.models.fields.Request)."""
    with pytest.raises(ValidationError, match="NUL character"):
        UploadOptions(target="y", encoding=encoding)


def test_a_nul_in_the_file_is_refused() -> None:
    [error] = refused(b"a,y\n1,2\n3,\x004\n")
    assert "NUL character (line 3)" in error["msg"]


def test_a_windows_file_is_diagnosed_with_its_other_problems() -> None:
    """Not UTF-8: the answer names the encoding it reads as, and what else that reading finds
    (here a text column), so that the second try is the last."""
    body = "ville,taux,y\nSète,1,2\nNîmes,2,3\nAgde,3,5\n".encode("cp1252")
    encoding, text = refused(body)
    assert encoding["loc"] == ["body", "encoding"]
    assert "not utf-8 text: byte 0xe8 at offset 14 (line 2)" in encoding["msg"]
    assert "it reads as cp1252 text: send encoding=cp1252" in encoding["msg"]
    assert encoding["ctx"]["options"] == {"encoding": ["cp1252"]}
    assert text["ctx"]["column"] == "ville" and text["ctx"]["value"] == "Sète"
    parsed = parse(body, encoding="cp1252", text_columns="drop")
    assert parsed.feature_names == ["taux"] and parsed.meta["excluded"] == {"ville": "text"}


@pytest.mark.parametrize("declared", ["utf-8", "latin-1"])
def test_a_utf16_byte_order_mark_is_honoured(declared) -> None:
    """Excel's "Unicode text" is UTF-16 with a byte-order mark: read as such, and said."""
    body = "a\tb\ty\n1\t2\t3\n4\t5\t7\n2\t2\t2\n".encode("utf-16")
    parsed = parse(body, encoding=declared)
    assert parsed.feature_names == ["a", "b"] and parsed.X.shape == (3, 2)
    assert any("UTF-16's byte-order mark" in note for note in parsed.meta["notes"])


def test_a_utf8_byte_order_mark_is_no_part_of_the_first_name() -> None:
    parsed = parse("\ufeffa,b,y\n1,2,3\n4,5,6\n7,8,0\n".encode())
    assert parsed.feature_names == ["a", "b"]
