"""Strict, bounded CSV parsing (issue 11, and the CSV items of issue 15): every defect found
with real files gets its regression test here, through real HTTP uploads. Every refusal is a
4xx naming what to fix, and leaves no row and no file behind."""

from __future__ import annotations

import threading
import zlib

import numpy as np
import pytest
from app_helpers import csv_text, stored_files, upload, upload_ok
from service_helpers import make_settings, serve


def refused(client, content, status=422, **form) -> list[dict]:
    response = upload(client, content, **form)
    assert response.status_code == status, response.text
    assert client.get("/api/datasets").json() == []
    assert stored_files(client.app.state.settings.data_dir) == []
    detail = response.json()["detail"]
    return detail if isinstance(detail, list) else [{"msg": detail}]


def preview(client, ds: dict) -> dict:
    return client.get(f"/api/datasets/{ds['id']}/preview", params={"limit": 100}).json()


# --------------------------------------------------------------------------- field counts


def test_rows_longer_than_the_header_are_refused_not_shifted(shared_client) -> None:
    """pandas made the first column an index and shifted every value left (answering 201)."""
    text = "a,b,y\n10,1,2,3\n20,4,5,6\n30,7,8,9\n40,1,1,1\n"
    [error] = refused(shared_client, text)
    assert error["msg"].startswith("line 2 has 4 fields but the header has 3")
    assert "3 more lines differ too (line 3: 4, line 4: 4, line 5: 4)" in error["msg"]
    assert "row name" in error["msg"]  # R's write.table: the likely cause, said plainly
    assert error["ctx"]["lines"] == [2, 3, 4, 5] and error["ctx"]["header_fields"] == 3


def test_short_rows_are_refused_not_filled_with_missing_values(shared_client) -> None:
    [error] = refused(shared_client, "a,b,y\n1,2,3\n4,5\n6,7,8\n")
    assert error["msg"].startswith("line 3 has 2 fields but the header has 3")
    assert "check the delimiter and the quoting" in error["msg"]


def test_a_trailing_delimiter_on_the_data_lines_is_named(shared_client) -> None:
    [error] = refused(shared_client, "a,b,y\n1,2,3,\n4,5,6,\n7,8,9,\n")
    assert "every data line ends with ',' but the header line does not" in error["msg"]
    assert "missing" not in error["msg"]


def test_a_trailing_delimiter_on_every_line_is_no_column(shared_client) -> None:
    ds = upload_ok(shared_client, "a;b;y;\n1;2;3;\n4;5;6;\n7;8;1;\n")
    assert ds["feature_names"] == ["a", "b"] and ds["n_samples"] == 3
    assert any("every line ends with ';'" in note for note in ds["meta"]["notes"])
    shared_client.delete(f"/api/datasets/{ds['id']}")


def test_a_header_ending_in_a_delimiter_over_plain_lines(shared_client) -> None:
    [error] = refused(shared_client, "a,b,y,\n1,2,3\n4,5,6\n")
    assert "the header line ends with ',' but the data lines do not" in error["msg"]


@pytest.mark.parametrize(
    "text",
    [
        "a,b,y\r1,2,3\r4,5,7\r",  # old Mac: carriage returns only
        "a,b,y\r\n1,2,3\r\n4,5,7\r\n",  # Windows
        "a,b,y\n1,2,3\r\n4,5,7",  # mixed, no final newline
    ],
    ids=["cr", "crlf", "mixed"],
)
def test_line_endings(shared_client, text) -> None:
    ds = upload_ok(shared_client, text)
    assert preview(shared_client, ds)["rows"] == [[1, 2, "3"], [4, 5, "7"]]
    shared_client.delete(f"/api/datasets/{ds['id']}")


def test_quoted_fields_across_read_blocks(shared_client) -> None:
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
    ds = upload_ok(shared_client, text, text_columns="drop")
    assert ds["n_samples"] == n and ds["feature_names"] == ["x0", "x1", "x2"]
    assert ds["meta"]["excluded"] == {"note": "text"}
    x0 = ds["columns"][0]
    assert x0["mean"] == pytest.approx(np.round(X[:, 0], 6).mean(), abs=1e-9)
    rows = shared_client.get(
        f"/api/datasets/{ds['id']}/preview", params={"offset": n - 2, "limit": 2}
    ).json()["rows"]
    assert rows[-1][:3] == pytest.approx(np.round(X[-1], 6).tolist())
    shared_client.delete(f"/api/datasets/{ds['id']}")


# --------------------------------------------------------------------------- limits


