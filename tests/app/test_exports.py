"""Tidy exports (issue 25): one table per CSV file (``pandas.read_csv`` reads it whole), a
zip of CSVs or JSON with named tables for several, the cross-validation curve, and the data
set as the runs read it (after one-hot encoding and imputation, optionally standardised) with
its column mapping."""

from __future__ import annotations

import io
import zipfile
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from app_helpers import csv_text, regression_csv, upload_ok
from service_helpers import submit, wait_done, wait_for

if TYPE_CHECKING:
    from fastapi.testclient import TestClient


def unzip(content: bytes) -> dict[str, pd.DataFrame]:
    with zipfile.ZipFile(io.BytesIO(content)) as files:
        return {name: pd.read_csv(files.open(name)) for name in files.namelist()}


def mixed_table(n: int = 40) -> str:
    """Two numbers, a text column to one-hot encode and a missing cell to impute."""
    rng = np.random.default_rng(5)
    rows: list[list[Any]] = []
    for i in range(n):
        a, b = rng.normal(size=2)
        colour = ("red", "green", "blue")[i % 3]
        rows.append([f"{a:.4f}", "" if i == 3 else f"{b:.4f}", colour, f"{2 * a + (i % 3):.4f}"])
    return csv_text(["a", "b", "colour", "y"], rows)


def test_the_prepared_data_set_and_its_column_mapping(client: TestClient) -> None:
    ds = upload_ok(client, mixed_table(), text_columns="onehot", missing="impute")
    url = f"/api/datasets/{ds['id']}/export"
    answer = client.get(url)  # a zip by default
    assert answer.headers["content-type"] == "application/zip"
    assert "prepared.zip" in answer.headers["content-disposition"]
    tables = unzip(answer.content)
    assert sorted(tables) == ["columns.csv", "data.csv"]
    data, columns = tables["data.csv"], tables["columns.csv"]
    assert list(data.columns) == [*ds["feature_names"], "y"]
    assert data.shape == (40, ds["n_features"] + 1)
    preview = client.get(f"/api/datasets/{ds['id']}/preview", params={"limit": 40}).json()
    assert np.allclose(data.to_numpy(), np.array(preview["rows"], dtype=float))
    assert data["b"][3] == np.mean(np.delete(data["b"].to_numpy(), 3))  # the imputed mean
    one_hot = columns[columns["kind"] == "one_hot"]
    assert set(one_hot["source"]) == {"colour"} and len(one_hot) >= 2
    assert list(columns["column"]) == list(data.columns)
    assert columns["role"].iloc[-1] == "target"

    scaled = unzip(client.get(url, params={"standardize": "true"}).content)["data.csv"]
    features = scaled[ds["feature_names"]].to_numpy()
    assert np.allclose(features.mean(axis=0), 0, atol=1e-9)
    mean = columns["mean"].to_numpy()[:-1]
    std = columns["std"].to_numpy()[:-1]
    assert np.allclose(features * std + mean, data[ds["feature_names"]].to_numpy())

    alone = client.get(url, params={"format": "csv"})
    assert alone.headers["content-type"].startswith("text/csv")
    assert pd.read_csv(io.StringIO(alone.text)).shape == data.shape
    named = client.get(url, params={"format": "json"}).json()
    assert sorted(named) == ["columns", "data"] and len(named["data"]) == 40


def test_a_run_exports_one_table_per_file(worker_client: TestClient) -> None:
    ds = upload_ok(worker_client, regression_csv(n=60, d=6, support=(1, 4)))
    run = wait_for(worker_client, submit(worker_client, ds["id"], algorithm="omp", k=2)["id"])
    url = f"/api/runs/{run['id']}/export"
    features = pd.read_csv(io.StringIO(worker_client.get(url).text))  # the URL it always had
    assert list(features.columns) == ["feature", "index", "coefficient"]
    assert sorted(features["index"]) == [1, 4]
    tables = unzip(worker_client.get(url, params={"format": "zip"}).content)
    assert tables["features.csv"].equals(features)
    about = dict(zip(tables["run.csv"]["name"], tables["run.csv"]["value"], strict=True))
    assert about["algorithm"] == "omp" and float(about["k"]) == 2
    assert float(about["intercept"]) == run["result"]["intercept"]

    # The cross-validation curve: the curve alone as CSV; with every fold's errors in the zip.
    study = worker_client.post(
        "/api/cv", json={"dataset_id": ds["id"], "algorithm": "omp", "k_max": 4, "n_folds": 3}
    ).json()
    cv_url = f"/api/cv/{study['id']}/export"
    done = wait_done(worker_client, study["url"])
    assert done["curve"] is not None, done
    curve = pd.read_csv(io.StringIO(worker_client.get(cv_url).text))
    assert list(curve["k"]) == [1, 2, 3, 4]
    assert np.allclose(curve["mean_error"], done["curve"]["mean"])
    assert curve.loc[curve["chosen"], "k"].tolist() == [done["curve"]["k_best"]]
    folds = unzip(worker_client.get(cv_url, params={"format": "zip"}).content)["folds.csv"]
    assert len(folds) == 3 * 4
    assert np.allclose(folds.groupby("k")["error"].mean(), curve["mean_error"])
    assert sorted(worker_client.get(cv_url, params={"format": "json"}).json()) == [
        "curve",
        "folds",
    ]


def test_exports_say_what_is_missing(client: TestClient) -> None:
    ds = upload_ok(client, regression_csv(n=40, d=6))
    study = client.post(
        "/api/cv", json={"dataset_id": ds["id"], "algorithm": "omp", "k_max": 2, "n_folds": 2}
    ).json()
    early = client.get(f"/api/cv/{study['id']}/export")
    assert early.status_code == 409 and "no curve yet" in early.json()["detail"]
    assert client.get("/api/cv/999/export").status_code == 404
    assert client.get("/api/datasets/999/export").status_code == 404
    bad = client.get(f"/api/datasets/{ds['id']}/export", params={"format": "xlsx"})
    assert bad.status_code == 422
