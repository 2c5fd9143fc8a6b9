"""Runs executed by real worker processes: results, traces, cancellation, a worker killed
mid-run, a server restarted with work in its queue."""

from __future__ import annotations

import io
import os
import signal
import zipfile

import pytest
from app_helpers import classification_csv, full_trace, regression_csv, upload_ok, wait_for_events
from service_helpers import make_settings, serve, submit, wait_for


def assert_clean_trace(events: list[dict]) -> None:
    """Steps 0, 1, 2, ... once each, with one stop event; after it only the checks of the
    swap certificate the worker judged the answer by (app.jobs.judging)."""
    assert [e["step"] for e in events] == list(range(len(events)))
    kinds = [e["kind"] for e in events]
    assert kinds.count("stop") == 1
    assert set(kinds[kinds.index("stop") + 1 :]) <= {"check"}


ALGORITHMS = ["foba-obj", "foba-gdt", "forward-obj", "omp", "stepwise", "backward"]


def test_upload_run_poll_result_for_several_algorithms(worker_client) -> None:
    # One app for several runs: a worker process takes seconds to start.
    ds = upload_ok(worker_client, regression_csv(n=80, d=6, support=(1, 4)), true_support="x1,x4")
    runs = [
        submit(worker_client, ds["id"], algorithm=a, k=2, test_fraction=0.25, seed=1)
        for a in ALGORITHMS
    ]
    for algorithm, run in zip(ALGORITHMS, runs, strict=True):
        run = wait_for(worker_client, run["id"])
        assert run["status"] == "done", (algorithm, run["error"])
        result = run["result"]
        assert [f["name"] for f in result["support"]] == ["x1", "x4"], algorithm
        assert (run["progress"], run["attempt"]) == (1.0, 1)
        assert result["train"]["n_samples"] == 60 and result["test"]["n_samples"] == 20
        assert result["test"]["r2"] > 0.99
        recovery = result["recovery"]
        assert (recovery["f_measure"], recovery["selection_error"]) == (1.0, 0)
        assert recovery["exact_recovery"] is True
        assert run["started_at"] and run["finished_at"] and run["run_seconds"] >= 0
        assert_clean_trace(full_trace(worker_client, run["id"]))

    classes = upload_ok(worker_client, classification_csv(n=120), target="label")
    logistic = submit(
        worker_client,
        classes["id"],
        algorithm="foba-obj",
        objective="logistic",
        k=2,
        test_fraction=0.25,
    )
    logistic = wait_for(worker_client, logistic["id"])
    assert logistic["status"] == "done", logistic["error"]
    assert sorted(f["name"] for f in logistic["result"]["support"]) == ["x0", "x2"]
    for split in ("train", "test"):
        metrics = logistic["result"][split]
        assert metrics["accuracy"] > 0.8 and metrics["log_loss"] < 0.5
        assert metrics["mse"] is None

    # The engine's own checks refuse a run at submit, with the engine's message ...
    refused = worker_client.post(
        "/api/runs",
        json={
            "dataset_id": ds["id"],
            "algorithm": "fb-threshold",
            "k": ds["n_features"] + 1,
            "params": {"eps_back": 1.0},
        },
    )
    assert refused.status_code == 422
    message = f"k must be between 1 and {ds['n_features']}"
    assert message in refused.json()["detail"][0]["msg"]
    # ... and an error only the data can show (a column copying another makes the full model
    # of backward elimination unidentifiable) fails the run, with the engine's message.
    twins = "a,b,c,y\n" + "".join(f"{i},{i * i % 7},{i},{i % 3}\n" for i in range(12))
    # a and c count the rows (ID-like columns): kept on purpose; y's 0/1/2 are a quantity
    twin_set = upload_ok(worker_client, twins, target="y", id_columns="keep", task="regression")
    failing = submit(worker_client, twin_set["id"], algorithm="backward", k=1)
    failing = wait_for(worker_client, failing["id"])
    assert failing["status"] == "failed"
    assert "linear combination" in failing["error"]
    assert worker_client.post(f"/api/runs/{runs[0]['id']}/cancel").status_code == 409
    check_comparison_trace_and_exports(worker_client)


