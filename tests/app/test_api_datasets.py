"""Data sets through the API: upload, generate, list, show, preview, delete."""

from __future__ import annotations

import numpy as np
import pytest
from app_helpers import (
    classification_csv,
    csv_text,
    regression_csv,
    stored_files,
    upload,
    upload_ok,
)
from service_helpers import submit

from app.storage import DirectoryStore


def test_upload_stores_arrays_in_a_server_named_file(client, data_dir) -> None:
    ds = upload_ok(
        client,
        regression_csv(n=30, d=4, support=(1,)),
        filename="../../etc/passwd.csv",
        true_support="x1",
    )
    assert (ds["n_samples"], ds["n_features"], ds["task"], ds["target"]) == (
        30,
        4,
        "regression",
        "y",
    )
    assert ds["feature_names"] == ["x0", "x1", "x2", "x3"]
    assert ds["true_support"] == ["x1"] and ds["has_true_support"]
    [file] = stored_files(data_dir)
    assert file.suffix == ".npz" and "passwd" not in file.name
    arrays = DirectoryStore(data_dir).load(f"datasets/{file.name}")
    assert arrays["X"].shape == (30, 4) and arrays["y"].shape == (30,)


def test_show_summarises_every_column(client) -> None:
    text = csv_text(["a", "b", "t"], [[1, 10, 0.5], [2, 20, 1.5], [3, 60, 2.5], [6, 30, 9]])
    ds = upload_ok(client, text, target="t")
    shown = client.get(f"/api/datasets/{ds['id']}").json()
    assert shown == ds
    a, b, t = shown["columns"]
    assert (a["name"], a["role"], a["type"], a["missing"]) == ("a", "feature", "numeric", 0)
    assert a["mean"] == pytest.approx(3.0) and a["std"] == pytest.approx(np.std([1, 2, 3, 6]))
    assert (b["min"], b["max"]) == (10, 60)
    assert t["role"] == "target" and t["mean"] == pytest.approx(3.375)


def test_bom_quoted_newlines_and_semicolons_are_read(client) -> None:
    text = '\ufeff"first\nname";x;y\n"a\nb";1,5;2\n"c";2;3\n"d";3;5\n'
    ds = upload_ok(client, text.replace("1,5", "1.5"), target="y", features="x")
    assert ds["feature_names"] == ["x"] and ds["meta"]["delimiter"] == ";"
    assert ds["n_samples"] == 3


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16", "utf-8-sig"])
def test_declared_encodings_are_read(client, encoding) -> None:
    text = "café;y\n1;2\n2;5\n3;4\n"
    ds = upload_ok(client, text.encode(encoding), encoding=encoding)
    assert ds["feature_names"] == ["café"] and ds["n_samples"] == 3


def test_delimiter_can_be_given(client) -> None:
    text = csv_text(["a", "b", "y"], [[1, 2, 3], [2, 1, 5], [3, 3, 1]], delimiter="\t")
    ds = upload_ok(client, text, target="y", delimiter="tab")
    assert ds["feature_names"] == ["a", "b"]


def test_text_labels_make_a_classification_target(client) -> None:
    ds = upload_ok(client, classification_csv(), target="label")
    assert ds["task"] == "classification" and ds["classes"] == ["no", "yes"]
    assert ds["columns"][-1]["type"] == "categorical"


def test_task_is_inferred_and_can_be_overridden(client) -> None:
    rows = [[round(i / 3, 4), i % 2] for i in range(10)]  # fractions: not an ID-like counter
    inferred = upload_ok(client, csv_text(["x", "y"], rows), target="y")
    assert inferred["task"] == "classification" and inferred["classes"] == ["0", "1"]
    forced = upload_ok(client, csv_text(["x", "y"], rows), target="y", task="regression")
    assert forced["task"] == "regression" and forced["classes"] is None


def test_rows_with_missing_values_are_dropped_when_asked(client) -> None:
    rows = [[1, 2, 3], ["", 2, 4], [3, "inf", 5], [4, 4, 6], [5, 1, 2]]
    ds = upload_ok(client, csv_text(["a", "b", "y"], rows), target="y", missing="drop")
    assert ds["n_samples"] == 3 and ds["meta"]["dropped_rows"] == 2
    assert [c["missing"] for c in ds["columns"]] == [1, 1, 0]


@pytest.mark.parametrize(
    "groups, expected",
    [
        ('{"x0": "g1", "x1": "g1"}', ["g1", "g1", "x2"]),
        ("a, a, b", ["a", "a", "b"]),
        ('["a", "b", "b"]', ["a", "b", "b"]),
    ],
)
def test_groups_by_mapping_or_label_per_feature(client, groups, expected) -> None:
    ds = upload_ok(client, regression_csv(d=3, support=(1,)), target="y", groups=groups)
    assert ds["groups"] == expected


