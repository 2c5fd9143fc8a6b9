"""The ``foba-lab`` command line, run as a subprocess on small CSV files."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path

import numpy as np
import pytest

import engine
from foba_lab.cli import main
from foba_lab.progress import ProgressBar

ROOT = Path(__file__).resolve().parents[1]
# What ``select`` must not load: the web stack and the database (it reads tables with
# app.ingest, which needs neither).
WEB = ("fastapi", "starlette", "uvicorn", "jinja2", "alembic", "procrastinate")
APP = ("app.web", "app.db", "app.services", "app.jobs", "app.storage", "app.main")


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
    # No --objective: the labels make it a classification, fitted by logistic (issue 25).
    default = foba_lab("select", str(path), "--target", "label", "--k", "1", "--json")
    assert default.returncode == 0, default.stderr
    assert json.loads(default.stdout)["objective"] == "logistic"
    wrong = foba_lab("select", str(path), "--target", "label", "--objective", "least_squares")
    assert wrong.returncode == 2 and "--objective logistic" in wrong.stderr


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        (None, ["--target", "y"], "no such file"),
        ("", ["--target", "y"], "the file is empty"),
        ("a,b,y\n1,2,3\n4,5,6\n", ["--target", "z"], "target column 'z' is not in the file"),
        ("a,b,y\n1,2,3\n4,5,6\n", [], "no target column given; the target must be one of"),
        ("a,city,y\n1,Paris,3\n4,Rome,6\n", ["--target", "y"], "use --text-columns onehot"),
        ("a,b,y\n1,,3\n4,5,6\n", ["--target", "y"], "use --missing drop or --missing impute"),
        ("a,b,y\n1,2,3\n4,5\n", ["--target", "y"], "line 3 has 2 fields"),
        ("a;b;y\n1,5;2;3\n4;5;6\n", ["--target", "y"], "decimal comma: use --decimal ,"),
        ("a,a,y\n1,2,3\n4,5,6\n", ["--target", "y"], "column name 'a' appears 2 times"),
        ("a,b,y\n1,2,3\n4,5,6\n", ["--target", "y", "--features", "c"], "--features names 'c'"),
        ("a,b,y\n1,2,3\n4,5,6\n", ["--target", "y", "--encoding", "rot13"], "not a text enc"),
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
    # Every problem at once, each with the option that fixes it (the upload's own messages).
    assert out.stderr == (
        f"foba-lab select: error: {path}: column 'city' holds text, e.g. 'Paris' in row 1 "
        "(1 distinct value); use --text-columns onehot or --text-columns drop (one-hot makes "
        "an indicator column per value, city=value, selected as one group by group methods), "
        "or leave 'city' out of --features\n"
        "and: missing or infinite values: column 'city' has 1 missing (first at row 2); use "
        "--missing drop or --missing impute (the column mean fills numeric feature cells, the "
        "most frequent level text ones; rows without a target value are dropped)\n"
    )
    missing = foba_lab("select", str(tmp_path / "none.csv"), "--target", "y")
    assert missing.returncode == 2 and "no such file" in missing.stderr


def _select_json(capsys, path: Path, *args: str) -> dict:
    assert main(["select", str(path), "--json", *args]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_a_semicolon_file_with_decimal_commas_reads_as_the_form_reads_it(tmp_path, capsys) -> None:
    """The delimiter is sniffed and the decimal mark is an option, as on the upload form."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 3))
    y = 2.0 * X[:, 0] - X[:, 2]
    path = tmp_path / "excel.csv"
    rows = [[*r, t] for r, t in zip(X, y, strict=True)]
    path.write_text(
        "u;v;w;y\n"
        + "".join(";".join(f"{v:.6f}".replace(".", ",") for v in r) + "\n" for r in rows)
    )
    result = _select_json(capsys, path, "--target", "y", "--decimal", ",", "--k", "2")
    assert [s["feature"] for s in result["selected"]] == ["u", "w"]
    assert [s["coef"] for s in result["selected"]] == pytest.approx([2.0, -1.0], abs=1e-4)
    tab = tmp_path / "tab.csv"
    tab.write_text(path.read_text().replace(";", "\t"))
    again = _select_json(
        capsys, tab, "--target", "y", "--decimal", ",", "--delimiter", "tab", "--k", "1"
    )
    assert again["n_features"] == 3 and again["n_samples"] == 40


