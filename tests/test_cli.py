"""The ``foba-lab`` command line, run as a subprocess on small CSV files."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import numpy as np
import pytest

import engine
from foba_lab.cli import main
from foba_lab.progress import ProgressBar

ROOT = Path(__file__).resolve().parents[1]
WEB = ("app", "fastapi", "starlette", "sqlmodel", "uvicorn", "pydantic")


def foba_lab(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "foba_lab", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> tuple[Path, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 8))
    y = 3.0 * X[:, 1] - 2.0 * X[:, 5] + 1.0 + 0.1 * rng.standard_normal(80)
    path = tmp_path_factory.mktemp("cli") / "data.csv"
    names = [f"x{j}" for j in range(8)]
    lines = [",".join([*names, "y"])]
    lines += [",".join(f"{v:.6f}" for v in [*row, t]) for row, t in zip(X, y, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    rounded = np.loadtxt(path, delimiter=",", skiprows=1)
    return path, rounded[:, :8], rounded[:, 8]


def test_select_prints_the_features_and_their_coefficients(data) -> None:
    path, X, y = data
    out = foba_lab("select", str(path), "--target", "y", "--k", "2")
    assert out.returncode == 0, out.stderr
    rows = {
        line.split()[0]: float(line.split()[1])
        for line in out.stdout.split("\n\n")[0].splitlines()[3:]
    }
    r = engine.select(X, y, algorithm="foba-obj", k=2)
    assert rows == pytest.approx(
        {"x1": r.coef[1], "x5": r.coef[5], "(intercept)": r.intercept}, rel=1e-5
    )
    assert "2 of 8 features, k = 2" in out.stdout


def test_json_output_is_for_scripts(data) -> None:
    path, X, y = data
    out = foba_lab("select", str(path), "--target", "y", "--algorithm", "omp", "--k", "3", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    r = engine.select(X, y, algorithm="omp", k=3)
    assert [s["feature"] for s in result["selected"]] == [f"x{j}" for j in r.support]
    assert [s["coef"] for s in result["selected"]] == pytest.approx(r.coef[r.support])
    assert result["intercept"] == pytest.approx(r.intercept)
    assert result["n_samples"] == 80 and result["algorithm"] == "omp" and "cv" not in result


def test_cv_chooses_k_and_prints_the_curve(data) -> None:
    path, _, _ = data
    out = foba_lab("select", str(path), "--target", "y", "--cv", "--k-max", "6", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["cv"]["k_best"] == result["k"] == 2
    assert len(result["cv"]["mean"]) == 6 and len(result["cv"]["folds"]) == 5
    assert result["cv"]["mode"] == "path"
    text = foba_lab("select", str(path), "--target", "y", "--cv", "--k-max", "4", "--rule", "1se")
    assert text.returncode == 0, text.stderr
    assert "5-fold cross-validation: k = 2" in text.stdout and "<- min" in text.stdout


def test_classification_targets_may_be_labels(tmp_path) -> None:
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 4))
    labels = np.where(X[:, 2] + 0.2 * rng.standard_normal(60) > 0, "yes", "no")
    path = tmp_path / "labels.csv"
    path.write_text(
        "a,b,c,d,label\n"
        + "".join(f"{r[0]},{r[1]},{r[2]},{r[3]},{t}\n" for r, t in zip(X, labels, strict=True))
    )
    out = foba_lab(
        "select", str(path), "--target", "label", "--objective", "logistic", "--k", "1", "--json"
    )
    assert out.returncode == 0, out.stderr
    assert [s["feature"] for s in json.loads(out.stdout)["selected"]] == ["c"]
    wrong = foba_lab("select", str(path), "--target", "label", "--k", "1")
    assert wrong.returncode == 2 and "--objective logistic" in wrong.stderr


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        (None, ["--target", "y"], "no such file"),
        ("", ["--target", "y"], "is empty"),
        ("a,b,y\n1,2,3\n4,5,6\n", ["--target", "z"], "no column 'z'"),
        ("a,b,y\n1,2,3\n4,5,6\n", [], "no --target given; the target must be one of the columns"),
        ("a,city,y\n1,Paris,3\n4,Rome,6\n", ["--target", "y"], "'city' (line 2: 'Paris')"),
        ("a,b,y\n1,,3\n4,5,6\n", ["--target", "y"], "'b' (line 2)"),
        ("a,b,y\n1,2,3\n4,5\n", ["--target", "y"], "line 3: 2 fields"),
        ("a;b;y\n1;2;3\n4;5;6\n", ["--target", "y"], "not semicolons"),
        ("a,a,y\n1,2,3\n4,5,6\n", ["--target", "y"], "two columns are named 'a'"),
        ("a,b,y\n1,2,3\n4,5,6\n", ["--target", "y", "--k", "3"], "--k: k must be between 1 and 2"),
        ("a,b,y\n1,2,3\n4,5,6\n", ["--target", "y", "--algorithm", "fob"], "--algorithm:"),
        ("a,b,y\n1,2,3\n4,5,6\n", ["--target", "y", "--param", "nu=x"], "--param nu: must be"),
        ("a,b,y\n1,2,3\n4,5,6\n", ["--target", "y", "--param", "mu=1"], "no parameter 'mu'"),
        ("a,b,y\n1,2,3\n4,5,6\n", ["--target", "y", "--k", "1", "--cv"], "exclude each other"),
    ],
)
def test_bad_input_exits_2_saying_what_to_fix(tmp_path, capsys, content, args, message) -> None:
    path = tmp_path / "bad.csv"
    if content is not None:
        path.write_text(content)
    assert main(["select", str(path), *args]) == 2  # in this process: quicker, same code
    out = capsys.readouterr()
    assert message in out.err and out.err.startswith("foba-lab select: error: ")
    assert out.out == ""


def test_bad_input_as_a_subprocess(tmp_path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("a,city,y\n1,Paris,3\n4,,6\n")
    out = foba_lab("select", str(path), "--target", "y")
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
    assert out.stderr == (
        f"foba-lab select: error: {path}: 1 column is not numeric: 'city' (line 2: 'Paris'); "
        "only numeric columns are supported for now (encode categories as numbers, or drop "
        "those columns)\n"
    )
    missing = foba_lab("select", str(tmp_path / "none.csv"), "--target", "y")
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_select_never_imports_the_web_stack(data) -> None:
    path, _, _ = data
    code = (
        "import sys; from foba_lab.cli import main; "
        f"main(['select', {str(path)!r}, '--target', 'y', '--k', '1', '--json']); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[1:])))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *WEB],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_the_progress_bar_follows_the_recorder() -> None:
    stream = io.StringIO()
    bar = ProgressBar(stream, delay=0.0, fps=1e9)
    X = np.random.default_rng(0).standard_normal((50, 30))
    y = X[:, :4].sum(axis=1)
    config = engine.check_config("foba-obj", k=4, n_features=30)
    engine.select(X, y, algorithm="foba-obj", k=4, recorder=bar.callback([config]))
    frames = [f for f in stream.getvalue().split("\r") if f]
    assert frames and frames[-1].startswith("[" + "#" * 30 + "] 100%")
    percents = [int(f.split("]")[1].split("%")[0]) for f in frames]
    assert percents == sorted(percents)
    bar.close()
    assert stream.getvalue().endswith("\r\x1b[K")
    quiet = io.StringIO()
    ProgressBar(quiet, delay=60.0).update(0.5)  # short runs draw nothing
    assert quiet.getvalue() == ""


def test_worker_says_what_it_needs(tmp_path) -> None:
    # The worker serves the distributed backend only, on PostgreSQL; the full run through
    # worker processes is tests/app/test_jobs_distributed.py.
    env = {"DATA_DIR": str(tmp_path), "DATABASE_URL": "", "JOB_BACKEND": "inprocess"}
    out = foba_lab("worker", env=env)
    assert out.returncode == 2
    assert "a worker serves JOB_BACKEND=procrastinate" in out.stderr
    out = foba_lab("worker", env={**env, "JOB_BACKEND": "procrastinate"})
    assert out.returncode == 2
    assert "JOB_BACKEND=procrastinate needs PostgreSQL" in out.stderr


def test_serve_runs_the_app(tmp_path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DATA_DIR": str(tmp_path / "data"),
        "WORKERS": "0",
        "SEED_SAMPLES": "false",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "foba_lab", "serve", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline, body = time.monotonic() + 60, None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                    body = json.loads(r.read())
                    break
            except OSError:
                time.sleep(0.3)
        assert body is not None and body["status"] == "ok", (
            proc.stderr.read() if proc.poll() else ""
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_console_script_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["foba-lab"] == "foba_lab.cli:main"
    out = foba_lab("--help")
    assert out.returncode == 0 and all(c in out.stdout for c in ("select", "serve", "worker"))


def test_select_judges_its_answer(data) -> None:
    path, X, y = data
    out = foba_lab(
        "select", str(path), "--target", "y", "--k", "2", "--exact",
        "--why-not", "x0", "--why-not", "5", "--json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    r = engine.select(X, y, algorithm="foba-obj", k=2)
    settings = engine.judge.settings_of(r)
    cert = engine.certify(X, y, r.support, **settings).to_dict()
    for key in ("support", "objective", "local_optimum", "verdict", "n_exchanges"):
        assert result["certificate"][key] == cert[key]
    best = engine.exact_best(X, y, 2, support=r.support, **settings)
    assert result["exact"]["support"] == list(best.support)
    assert [v["feature"] for v in result["why_not"]] == [0, 5]
    text = foba_lab("select", str(path), "--target", "y", "--k", "2", "--why-not", "x0")
    assert "swap certificate" in text.stdout and "why not x0: feature 'x0'" in text.stdout
    plain = foba_lab("select", str(path), "--target", "y", "--k", "2", "--no-certify", "--json")
    assert "certificate" not in json.loads(plain.stdout)


def test_judging_defaults_are_the_apps(data) -> None:
    from app.models import RunConfig
    from foba_lab import judge

    fields = RunConfig.model_fields
    assert judge.CERTIFY_DEFAULT is fields["certify"].default is True
    assert judge.EXACT_DEFAULT is fields["exact"].default is False


def test_why_not_an_unknown_column_exits_2(data, capsys) -> None:
    path, _, _ = data
    assert main(["select", str(path), "--target", "y", "--k", "1", "--why-not", "nope"]) == 2
    assert "--why-not: no column 'nope'" in capsys.readouterr().err
