"""Saved lessons through the API: made from a run of a lecturer's own data, listed, exported
as a file, imported into a fresh install (on SQLite and PostgreSQL) where the run takes the
same decisions and asks the same questions; bad files are refused with a 4xx and store
nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from app_helpers import full_trace, regression_csv, stored_files, upload_ok
from service_helpers import make_settings, postgres_database, serve, submit, wait_for

from app.services import lesson_files


@contextmanager
def install(kind: str, data_dir: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh app with one worker on its own database of ``kind``."""
    if kind == "sqlite":
        with serve(make_settings(data_dir, workers=1)) as client:
            yield client
        return
    user = request.getfixturevalue("postgres_user")
    with postgres_database(user, "lessons") as url:
        with serve(make_settings(data_dir, workers=1, database_url=url)) as client:
            yield client


def finished_run(client: Any) -> dict[str, Any]:
    ds = upload_ok(client, regression_csv(n=50, d=8, support=(1, 4, 6)), name="my data")
    run = submit(client, ds["id"], algorithm="foba-obj", k=3, record_candidates=True)
    return wait_for(client, run["id"])


def decisions(client: Any, run_id: int) -> list[tuple[str, Any, Any]]:
    return [(e["kind"], e.get("feature"), e.get("feature_out")) for e in full_trace(client, run_id)]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_lesson_exported_and_imported_asks_the_same_questions(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with install(kind, tmp_path / "a", request) as a:
        run = finished_run(a)
        assert run["status"] == "done", run
        questions = a.get("/api/lessons/questions", params={"run_id": run["id"]}).json()
        steps = [q["step"] for q in questions][:3]
        made = a.post(
            "/api/lessons",
            json={
                "run_id": run["id"],
                "title": "Which column enters?",
                "story": "Our own data: watch x4.",
                "steps": steps,
                "hidden": ["score", "nav"],
            },
        )
        assert made.status_code == 201, made.text
        lesson = made.json()
        assert lesson["steps"] == sorted(steps) and lesson["hidden"] == ["nav", "score"]
        assert lesson["link"].startswith(f"/predict/{run['id']}?steps=")
        assert a.get(lesson["link"]).status_code == 200
        assert [x["id"] for x in a.get("/api/lessons").json()] == [lesson["id"]]
        exported = a.get(lesson["export_url"])
        assert exported.status_code == 200
        assert "attachment" in exported.headers["content-disposition"]
        file = exported.content
        before = decisions(a, run["id"])
        asked = [q for q in questions if q["step"] in steps]
    with install(kind, tmp_path / "b", request) as b:
        answer = b.post("/api/lessons/import", files={"file": ("l.json", file, "application/json")})
        assert answer.status_code == 201, answer.text
        imported = answer.json()
        assert imported["imported"] and imported["steps"] == lesson["steps"]
        assert (imported["title"], imported["story"]) == (lesson["title"], lesson["story"])
        again = b.post("/api/lessons/import", files={"file": ("l.json", file, "application/json")})
        assert again.status_code == 200 and again.json()["id"] == imported["id"]
        new_run = wait_for(b, imported["run_id"])
        assert new_run["status"] == "done" and new_run["record_candidates"]
        assert decisions(b, new_run["id"]) == before
        theirs = b.get("/api/lessons/questions", params={"run_id": new_run["id"]}).json()
        assert [q for q in theirs if q["step"] in steps] == asked
        assert b.get(imported["link"]).status_code == 200
        assert len(b.get("/api/datasets").json()) == 1  # imported once


def test_a_lesson_checks_its_steps_against_the_trace(worker_client: Any) -> None:
    run = finished_run(worker_client)
    possible = [
        q["step"]
        for q in worker_client.get("/api/lessons/questions", params={"run_id": run["id"]}).json()
    ]
    wrong = max(possible) + 1000
    answer = worker_client.post(
        "/api/lessons", json={"run_id": run["id"], "title": "t", "steps": [possible[0], wrong]}
    )
    assert answer.status_code == 422
    assert f"{wrong} makes no question" in answer.json()["detail"][0]["msg"]
    blank = worker_client.post("/api/lessons", json={"run_id": run["id"], "title": "  "})
    assert blank.status_code == 422
    default = worker_client.post("/api/lessons", json={"run_id": run["id"], "title": "t"})
    assert default.status_code == 201
    chosen = [
        q["step"]
        for q in worker_client.get("/api/lessons/questions", params={"run_id": run["id"]}).json()
        if q["default"]
    ]
    assert default.json()["steps"] == chosen
    lesson_id = default.json()["id"]
    assert worker_client.delete(f"/api/lessons/{lesson_id}").status_code == 204
    assert worker_client.get(f"/api/lessons/{lesson_id}").status_code == 404
    assert worker_client.get(f"/api/runs/{run['id']}").status_code == 200  # the run stays


def test_a_queued_run_makes_no_lesson_yet(client: Any) -> None:
    ds = upload_ok(client, regression_csv())
    run = submit(client, ds["id"], algorithm="foba-obj", k=2, record_candidates=True)
    answer = client.post("/api/lessons", json={"run_id": run["id"], "title": "t"})
    assert answer.status_code == 409 and "finished" in answer.json()["detail"]
    assert client.post("/api/lessons", json={"run_id": 999, "title": "t"}).status_code == 404


# --------------------------------------------------------------------------- bad files


def good_file() -> dict[str, Any]:
    X = [[float(i % 7), float((i * 3) % 5), float(i % 2)] for i in range(12)]
    return {
        "format": "foba-lab-lesson",
        "version": 1,
        "lesson": {"title": "t", "story": "", "steps": [0], "hidden": []},
        "run": {"algorithm": "foba-obj", "objective": "least_squares", "k": 2},
        "dataset": {
            "name": "d",
            "task": "regression",
            "feature_names": ["a", "b", "c"],
            "X": X,
            "y": [row[0] + 0.5 * row[1] for row in X],
        },
        "trace": {"length": 5, "questions": [{"step": 0, "kind": "enter", "answer": "a"}]},
    }


def changed(path: str, value: Any) -> bytes:
    f = good_file()
    *parents, last = path.split(".")
    node = f
    for p in parents:
        node = node[p]
    node[last] = value
    return json.dumps(f).encode()


BAD_FILES = {
    "not JSON": (b"title,story\nx,y\n", 422, "not JSON"),
    "not UTF-8": (b"\xff\xfe{", 422, "UTF-8"),
    "no lesson file": (b'{"hello": 1}', 422, "no lesson file"),
    "wrong version": (changed("version", 2), 422, "version 2"),
    "short row": (changed("dataset.X", [[1.0, 2.0, 3.0]] * 11 + [[1.0]]), 422, "row 11 of X"),
    "y too short": (changed("dataset.y", [1.0, 2.0]), 422, "y has 2 values"),
    "NaN": (json.dumps(good_file()).replace("0.0,", "NaN,", 1).encode(), 422, "NaN"),
    "Infinity": (json.dumps(good_file()).replace("0.0,", "-Infinity,", 1).encode(), 422, "Inf"),
    "text cell": (changed("dataset.y", ["1"] * 12), 422, "valid number"),
    "step out of range": (changed("lesson.steps", [7]), 422, "past the end"),
    "negative step": (changed("lesson.steps", [-1]), 422, "greater than or equal to 0"),
    "unknown algorithm": (changed("run.algorithm", "magic"), 422, "magic"),
    "bad class codes": (changed("dataset.task", "classification"), 422, "two classes"),
    "nested": (b"[" * 100_000, 422, "nests"),
    "overflowing": (json.dumps(good_file()).replace("0.0,", "1e999,", 1).encode(), 422, "finite"),
    "k above d": (changed("run.k", 50), 422, "k must be between 1 and 3"),
    "NUL in a name": (changed("dataset.name", "a\x00b"), 422, "NUL"),
    "huge": (b" " * (lesson_files.MAX_FILE_BYTES + 1), 413, "16 MB"),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_files_are_refused_and_store_nothing(
    shared_client: Any, case: str, tmp_path: Path
) -> None:
    body, status, words = BAD_FILES[case]
    answer = shared_client.post("/api/lessons/import", files={"file": ("l.json", body)})
    assert answer.status_code == status, answer.text
    assert words in json.dumps(answer.json()), answer.text
    assert shared_client.get("/api/lessons").json() == []
    assert shared_client.get("/api/datasets").json() == []
    assert shared_client.get("/api/runs").json() == []


def test_too_many_cells_are_refused_before_reading_them(shared_client: Any) -> None:
    rows = lesson_files.MAX_CELLS // 3 + 1
    body = changed("dataset.X", [[0, 0]] * rows)
    answer = shared_client.post("/api/lessons/import", files={"file": ("l.json", body)})
    assert answer.status_code == 413 and "cells" in answer.json()["detail"]


def test_a_good_file_imports_without_workers(client: Any, data_dir: Path) -> None:
    body = json.dumps(good_file()).encode()
    answer = client.post("/api/lessons/import", files={"file": ("l.json", body)})
    assert answer.status_code == 201, answer.text
    run = client.get(f"/api/runs/{answer.json()['run_id']}").json()
    assert run["status"] == "queued" and run["record_candidates"]
    assert len(stored_files(data_dir)) == 1
