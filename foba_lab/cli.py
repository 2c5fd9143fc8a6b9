"""``foba-lab``: select features of a CSV file, serve the app, or run a job worker.

    foba-lab select data.csv --target y --algorithm foba-obj --k 5 [--cv] [--json]
    foba-lab serve [--host HOST] [--port PORT]
    foba-lab worker

Exit codes: 0 done, 2 the request cannot be carried out as given (the message on stderr says
what to fix), 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import runpy
import sys
from collections.abc import Sequence
from typing import Any

import engine
from engine import ConfigError
from engine.cv import METRICS, RULES, fold_errors, kfold, plan_cv, summarise

from . import judge as judging
from .progress import ProgressBar
from .table import Table, TableError, read_table

PROG = "foba-lab"
WORKER_UNAVAILABLE = (
    "the distributed worker needs JOB_BACKEND=procrastinate (not available in this version)"
)
# The option to fix for each field a ConfigError names.
OPTION = {
    "algorithm": "--algorithm",
    "objective": "--objective",
    "k": "--k",
    "params": "--param",
    "groups": "--algorithm",
    "metric": "--metric",
}


class UsageError(Exception):
    """A request the command cannot carry out as given; the message says what to fix."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.run(args) or 0)
    except UsageError as exc:
        print(f"{PROG} {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG} {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (| head): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="FoBa Lab: sparse feature selection, traced step by step."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    select = commands.add_parser(
        "select",
        help="select features of a CSV file",
        description="Select features of a CSV file (a header row, numeric columns) for "
        "predicting its target column, and print them with their coefficients.",
    )
    select.add_argument("csv", help="the CSV file: a header row, then one row per sample")
    select.add_argument("--target", help="the column to predict (the others are the features)")
    select.add_argument(
        "--algorithm", default=engine.REGISTRY.default_algorithm, help="%(default)s"
    )
    select.add_argument(
        "--objective",
        default="least_squares",
        help="least_squares (default), logistic (two classes, any labels), smoothed_hinge, "
        "smoothed_absolute",
    )
    select.add_argument("--k", type=int, help="number of features to select")
    select.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter of the algorithm or the objective (repeatable), e.g. nu=0.3",
    )
    select.add_argument(
        "--no-standardize",
        dest="standardize",
        action="store_false",
        help="select on the columns as given (default: on unit-variance columns, so that the "
        "choice does not depend on the columns' units)",
    )
    select.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    cv = select.add_argument_group("choosing k by cross-validation")
    cv.add_argument("--cv", action="store_true", help="choose k in 1..--k-max by K-fold CV")
    cv.add_argument("--k-max", type=int, help="largest k tried (default: min(features, 20))")
    cv.add_argument("--folds", type=int, default=5, help="number of folds (default 5)")
    cv.add_argument("--rule", choices=list(RULES), default="min", help="min (default) or 1se")
    cv.add_argument("--metric", choices=list(METRICS), help="held-out error (default by task)")
    select.add_argument("--json", action="store_true", help="print JSON instead of a table")
    select.add_argument(
        "--progress",
        choices=("auto", "always", "never"),
        default="auto",
        help="progress bar on stderr for long runs (auto: when stderr is a terminal)",
    )
    judging.add_options(select)
    select.set_defaults(run=run_select)

    serve = commands.add_parser(
        "serve", help="run the web app (as python -m app)", description="Run the web app."
    )
    serve.add_argument("--host", help="address to listen on (default: HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: PORT or 8000)")
    serve.set_defaults(run=run_serve)

    worker = commands.add_parser(
        "worker",
        help="run a job worker for the distributed backend",
        description="Run a job worker for the distributed job backend.",
    )
    worker.set_defaults(run=run_worker)
    return parser


# --------------------------------------------------------------------------- select


