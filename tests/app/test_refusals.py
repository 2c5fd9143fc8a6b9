"""Refusals say what to fix without echoing the request: ids in plain digits only, and a 422
stays small whatever was sent."""

from __future__ import annotations

import pytest
from service_helpers import make_settings, serve

from app.ingest.words import option
from foba_lab.cli import main


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with serve(make_settings(tmp_path_factory.mktemp("refusals") / "data")) as client:
        yield client


@pytest.mark.parametrize("written", ["+1", "1.0", "1_0", "\uff11", "0x1"])
def test_an_id_not_in_plain_digits_is_refused(api, written: str) -> None:
    answer = api.get(f"/api/runs/{written}")
    assert answer.status_code == 422
    assert "plain digits" in answer.text


def test_an_offset_not_in_plain_digits_is_refused(api) -> None:
    answer = api.get("/api/datasets", params={"offset": "1_000"})
    assert answer.status_code == 422 and "plain digits" in answer.text


def test_a_422_does_not_echo_a_huge_input(api) -> None:
    answer = api.post("/api/runs", json={"dataset_id": "x" * 1_000_000, "algorithm": "omp"})
    assert answer.status_code == 422
    assert len(answer.content) < 4096
    assert "1000002 characters" in answer.text


def test_a_file_sent_as_a_plain_field_is_refused_briefly(api) -> None:
    csv_text = "y,a\n" + "1,2\n" * 200_000
    answer = api.post("/api/datasets", data={"file": csv_text, "target": "y"})
    assert answer.status_code in (400, 422), answer.text
    assert len(answer.content) < 4096


def test_values_too_large_to_compute_with_are_refused_at_upload(api) -> None:
    """1e200 is finite, but its square is not: the run would fail, or store metrics that are
    no numbers (a 500 on the run page)."""
    rows = "".join(f"{i % 7},{(i % 5) * 1e200},{i % 3}\n" for i in range(30))
    answer = api.post(
        "/api/datasets",
        files={"file": ("huge.csv", "y,a,b\n" + rows)},
        data={"target": "y", "task": "regression"},  # y's 7 integers: a quantity here
    )
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"][0]
    assert detail["ctx"]["column"] == "a" and "rescale" in detail["msg"]
    fine = "".join(f"{i % 7},{(i % 5) * 1e100},{i % 3}\n" for i in range(30))
    ok = api.post(
        "/api/datasets",
        files={"file": ("ok.csv", "y,a,b\n" + fine)},
        data={"target": "y", "task": "regression"},
    )
    assert ok.status_code == 201, ok.text


# --------------------------------------------------------------------------- unclear refusals
# Each refusal names the actual problem and the option that fixes it, through the API and
# through ``foba-lab select`` (the same reader, its words naming the command's options).

ROWS = "".join(f"{i % 7},{i % 5}.5,{i % 3}.25\n" for i in range(30))
COMMAS = "y,a,b\n" + ROWS
SEMICOLONS = "y;a;b\n" + ROWS.replace(",", ";").replace(".", ",")

UNCLEAR = {
    # id: (file, options, words in both answers, the API's fix, the command's fix)
    "ebcdic": (COMMAS.encode("cp500"), {}, "looks like EBCDIC", "save it as UTF-8", "UTF-8"),
    "ebcdic-declared": (
        COMMAS.encode("cp500"),
        {"encoding": "cp500"},
        "'cp500' is not a supported encoding",
        "utf-8, cp1252 (Windows), latin-1 or utf-16",
        "utf-8, cp1252 (Windows), latin-1 or utf-16",
    ),
    "decimal-comma-in-a-comma-file": (
        COMMAS.encode(),
        {"decimal": ","},
        "separated by commas (its header splits at them), but the decimal mark is ',' too",
        "send decimal=.",
        "use --decimal .",
    ),
    "delimiter-is-the-decimal-mark": (
        COMMAS.encode(),
        {"decimal": ",", "delimiter": ","},
        "the delimiter and the decimal mark are both ','",
        "send decimal=.",
        "use --decimal .",
    ),
    "semicolon-file-read-with-commas": (
        SEMICOLONS.encode(),
        {"delimiter": ","},
        "header is one column when read with the delimiter ','; its fields look separated by ';'",
        "send delimiter=;",
        "use --delimiter ;",
    ),
    "blank-target": (
        COMMAS.encode(),
        {"target": "  "},
        "the target column name is empty; the target must be one of the columns 'y', 'a', 'b'",
        "",
        "",
    ),
}


@pytest.mark.parametrize("case", list(UNCLEAR), ids=list(UNCLEAR))
def test_unclear_refusals_name_the_problem(api, tmp_path, capsys, case: str) -> None:
    content, options, words, api_fix, cli_fix = UNCLEAR[case]
    form = {"target": "y", **options}
    answer = api.post("/api/datasets", files={"file": ("f.csv", content)}, data=form)
    assert answer.status_code == 422, answer.text
    message = answer.json()["detail"][0]["msg"]
    assert words in message and api_fix in message, message
    assert "cells" not in message and "ID-like" not in message

    path = tmp_path / "f.csv"
    path.write_bytes(content)
    args = [arg for name, value in form.items() for arg in (option(name), value)]
    assert main(["select", str(path), *args]) == 2
    said = capsys.readouterr().err
    assert words in said and cli_fix in said, said


def test_an_empty_target_is_named_and_the_form_is_not_echoed(api) -> None:
    """A multipart form drops an empty field: FastAPI said "Field required" and sent back the
    whole form, the upload's temporary file's internals included."""
    answer = api.post("/api/datasets", files={"file": ("f.csv", COMMAS)}, data={"target": ""})
    assert answer.status_code == 422, answer.text
    (problem,) = answer.json()["detail"]
    assert problem["loc"] == ["body", "target"] and "input" not in problem
    assert problem["msg"].startswith("the target column name is empty; name the column")
    form = api.post(
        "/api/datasets",
        files={"file": ("f.csv", COMMAS)},
        data={"target": ""},
        headers={"X-Wording": "form"},
    )
    assert form.json()["detail"][0]["msg"].startswith("Target column: the target column name")
    absent = api.post("/api/datasets", files={"file": ("f.csv", COMMAS)})
    (problem,) = absent.json()["detail"]
    assert problem["msg"] == "Field required" and "_TemporaryFileArgs" not in absent.text
    # What a browser sends for a file input with nothing chosen: no name, no bytes.
    no_file = api.post("/api/datasets", files={"file": ("", b"")}, data={"target": "y"})
    (problem,) = no_file.json()["detail"]
    assert problem["loc"] == ["body", "file"] and problem["msg"] == "no file was chosen"


def test_byte_order_marks_are_no_part_of_a_column_name(api, tmp_path, capsys) -> None:
    """A file saved twice by an editor that adds a BOM starts with two."""
    content = ("\ufeff\ufeff" + COMMAS).encode()
    form = {"target": "y", "task": "regression"}  # y holds a few integers: say what they are
    answer = api.post("/api/datasets", files={"file": ("f.csv", content)}, data=form)
    assert answer.status_code == 201, answer.text
    assert answer.json()["target"] == "y" and answer.json()["feature_names"] == ["a", "b"]
    path = tmp_path / "bom.csv"
    path.write_bytes(content)
    select = ["select", str(path), "--target", "y", "--k", "1", "--json"]
    assert main([*select, "--objective", "least_squares"]) == 0
    assert "\\ufeff" not in capsys.readouterr().out