def test_a_long_line_is_refused_at_once_naming_it(tmp_path) -> None:
    with serve(make_settings(tmp_path / "data", max_line_kb=1)) as client:
        text = "a,y\n1,2\n" + "1," * 800 + "2\n3,4\n"
        [error] = refused(client, text, status=413)
        assert error["msg"].startswith("line 3 is longer than 1 KiB")
        assert "MAX_LINE_KB" in error["msg"]


def test_a_single_line_of_8_mb_is_refused_fast(shared_client) -> None:
    [error] = refused(shared_client, "1," * 4_000_000 + "y\n", status=413)
    assert error["msg"].startswith("line 1 is longer than 1024 KiB")


@pytest.mark.parametrize("quoted", [False, True])
def test_a_header_cell_of_131073_characters_is_a_clear_4xx(shared_client, quoted) -> None:
    name = "x" * 131_073
    header = f'"{name}"' if quoted else name
    [error] = refused(shared_client, f"{header},y\n1,2\n3,4\n")
    assert "line 1 holds a field of more than 131,072 characters" in error["msg"]


def test_a_long_column_name_is_refused(shared_client) -> None:
    [error] = refused(shared_client, "x" * 1500 + ",y\n1,2\n3,4\n")
    assert "the name of column 1 is 1,500 characters long" in error["msg"]


def test_more_cells_than_max_cells_is_413(tmp_path) -> None:
    with serve(make_settings(tmp_path / "data", max_cells=50)) as client:
        rows = [[i * 0.5, i % 7, i % 3] for i in range(40)]
        [error] = refused(client, csv_text(["a", "b", "y"], rows), status=413)
        assert "MAX_CELLS" in error["msg"]


def test_uploads_beyond_max_parallel_uploads_get_503_with_retry_after(tmp_path) -> None:
    settings = make_settings(tmp_path / "data", max_parallel_uploads=1, upload_wait_seconds=0.2)
    with serve(settings) as client:
        gate = client.app.state.upload_gate
        with gate.slot():  # a parse in progress holds the only slot
            response = upload(client, "a,y\n1,2\n2,3\n4,4\n")
            assert response.status_code == 503
            assert response.headers["retry-after"] == "1"
            assert "MAX_PARALLEL_UPLOADS" in response.json()["detail"]
        assert upload(client, "a,y\n1,2\n2,3\n4,4\n").status_code == 201


def test_a_waiting_upload_gets_the_slot_when_it_frees(tmp_path) -> None:
    settings = make_settings(tmp_path / "data", max_parallel_uploads=1, upload_wait_seconds=5)
    with serve(settings) as client:
        gate = client.app.state.upload_gate
        held = threading.Event()
        release = threading.Event()

        def hold() -> None:
            with gate.slot():
                held.set()
                release.wait(5)

        holder = threading.Thread(target=hold)
        holder.start()
        held.wait(5)
        threading.Timer(0.3, release.set).start()
        assert upload(client, "a,y\n1,2\n2,3\n4,4\n").status_code == 201
        holder.join()


# --------------------------------------------------------------------------- encodings


@pytest.mark.parametrize("encoding", ["base64", "rot13", "hex", "zlib", "bz2", "undefined"])
def test_byte_transforms_are_no_encodings(shared_client, encoding) -> None:
    body = zlib.compress(b"a,y\n1,2\n") if encoding == "zlib" else b"a,y\n1,2\n3,4\n"
    [error] = refused(shared_client, body, encoding=encoding)
    assert error["loc"] == ["body", "encoding"]
    assert "is not a text encoding" in error["msg"]


@pytest.mark.parametrize("encoding", ["utf-8\x00", "utf\x00-16", "x" * 100])
def test_encoding_names_with_nul_or_nonsense_are_refused(shared_client, encoding) -> None:
    [error] = refused(shared_client, b"a,y\n1,2\n3,4\n", encoding=encoding)
    assert error["loc"] == ["body", "encoding"]


def test_a_nul_in_the_file_is_refused(shared_client) -> None:
    [error] = refused(shared_client, b"a,y\n1,2\n3,\x004\n")
    assert "NUL character (line 3)" in error["msg"]