def run_select(args: argparse.Namespace) -> int:
    if args.cv and args.k is not None:
        raise UsageError("--k and --cv exclude each other: --cv chooses k (up to --k-max)")
    if not args.cv and (args.k_max is not None):
        raise UsageError("--k-max is for --cv")
    objective = _objective(args.objective)
    params = parse_params(args.param, args.algorithm, objective)
    task = engine.OBJECTIVES[objective].task
    try:
        table = read_table(args.csv, args.target, numeric_target=task != "classification")
    except TableError as exc:
        raise UsageError(str(exc)) from None
    if problem := judging.unknown(args.why_not, table.feature_names):
        raise UsageError(problem)
    enabled = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty())
    bar = ProgressBar(enabled=enabled)
    try:
        if args.cv:
            cv, k = _cross_validate(args, table, objective, params, bar)
        else:
            cv, k = None, args.k
        # The folds take the first 90% of the bar and the final fit the rest.
        result = _select(args, table, objective, params, k, bar, start=0.9 if cv else 0.0)
    finally:
        bar.close()
    judged = _judge(args, table, result)
    if args.json:
        print(json.dumps({**_as_json(args, table, result, cv), **judged}, indent=2))
    else:
        text = _as_text(args, table, result, cv)
        lines = judging.as_text(judged, table.feature_names)
        print("\n".join([text, *(["", *lines] if lines else [])]))
    return 0


def _judge(args, table: Table, result) -> dict[str, Any]:
    """How good the answer is (foba_lab/judge.py: --certify, --exact, --why-not)."""
    try:
        return judging.judge(args, table.X, table.y, table.feature_names, result)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _objective(name: str) -> str:
    if name not in engine.OBJECTIVES:
        raise UsageError(
            f"--objective: unknown objective {name!r}; available: {', '.join(engine.OBJECTIVES)}"
        )
    spec = engine.OBJECTIVES[name]
    if spec.check_input is not None:
        raise UsageError(f"--objective: {name!r} takes {spec.task} data, not a CSV table")
    return name


def parse_params(items: Sequence[str], algorithm: str, objective: str) -> dict[str, Any]:
    """``NAME=VALUE`` strings as typed parameter values (by the registry's declared types)."""
    specs = {p.name: p for p in engine.OBJECTIVES[objective].params}
    if algorithm in engine.ALGORITHMS:
        specs.update({p.name: p for p in engine.ALGORITHMS[algorithm].params})
    params: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name, text = name.strip(), text.strip()
        if not sep or not name:
            raise UsageError(f"--param {item!r}: expected NAME=VALUE, e.g. nu=0.3")
        spec = specs.get(name)
        params[name] = _value(text) if spec is None else _typed(name, text, spec)
    return params


def _typed(name: str, text: str, spec: engine.Param) -> Any:
    if spec.nullable and text.lower() in ("none", "null"):
        return None
    try:
        if spec.type == "int":
            return int(text)
        if spec.type == "float":
            return float(text)
        if spec.type == "bool":
            return {"true": True, "false": False, "1": True, "0": False}[text.lower()]
    except (ValueError, KeyError):
        raise UsageError(f"--param {name}: must be {spec.allowed()}, got {text!r}") from None
    return text