def check_comparison_trace_and_exports(worker_client) -> None:
    """Part of the test above (same app: starting workers takes seconds)."""
    # Feature names that a spreadsheet would take for formulas.
    names = ["=cmd", "+x", "-y", "@z", "plain"]
    text = regression_csv(n=60, d=5, support=(0, 2)).replace("x0,x1,x2,x3,x4", ",".join(names), 1)
    ds = upload_ok(worker_client, text)
    comparison = worker_client.post(
        "/api/comparisons",
        json={
            "dataset_id": ds["id"],
            "runs": [
                {"algorithm": "forward-obj", "k": 2},
                {"algorithm": "foba-obj", "k": 2, "record_candidates": True},
            ],
        },
    ).json()
    first, second = (wait_for(worker_client, r["id"]) for r in comparison["runs"])
    assert {first["status"], second["status"]} == {"done"}
    shown = worker_client.get(comparison["url"]).json()
    assert [r["status"] for r in shown["runs"]] == ["done", "done"]

    csv_export = worker_client.get(f"/api/runs/{first['id']}/export")
    assert csv_export.headers["content-type"].startswith("text/csv")
    assert "attachment" in csv_export.headers["content-disposition"]
    # One table per file (issue 25): the CSV is the features; the zip adds the run's setting.
    table = csv_export.text.splitlines()
    assert table[0] == "feature,index,coefficient"
    assert [line.split(",")[0] for line in table[1:]] == ["'=cmd", "'-y"]
    coef = float(table[1].split(",")[2])
    assert coef == pytest.approx(first["result"]["support"][0]["coef"])
    archive = worker_client.get(f"/api/runs/{first['id']}/export", params={"format": "zip"})
    with zipfile.ZipFile(io.BytesIO(archive.content)) as files:
        assert sorted(files.namelist()) == ["features.csv", "run.csv"]
        lines = files.read("run.csv").decode().splitlines()
    assert lines[0] == "name,value"
    settings = dict(line.split(",", 1) for line in lines[1:])
    # The export carries what the run was and how it did, not only the coefficients.
    assert settings["algorithm"] == "forward-obj" and settings["seed"] == "0"
    assert settings["params.fit_intercept"] == "True" and "train.r2" in settings
    assert settings["objective"] == "least_squares"  # the name, not overwritten by the value
    assert float(settings["objective_value"]) == pytest.approx(first["result"]["objective"])
    assert float(settings["intercept"]) == pytest.approx(first["result"]["intercept"])
    json_export = worker_client.get(f"/api/runs/{first['id']}/export", params={"format": "json"})
    exported = json_export.json()
    assert [f["name"] for f in exported["features"]] == ["=cmd", "-y"]
    assert exported["intercept"] == first["result"]["intercept"]
    assert exported["metrics"]["train"] == first["result"]["train"]
    assert (exported["seed"], exported["test_fraction"]) == (0, None)

    # A comparison exports as one row per run.
    rows = worker_client.get(f"{comparison['url']}/export", params={"format": "json"}).json()
    assert [r["algorithm"] for r in rows] == ["forward-obj", "foba-obj"]
    assert rows[1]["selected"] == [f["name"] for f in second["result"]["support"]]
    assert rows[1]["objective"] == "least_squares"
    assert rows[1]["objective_value"] == pytest.approx(second["result"]["objective"])
    table = worker_client.get(f"{comparison['url']}/export").text.splitlines()
    assert table[0].startswith("run_id,dataset_id,dataset,target,algorithm") and len(table) == 3
    assert '"[""=cmd"", ""-y""]"' in table[1]  # a JSON list: it starts with "[", no formula

    # The trace is incremental, and teaching mode keeps candidate scores.
    events = full_trace(worker_client, second["id"])
    assert_clean_trace(events)
    assert events[0]["candidates"]["n_total"] == 5
    page = worker_client.get(
        f"/api/runs/{second['id']}/trace", params={"after": 1, "limit": 2}
    ).json()
    assert [e["step"] for e in page["events"]] == [2, 3]
    assert page["next_after"] == 3 and page["complete"] is (len(events) <= 4)
    rest = worker_client.get(f"/api/runs/{second['id']}/trace", params={"after": 3}).json()
    assert rest["events"] == events[4:] and rest["complete"] is True


def test_cancel_while_running(blocking, worker_client) -> None:
    ds = upload_ok(worker_client, regression_csv(n=40, d=4, support=(1,)))
    run = submit(worker_client, ds["id"], **blocking.config)  # runs until cancelled
    wait_for_events(worker_client, run["id"], 3)
    response = worker_client.post(f"/api/runs/{run['id']}/cancel")
    assert response.status_code in (200, 202)
    assert response.json()["cancel_requested"] is True
    again = worker_client.post(f"/api/runs/{run['id']}/cancel")
    assert again.status_code in (200, 202)
    run = wait_for(worker_client, run["id"])
    assert run["status"] == "cancelled"
    assert (
        run["result"]["stop_reason"] == "cancelled at the user's request"
    )  # the partial result is kept
    assert [f["name"] for f in run["result"]["support"]] == ["x0"]
    events = full_trace(worker_client, run["id"])
    assert_clean_trace(events)
    assert events[-1]["reason"] == "cancelled at the user's request"
    assert len(blocking.attempts()) == 1


def test_killed_worker_run_is_requeued_and_completes_once(blocking, worker_client) -> None:
    ds = upload_ok(worker_client, regression_csv(n=40, d=4, support=(1,)))
    run = submit(worker_client, ds["id"], **blocking.config)
    wait_for_events(worker_client, run["id"], 3)
    running = worker_client.get(f"/api/runs/{run['id']}").json()
    assert running["status"] == "running" and running["attempt"] == 1
    os.kill(int(running["worker"].rsplit(":", 1)[1]), signal.SIGKILL)
    blocking.open()  # the second attempt may finish

    run = wait_for(worker_client, run["id"], timeout=60)
    assert run["status"] == "done", run["error"]
    assert run["attempt"] == 2
    assert run["worker"] != running["worker"]
    assert run["result"]["stop_reason"] == "the test opened the gate"
    first, second = blocking.attempts()
    assert str(first) == running["worker"].rsplit(":", 1)[1] and second != first
    events = full_trace(worker_client, run["id"])
    assert_clean_trace(events)  # the first attempt's events are gone
    health = worker_client.get("/healthz").json()
    assert health["jobs"]["alive"] == 1  # the dead worker was replaced


def test_restarted_server_runs_its_queued_runs(data_dir) -> None:
    with serve(make_settings(data_dir, workers=0)) as client:  # an API-only server
        ds = upload_ok(client, regression_csv(n=40, d=4, support=(1,)))
        queued = [submit(client, ds["id"], algorithm=a, k=1)["id"] for a in ("omp", "foba-obj")]
    with serve(make_settings(data_dir, workers=1)) as client:
        for run_id in queued:
            run = wait_for(client, run_id)
            assert run["status"] == "done", run["error"]
            assert_clean_trace(full_trace(client, run_id))
