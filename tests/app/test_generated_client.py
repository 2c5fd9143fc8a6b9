"""A client generated from the live schema by openapi-python-client (the usual Python
generator) works: it uploads a file, starts a run, waits for it and reads the trace. Before,
the schema's file field read as text to generators, and their upload was refused."""

from __future__ import annotations

import importlib
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from service_helpers import make_settings, serve

pytestmark = pytest.mark.slow

CSV = "y,a,b,c\n" + "".join(
    f"{i % 7 + 0.5 * (i % 3)},{i % 7},{i % 3},{(i * 5) % 11}\n" for i in range(60)
)


def _generate(schema: dict, where: Path) -> None:
    (where / "openapi.json").write_text(json.dumps(schema))
    command = [
        sys.executable, "-m", "openapi_python_client", "generate",
        "--path", str(where / "openapi.json"),
        "--output-path", str(where / "foba_client"),
        "--meta", "none",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_generated_client_uploads_runs_and_reads_the_trace(tmp_path: Path) -> None:
    pytest.importorskip("openapi_python_client")
    with serve(make_settings(tmp_path / "data", workers=1)) as test_client:
        _generate(test_client.get("/openapi.json").json(), tmp_path)
        sys.path.insert(0, str(tmp_path))
        try:
            api = importlib.import_module("foba_client")
            models = importlib.import_module("foba_client.models")
            types = importlib.import_module("foba_client.types")
            datasets = importlib.import_module("foba_client.api.datasets")
            runs = importlib.import_module("foba_client.api.runs")
        finally:
            sys.path.remove(str(tmp_path))
        client = api.Client(base_url="http://testserver")
        client.set_httpx_client(test_client)

        upload = importlib.import_module(f"{datasets.__name__}.upload_dataset")
        form = models.UploadForm(
            target="y", file=types.File(payload=io.BytesIO(CSV.encode()), file_name="small.csv")
        )
        dataset = upload.sync(client=client, body=form)
        assert isinstance(dataset, models.DatasetPublic), dataset
        assert dataset.n_features == 3

        submit = importlib.import_module(f"{runs.__name__}.submit_run")
        body = models.RunCreate.from_dict({"dataset_id": dataset.id, "algorithm": "omp", "k": 2})
        run = submit.sync(client=client, body=body)
        assert isinstance(run, models.RunPublic), run

        get_run = importlib.import_module(f"{runs.__name__}.get_run")
        deadline = time.monotonic() + 60
        while (run := get_run.sync(run.id, client=client)).status.value not in ("done", "failed"):
            assert time.monotonic() < deadline, f"run still {run.status}"
            time.sleep(0.1)
        assert run.status.value == "done"

        get_trace = importlib.import_module(f"{runs.__name__}.get_trace")
        page = get_trace.sync(run.id, client=client)
        assert isinstance(page, models.TracePage), page
        kinds = [event.to_dict()["kind"] for event in page.events]
        assert kinds.count("add") == 2 and kinds.count("stop") == 1