def _value(text: str) -> Any:
    """An undeclared parameter's value as JSON would read it (check_config then names it)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _select(args, table: Table, objective: str, params, k, bar: ProgressBar, *, start: float):
    n, d = table.X.shape
    config = _check(
        args,
        lambda: engine.check_config(
            args.algorithm, objective, k=k, params=params, n_samples=n, n_features=d
        ),
    )
    try:
        return engine.select(
            table.X,
            table.y,
            algorithm=args.algorithm,
            objective=objective,
            k=k,
            recorder=bar.callback([config], start, 1.0, "final fit" if start else ""),
            random_state=args.seed,
            standardize=args.standardize,
            **params,
        )
    except ConfigError as exc:
        raise UsageError(_config_message(exc, args)) from None
    except ValueError as exc:  # the data do not suit the request (labels, collinearity...)
        raise UsageError(str(exc)) from None


def _check(args, call):
    try:
        return call()
    except ConfigError as exc:
        raise UsageError(_config_message(exc, args)) from None


def _config_message(exc: ConfigError, args) -> str:
    option = OPTION.get(exc.field, "")
    if option == "--k" and args.cv:
        option = "--k-max"
    return f"{option}: {exc}" if option else str(exc)


def _cross_validate(args, table: Table, objective: str, params, bar: ProgressBar):
    n, d = table.X.shape
    k_max = args.k_max if args.k_max is not None else min(d, 20)
    classification = engine.OBJECTIVES[objective].task == "classification"
    plan = _check(
        args,
        lambda: plan_cv(
            args.algorithm,
            objective,
            k_max=k_max,
            params=params,
            metric=args.metric,
            n_features=d,
        ),
    )
    try:
        folds = kfold(n, args.folds, y=table.y if classification else None, random_state=args.seed)
    except ValueError as exc:
        raise UsageError(f"--folds: {exc}") from None
    results = []
    for i, (train, test) in enumerate(folds):
        share = 0.9 / len(folds)
        callback = bar.callback(plan.runs, i * share, (i + 1) * share, f"fold {i + 1}/{len(folds)}")
        try:
            results.append(
                fold_errors(
                    table.X,
                    table.y,
                    train,
                    test,
                    algorithm=args.algorithm,
                    objective=objective,
                    k_max=plan.k_max,
                    params=params,
                    metric=plan.metric,
                    standardize=args.standardize,
                    random_state=args.seed,
                    callback=callback,
                )
            )
        except ConfigError as exc:
            raise UsageError(_config_message(exc, args)) from None
        except ValueError as exc:
            raise UsageError(f"fold {i + 1}: {exc}") from None
    summary = summarise(results, args.rule)
    return {"plan": plan, "summary": summary, "folds": results}, summary.k_best


# --------------------------------------------------------------------------- output


def _selected(table: Table, result) -> list[dict[str, Any]]:
    return [
        {"feature": table.feature_names[j], "index": int(j), "coef": float(result.coef[j])}
        for j in result.support
    ]


def _as_json(args, table: Table, result, cv) -> dict[str, Any]:
    out: dict[str, Any] = {
        "file": str(args.csv),
        "target": table.target,
        "n_samples": int(table.X.shape[0]),
        "n_features": int(table.X.shape[1]),
        "algorithm": result.algorithm,
        "objective": result.objective_name,
        "k": result.k,
        "params": result.params,
        "standardize": bool(args.standardize),
        "selected": _selected(table, result),
        "intercept": result.intercept,
        "objective_value": result.objective,
        "n_steps": result.n_steps,
        "stop_reason": result.stop_reason,
        "elapsed": result.elapsed,
    }
    if cv is not None:
        out["cv"] = {
            **cv["summary"].to_dict(),
            "mode": cv["plan"].mode,
            "folds": [f.errors.tolist() for f in cv["folds"]],
        }
    return out


def _as_text(args, table: Table, result, cv) -> str:
    lines = []
    if cv is not None:
        s, plan = cv["summary"], cv["plan"]
        lines.append(
            f"k chosen by {s.n_folds}-fold cross-validation: k = {s.k_best} (rule {s.rule}; "
            f"held-out {s.metric}; {plan.reason})"
        )
        lines.append(f"{'k':>4}  {'mean error':>12}  {'std. error':>12}")
        for k, m, e in zip(s.k, s.mean, s.se, strict=True):
            mark = "  <- min" if k == s.k_min else ""
            if k == s.k_1se and s.k_1se != s.k_min:
                mark = "  <- 1se"
            lines.append(f"{k:>4}  {m:>12.6g}  {e:>12.6g}{mark}")
        lines.append("")
    n_sel, d = len(result.support), table.X.shape[1]
    lines.append(
        f"{result.algorithm} ({result.objective_name}) on {args.csv}: {n_sel} of {d} features"
        + (f", k = {result.k}" if result.k is not None else "")
    )
    lines.append(
        f"objective {result.objective:.6g}; the path took {result.n_steps} steps and stopped: "
        f"{result.stop_reason}"
    )
    rows = [(r["feature"], r["coef"]) for r in _selected(table, result)]
    rows.append(("(intercept)", result.intercept))
    width = max(len("feature"), *(len(name) for name, _ in rows))
    lines.append(f"{'feature':<{width}}  {'coefficient':>14}")
    lines += [f"{name:<{width}}  {coef:>14.6g}" for name, coef in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------- serve, worker


def run_serve(args: argparse.Namespace) -> int:
    """What ``python -m app`` runs; HOST and PORT as the app reads them."""
    if args.host is not None:
        os.environ["HOST"] = args.host
    if args.port is not None:
        os.environ["PORT"] = str(args.port)
    sys.argv = [f"{PROG} serve"]
    runpy.run_module("app", run_name="__main__", alter_sys=True)
    return 0


def run_worker(args: argparse.Namespace) -> int:
    """``app.__main__.worker()`` when this version of the app has one."""
    module = importlib.import_module("app.__main__")
    worker = getattr(module, "worker", None)
    if not callable(worker):
        raise UsageError(WORKER_UNAVAILABLE)
    return int(worker() or 0)
