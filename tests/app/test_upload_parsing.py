"""CSV uploads through real HTTP: what the table reader finds reaches the client as a 4xx
naming what to fix, leaving no row and no file behind; settings reach the reader; parse slots
are bounded; the stored data set carries what the reader made of the file. The reader's own
cases (delimiters, decimals, missing tokens, encodings, limits, ...) are unit tests on bytes
in tests/ingest/."""

from __future__ import annotations

import threading

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


# --------------------------------------------------------------------------- refusals


def test_rows_longer_than_the_header_are_refused_not_shifted(shared_client) -> None:
    """pandas made the first column an index and shifted every value left (answering 201)."""
    text = "a,b,y\n10,1,2,3\n20,4,5,6\n30,7,8,9\n40,1,1,1\n"
    [error] = refused(shared_client, text)
    assert error["msg"].startswith("line 2 has 4 fields but the header has 3")
    assert "3 more lines differ too (line 3: 4, line 4: 4, line 5: 4)" in error["msg"]
    assert "row name" in error["msg"]  # R's write.table: the likely cause, said plainly
    assert error["ctx"]["lines"] == [2, 3, 4, 5] and error["ctx"]["header_fields"] == 3


# --------------------------------------------------------------------------- limits


def test_a_long_line_is_refused_at_once_naming_it(tmp_path) -> None:
    with serve(make_settings(tmp_path / "data", max_line_kb=1)) as client:
        text = "a,y\n1,2\n" + "1," * 800 + "2\n3,4\n"
        [error] = refused(client, text, status=413)
        assert error["msg"].startswith("line 3 is longer than 1 KiB")
        assert "MAX_LINE_KB" in error["msg"]


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


# --------------------------------------------------------------------------- what is stored


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


# A few of tests/ingest/test_robustness.py's files: the reader's errors become 4xx answers.
HOSTILE = {
    "random bytes": bytes(np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8)),
    "unclosed quote at the end": b'a,y\n1,"2\n',
    "utf-16 without bom": "a,y\n1,2\n".encode("utf-16-le"),
    "huge numbers": b"a,y\n1e400,1\n-1e400,2\n3,1e-400\n",
    "binary after header": b"a,y\n" + bytes(range(1, 256)),
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
