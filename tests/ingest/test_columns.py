"""What the columns hold and what the options make of them: numbers and decimal marks,
missing tokens, text columns (refused, dropped or one-hot encoded), ID-like columns, the
target and its task; every refusal names the column and the option that fixes it."""

from __future__ import annotations

import numpy as np
import pytest
from ingest_helpers import csv_text, parse, refused

from app.ingest.words import Words

# --------------------------------------------------------------------------- numbers


def test_decimal_comma() -> None:
    text = "a;b;y\n1,5;2;3,25\n2,5;1;4\n3,1;2;1\n"
    feature, target = refused(text)
    assert "look like numbers with a decimal comma: send decimal=," in feature["msg"]
    assert "target column 'y' holds numbers with a decimal comma" in target["msg"]
    parsed = parse(text, decimal=",")
    assert parsed.delimiter == ";"  # the comma is the decimal mark, so not the delimiter
    assert parsed.X[0].tolist() == [1.5, 2] and parsed.y.tolist() == [3.25, 4, 1]


def test_booleans_in_a_number_column_read_as_0_and_1() -> None:
    parsed = parse("a,flag,y\n1,true,2.5\n2,False,3\n3,TRUE,1\n")
    assert parsed.X[:, 1].tolist() == [1, 0, 1]


# --------------------------------------------------------------------------- missing


@pytest.mark.parametrize("token", ["", "NA", "n/a", "nan", "NULL", "None", " NA "])
def test_missing_tokens_are_missing_not_text(token) -> None:
    [error] = refused(f"a,b,y\n1,{token},3\n4,5,6\n7,8,1\n")
    assert error["msg"].startswith("missing or infinite values: column 'b' has 1 missing")
    assert "(first at row 1)" in error["msg"]
    assert error["ctx"]["counts"] == {"b": 1}
    assert error["ctx"]["options"] == {"missing": ["drop", "impute"]}


def test_infinite_cells_count_with_the_missing_ones() -> None:
    [error] = refused("a,b,y\n1,inf,3\n4,5,6\n7,,1\n")
    assert "column 'b' has 1 missing and 1 infinite (first at row 1)" in error["msg"]


def test_missing_values_imputed_with_the_column_mean() -> None:
    rows = [[1, 2, 3], ["", 4, 4], [5, "NA", 5], [3, 6, ""], [2, 2, 1]]
    parsed = parse(csv_text(["a", "b", "y"], rows), missing="impute")
    assert parsed.dropped_rows == 1  # no target in row 4
    assert parsed.meta["imputed"] == {"a": 1, "b": 1}
    assert parsed.missing == [1, 1, 1]  # in the file: per feature, then the target
    np.testing.assert_allclose(parsed.X, [[1, 2], [8 / 3, 4], [5, 8 / 3], [2, 2]])
    assert parsed.y.tolist() == [3, 4, 5, 1]


def test_rows_with_missing_values_dropped() -> None:
    rows = [[1, 2, 3], ["", 4, 4], [5, "NA", 5], [3, 6, 0.5], [2, 2, 1]]
    parsed = parse(csv_text(["a", "b", "y"], rows), missing="drop")
    assert parsed.dropped_rows == 2 and parsed.X.tolist() == [[1, 2], [3, 6], [2, 2]]


# --------------------------------------------------------------------------- text columns


def test_every_text_column_is_named_in_one_answer() -> None:
    text = csv_text(
        ["city", "n", "kind", "mixed", "y"],
        [["Oslo", 1, "a", 1.5, 1], ["Rome", 2, "b", 2.5, 2], ["Oslo", 3, "a", "abc", 4]],
    )
    errors = refused(text)
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


def test_the_form_is_answered_in_its_own_words() -> None:
    text = csv_text(["city", "n", "y"], [["Oslo", 1, 1], ["Rome", "", 2], ["Oslo", 3, 4]])
    city, missing = refused(text, words=Words(form=True))
    assert city["msg"].startswith("Text columns: column 'city' holds text")
    assert city["msg"].endswith("choose 'one-hot' or 'drop' under Text columns below")
    assert missing["msg"].startswith("Missing values: column 'n' has 1 missing")
    assert "'drop those rows' or 'fill with the column mean' under Missing values" in missing["msg"]
    assert "text_columns" not in city["msg"] and "missing=" not in missing["msg"]
    assert city["ctx"]["options"] == {"text_columns": ["onehot", "drop"]}


