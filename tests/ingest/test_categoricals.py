"""Issue 25: which cells are missing (na_values), categorical imputation by a level (never a
fraction), reference levels, and numeric targets of a few integers (class labels or a
quantity?), in the table reader and the chunked reader alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ingest_helpers import csv_text, parse, refused

from app.ingest.chunked import iter_batches, scan_table
from app.ingest.words import Words

CARS = (Path(__file__).parents[1] / "fixtures" / "cars93_airbags.csv").read_text()


def test_none_is_missing_by_default_and_a_category_when_not_listed() -> None:
    [problem] = refused(CARS, target="Price", text_columns="onehot")
    assert "column 'AirBags' has 34 missing" in problem["msg"]
    parsed = parse(
        CARS, target="Price", text_columns="onehot", missing="drop", na_values="NA, N/A, nan"
    )
    assert parsed.X.shape[0] == 91  # only the 2 NA cells of Rear.seat.room drop rows
    names = parsed.feature_names
    assert [n for n in names if n.startswith("AirBags=")] == [
        "AirBags=Driver & Passenger",
        "AirBags=Driver only",
        "AirBags=None",
    ]
    none = parsed.X[:, names.index("AirBags=None")]
    assert none.sum() == 34 - sum(
        1 for line in CARS.splitlines() if "None" in line and ",NA" in line
    )
    assert parsed.meta["na_values"] == ["n/a", "na", "nan"]


@pytest.mark.parametrize("given", ["[]", "  "])
def test_no_tokens_leaves_only_empty_cells_missing(given: str) -> None:
    text = csv_text(["a", "b", "y"], [[1, "NA", 1.5], [2, "", 2.5], [3, "x", 0.5], [4, "NA", 3]])
    parsed = parse(text, na_values=given, text_columns="onehot", missing="drop")
    assert parsed.feature_names == ["a", "b=NA", "b=x"] and parsed.X.shape[0] == 3


def test_a_question_mark_is_missing_when_listed() -> None:
    text = csv_text(["a", "b", "y"], [[1, "?", 1.5], [2, 5, 2.5], [3, 4, 0.5], [4, 1, 3]])
    parsed = parse(text, na_values='["?", "NA"]', missing="drop")
    assert parsed.X.tolist() == [[2, 5], [3, 4], [4, 1]] and parsed.missing == [0, 1, 0]


def _imputed(**options: str) -> tuple[np.ndarray, list[str], dict]:
    rows = [[i, ["red", "blue", "red", ""][i % 4], i % 5 + 0.5] for i in range(40)]
    rows[6][1] = "green"
    parsed = parse(
        csv_text(["a", "colour", "y"], rows),
        text_columns="onehot",
        missing="impute",
        id_columns="keep",
        **options,
    )
    return parsed.X, parsed.feature_names, parsed.meta


def test_imputing_a_categorical_never_makes_a_fraction() -> None:
    X, names, meta = _imputed()
    block = X[:, 1:]
    assert set(np.unique(block)) <= {0.0, 1.0}
    assert (block.sum(axis=1) == 1).all()  # every row holds exactly one level
    assert meta["imputed"] == {"colour": 10} and meta["imputed_levels"] == {"colour": "red"}
    assert block[3::4, names.index("colour=red") - 1].tolist() == [1.0] * 10


def test_missing_cells_may_form_a_level_of_their_own() -> None:
    X, names, meta = _imputed(categorical_missing="level")
    assert names[-1] == "colour=(missing)" and X[:, -1].sum() == 10
    assert set(np.unique(X[:, 1:])) <= {0.0, 1.0} and (X[:, 1:].sum(axis=1) == 1).all()
    assert meta["imputed_levels"] == {"colour": "(missing)"}


def test_the_reference_level_is_dropped_and_the_group_stays_one() -> None:
    rows = [[i, ["E", "W", "W"][i % 3], ["x", "y"][i % 2], float(i % 7) + 0.5] for i in range(30)]
    text = csv_text(["a", "division", "league", "y"], rows)
    every = parse(text, text_columns="onehot", id_columns="keep")
    assert every.feature_names == ["a", "division=E", "division=W", "league=x", "league=y"]
    parsed = parse(text, text_columns="onehot", id_columns="keep", reference_level="most_frequent")
    assert parsed.feature_names == ["a", "division=E", "league=y"]  # W (20), x (15, first)
    assert parsed.meta["reference_levels"] == {"division": "W", "league": "x"}
    assert parsed.groups == ["a", "division", "league"]
    assert parsed.meta["sources"] == {"division=E": "division", "league=y": "league"}
    named = parse(
        text, text_columns="onehot", id_columns="keep", reference_level='{"division": "E"}'
    )
    assert named.feature_names == ["a", "division=W", "league=y"]
    # Dropping one level of three keeps the other two together: one group for group methods.
    three = csv_text(["a", "c", "y"], [[i, "pqr"[i % 3], (i * 7) % 11 + 0.5] for i in range(30)])
    grouped = parse(
        three, text_columns="onehot", id_columns="keep", reference_level="most_frequent"
    )
    assert grouped.feature_names == ["a", "c=q", "c=r"] and grouped.groups == ["a", "c", "c"]


def test_a_reference_level_that_does_not_exist_is_refused() -> None:
    text = csv_text(["a", "c", "y"], [[i, "pq"[i % 2], i + 0.5] for i in range(10)])
    [problem] = refused(text, text_columns="onehot", reference_level='{"c": "z"}')
    assert problem["loc"] == ["body", "reference_level"] and "no level 'z'" in problem["msg"]
    [problem] = refused(text, text_columns="onehot", reference_level='{"a": "1"}')
    assert "'a', which is no one-hot encoded column" in problem["msg"]
    [problem] = refused(text, text_columns="onehot", reference_level="first")
    assert "none, most_frequent or a JSON object" in problem["msg"]


def test_a_target_of_a_few_integers_asks_which_task() -> None:
    text = csv_text(["a", "b", "y"], [[i * 0.5, (i * 3) % 7, i % 3] for i in range(30)])
    [problem] = refused(text)
    assert problem["loc"] == ["body", "task"]
    assert problem["ctx"]["options"] == {
        "task": ["regression", "classification"],
        "positive_class": ["0", "1", "2"],
    }
    assert (
        "target column 'y' holds 3 distinct integers (0, 1, 2): class labels or a quantity? "
        "send task=regression to predict the number, or send task=classification with "
        "positive_class=<one of them>" in problem["msg"]
    )
    with pytest.raises(Exception) as form:
        parse(text, words=Words(form=True))
    assert "Task: " in str(form.value) and "under Positive class" in str(form.value)
    assert parse(text, task="regression").task == "regression"
    chosen = parse(text, positive_class="2")
    assert chosen.task == "classification" and chosen.y.sum() == 10
    # Not asked: two values (binary), fractions, many integers, or as many values as rows.
    for y in ([i % 2 for i in range(30)], [i % 3 + 0.5 for i in range(30)], list(range(30))):
        rows = [[i * 0.5, (i * 3) % 7, v] for i, v in enumerate(y)]
        parse(csv_text(["a", "b", "y"], rows), id_columns="keep")
    parse(csv_text(["a", "y"], [[0.5, 1], [1.5, 2], [2.5, 3], [3.5, 5]]))


def test_the_chunked_reader_takes_the_same_tokens(tmp_path: Path) -> None:
    path = tmp_path / "cars.csv"
    path.write_text(CARS)
    features = ["AirBags", "Horsepower"]
    default = scan_table(path, "Price", features=features, missing="drop")
    assert "None" not in default.categories["AirBags"]
    X, _ = next(iter_batches(default))
    assert len(X) == 93 - 34
    kept = scan_table(path, "Price", features=features, missing="drop", na_values=["NA"])
    assert kept.categories["AirBags"] == ("Driver & Passenger", "Driver only", "None")
    assert kept.to_dict()["na_values"] == ["NA"]
    again = type(kept).from_dict(kept.to_dict())
    X, y = next(iter_batches(again))
    assert len(X) == 93 and X[:, 2].sum() == 34
    # The upload reads the same rows as the chunked reader with the same tokens.
    parsed = parse(
        CARS, target="Price", features="AirBags,Horsepower", text_columns="onehot", na_values="NA"
    )
    np.testing.assert_array_equal(parsed.X, X)
    np.testing.assert_array_equal(parsed.y, y)