def test_a_windows_file_is_diagnosed_with_its_other_problems(shared_client) -> None:
    """Not UTF-8: the answer names the encoding it reads as, and what else that reading finds
    (here a text column), so that the second try is the last."""
    body = "ville,taux,y\nSète,1,2\nNîmes,2,3\nAgde,3,5\n".encode("cp1252")
    encoding, text = refused(shared_client, body)
    assert encoding["loc"] == ["body", "encoding"]
    assert "not utf-8 text: byte 0xe8 at offset 14 (line 2)" in encoding["msg"]
    assert "it reads as cp1252 text: send encoding=cp1252" in encoding["msg"]
    assert encoding["ctx"]["options"] == {"encoding": ["cp1252"]}
    assert text["ctx"]["column"] == "ville" and text["ctx"]["value"] == "Sète"
    ds = upload_ok(shared_client, body, encoding="cp1252", text_columns="drop")
    assert ds["feature_names"] == ["taux"] and ds["meta"]["excluded"] == {"ville": "text"}
    shared_client.delete(f"/api/datasets/{ds['id']}")


# --------------------------------------------------------------------------- text and numbers


def test_every_text_column_is_named_in_one_answer(shared_client) -> None:
    text = csv_text(
        ["city", "n", "kind", "mixed", "y"],
        [["Oslo", 1, "a", 1.5, 1], ["Rome", 2, "b", 2.5, 2], ["Oslo", 3, "a", "abc", 4]],
    )
    errors = refused(shared_client, text)
    assert [e["ctx"]["column"] for e in errors] == ["city", "kind", "mixed"]
    city, _, mixed = errors
    assert (city["ctx"]["row"], city["ctx"]["value"], city["ctx"]["distinct_values"]) == (
        1,
        "Oslo",
        2,
    )
    assert "text_columns=onehot or text_columns=drop" in city["msg"]
    assert "numbers but 1 cell that is not: row 3: 'abc' is not a number" in mixed["msg"]
    assert mixed["ctx"]["options"] == {"text_columns": ["drop"]}


def test_the_form_is_answered_in_its_own_words(shared_client) -> None:
    text = csv_text(["city", "n", "y"], [["Oslo", 1, 1], ["Rome", "", 2], ["Oslo", 3, 4]])
    response = shared_client.post(
        "/api/datasets",
        files={"file": ("t.csv", text.encode())},
        data={"target": "y"},
        headers={"X-Wording": "form"},
    )
    city, missing = response.json()["detail"]
    assert city["msg"].startswith("Text columns: column 'city' holds text")
    assert city["msg"].endswith("choose 'one-hot' or 'drop' under Text columns below")
    assert missing["msg"].startswith("Missing values: column 'n' has 1 missing")
    assert "'drop those rows' or 'fill with the column mean' under Missing values" in missing["msg"]
    assert "text_columns" not in city["msg"] and "missing=" not in missing["msg"]
    assert city["ctx"]["options"] == {"text_columns": ["onehot", "drop"]}


def test_one_hot_columns_and_groups(shared_client) -> None:
    rows = [[c, x, x * 2 + (c == "b")] for c, x in zip("abcabcabca", range(10), strict=True)]
    ds = upload_ok(
        shared_client, csv_text(["kind", "x", "y"], rows), text_columns="onehot", id_columns="keep"
    )
    assert ds["feature_names"] == ["kind=a", "kind=b", "kind=c", "x"]
    assert ds["groups"] == ["kind", "kind", "kind", "x"]
    assert ds["meta"]["one_hot"] == {"kind": ["a", "b", "c"]}
    assert [c["source"] for c in ds["columns"][:4]] == ["kind", "kind", "kind", None]
    assert preview(shared_client, ds)["rows"][1][:4] == [0, 1, 0, 1]
    mapped = upload_ok(
        shared_client,
        csv_text(["kind", "x", "y"], rows),
        text_columns="onehot",
        id_columns="keep",
        groups='{"kind": "category"}',
        true_support="kind",
    )
    assert mapped["groups"] == ["category", "category", "category", "x"]
    assert mapped["true_support"] == ["kind=a", "kind=b", "kind=c"]
    for d in (ds, mapped):
        shared_client.delete(f"/api/datasets/{d['id']}")


def test_a_text_column_with_too_many_values_for_one_hot(tmp_path) -> None:
    with serve(make_settings(tmp_path / "data", max_categories=3)) as client:
        rows = [[f"k{i % 5}", i * 0.5, i] for i in range(20)]
        [error] = refused(client, csv_text(["kind", "x", "y"], rows), text_columns="onehot")
        assert "5 distinct values, too many to one-hot encode (at most 3" in error["msg"]


