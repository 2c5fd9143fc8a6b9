"""The documentation's examples run as written: every fenced ``python`` and ``bash`` block of
the README and of the sections of docs/ named below (the estimators, cross-validation, the
command line), from the repository root, with a ``foba-lab`` command that runs this checkout's
console script. The README itself holds the two set-up commands, which CI runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = {
    "scikit-learn estimators": "docs/engine.md",
    "Choosing k by cross-validation": "docs/engine.md",
    "The command line": "docs/cli.md",
}
FENCE = re.compile(r"^```(python|bash)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def section(name: str) -> str:
    text = "\n" + (ROOT / SECTIONS[name]).read_text()
    start = text.index(f" {name}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def blocks() -> list[tuple[str, str, str]]:
    found = [(name, *m.groups()) for name in SECTIONS for m in FENCE.finditer(section(name))]
    assert {name for name, *_ in found} == set(SECTIONS)
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


@pytest.mark.parametrize(("name", "language", "code"), blocks(), ids=lambda v: str(v)[:30])
def test_readme_example_runs(name: str, language: str, code: str, env) -> None:
    command = (
        [sys.executable, "-c", code]
        if language == "python"
        else ["bash", "-euo", "pipefail", "-c", code]
    )
    out = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"{name} ({language}):\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    assert out.stdout.strip(), "an example that prints nothing shows nothing"
