"""Every bad input gets the documented 4xx, a message naming what is wrong, and leaves
nothing behind: no row, no file in the data directory."""

from __future__ import annotations

import pytest
from app_helpers import csv_text, regression_csv, stored_files, upload
from service_helpers import make_settings, serve

GOOD = regression_csv(n=20, d=3, support=(0,))


def assert_nothing_stored(client) -> None:
    assert client.get("/api/datasets").json() == []
    assert stored_files(client.app.state.settings.data_dir) == []


def error_message(response) -> str:
    detail = response.json()["detail"]
    return detail if isinstance(detail, str) else detail[0]["msg"]


# (file content, form fields, expected status, words the message must contain)
BAD_UPLOADS = {
    "empty file": (b"", {}, 422, ["empty"]),
    "blank file": (b"\n \n", {}, 422, ["empty"]),
    "header only": (b"x0,x1,y\n", {}, 422, ["header", "no data rows"]),
    "unknown target": (GOOD, {"target": "price"}, 422, ["'price'", "'x0'"]),
    "unknown feature": (GOOD, {"features": "x0,zz"}, 422, ["'zz'"]),
    "target among features": (GOOD, {"features": "x0,y"}, 422, ["target", "'y'"]),
    "non-numeric cell": (
        csv_text(["a", "b", "y"], [[1, 2, 3], [2, "abc", 4], [3, 1, 1]]),
        {},
        422,
        ["column 'b'", "row 2", "'abc'"],
    ),
    "missing values": (
        csv_text(["a", "b", "y"], [[1, "", 3], [2, "NA", 4], [3, 1, 1]]),
        {},
        422,
        ["column 'b' has 2 missing", "row 1", "missing=drop"],
    ),
    "infinite values": (
        csv_text(["a", "b", "y"], [[1, 2, 3], [2, 1, 4], ["-inf", 1, 1]]),
        {},
        422,
        ["column 'a' has 1 infinite", "row 3"],
    ),
    "nothing left after dropping": (
        csv_text(["a", "y"], [["", 1], [2, ""], [3, 4]]),
        {"missing": "drop"},
        422,
        ["only 1 rows"],
    ),
    "duplicate header": (
        csv_text(["a", "b", "a", "y"], [[1, 2, 3, 4]]),
        {},
        422,
        ["'a' appears 2 times"],
    ),
    "blank header": (
        csv_text(["a", " ", "y"], [[1, 2, 3]]),
        {},
        422,
        ["column 2", "blank header"],
    ),
    "constant target": (
        csv_text(["a", "y"], [[1, 5], [2, 5], [3, 5]]),
        {},
        422,
        ["'y'", "single value 5"],
    ),
    "single class for classification": (
        csv_text(["a", "y"], [[1, "yes"], [2, "yes"]]),
        {"task": "classification"},
        422,
        ["single value yes"],
    ),
    "many text labels": (
        csv_text(["a", "y"], [[1, "a"], [2, "b"], [3, "c"]]),
        {},
        422,
        ["3 classes ('a', 'b', 'c')", "positive_class="],
    ),
    "text target for regression": (
        csv_text(["a", "y"], [[1, "no"], [2, "yes"]]),
        {"task": "regression"},
        422,
        ["column 'y'", "'no' is not a number"],
    ),
    "classification of many values": (
        csv_text(["a", "y"], [[1, 1], [2, 2], [3, 3]]),
        {"task": "classification"},
        422,
        ["3 classes ('1', '2', '3')", "positive_class="],
    ),
    "ragged row": (b"a,b,y\n1,2,3\n1,2,3,4\n", {}, 422, ["line 3 has 4 fields", "header has 3"]),
    "not utf-8": (
        b"a,y\n1,2\n\xff\xfe,3\n",
        {},
        422,
        ["not utf-8", "0xff", "line 3"],
    ),
    "binary bytes": (b"a,y\n1,\x002\n", {"encoding": "latin-1"}, 422, ["NUL", "binary"]),
    "unknown encoding": (GOOD, {"encoding": "klingon"}, 422, ["unknown encoding 'klingon'"]),
    "bad delimiter": (GOOD, {"delimiter": ";;"}, 422, ["one character"]),
    "groups of the wrong length": (GOOD, {"groups": "a,b"}, 422, ["2 labels", "3 features"]),
    "groups naming an unknown column": (GOOD, {"groups": '{"q": "g"}'}, 422, ["'q'"]),
    "true support naming an unknown column": (GOOD, {"true_support": "x9"}, 422, ["'x9'"]),
    "unknown form field": (GOOD, {"tagret": "y"}, 422, ["Extra inputs"]),
    "bad missing policy": (GOOD, {"missing": "ignore"}, 422, ["'error', 'drop' or 'impute'"]),
}


