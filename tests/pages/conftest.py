"""Fixtures for the page tests: one app with a worker, shared by the session, holding a few
finished runs and a comparison; and an app without workers, where runs stay queued."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest
from browser_helpers import finish_a_run, launch_browser, open_page, serve_app
from page_helpers import generate
from service_helpers import make_settings, serve, submit, wait_for

if TYPE_CHECKING:
    from fastapi.testclient import TestClient


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("filterwarnings", "ignore:.*httpx2")


@dataclass
class Site:
    client: TestClient
    dataset: dict  # gaussian regression, true support known
    logistic: dict  # classification data set
    foba: dict  # finished FoBa run with candidate scores and a test split
    forward: dict  # finished forward greedy run without candidate scores
    failed: dict  # a run that failed in the worker: the data defeat the algorithm
    wide: dict  # more features than rows
    comparison: dict


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    data_dir = tmp_path_factory.mktemp("pages") / "data"
    with serve(make_settings(data_dir, workers=1)) as client:
        ds = generate(client, "gaussian_regression", n=80, d=12, k_true=3, rho=0.6)
        logistic = generate(client, "liu2014_logistic", n=80, d=10, s=3)
        wide = generate(client, "gaussian_regression", n=10, d=20, k_true=3)
        # Column c copies a: the full model of backward elimination is not identifiable, which
        # only the fit itself can find out.
        twins = "a,b,c,y\n" + "".join(f"{i},{i * i % 7},{i},{i % 3}\n" for i in range(12))
        upload = client.post(
            "/api/datasets",
            files={"file": ("twins.csv", twins)},
            # a and c count the rows (ID-like); y's 0/1/2 are a quantity here, not classes
            data={"target": "y", "id_columns": "keep", "task": "regression"},
        )
        assert upload.status_code == 201, upload.text
        foba = submit(
            client, ds["id"], algorithm="foba-obj", k=3, record_candidates=True, test_fraction=0.25
        )
        forward = submit(client, ds["id"], algorithm="forward-obj", k=3)
        failed = submit(client, upload.json()["id"], algorithm="backward", k=1)
        response = client.post(
            "/api/comparisons",
            json={
                "dataset_id": ds["id"],
                "test_fraction": 0.25,
                "name": "page test",
                "runs": [
                    {"algorithm": "foba-obj", "k": 3},
                    {"algorithm": "forward-obj", "k": 3},
                    {"algorithm": "omp", "k": 3},
                ],
            },
        )
        assert response.status_code == 202, response.text
        comparison = response.json()
        for run in (foba, forward, failed, *comparison["runs"]):
            wait_for(client, run["id"])
        yield Site(
            client,
            ds,
            logistic,
            client.get(f"/api/runs/{foba['id']}").json(),
            client.get(f"/api/runs/{forward['id']}").json(),
            client.get(f"/api/runs/{failed['id']}").json(),
            wide,
            comparison,
        )


@pytest.fixture(scope="session")
def idle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """No workers: submitted runs stay queued."""
    data_dir = tmp_path_factory.mktemp("idle") / "data"
    with serve(make_settings(data_dir)) as client:
        yield client


# The browser tests' fixtures (tests/pages/browser_helpers.py): one app subprocess and one
# Chromium per test module, a fresh page per test, and a finished FoBa run to look at.
server = pytest.fixture(scope="module")(serve_app)
browser = pytest.fixture(scope="module")(launch_browser)
page = pytest.fixture(open_page)
finished_run = pytest.fixture(scope="module")(finish_a_run)
