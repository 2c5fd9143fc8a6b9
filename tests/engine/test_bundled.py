"""Bundled real data sets: shapes and values as published, provenance recorded."""

import numpy as np
import pytest

import engine
from engine.datasets import list_bundled, load_bundled


def test_manifest_lists_the_three_sets_with_provenance():
    entries = {e["name"]: e for e in list_bundled()}
    assert set(entries) == {"boston_housing", "diabetes", "breast_cancer"}
    for e in entries.values():
        assert e["source"] and e["target"] and e["task"] in ("regression", "classification")


@pytest.mark.parametrize(
    ("name", "shape", "first_row", "first_y"),
    [
        # Harrison & Rubinfeld's first tract: CRIM 0.00632 ... LSTAT 4.98, MEDV 24.0
        ("boston_housing", (506, 13), (0.00632, 18.0, 2.31), 24.0),
        # Efron et al.'s first patient: AGE 59, SEX 2, BMI 32.1; disease progression 151
        ("diabetes", (442, 10), (59.0, 2.0, 32.1), 151.0),
    ],
)
def test_regression_sets_load_with_their_published_first_rows(name, shape, first_row, first_y):
    p = load_bundled(name)
    assert p.X.shape == shape and p.y.shape == (shape[0],)
    np.testing.assert_allclose(p.X[0, :3], first_row)
    assert p.y[0] == first_y
    assert p.support is None and p.true_coef is None and p.k_true is None
    assert len(p.feature_names) == shape[1]


def test_breast_cancer_has_the_published_class_counts_and_runs_logistic_selection():
    p = load_bundled("breast_cancer")
    assert p.X.shape == (569, 30)
    labels, counts = np.unique(p.y, return_counts=True)
    assert dict(zip(labels.tolist(), counts.tolist(), strict=True)) == {
        "benign": 357,
        "malignant": 212,
    }
    X = (p.X - p.X.mean(0)) / p.X.std(0)
    r = engine.select(X, p.y, algorithm="foba-gdt", objective="logistic", k=5)
    assert len(r.support) == 5 and r.objective < np.log(2)


def test_unknown_name_lists_the_available_sets():
    with pytest.raises(ValueError, match="boston_housing"):
        load_bundled("iris")