@pytest.mark.parametrize("case", list(BAD_UPLOADS))
def test_bad_upload_is_refused_and_leaves_nothing(shared_client, case) -> None:
    client = shared_client
    assert_nothing_stored(client)
    content, form, status, words = BAD_UPLOADS[case]
    response = upload(client, content, **form)
    assert response.status_code == status, response.text
    message = error_message(response)
    for word in words:
        assert word in message
    assert_nothing_stored(client)


def test_missing_file_or_target_is_422(shared_client) -> None:
    client = shared_client
    response = client.post("/api/datasets", data={"target": "y"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "file"]
    response = client.post("/api/datasets", files={"file": ("a.csv", GOOD.encode())})
    assert response.json()["detail"][0]["loc"] == ["body", "target"]
    assert_nothing_stored(client)


def test_non_numeric_error_points_at_cell(shared_client) -> None:
    client = shared_client
    text = csv_text(["a", "b", "y"], [[1, 2, 3], [2, "abc", 4]])
    error = upload(client, text, target="y").json()["detail"][0]
    assert error["loc"] == ["body", "file"]
    assert error["ctx"] == {
        "column": "b",
        "row": 2,
        "value": "abc",
        "distinct_values": 2,
        "options": {"text_columns": ["onehot", "drop"]},
    }


def test_too_many_columns_is_413(tmp_path) -> None:
    data_dir = tmp_path / "data"
    with serve(make_settings(data_dir, max_columns=5)) as client:
        header = [f"c{j}" for j in range(6)]
        response = upload(client, csv_text(header, [list(range(6))]), target="c5")
        assert response.status_code == 413
        assert "6 columns" in response.json()["detail"]
        assert "at most 5" in response.json()["detail"]
        assert_nothing_stored(client)


def test_too_many_bytes_is_413_while_streaming(tmp_path) -> None:
    data_dir = tmp_path / "data"
    with serve(make_settings(data_dir, max_upload_mb=0.01)) as client:  # 10 KiB
        big = regression_csv(n=2000, d=10).encode()  # ~ 200 KiB
        response = upload(client, big)
        assert response.status_code == 413
        assert "MAX_UPLOAD_MB" in response.json()["detail"]

        def chunks():  # no Content-Length: only the streaming count can stop it
            for start in range(0, len(big), 4096):
                yield big[start : start + 4096]

        boundary = "b0undary"
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="target"\r\n\r\ny\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            'filename="big.csv"\r\nContent-Type: text/csv\r\n\r\n'
        ).encode()

        def body():
            yield head
            yield from chunks()
            yield f"\r\n--{boundary}--\r\n".encode()

        response = client.post(
            "/api/datasets",
            content=body(),
            headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
        )
        assert response.status_code == 413
        assert_nothing_stored(client)


def test_file_just_over_the_limit_is_413(tmp_path) -> None:
    """The stream limit allows for form overhead; the file itself is checked exactly."""
    data_dir = tmp_path / "data"
    with serve(make_settings(data_dir, max_upload_mb=0.01)) as client:
        content = (GOOD + "#" * 10_300).encode()[: int(0.01 * 1024 * 1024) + 1]
        response = upload(client, content)
        assert response.status_code == 413
        assert "larger than 0.01 MB" in response.json()["detail"]
        assert_nothing_stored(client)


def test_oversized_json_body_is_413(tmp_path) -> None:
    with serve(make_settings(tmp_path / "data", max_json_kb=1)) as client:
        response = client.post("/api/runs", json={"dataset_id": 1, "algorithm": "x" * 2000})
        assert response.status_code == 413
        assert "MAX_JSON_KB" in response.json()["detail"]


BAD_GENERATE = {
    "unknown generator": ({"generator": "nope"}, 422, ["unknown generator 'nope'"]),
    "unknown parameter": (
        {"generator": "gaussian_regression", "params": {"bogus": 1}},
        422,
        ["'bogus'"],
    ),
    "parameter out of range": (
        {"generator": "gaussian_regression", "params": {"n": 1}},
        422,
        ["'n'", ">= 2"],
    ),
    "problem too large": (
        {"generator": "gaussian_regression", "params": {"n": 100000, "d": 100000}},
        422,
        ["100,000 x 100,000", "at most 20,000,000", "MAX_CELLS"],
    ),
    "unknown field": ({"generator": "gaussian_regression", "seed": 1}, 422, ["Extra inputs"]),
}


@pytest.mark.parametrize("case", list(BAD_GENERATE))
def test_bad_generate_is_refused_and_leaves_nothing(shared_client, case) -> None:
    client = shared_client
    assert_nothing_stored(client)
    body, status, words = BAD_GENERATE[case]
    response = client.post("/api/datasets/generate", json=body)
    assert response.status_code == status, response.text
    for word in words:
        assert word in error_message(response)
    assert_nothing_stored(client)