def test_decimal_comma(shared_client) -> None:
    text = "a;b;y\n1,5;2;3,25\n2,5;1;4\n3,1;2;1\n"
    feature, target = refused(shared_client, text)
    assert "look like numbers with a decimal comma: send decimal=," in feature["msg"]
    assert "target column 'y' holds numbers with a decimal comma" in target["msg"]
    ds = upload_ok(shared_client, text, decimal=",")
    assert preview(shared_client, ds)["rows"][0] == [1.5, 2, 3.25]
    shared_client.delete(f"/api/datasets/{ds['id']}")


def test_missing_values_imputed_with_the_column_mean(shared_client) -> None:
    rows = [[1, 2, 3], ["", 4, 4], [5, "NA", 5], [3, 6, ""], [2, 2, 1]]
    ds = upload_ok(shared_client, csv_text(["a", "b", "y"], rows), missing="impute")
    assert ds["n_samples"] == 4 and ds["meta"]["dropped_rows"] == 1  # no target in row 4
    assert ds["meta"]["imputed"] == {"a": 1, "b": 1}
    a, b, y = ds["columns"]
    assert (a["imputed"], b["imputed"], y["imputed"]) == (1, 1, 0)
    assert preview(shared_client, ds)["rows"] == [
        [1, 2, 3],
        [pytest.approx(8 / 3), 4, 4],
        [5, pytest.approx(8 / 3), 5],
        [2, 2, 1],
    ]
    shared_client.delete(f"/api/datasets/{ds['id']}")


def test_positive_class_makes_a_binary_target(shared_client) -> None:
    rows = [[i * 0.3, "abc"[i % 3]] for i in range(12)]
    [error] = refused(shared_client, csv_text(["x", "y"], rows))
    assert error["loc"] == ["body", "positive_class"]
    assert error["ctx"]["classes"] == ["a", "b", "c"]
    ds = upload_ok(shared_client, csv_text(["x", "y"], rows), positive_class="b")
    assert ds["task"] == "classification" and ds["classes"] == ["not b", "b"]
    assert [r[-1] for r in preview(shared_client, ds)["rows"][:3]] == ["not b", "b", "not b"]
    shared_client.delete(f"/api/datasets/{ds['id']}")
    [error] = refused(shared_client, csv_text(["x", "y"], rows), positive_class="z")
    assert "has no class 'z'" in error["msg"]


def test_id_like_columns_are_flagged_and_left_out(shared_client) -> None:
    rng = np.random.default_rng(0)
    rows = [
        [100 + 7 * i, f"p{i:03d}", round(float(rng.normal()), 4), i % 4, i % 2] for i in range(30)
    ]
    text = csv_text(["key", "name", "x", "level", "y"], rows)
    ds = upload_ok(shared_client, text)
    assert ds["feature_names"] == ["x", "level"]
    assert set(ds["meta"]["excluded"]) == {"key", "name"}
    assert ds["meta"]["id_like"]["key"] == "an integer that grows row by row"
    assert ds["meta"]["id_like"]["name"] == "a different text in every row"
    assert preview(shared_client, ds)["excluded"] == ds["meta"]["excluded"]
    kept = upload_ok(shared_client, text, id_columns="keep", text_columns="drop")
    assert kept["feature_names"] == ["key", "x", "level"]
    assert [c["id_like"] for c in kept["columns"]] == [True, False, False, False]
    assert preview(shared_client, kept)["id_like"] == ["key"]
    named = upload_ok(shared_client, text, features="key,x")  # named columns are kept
    assert named["feature_names"] == ["key", "x"]
    for d in (ds, kept, named):
        shared_client.delete(f"/api/datasets/{d['id']}")


HOSTILE = {
    "random bytes": bytes(np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8)),
    "quotes only": b'"' * 5000,
    "delimiters only": b",,,,,\n,,,,,\n,,,,,\n",
    "header of quotes": b'"a""b,"y\n1,2\n',
    "unclosed quote at the end": b'a,y\n1,"2\n',
    "whitespace lines": b"   \n\t\n  \n",
    "bom only": b"\xef\xbb\xbf",
    "utf-16 without bom": "a,y\n1,2\n".encode("utf-16-le"),
    "cr only noise": b"\r\r\r\r",
    "nan and inf everywhere": b"a,y\nnan,inf\n-inf,nan\n",
    "huge numbers": b"a,y\n1e400,1\n-1e400,2\n3,1e-400\n",
    "binary after header": b"a,y\n" + bytes(range(1, 256)),
    "only a header and blank lines": b"a,b,y\n\n\n",
    "numbers as column names": b"1,2,3\n4,5,6\n7,8,9\n",
    "tabs and commas": b"a\tb,y\n1\t2,3\n",
    "a column of empty strings": b'a,b,y\n"",1,2\n"",3,4\n"",5,7\n',
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_files_get_a_4xx_or_a_dataset_never_a_500(shared_client, case) -> None:
    response = upload(shared_client, HOSTILE[case], target="y" if b"y" in HOSTILE[case] else "a")
    assert response.status_code in (201, 413, 422), response.text
    if response.status_code == 201:
        shared_client.delete(f"/api/datasets/{response.json()['id']}")
    else:
        detail = response.json()["detail"]
        assert detail if isinstance(detail, str) else detail[0]["msg"]
    assert shared_client.get("/api/datasets").json() == []
    assert stored_files(shared_client.app.state.settings.data_dir) == []


