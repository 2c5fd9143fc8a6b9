"""The documentation's examples run as written: every fenced ``python`` and ``bash`` block of
the README and of the sections of docs/ named below (the estimators, cross-validation, the
command line), from the repository root, with a ``foba-lab`` command that runs this checkout's
console script. The README itself holds the two set-up commands, which CI runs.

The REST API's examples (``REST``) run against a live app process (``python -m app``, one
worker, a fresh data directory): the one change made to them is the port, the server's own
instead of the 8000 they name."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from service_helpers import app_process, free_port

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = {
    "scikit-learn estimators": "docs/engine.md",
    "Choosing k by cross-validation": "docs/engine.md",
    "The command line": "docs/cli.md",
}
REST = {"The REST API": "docs/api.md"}
DOCUMENTED_URL = "http://127.0.0.1:8000"
FENCE = re.compile(r"^```(python|bash)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def section(name: str) -> str:
    text = "\n" + (ROOT / {**SECTIONS, **REST}[name]).read_text()
    start = text.index(f" {name}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def blocks(sections: dict[str, str] = SECTIONS) -> list[tuple[str, str, str]]:
    found = [(name, *m.groups()) for name in sections for m in FENCE.finditer(section(name))]
    assert {name for name, *_ in found} == set(sections)
    return found


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    """PATH with a ``foba-lab`` that runs the console script's entry point of this checkout
    (the editable install may point at another one)."""
    bin_dir = tmp_path_factory.mktemp("bin")
    script = bin_dir / "foba-lab"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nfrom foba_lab.cli import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
    }


@pytest.fixture(scope="module")
def live_app(tmp_path_factory, env) -> Iterator[str]:
    """``python -m app`` from this checkout, one worker, no sample data: its base URL."""
    tmp = tmp_path_factory.mktemp("rest")
    port = free_port()
    settings = {"PORT": str(port), "DATA_DIR": str(tmp / "data"), "WORKERS": "1"}
    server_env = {**env, **settings, "SEED_SAMPLES": "false"}
    server_env.pop("API_KEY", None)  # the examples send no key
    with app_process([sys.executable, "-m", "app"], server_env, port, tmp / "log") as base:
        yield base


def run_block(name: str, language: str, code: str, env: dict[str, str]) -> None:
    command = (
        [sys.executable, "-c", code]
        if language == "python"
        else ["bash", "-euo", "pipefail", "-c", code]
    )
    out = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"{name} ({language}):\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    assert out.stdout.strip(), "an example that prints nothing shows nothing"


@pytest.mark.parametrize(("name", "language", "code"), blocks(), ids=lambda v: str(v)[:30])
def test_readme_example_runs(name: str, language: str, code: str, env) -> None:
    run_block(name, language, code, env)


@pytest.mark.parametrize(("name", "language", "code"), blocks(REST), ids=lambda v: str(v)[:30])
def test_rest_example_runs(name: str, language: str, code: str, env, live_app: str) -> None:
    assert DOCUMENTED_URL in code, "a REST example names the documented server"
    run_block(name, language, code.replace(DOCUMENTED_URL, live_app), env)
