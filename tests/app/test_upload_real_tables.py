"""Real public tables (tests/fixtures, see PROVENANCE.md) through the upload API: each is
refused at most once, with every problem named, and stored at the second try."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import upload, upload_ok
from service_helpers import submit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def table(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def errors(response) -> list[dict]:
    assert response.status_code == 422, response.text
    return response.json()["detail"]


def test_penguins_in_two_tries_then_group_omp(client) -> None:
    first = errors(upload(client, table("penguins.csv"), target="body_mass_g"))
    text = {e["ctx"]["column"]: e["ctx"] for e in first if "column" in e.get("ctx", {})}
    assert {name: (c["row"], c["value"]) for name, c in text.items()} == {
        "species": (1, "Adelie"),
        "island": (1, "Torgersen"),
        "sex": (1, "male"),
    }
    [missing] = [e for e in first if "counts" in e.get("ctx", {})]
    assert missing["ctx"]["counts"] == {
        "bill_length_mm": 2,
        "bill_depth_mm": 2,
        "flipper_length_mm": 2,
        "sex": 11,
        "body_mass_g": 2,
    }
    ds = upload_ok(
        client, table("penguins.csv"), target="body_mass_g", text_columns="onehot", missing="drop"
    )
    assert (ds["n_samples"], ds["n_features"], ds["meta"]["dropped_rows"]) == (333, 12, 11)
    assert ds["feature_names"][:3] == ["species=Adelie", "species=Chinstrap", "species=Gentoo"]
    assert ds["groups"].count("species") == 3 and ds["groups"].count("sex") == 2
    run = submit(client, ds["id"], algorithm="group-omp", params={"n_groups": 2})
    assert run["status"] == "queued"  # the groups make group methods valid on it


def test_penguins_species_with_a_positive_class(client) -> None:
    first = errors(upload(client, table("penguins.csv"), target="species"))
    [classes] = [e for e in first if e["loc"] == ["body", "positive_class"]]
    assert classes["ctx"]["classes"] == ["Adelie", "Chinstrap", "Gentoo"]
    ds = upload_ok(
        client,
        table("penguins.csv"),
        target="species",
        positive_class="Gentoo",
        text_columns="onehot",
        missing="impute",
    )
    assert ds["task"] == "classification" and ds["classes"] == ["not Gentoo", "Gentoo"]
    assert ds["n_samples"] == 344
    assert ds["meta"]["imputed"]["bill_length_mm"] == 2
    # sex: 11 missing cells get the most frequent level (168 male, 165 female), not 0.5
    assert ds["meta"]["imputed"]["sex"] == 11
    assert ds["meta"]["imputed_levels"] == {"sex": "male"}
    assert "sex=male" not in ds["meta"]["imputed"]


def test_airquality_row_names_and_missing_ozone(client) -> None:
    [missing] = errors(upload(client, table("airquality.csv"), target="Ozone"))
    assert "column 'Solar.R' has 7 missing" in missing["msg"]
    assert "column 'Ozone' has 37 missing" in missing["msg"]
    ds = upload_ok(client, table("airquality.csv"), target="Ozone", missing="impute")
    assert ds["feature_names"] == ["Solar.R", "Wind", "Temp", "Month", "Day"]
    assert ds["meta"]["excluded"] == {"rownames": "ID-like: an integer that grows row by row"}
    assert ds["n_samples"] == 116  # the 37 rows without ozone are dropped, not imputed
    solar = ds["columns"][0]
    assert (solar["missing"], solar["imputed"]) == (7, 5)
    page = client.get(f"/datasets/{ds['id']}").text
    assert "Missing cells filled with the column mean" in page
    assert "rownames" in page and "an integer that grows row by row" in page


def test_biopsy_id_column_is_left_out(client) -> None:
    ds = upload_ok(client, table("biopsy.csv"), target="class", missing="drop")
    assert ds["feature_names"] == [f"V{j}" for j in range(1, 10)]
    assert (
        ds["meta"]["id_like"]["ID"] == "named like an identifier, 645 distinct values in 699 rows"
    )
    assert (ds["n_samples"], ds["classes"]) == (683, ["benign", "malignant"])
    kept = upload_ok(client, table("biopsy.csv"), target="class", missing="drop", id_columns="keep")
    assert kept["feature_names"][:2] == ["rownames", "ID"]
    assert [c["id_like"] for c in kept["columns"][:3]] == [True, True, False]
    page = client.get(f"/datasets/{kept['id']}").text
    assert page.count('class="badge id-like"') >= 4  # the preview and the column summary


@pytest.mark.parametrize("task", [None, "classification"])
def test_pima_yes_no_labels(client, task) -> None:
    form = {"task": task} if task else {}
    ds = upload_ok(client, table("pima_tr.csv"), target="type", **form)
    assert ds["task"] == "classification" and ds["classes"] == ["No", "Yes"]
    assert ds["n_samples"] == 200 and "rownames" not in ds["feature_names"]