TOKENS = [
    "1",
    "2.5",
    "-3e5",
    "",
    "NA",
    " NA ",
    "nan",
    "inf",
    "abc",
    '"x,y"',
    '"a\nb"',
    '"',
    "True",
    "1,5",
    "0x10",
    "é",
    "\r",
    "\t",
    " ",
    "1e400",
    "9" * 400,
    ";",
    "|",
    "\x0b",
]
OPTIONS = {
    "missing": ["drop", "impute"],
    "text_columns": ["drop", "onehot"],
    "id_columns": ["keep"],
    "decimal": [","],
    "encoding": ["latin-1", "utf-16", "cp1252"],
    "task": ["regression", "classification"],
    "positive_class": ["p", "1", "x,y"],
    "features": ["a", "a,b", "b,c d"],
    "groups": ['{"a": "g"}', "g,h", "[1,2]", "{"],
    "true_support": ["a", "b=p"],
}


def test_random_files_and_options_never_get_a_500(shared_client) -> None:
    """Seeded random tables: numbers, a text column, missing cells; half of them also with now
    and then a hostile cell, a ragged row, a wrong encoding and random options. Each is
    stored or refused with a 4xx."""
    rng = np.random.default_rng(11)
    answers: dict[int, int] = {}
    for i in range(150):
        hostile = i % 2 == 1
        header = ["a", "b", "y", "c d", "id", "z"][: rng.integers(3, 7)]
        delimiter = str(rng.choice([",", ";", "\t", "|"]))
        lines = [delimiter.join(header)]
        for _ in range(rng.integers(5, 40)):
            ragged = hostile and rng.random() < 0.03
            width = len(header) + (int(rng.choice([-1, 1])) if ragged else 0)
            cells = [
                str(rng.choice(TOKENS))
                if hostile and rng.random() < 0.05
                else ("NA" if rng.random() < 0.02 else f"{rng.normal():.{rng.integers(1, 4)}f}")
                for _ in range(width)
            ]
            cells[0] = str(rng.choice(["p", "q", "r"]))
            lines.append(delimiter.join(cells))
        text = str(rng.choice(["\n", "\r\n", "\r"])).join(lines) + "\n" * int(rng.integers(2))
        encoding = str(rng.choice(["utf-8", "utf-16", "latin-1"]))
        body = text.encode(encoding, errors="replace")
        form = {"target": "y", "encoding": encoding, "text_columns": "onehot", "missing": "drop"}
        if hostile:
            form = {"target": str(rng.choice(["y", "a"])), "encoding": encoding}
            form |= {k: str(rng.choice(v)) for k, v in OPTIONS.items() if rng.random() < 0.2}
        response = upload(shared_client, body, **form)
        answers[response.status_code] = answers.get(response.status_code, 0) + 1
        assert response.status_code in (201, 413, 422), (text[:300], form, response.text)
        if response.status_code == 201:
            shared_client.delete(f"/api/datasets/{response.json()['id']}")
    assert answers.get(201, 0) >= 50 and answers.get(422, 0) >= 20, answers
    assert stored_files(shared_client.app.state.settings.data_dir) == []


@pytest.mark.parametrize("declared", ["utf-8", "latin-1"])
def test_a_utf16_byte_order_mark_is_honoured(shared_client, declared) -> None:
    """Excel's "Unicode text" is UTF-16 with a byte-order mark: read as such, and said."""
    body = "a\tb\ty\n1\t2\t3\n4\t5\t7\n2\t2\t2\n".encode("utf-16")
    ds = upload_ok(shared_client, body, encoding=declared)
    assert ds["feature_names"] == ["a", "b"] and ds["n_samples"] == 3
    assert any("UTF-16's byte-order mark" in note for note in ds["meta"]["notes"])
    shared_client.delete(f"/api/datasets/{ds['id']}")