def test_one_hot_columns_and_groups() -> None:
    rows = [[c, x, x * 2 + (c == "b")] for c, x in zip("abcabcabca", range(10), strict=True)]
    text = csv_text(["kind", "x", "y"], rows)
    parsed = parse(text, text_columns="onehot", id_columns="keep")
    assert parsed.feature_names == ["kind=a", "kind=b", "kind=c", "x"]
    assert parsed.groups == ["kind", "kind", "kind", "x"]
    assert parsed.meta["one_hot"] == {"kind": ["a", "b", "c"]}
    assert parsed.X[1].tolist() == [0, 1, 0, 1]
    mapped = parse(
        text,
        text_columns="onehot",
        id_columns="keep",
        groups='{"kind": "category"}',
        true_support="kind",
    )
    assert mapped.groups == ["category", "category", "category", "x"]
    assert mapped.true_support == [0, 1, 2]  # kind=a, kind=b, kind=c
    per_column = parse(text, text_columns="onehot", id_columns="keep", groups="g1,g2")
    assert per_column.groups == ["g1", "g1", "g1", "g2"]  # one label per column of the file


def test_groups_that_fit_no_feature_count_are_refused() -> None:
    [error] = refused("a,b,y\n1,2,3\n4,5,6\n7,8,1\n", groups="g1,g2,g3")
    assert error["loc"] == ["body", "groups"]
    assert "lists 3 labels but there are 2 features" in error["msg"]
    [error] = refused("a,b,y\n1,2,3\n4,5,6\n7,8,1\n", groups="{")
    assert "is not valid JSON" in error["msg"]


def test_a_true_support_naming_no_column_is_refused() -> None:
    [error] = refused("a,b,y\n1,2,3\n4,5,6\n7,8,1\n", true_support="a,zz")
    assert error["loc"] == ["body", "true_support"] and error["ctx"]["column"] == "zz"


# --------------------------------------------------------------------------- ID-like columns


def test_id_like_columns_are_flagged_and_left_out() -> None:
    rng = np.random.default_rng(0)
    rows = [
        [100 + 7 * i, f"p{i:03d}", round(float(rng.normal()), 4), i % 4, i % 2 + 0.5 * (i % 3)]
        for i in range(30)
    ]
    text = csv_text(["key", "name", "x", "level", "y"], rows)
    parsed = parse(text)
    assert parsed.feature_names == ["x", "level"]
    assert set(parsed.meta["excluded"]) == {"key", "name"}
    assert parsed.meta["id_like"]["key"] == "an integer that grows row by row"
    assert parsed.meta["id_like"]["name"] == "a different text in every row"
    kept = parse(text, id_columns="keep", text_columns="drop")
    assert kept.feature_names == ["key", "x", "level"]
    assert kept.meta["id_like"]["key"] == "an integer that grows row by row"
    named = parse(text, features="key,x")  # named columns are kept
    assert named.feature_names == ["key", "x"]


def test_a_column_named_like_an_identifier_with_distinct_values_is_id_like() -> None:
    order = [70, 30, 110, 0, 50, 90, 10, 100, 40, 80, 20, 60]  # distinct, in no order
    rows = [[j, i * 0.5, (i % 4) * 1.5] for i, j in enumerate(order)]
    parsed = parse(csv_text(["patient_id", "x", "y"], rows))
    assert parsed.feature_names == ["x"]
    assert parsed.meta["id_like"] == {
        "patient_id": "named like an identifier, 12 distinct values in 12 rows"
    }
    plain = parse(csv_text(["dose", "x", "y"], rows))  # the same values, another name
    assert plain.feature_names == ["dose", "x"]


# --------------------------------------------------------------------------- target


def test_a_numeric_target_with_many_values_is_regression() -> None:
    parsed = parse(csv_text(["x", "y"], [[i, i * 0.5] for i in range(6)]))
    assert parsed.task == "regression" and parsed.classes is None


def test_two_labels_make_a_classification_coded_0_1() -> None:
    parsed = parse(csv_text(["x", "y"], [[i, "yes" if i % 2 else "no"] for i in range(6)]))
    assert parsed.task == "classification" and parsed.classes == ["no", "yes"]
    assert parsed.y.tolist() == [0, 1, 0, 1, 0, 1]


def test_positive_class_makes_a_binary_target() -> None:
    rows = [[i * 0.3, "abc"[i % 3]] for i in range(12)]
    [error] = refused(csv_text(["x", "y"], rows))
    assert error["loc"] == ["body", "positive_class"]
    assert error["ctx"]["classes"] == ["a", "b", "c"]
    parsed = parse(csv_text(["x", "y"], rows), positive_class="b")
    assert parsed.task == "classification" and parsed.classes == ["not b", "b"]
    assert parsed.y[:3].tolist() == [0, 1, 0]
    [error] = refused(csv_text(["x", "y"], rows), positive_class="z")
    assert "has no class 'z'" in error["msg"]


def test_a_text_target_cannot_be_regression() -> None:
    rows = [[i, "yes" if i % 2 else "no"] for i in range(6)]
    [error] = refused(csv_text(["x", "y"], rows), task="regression")
    assert error["loc"][-1] in ("task", "target")
