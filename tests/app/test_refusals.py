"""Refusals say what to fix without echoing the request: ids in plain digits only, and a 422
stays small whatever was sent."""

from __future__ import annotations

import pytest
from service_helpers import make_settings, serve


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with serve(make_settings(tmp_path_factory.mktemp("refusals") / "data")) as client:
        yield client


@pytest.mark.parametrize("written", ["+1", "1.0", "1_0", "\uff11", "0x1"])
def test_an_id_not_in_plain_digits_is_refused(api, written: str) -> None:
    answer = api.get(f"/api/runs/{written}")
    assert answer.status_code == 422
    assert "plain digits" in answer.text


def test_an_offset_not_in_plain_digits_is_refused(api) -> None:
    answer = api.get("/api/datasets", params={"offset": "1_000"})
    assert answer.status_code == 422 and "plain digits" in answer.text


def test_a_422_does_not_echo_a_huge_input(api) -> None:
    answer = api.post("/api/runs", json={"dataset_id": "x" * 1_000_000, "algorithm": "omp"})
    assert answer.status_code == 422
    assert len(answer.content) < 4096
    assert "1000002 characters" in answer.text


def test_a_file_sent_as_a_plain_field_is_refused_briefly(api) -> None:
    csv_text = "y,a\n" + "1,2\n" * 200_000
    answer = api.post("/api/datasets", data={"file": csv_text, "target": "y"})
    assert answer.status_code in (400, 422), answer.text
    assert len(answer.content) < 4096


def test_values_too_large_to_compute_with_are_refused_at_upload(api) -> None:
    """1e200 is finite, but its square is not: the run would fail, or store metrics that are
    no numbers (a 500 on the run page)."""
    rows = "".join(f"{i % 7},{(i % 5) * 1e200},{i % 3}\n" for i in range(30))
    answer = api.post(
        "/api/datasets",
        files={"file": ("huge.csv", "y,a,b\n" + rows)},
        data={"target": "y", "task": "regression"},  # y's 7 integers: a quantity here
    )
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"][0]
    assert detail["ctx"]["column"] == "a" and "rescale" in detail["msg"]
    fine = "".join(f"{i % 7},{(i % 5) * 1e100},{i % 3}\n" for i in range(30))
    ok = api.post(
        "/api/datasets",
        files={"file": ("ok.csv", "y,a,b\n" + fine)},
        data={"target": "y", "task": "regression"},
    )
    assert ok.status_code == 201, ok.text