def test_generate_lists_and_uses_the_engine_generators(client, data_dir) -> None:
    generators = client.get("/api/generators").json()
    names = {g["name"] for g in generators}
    assert "gaussian_regression" in names
    assert all("schema" in g and "params" in g for g in generators)
    response = client.post(
        "/api/datasets/generate",
        json={"generator": "gaussian_regression", "params": {"n": 40, "d": 8}, "random_state": 3},
    )
    assert response.status_code == 201, response.text
    ds = response.json()
    assert response.headers["location"] == f"/api/datasets/{ds['id']}"
    assert (ds["source"], ds["n_samples"], ds["n_features"]) == ("generator", 40, 8)
    assert len(ds["true_support"]) == 5 and ds["meta"]["random_state"] == 3
    assert len(stored_files(data_dir)) == 1


def test_generated_classification_labels_are_coded_0_1(client, data_dir) -> None:
    response = client.post(
        "/api/datasets/generate",
        json={"generator": "liu2014_logistic", "params": {"n": 20, "d": 10, "s": 2}},
    )
    ds = response.json()
    assert ds["task"] == "classification" and ds["classes"] == ["-1", "1"]
    preview = client.get(f"/api/datasets/{ds['id']}/preview", params={"limit": 20}).json()
    assert {row[-1] for row in preview["rows"]} == {"-1", "1"}


def test_list_and_preview(client) -> None:
    first = upload_ok(client, regression_csv(n=25, d=3, support=(0,)), name="first")
    upload_ok(client, regression_csv(n=10, d=2, support=(0,)), name="second")
    listed = client.get("/api/datasets").json()
    assert [d["name"] for d in listed] == ["first", "second"]
    assert client.get("/api/datasets", params={"offset": 1}).json()[0]["name"] == "second"
    preview = client.get(
        f"/api/datasets/{first['id']}/preview", params={"offset": 20, "limit": 10}
    ).json()
    assert preview["columns"] == ["x0", "x1", "x2", "y"]
    assert (preview["offset"], preview["total"], len(preview["rows"])) == (20, 25, 5)


def test_unknown_dataset_is_404(client) -> None:
    for path in ("/api/datasets/99", "/api/datasets/99/preview"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.json() == {"detail": "data set 99 does not exist"}
    assert client.delete("/api/datasets/99").status_code == 404


def test_delete_removes_row_file_and_finished_runs(client, data_dir) -> None:
    ds = upload_ok(client, regression_csv())
    run = submit(client, ds["id"], algorithm="omp", k=2)
    response = client.delete(f"/api/datasets/{ds['id']}")
    assert response.status_code == 409  # the run is queued (no workers here)
    assert "queued or running" in response.json()["detail"]
    assert client.post(f"/api/runs/{run['id']}/cancel").status_code == 200
    assert client.delete(f"/api/datasets/{ds['id']}").status_code == 204
    assert client.get(f"/api/datasets/{ds['id']}").status_code == 404
    assert client.get(f"/api/runs/{run['id']}").status_code == 404
    assert stored_files(data_dir) == []


def test_upload_response_points_at_the_dataset(client) -> None:
    response = upload(client, regression_csv())
    assert response.headers["location"] == f"/api/datasets/{response.json()['id']}"


def test_patch_renames_and_describes_a_dataset(client) -> None:
    ds = upload_ok(client, regression_csv())
    response = client.patch(
        f"/api/datasets/{ds['id']}", json={"name": " Prices ", "description": "2024"}
    )
    assert response.status_code == 200, response.text
    assert (response.json()["name"], response.json()["description"]) == ("Prices", "2024")
    assert (
        client.patch(f"/api/datasets/{ds['id']}", json={"description": ""}).json()["name"]
        == "Prices"
    )
    for body, words in (
        ({"name": "  "}, "the name is blank"),
        ({"name": "x" * 201}, "at most 200 characters"),
        ({"description": "x" * 2001}, "at most 2000 characters"),
        ({"name": None}, "cannot be null"),
        ({"task": "regression"}, "Extra inputs are not permitted"),
    ):
        refused = client.patch(f"/api/datasets/{ds['id']}", json=body)
        assert refused.status_code == 422, body
        assert words in refused.json()["detail"][0]["msg"], refused.json()
    assert client.get(f"/api/datasets/{ds['id']}").json()["name"] == "Prices"
    assert client.patch("/api/datasets/9999", json={"name": "a"}).status_code == 404
