"""Issue 25 through the upload API: a multi-class target sorted by class, a numeric target of
a few integers (which task?), Cars93's AirBags = "None" kept as a category, a reference
level, and how a data set was prepared, kept and shown on its page."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import csv_text, upload, upload_ok

CARS = (Path(__file__).resolve().parents[1] / "fixtures" / "cars93_airbags.csv").read_bytes()


def sorted_by_class(width: int = 3, per_class: int = 10) -> str:
    """Four classes, the file sorted by class: its first rows hold one class only."""
    rows = []
    for k, label in enumerate(["ant", "bee", "cat", "dog"]):
        for i in range(per_class):
            rows.append([f"{k + 0.1 * i + 0.01 * j:.3f}" for j in range(width)] + [label])
    return csv_text([f"x{j}" for j in range(width)] + ["y"], rows)


def test_four_classes_sorted_by_class_need_one_choice(client) -> None:
    first = upload(client, sorted_by_class())
    assert first.status_code == 422
    [problem] = first.json()["detail"]
    assert problem["ctx"]["options"]["positive_class"] == ["ant", "bee", "cat", "dog"]
    ds = upload_ok(client, sorted_by_class(), positive_class="cat")
    assert ds["task"] == "classification" and ds["classes"] == ["not cat", "cat"]
    assert ds["meta"]["positive_class"] == "cat"


def test_a_target_of_few_integers_is_asked_about(client) -> None:
    text = csv_text(["a", "b", "y"], [[i * 0.5, (i * 3) % 7, i % 3] for i in range(30)])
    answer = upload(client, text)
    assert answer.status_code == 422
    [problem] = answer.json()["detail"]
    assert problem["loc"] == ["body", "task"]
    assert problem["ctx"]["options"]["task"] == ["regression", "classification"]
    assert "send task=regression" in problem["msg"] and "positive_class=" in problem["msg"]
    worded = client.post(
        "/api/datasets",
        files={"file": ("d.csv", text.encode(), "text/csv")},
        data={"target": "y"},
        headers={"X-Wording": "form"},
    ).json()["detail"][0]["msg"]
    assert worded.startswith("Task: target column 'y' holds 3 distinct integers (0, 1, 2)")
    assert "choose 'regression' under Task below" in worded
    assert upload_ok(client, text, task="regression")["task"] == "regression"
    ds = upload_ok(client, text, positive_class="1")
    assert ds["task"] == "classification" and ds["classes"] == ["not 1", "1"]


def test_cars93_airbags_none_is_a_category_when_asked(client) -> None:
    [problem] = upload(client, CARS, target="Price", text_columns="onehot").json()["detail"]
    assert "column 'AirBags' has 34 missing" in problem["msg"]
    ds = upload_ok(
        client,
        CARS,
        target="Price",
        text_columns="onehot",
        missing="impute",
        na_values="NA, N/A, NaN, null",
        reference_level="most_frequent",
    )
    assert ds["n_samples"] == 93  # every car: None is a level, NA cells are imputed
    bags = [n for n in ds["feature_names"] if n.startswith("AirBags=")]
    meta = ds["meta"]
    reference = meta["reference_levels"]["AirBags"]
    assert reference == "Driver only"  # 43 of 93 cars: left out of the model
    assert bags == ["AirBags=Driver & Passenger", "AirBags=None"]
    assert set(ds["groups"][ds["feature_names"].index(b)] for b in bags) == {"AirBags"}
    assert meta["na_values"] == ["n/a", "na", "nan", "null"]
    assert meta["imputed"] == {"Rear.seat.room": 2}
    assert meta["sources"]["AirBags=None"] == "AirBags"
    assert meta["excluded"] == {"Model": "ID-like: a different text in every row"}
    none = ds["columns"][ds["feature_names"].index("AirBags=None")]
    assert none["mean"] == pytest.approx(34 / 93) and none["source"] == "AirBags"
    page = client.get(f"/datasets/{ds['id']}").text
    assert "Reference levels" in page and "<code>AirBags</code> = <code>Driver only</code>" in page
    assert "missing-value tokens <code>n/a</code>, <code>na</code>" in page
    assert "reference level most_frequent" in page


def test_imputed_text_cells_are_shown_by_level(client) -> None:
    rows = [[i, ["red", "blue", "red", "NA"][i % 4], i % 5 + 0.5] for i in range(40)]
    ds = upload_ok(
        client,
        csv_text(["a", "colour", "y"], rows),
        text_columns="onehot",
        missing="impute",
        id_columns="keep",
    )
    assert ds["meta"]["imputed_levels"] == {"colour": "red"}
    page = client.get(f"/datasets/{ds['id']}").text
    assert "Missing text cells given a level" in page and "<code>colour</code> 10 as" in page
    assert "Missing cells filled with the column mean" not in page