def test_text_columns_and_missing_cells_take_the_forms_options(tmp_path, capsys) -> None:
    rng = np.random.default_rng(3)
    n = 60
    city = rng.choice(["Paris", "Rome", "Oslo"], n)
    a = rng.standard_normal(n)
    y = a + 3.0 * (city == "Rome")
    lines = ["id,a,city,y"] + [f"{i},{a[i]:.6f},{city[i]},{y[i]:.6f}" for i in range(n)]
    lines[5] = f"4,,{city[4]},{y[4]:.6f}"  # a missing cell
    path = tmp_path / "cities.csv"
    path.write_text("\n".join(lines) + "\n")
    onehot = _select_json(
        capsys, path, "--target", "y", "--text-columns", "onehot", "--missing", "drop", "--k", "2"
    )
    assert onehot["n_samples"] == n - 1
    assert onehot["excluded"] == {"id": "ID-like: an integer that grows row by row"}
    assert {s["feature"] for s in onehot["selected"]} == {"a", "city=Rome"}
    notes = capsys.readouterr().err  # nothing: _select_json read it; run again for the notes
    assert (
        main(
            [
                "select",
                str(path),
                "--target",
                "y",
                "--text-columns",
                "drop",
                "--missing",
                "impute",
                "--k",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr()
    assert "note: column 'city' left out (text)" in out.err
    assert "note: 1 missing cells of 'a' imputed" in out.err
    assert "1 of 1 features" in out.out, notes
    chosen = _select_json(
        capsys,
        path,
        "--target",
        "y",
        "--features",
        "a,city",
        "--text-columns",
        "onehot",
        "--missing",
        "drop",
        "--k",
        "1",
    )
    assert chosen["excluded"] == {} and chosen["n_features"] == 4


def test_question_marks_are_text_not_missing(tmp_path, capsys) -> None:
    """One set of missing-value spellings, the upload's: '?' is not one of them."""
    path = tmp_path / "uci.csv"
    path.write_text("a,b,y\n1,?,3\n4,5,6\n2,2,1\n")
    assert main(["select", str(path), "--target", "y", "--missing", "drop"]) == 2
    assert "column 'b' holds numbers but 1 cell that is not: row 1: '?'" in capsys.readouterr().err


def test_the_table_options_say_what_the_upload_form_says() -> None:
    from app.models import UploadOptions

    out = foba_lab("select", "--help")
    text = " ".join(out.stdout.split())
    for name in ("decimal", "encoding", "missing", "positive_class", "delimiter"):
        assert f"--{name.replace('_', '-')}" in text
        assert UploadOptions.model_fields[name].description in text


def test_select_never_imports_the_web_stack(data) -> None:
    path, _, _ = data
    code = (
        "import sys; from foba_lab.cli import main; "
        f"main(['select', {str(path)!r}, '--target', 'y', '--k', '1', '--json']); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[1:])"
        f" | {{m for m in sys.modules if m.startswith({APP!r})}}))"
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


@pytest.mark.parametrize("door", [["-m", "foba_lab"], ["-m", "app"]], ids=["foba-lab", "app"])
def test_worker_says_what_it_needs(tmp_path, door) -> None:
    # The worker serves the distributed backend only, on PostgreSQL; the full run through
    # worker processes is tests/app/test_jobs_distributed.py.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DATA_DIR": str(tmp_path), "DATABASE_URL": ""}
    run = [sys.executable, *door, "worker"]
    out = subprocess.run(
        run, cwd=ROOT, env={**env, "JOB_BACKEND": "inprocess"}, capture_output=True, text=True
    )
    assert out.returncode == 2
    assert "a worker serves JOB_BACKEND=procrastinate" in out.stderr
    out = subprocess.run(
        run, cwd=ROOT, env={**env, "JOB_BACKEND": "procrastinate"}, capture_output=True, text=True
    )
    assert out.returncode == 2
    assert "JOB_BACKEND=procrastinate needs PostgreSQL" in out.stderr


def test_python_m_app_is_the_same_command_line() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "app", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.startswith("usage: python -m app")
    assert all(c in out.stdout for c in ("select", "serve", "worker"))
    check = subprocess.run(
        [sys.executable, "-m", "app", "worker", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert "--check" in check.stdout
    wrong = subprocess.run(
        [sys.executable, "-m", "app", "serve", "--bogus"], cwd=ROOT, capture_output=True, text=True
    )
    assert wrong.returncode == 2 and "unrecognized arguments: --bogus" in wrong.stderr


@pytest.mark.parametrize(
    ("door", "signum"),
    [
        (["-m", "foba_lab", "serve", "--port"], signal.SIGINT),
        (["-m", "app"], signal.SIGINT),
        # uvicorn re-raises SIGTERM once it has shut down: the process ends without its exit
        # handlers, which is where the worker queue's semaphores used to be released.
        (["-m", "app"], signal.SIGTERM),
    ],
    ids=["foba-lab-ctrl-c", "app-ctrl-c", "app-sigterm"],
)
def test_serve_says_where_it_listens_and_stops_cleanly_on_ctrl_c(tmp_path, door, signum) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DATA_DIR": str(tmp_path / "data"),
        "WORKERS": "1",  # a worker process: its resources must be released at Ctrl-C too
        "SEED_SAMPLES": "false",
        "PORT": str(port),
    }
    args = [*door, str(port)] if door[-1] == "--port" else door  # python -m app: PORT
    proc = subprocess.Popen(
        [sys.executable, *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # Ctrl-C reaches a process group: this one's alone
    )
    try:
        first = proc.stdout.readline()
        assert first == f"FoBa Lab listening on http://127.0.0.1:{port}\n", first + (
            proc.stderr.read() if proc.poll() is not None else ""
        )
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as r:
            body = json.loads(r.read())
        assert body["status"] == "ok"
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signum)  # what Ctrl-C in a terminal does
        else:
            proc.send_signal(signum)  # what docker stop does
        _out, err = proc.communicate(timeout=60)  # the resource tracker's stderr included
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == (0 if signum == signal.SIGINT else -signum), err
    assert "leaked" not in err and "Traceback" not in err, err


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
    for key in ("support", "local_optimum", "verdict", "n_exchanges"):
        assert result["certificate"][key] == cert[key]
    # Another process: its BLAS may sum in another order (seen: 2 ulps apart on one machine).
    assert result["certificate"]["objective"] == pytest.approx(cert["objective"], rel=1e-12)
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


# --------------------------------------------------------------------------- issue 25

CARS = Path(__file__).resolve().parent / "fixtures" / "cars93_airbags.csv"


def test_the_issue_25_options_read_as_the_upload_reads(tmp_path, capsys) -> None:
    """Four classes sorted by class, a target of few integers (asked about unless
    --objective says), Cars93's AirBags 'None' kept as a category with --na-values."""
    classes = tmp_path / "sorted.csv"
    classes.write_text(
        "a,b,y\n"
        + "".join(
            f"{k + 0.1 * i:.2f},{(i * 7) % 5},{c}\n" for k, c in enumerate("pqrs") for i in range(8)
        )
    )
    assert main(["select", str(classes), "--target", "y", "--objective", "logistic"]) == 2
    assert "has 4 classes ('p', 'q', 'r', 's')" in capsys.readouterr().err
    chosen = _select_json(
        capsys,
        classes,
        "--target",
        "y",
        "--objective",
        "logistic",
        "--positive-class",
        "r",
        "--k",
        "1",
    )
    assert chosen["n_samples"] == 32

    coded = tmp_path / "coded.csv"
    coded.write_text("a,b,y\n" + "".join(f"{i * 0.5},{(i * 3) % 7},{i % 3}\n" for i in range(30)))
    assert main(["select", str(coded), "--target", "y", "--k", "1"]) == 2
    err = capsys.readouterr().err
    assert (
        "target column 'y' holds 3 distinct integers (0, 1, 2): class labels or a quantity? " in err
    )
    assert (
        "use --objective least_squares to predict the number, or use --objective logistic " in err
    )
    assert "--positive-class <one of them>" in err
    assert _select_json(capsys, coded, "--target", "y", "--objective", "least_squares", "--k", "1")
    logistic = ["--objective", "logistic", "--positive-class", "2", "--k", "1"]
    assert _select_json(capsys, coded, "--target", "y", *logistic)["n_samples"] == 30

    assert main(["select", str(CARS), "--target", "Price", "--text-columns", "onehot"]) == 2
    assert "column 'AirBags' has 34 missing" in capsys.readouterr().err
    options = ["--text-columns", "onehot", "--missing", "impute", "--na-values", "NA"]
    every = _select_json(capsys, CARS, "--target", "Price", *options, "--k", "1")
    assert every["n_samples"] == 93 and every["n_features"] == 12  # 6 types, 3 bags, 3 numbers
    assert (
        main(
            [
                "select",
                str(CARS),
                "--target",
                "Price",
                *options,
                "--reference-level",
                "most_frequent",
                "--k",
                "1",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "note: column 'AirBags': level 'Driver only' left out as the reference" in err
    assert "note: 2 missing cells of 'Rear.seat.room' imputed" in err
