"""``foba-lab``: select features of a CSV file, serve the app, or run a job worker.

    foba-lab select data.csv --target y --algorithm foba-obj --k 5 [--cv] [--json]
    foba-lab stability data.csv --target y --k-max 10 [--pairs 50] [--compare omp,lasso]
    foba-lab serve [--host HOST] [--port PORT]
    foba-lab worker [--check]

``python -m app [serve | worker [--check]]`` is this command line too (serve by default).

Exit codes: 0 done, 2 the request cannot be carried out as given (the message on stderr says
what to fix), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

import engine
from app.errors import InvalidInput, TooLarge
from app.ingest.words import CommandWords, option
from app.models import Task, UploadOptions
from engine import ConfigError
from engine.cv import METRICS, RULES, fold_errors, kfold, plan_cv, summarise

from . import judge as judging
from .progress import ProgressBar

if TYPE_CHECKING:
    from app.ingest.upload import ParsedCsv as Table

PROG = "foba-lab"
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


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.run(args) or 0)
    except UsageError as exc:
        print(f"{prog} {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog} {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (| head): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="FoBa Lab: sparse feature selection, traced step by step."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    select = commands.add_parser(
        "select",
        help="select features of a CSV file",
        description="Select features of a CSV file (a header row, numeric columns) for "
        "predicting its target column, and print them with their coefficients.",
    )
    select.add_argument(
        "csv",
        help="the CSV file: a header row, then one row per sample (or a Parquet file, or a "
        "directory of CSV or Parquet files, read with --stream)",
    )
    add_table_options(select)
    add_stream_options(select)
    select.add_argument(
        "--algorithm", default=engine.REGISTRY.default_algorithm, help="%(default)s"
    )
    select.add_argument(
        "--objective",
        help="least_squares, logistic (two classes, any labels), smoothed_hinge, "
        "smoothed_absolute (default: the target decides, as in the app: logistic for a "
        "classification target such as 0/1 labels, least_squares otherwise)",
    )
    select.add_argument(
        "--k",
        type=int,
        help="number of features to select (default: the algorithm's own stopping rule when "
        f"its parameters give one, otherwise {engine.config.DEFAULT_K}, as in the app)",
    )
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
        "serve",
        help="run the web app (python -m app does this by default)",
        description="Run the web app; it prints where it listens once it is ready, and Ctrl-C "
        "stops it (its worker processes too).",
    )
    serve.add_argument("--host", help="address to listen on (default: HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: PORT or 8000)")
    serve.set_defaults(run=run_serve)

    worker = commands.add_parser(
        "worker",
        help="run a job worker for the distributed backend",
        description="Run a job worker for the distributed job backend (JOB_BACKEND="
        "procrastinate, DATABASE_URL=postgresql://...); WORKER_CONCURRENCY=N runs N worker "
        "processes. SIGTERM or Ctrl-C hands the running runs back to the queue.",
    )
    worker.add_argument(
        "--check",
        action="store_true",
        help="exit 0 when a worker of this host has a recent heartbeat, 1 otherwise (a "
        "container's health check)",
    )
    worker.set_defaults(run=run_worker)
    add_stability_command(commands)
    return parser


# --------------------------------------------------------------------------- the table

# The upload form's fields that ``select`` takes as options, named and explained as the API
# names and explains them (UploadOptions); the task follows from --objective.
TABLE_FIELDS = (
    "target",
    "features",
    "delimiter",
    "decimal",
    "encoding",
    "text_columns",
    "missing",
    "id_columns",
    "positive_class",
    "na_values",
    "categorical_missing",
    "reference_level",
)


class _StoreGiven(argparse._StoreAction):
    """A store action that also notes its option as given on the command line: the task of a
    target whose few integer values may be classes is asked for unless --objective was given
    (its default cannot say which task is meant)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        super().__call__(parser, namespace, values, option)
        namespace.given = {*getattr(namespace, "given", ()), self.dest}


def add_table_options(command: argparse.ArgumentParser) -> None:
    """The upload form's options, with the same words, for a command that reads a table."""
    table = command.add_argument_group(
        "reading the table (the upload form's options, with the same words)"
    )
    for field in TABLE_FIELDS:
        table.add_argument(option(field), **_field_argument(field))
    command.register("action", None, _StoreGiven)  # options added after this one too


def _field_argument(name: str) -> dict[str, Any]:
    field = UploadOptions.model_fields[name]
    text = (field.description or "").replace("%", "%%")
    for other in TABLE_FIELDS:  # the API's field names as this command's options
        text = text.replace(f"'{other}'", option(other))
        text = text.replace(other, option(other)) if "_" in other else text
    kwargs: dict[str, Any] = {"help": text}
    choices = getattr(field.annotation, "__args__", ())
    if field.annotation is not None and all(isinstance(c, str) for c in choices) and choices:
        kwargs["choices"] = list(choices)
    if name != "target" and field.default is not None:
        kwargs["default"] = field.default
        kwargs["help"] += " (default %(default)s)"
    if name == "features":
        kwargs["metavar"] = "NAMES"
    return kwargs


def read_table(args: argparse.Namespace, task: str | None) -> Table:
    """The CSV file read as an upload is (app.ingest), the options named as this command's."""
    fields = {name: getattr(args, name) for name in TABLE_FIELDS}
    if fields["target"] is None:
        fields["target"] = ""  # the reader then lists the columns to choose from
    opts = UploadOptions(**fields, task=None if task is None else Task(task))
    # Imported here (pandas): serve and worker do not need it.
    from app.ingest.table import LABELS_PER_COLUMN
    from app.ingest.upload import UploadLimits, parse_csv

    # No server to protect: the sizes are the machine's to bound; one-hot encoding stops where
    # the reader stops remembering a column's values.
    limits = UploadLimits(
        max_columns=1 << 24,
        max_line_chars=1 << 30,
        max_cells=1 << 50,
        max_categories=LABELS_PER_COLUMN,
    )
    try:
        with open(args.csv, "rb") as raw:
            table = parse_csv(raw, opts, limits, CommandWords())
        _ask_task(table, "objective" in getattr(args, "given", ()))
        return table
    except FileNotFoundError:
        raise UsageError(f"no such file: {args.csv}") from None
    except IsADirectoryError:
        raise UsageError(f"{args.csv} is a directory, not a CSV file") from None
    except InvalidInput as exc:
        also = "".join(f"\nand: {problem.message}" for problem in exc.also)
        raise UsageError(f"{args.csv}: {exc.message}{also}") from None
    except TooLarge as exc:
        raise UsageError(f"{args.csv}: {exc.message}") from None


def _ask_task(table: Table, objective_given: bool) -> None:
    """A numeric target of a few integers read as a quantity by the default objective: ask
    whether they are class labels, as the upload asks (app.ingest.problems.task_problem)."""
    from app.ingest.problems import integer_classes, task_problem

    if objective_given or table.task != Task.regression:
        return
    if classes := integer_classes(table.y):
        raise task_problem(table.target, classes, CommandWords())


# --------------------------------------------------------------------------- streaming
STREAM_ABOVE_MB = 1024.0  # a larger CSV is streamed instead of loaded
PARTS_PER_FOLD = 4  # --cv on a streamed table: row ranges per fold by default
STABILITY_PARTS = 20  # stability on a streamed table: row ranges, halved in each pair


def add_stream_options(command: argparse.ArgumentParser) -> None:
    group = command.add_argument_group("tables larger than memory")
    group.add_argument(
        "--stream",
        action="store_true",
        help="read the table in bounded chunks instead of loading it (always for Parquet and "
        "directories): once into least squares' sufficient statistics, or once per pass "
        "for logistic, smoothed_hinge and smoothed_absolute",
    )
    group.add_argument(
        "--stream-above-mb",
        type=float,
        default=STREAM_ABOVE_MB,
        metavar="MB",
        help="stream a CSV file larger than this (default %(default)g)",
    )
    group.add_argument(
        "--parts",
        type=int,
        metavar="N",
        help="select --cv and stability: the row ranges a streamed table is read in, dealt "
        f"whole to the folds or half samples (default {PARTS_PER_FOLD} per fold, "
        f"{STABILITY_PARTS} for stability; a Parquet range is whole row groups)",
    )


def streams(args: argparse.Namespace) -> bool:
    """Whether the table is read by streaming (app.ingest.chunked) rather than loaded."""
    path = args.csv
    if args.stream or os.path.isdir(path) or path.endswith((".parquet", ".pq")):
        return True
    if path[:5].lower() == "s3://":  # object storage is only read in ranges (app.ingest.table_fs)
        return True
    try:
        return os.path.getsize(path) > args.stream_above_mb * 2**20
    except OSError:
        return False  # read_table says what is wrong with the path


@dataclasses.dataclass(frozen=True)
class StreamedTable:
    """What the output needs of a table that was streamed, not loaded (``X`` has its shape
    only: a broadcast scalar, no memory)."""

    target: str
    feature_names: list[str]
    X: Any
    task: str = "regression"
    classes: list[Any] | None = None
    meta: dict[str, Any] = dataclasses.field(default_factory=lambda: {"excluded": {}})


@contextlib.contextmanager
def stream_refusals(args: argparse.Namespace) -> Iterator[None]:
    """A streamed table's refusals (the reader's, the engine's) as usage errors: exit 2 with
    the message, no traceback."""
    from app.ingest.chunked import StreamError

    try:
        yield
    except StreamError as exc:
        raise UsageError(str(exc)) from None
    except ConfigError as exc:
        raise UsageError(_config_message(exc, args)) from None
    except ValueError as exc:
        raise UsageError(f"{args.csv}: {exc}") from None


def select_streamed(args: argparse.Namespace, objective: str, params: dict[str, Any]) -> int:
    """``select`` on a table larger than memory: one pass in bounded batches into the
    sufficient statistics (app.ingest.chunked), then the selection from them
    (engine.select_from_statistics); least squares, the same output. The smooth GLM losses
    read the rows in passes instead (:func:`select_streamed_rows`)."""
    from app.ingest.chunked import table_statistics
    from engine.from_rows import STREAMED_OBJECTIVES
    from engine.from_statistics import select_from_statistics

    _refuse_for_streaming(args, objective)
    if objective in STREAMED_OBJECTIVES:
        return select_streamed_rows(args, objective, params)
    cv = None
    with stream_refusals(args):
        schema = scan_streamed(args)
        if args.cv:
            stats, cv = cross_validate_streamed(args, schema, params)
        else:
            stats = table_statistics(schema)
        result = select_from_statistics(
            stats,
            algorithm=args.algorithm,
            k=cv["summary"].k_best if cv else args.k,
            groups=schema.groups if schema.categories else None,
            random_state=args.seed,
            standardize=args.standardize,
            **params,
        )
    table: Any = StreamedTable(  # what _as_json and _as_text read of a loaded table
        target=schema.target,
        feature_names=schema.feature_names,
        X=np.broadcast_to(np.float64(0), (stats.n, stats.n_features)),
    )
    print(
        f"{PROG} select: note: streamed {stats.n} rows into least squares' sufficient "
        "statistics; the swap certificate and the exact optimum need the rows and are skipped",
        file=sys.stderr,
    )
    if args.json:
        print(json.dumps({**_as_json(args, table, result, cv), "streamed": True}, indent=2))
    else:
        print(_as_text(args, table, result, cv))
    return 0


def select_streamed_rows(args: argparse.Namespace, objective: str, params: dict[str, Any]) -> int:
    """``select --objective logistic|smoothed_hinge|smoothed_absolute`` on a streamed table:
    the algorithm reads the table once per pass (app.ingest.table_rows;
    engine.select_from_rows); the output says how many passes it took."""
    from app.ingest.table_rows import TableRows
    from engine.from_rows import select_from_rows

    with stream_refusals(args):
        schema = scan_streamed(args)
        result = select_from_rows(
            TableRows(schema),
            algorithm=args.algorithm,
            objective=objective,
            k=args.k,
            random_state=args.seed,
            standardize=args.standardize,
            **params,
        )
    table: Any = StreamedTable(
        target=schema.target,
        feature_names=schema.feature_names,
        X=np.broadcast_to(np.float64(0), (result.n_samples, schema.n_features)),
        task=engine.OBJECTIVES[objective].task,
        classes=list(result.classes) if result.classes else None,
    )
    print(
        f"{PROG} select: note: streamed {result.n_samples} rows {result.passes} times "
        f"({result.full_passes} passes over every column, the others over the selected "
        f"features and a few candidates; {result.rows_read} rows read); the swap certificate "
        "and the exact optimum need the rows and are skipped",
        file=sys.stderr,
    )
    if args.json:
        out = _as_json(args, table, result, None)
        print(json.dumps({**out, "streamed": True, "passes": result.passes_dict()}, indent=2))
    else:
        print(_as_text(args, table, result, None))
    return 0


def scan_streamed(args: argparse.Namespace) -> Any:
    """The streamed table's schema (app.ingest.chunked.scan_table), read with the upload's
    options as given to this command; text columns one-hot encoded, left out or refused as
    --text-columns says."""
    from app.ingest.chunked import StreamError, scan_table
    from app.ingest.upload import na_values

    words = CommandWords()
    try:
        tokens = na_values(args.na_values, words)
    except InvalidInput as exc:
        raise UsageError(exc.message) from None
    options = {
        "missing": args.missing,
        "na_values": tokens,
        "delimiter": args.delimiter,
        "decimal": args.decimal,
        "encoding": args.encoding,
        "categorical_missing": args.categorical_missing,
        "words": words,
    }
    try:
        schema = scan_table(args.csv, args.target, features=_names(args.features), **options)
    except StreamError as exc:  # the option at fault named as this command's
        field = exc.field if exc.field not in (None, "features") else None
        if field is not None and not str(exc).startswith("--"):
            raise UsageError(f"{option(field)}: {exc}") from None
        raise UsageError(str(exc)) from None
    if schema.categories and args.text_columns != "onehot":
        text = ", ".join(repr(c) for c in schema.categories)
        if args.text_columns == "error":
            raise UsageError(
                f"{args.csv}: the columns {text} hold text; use --text-columns onehot or "
                "drop, or leave them out of --features"
            )
        kept = [c for c in schema.features if c not in schema.categories]
        schema = scan_table(args.csv, args.target, features=kept, **options)
    for name, n in schema.imputed.items():  # the loaded table's notes (_notes), from the scan
        level = schema.fill_levels.get(name)
        print(
            f"{PROG} {args.command}: note: {n} missing cells of {name!r} imputed"
            + (f" as level {level!r}" if level is not None else ""),
            file=sys.stderr,
        )
    return schema


def cross_validate_streamed(
    args: argparse.Namespace, schema: Any, params: dict[str, Any]
) -> tuple[Any, dict[str, Any]]:
    """--cv on a streamed table, as the app's CV on a table registered by reference: the
    table read in --parts row ranges (blocks of rows), the ranges dealt to the folds from
    --seed (engine.statistics.fold_statistics, shuffled), each fold trained on the other
    folds' statistics and scored from its own (held-out MSE). Returns the merged statistics
    (for the final fit at the chosen k) and the CV output of the in-memory --cv."""
    from app.ingest.chunked import part_statistics, plan_parts
    from engine.from_statistics import fold_errors_from_statistics
    from engine.statistics import fold_statistics, merge_all

    n_parts = args.parts if args.parts is not None else PARTS_PER_FOLD * args.folds
    ranges = plan_parts(schema, n_parts=n_parts)
    if not 2 <= args.folds <= len(ranges):
        raise UsageError(
            f"--folds {args.folds}: a streamed table's folds are whole row ranges, and it was "
            f"read in {len(ranges)}; give --folds between 2 and {len(ranges)}, or more --parts "
            "(a Parquet file's ranges are whole row groups)"
        )
    d = schema.n_features
    k_max = args.k_max if args.k_max is not None else min(d, 20)
    plan = _check(
        args,
        lambda: plan_cv(
            args.algorithm, "least_squares", k_max=k_max, params=params, metric="mse", n_features=d
        ),
    )
    parts = [part_statistics(schema, r) for r in ranges]
    groups = schema.groups if schema.categories else None
    folds = []
    splits = fold_statistics(parts, args.folds, shuffle=True, random_state=args.seed)
    for i, (train, test) in enumerate(splits):
        try:
            folds.append(
                fold_errors_from_statistics(
                    train,
                    test,
                    algorithm=args.algorithm,
                    k_max=plan.k_max,
                    params=params,
                    standardize=args.standardize,
                    groups=groups,
                    random_state=args.seed,
                )
            )
        except ConfigError as exc:
            raise UsageError(_config_message(exc, args)) from None
        except ValueError as exc:
            raise UsageError(f"fold {i + 1}: {exc}") from None
    summary = summarise(folds, args.rule)
    return merge_all(parts), {"plan": plan, "summary": summary, "folds": folds}


def _refuse_for_streaming(args: argparse.Namespace, objective: str) -> None:
    from engine.from_rows import STREAMED_ALGORITHMS, STREAMED_OBJECTIVES

    rows = objective in STREAMED_OBJECTIVES  # read in passes (else sufficient statistics)
    if objective != "least_squares" and not rows:
        raise UsageError(
            f"--objective {objective}: a streamed table offers least squares (from sufficient "
            f"statistics) and {', '.join(STREAMED_OBJECTIVES)} (passes over the rows); the "
            "other objectives need the rows in memory: load the table (drop --stream) or "
            "choose one of these"
        )
    if rows and args.algorithm not in STREAMED_ALGORITHMS:
        raise UsageError(
            f"--algorithm {args.algorithm}: {objective} on a streamed table runs "
            f"{', '.join(STREAMED_ALGORITHMS)} (one pass over every column per forward step)"
        )
    if args.cv and rows:
        raise UsageError(
            "--cv on a streamed table is least squares (folds from per-range statistics); "
            f"{objective} reads the rows once per pass: choose --k"
        )
    if args.cv and args.metric not in (None, "mse"):
        raise UsageError(
            f"--metric {args.metric}: a streamed table's folds are scored from least squares' "
            "statistics, by the mean squared error (mse) only"
        )
    if args.why_not or args.exact:
        raise UsageError(
            "--why-not and --exact need the rows, which a streamed table does not keep"
        )
    if args.target is None:
        raise UsageError("--target: name the column to predict")


def _names(text: str | None) -> list[str] | None:
    """--features as a JSON list or comma-separated names."""
    if text is None:
        return None
    if text.strip().startswith("["):
        try:
            return [str(v) for v in json.loads(text)]
        except ValueError:
            raise UsageError(f"--features: not a JSON list: {text!r}") from None
    return [name.strip() for name in text.split(",") if name.strip()]


def _notes(table: Table) -> list[str]:
    """What reading the table did besides reading it (columns left out, rows dropped)."""
    meta = table.meta
    notes = [f"column {name!r} left out ({why})" for name, why in meta["excluded"].items()]
    if table.dropped_rows and meta["missing"] == "drop":
        notes.append(f"{table.dropped_rows} rows with a missing value dropped")
    imputed_as = meta.get("imputed_levels", {})
    notes += [
        f"{n} missing cells of {name!r} imputed"
        + (f" as level {imputed_as[name]!r}" if name in imputed_as else "")
        for name, n in meta["imputed"].items()
    ]
    notes += [
        f"column {name!r}: level {level!r} left out as the reference"
        for name, level in meta.get("reference_levels", {}).items()
    ]
    return notes + meta["notes"]


# --------------------------------------------------------------------------- select


def run_select(args: argparse.Namespace) -> int:
    if args.cv and args.k is not None:
        raise UsageError("--k and --cv exclude each other: --cv chooses k (up to --k-max)")
    if not args.cv and (args.k_max is not None):
        raise UsageError("--k-max is for --cv")
    if not args.cv and args.parts is not None:
        raise UsageError("--parts is for --cv on a streamed table")
    if streams(args):  # larger than memory: statistics from one pass, or passes over rows
        objective = "least_squares" if args.objective is None else _objective(args.objective)
        return select_streamed(args, objective, parse_params(args.param, args.algorithm, objective))
    table, objective = _table_and_objective(args)
    params = parse_params(args.param, args.algorithm, objective)
    for note in _notes(table):
        print(f"{PROG} select: note: {note}", file=sys.stderr)
    if problem := judging.unknown(args.why_not, table.feature_names):
        raise UsageError(problem)
    enabled = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty())
    bar = ProgressBar(enabled=enabled)
    try:
        if args.cv:
            cv, k = _cross_validate(args, table, objective, params, bar)
        else:
            cv, k = None, _k(args, table, objective, params)
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


def _k(args, table: Table, objective: str, params: dict[str, Any]) -> int | None:
    """--k, or the default every door applies (engine.default_k)."""
    if args.k is not None:
        return int(args.k)
    d = table.X.shape[1]
    k = engine.default_k(args.algorithm, objective, d, params)
    if k is not None and table.true_support:  # as the app does (app.services.catalog.run_k)
        return min(len(table.true_support), d)
    return k


def _judge(args, table: Table, result) -> dict[str, Any]:
    """How good the answer is (foba_lab/judge.py: --certify, --exact, --why-not)."""
    try:
        return judging.judge(args, table.X, table.y, table.feature_names, result)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _table_and_objective(args: argparse.Namespace) -> tuple[Table, str]:
    """The table, and --objective or, when none is named, the one the target's task calls for
    (engine.default_objective, as for a data set in the app): a 0/1 target is classification."""
    if args.objective is None:
        table = read_table(args, None)
        return table, engine.default_objective(table.task)
    objective = _objective(args.objective)
    return read_table(args, engine.OBJECTIVES[objective].task), objective


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
        "task": str(table.task),
        "classes": table.classes,
        "excluded": table.meta["excluded"],
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
    """The web app (``app.__main__.serve``); HOST and PORT as the app reads them."""
    if args.host is not None:
        os.environ["HOST"] = args.host
    if args.port is not None:
        os.environ["PORT"] = str(args.port)
    from app.__main__ import serve

    serve()
    return 0


def run_worker(args: argparse.Namespace) -> int:
    from app.__main__ import worker, worker_check

    return worker_check() if args.check else worker()


# --------------------------------------------------------------------------- stability


def add_stability_command(commands: Any) -> None:
    """``foba-lab stability``: how stable is a selection (engine.stability), on a CSV file."""
    stab = commands.add_parser(
        "stability",
        help="how stable is a selection: frequencies over complementary half samples",
        description="Complementary-pairs stability selection: the algorithm runs on 2B half "
        "samples of the rows (B pairs of disjoint halves); every feature's selection "
        "frequency at every k = 1..--k-max, the stable set at --threshold and its bound on "
        "the expected number of false selections. With --compare, other algorithms run on "
        "the same half samples and are compared by stability.",
    )
    stab.add_argument(
        "csv",
        help="the CSV file: a header row, then one row per sample (or a Parquet file, or a "
        "directory of CSV or Parquet files, read with --stream)",
    )
    add_table_options(stab)
    add_stream_options(stab)
    stab.add_argument("--algorithm", default=engine.REGISTRY.default_algorithm, help="%(default)s")
    stab.add_argument("--objective", help="as for select (default: the target decides)")
    stab.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    stab.add_argument("--no-standardize", dest="standardize", action="store_false")
    stab.add_argument("--seed", type=int, default=0, help="seeds the pairs (default 0)")
    stab.add_argument("--k-max", type=int, help="largest k (default: min(features, 10))")
    stab.add_argument("--pairs", type=int, default=50, help="B, pairs of halves (default 50)")
    stab.add_argument("--threshold", type=float, default=0.6, help="pi in (0.5, 1] (0.6)")
    stab.add_argument("--max-false", type=float, help="a target for E[V]: the pi meeting it")
    stab.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="ALGO[,ALGO]",
        help="other algorithms on the same half samples, e.g. omp,lasso,abess",
    )
    stab.add_argument("--jobs", type=int, default=1, help="processes (joblib; default 1)")
    stab.add_argument("--format", choices=("text", "json", "csv"), default="text")
    stab.add_argument("--progress", choices=("auto", "always", "never"), default="auto")
    stab.set_defaults(run=run_stability)


def run_stability(args: argparse.Namespace) -> int:
    from engine.stability import StabilityResult, compare, plan_stability, run_subsamples
    from engine.stability import summarise as merge

    if streams(args):  # larger than memory: halves of row ranges, from their statistics
        return stability_streamed(args)
    if args.parts is not None:
        raise UsageError("--parts is for a streamed table (--stream)")
    table, objective = _table_and_objective(args)
    task = engine.OBJECTIVES[objective].task
    params = parse_params(args.param, args.algorithm, objective)
    n, d = table.X.shape
    peers = [a.strip() for item in args.compare for a in item.split(",") if a.strip()]
    methods = {args.algorithm: params, **{a: {} for a in peers}}
    if len(methods) < 1 + len(peers):
        raise UsageError("--compare: an algorithm is named twice")
    if not 0.5 < args.threshold <= 1:
        raise UsageError(f"--threshold must be in (0.5, 1], got {args.threshold}")
    if args.max_false is not None and args.max_false <= 0:
        raise UsageError(f"--max-false must be positive, got {args.max_false}")
    k_max = args.k_max if args.k_max is not None else min(d, 10)
    plans = {}
    for name, own in methods.items():
        try:
            plans[name] = plan_stability(
                name,
                objective,
                k_max=k_max,
                n_samples=n,
                n_features=d,
                params=own,
                n_pairs=args.pairs,
                y=table.y,
                standardize=args.standardize,
                random_state=args.seed,
                task=task,
            )
        except ConfigError as exc:
            option = "--compare" if name in peers else OPTION.get(exc.field, "")
            option = "--k-max" if exc.field == "k" else option
            raise UsageError(f"{option}: {name}: {exc}" if option else str(exc)) from None
        except ValueError as exc:
            raise UsageError(f"--pairs: {exc}") from None
    enabled = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty())
    bar = ProgressBar(enabled=enabled)
    total, done = len(plans) * 2 * args.pairs, 0

    def tick(_: Any) -> None:
        nonlocal done
        done += 1
        bar.update(done / total, f"{done}/{total} half samples")

    results = {}
    try:
        for name, plan in plans.items():
            runs = run_subsamples(table.X, table.y, plan, n_jobs=args.jobs, on_subsample=tick)
            summary = merge(runs, plan, threshold=args.threshold, max_false=args.max_false)
            results[name] = StabilityResult(plan, runs, summary)
    except ValueError as exc:  # the data do not suit the request (labels, collinearity...)
        raise UsageError(str(exc)) from None
    finally:
        bar.close()
    comparison = compare(results)
    if args.format == "json":
        out = {"file": str(args.csv), "target": table.target, **comparison.to_dict()}
        out["feature_names"] = table.feature_names
        print(json.dumps(out, indent=2))
    elif args.format == "csv":
        print(_stability_csv(results, table.feature_names), end="")
    else:
        print(_stability_text(args, results, comparison, table.feature_names))
    return 0


def stability_streamed(args: argparse.Namespace) -> int:
    """``stability`` on a table larger than memory, as the app runs a stability study on a
    table registered by reference: the table read in --parts row ranges, each half sample
    half of the ranges (complementary pairs dealt from --seed, engine.statistics.block_pairs),
    least squares run from the merged statistics of its ranges
    (engine.subsample_supports_from_statistics). The output is the loaded table's."""
    from app.ingest.chunked import StreamError, part_statistics, plan_parts
    from engine.from_statistics import subsample_supports_from_statistics
    from engine.stability import StabilityResult, compare, plan_stability
    from engine.stability import summarise as merge
    from engine.statistics import block_pairs, merge_all

    if args.objective not in (None, "least_squares"):
        raise UsageError(
            f"--objective {args.objective}: a streamed table gives least squares' sufficient "
            "statistics only"
        )
    if args.target is None:
        raise UsageError("--target: name the column to predict")
    if not 0.5 < args.threshold <= 1:
        raise UsageError(f"--threshold must be in (0.5, 1], got {args.threshold}")
    if args.max_false is not None and args.max_false <= 0:
        raise UsageError(f"--max-false must be positive, got {args.max_false}")
    peers = [a.strip() for item in args.compare for a in item.split(",") if a.strip()]
    params = parse_params(args.param, args.algorithm, "least_squares")
    methods = {args.algorithm: params, **{a: {} for a in peers}}
    if len(methods) < 1 + len(peers):
        raise UsageError("--compare: an algorithm is named twice")
    try:
        schema = scan_streamed(args)
        ranges = plan_parts(
            schema, n_parts=args.parts if args.parts is not None else STABILITY_PARTS
        )
        if len(ranges) < 2:
            raise UsageError(
                f"--parts: the half samples of a streamed table are halves of its row ranges, "
                f"and it was read in {len(ranges)}; give --parts 4 or more (a Parquet file "
                "needs as many row groups)"
            )
        parts = [part_statistics(schema, r) for r in ranges]
        dealt = block_pairs(len(parts), args.pairs, random_state=args.seed)
        halves = [merge_all([parts[i] for i in held]) for held in dealt]
    except StreamError as exc:
        raise UsageError(str(exc)) from None
    except ValueError as exc:
        raise UsageError(f"--pairs: {exc}") from None
    n, d = sum(p.n for p in parts), schema.n_features
    k_max = args.k_max if args.k_max is not None else min(d, 10)
    results = {}
    for name, own in methods.items():
        try:
            plan = plan_stability(
                name,
                k_max=k_max,
                n_samples=n,
                n_features=d,
                params=own,
                n_pairs=args.pairs,
                standardize=args.standardize,
                random_state=args.seed,
            )
            runs = [
                subsample_supports_from_statistics(half, plan, i) for i, half in enumerate(halves)
            ]
        except ConfigError as exc:
            option = "--compare" if name in peers else OPTION.get(exc.field, "")
            option = "--k-max" if exc.field == "k" else option
            raise UsageError(f"{option}: {name}: {exc}" if option else str(exc)) from None
        except ValueError as exc:
            raise UsageError(f"{args.csv}: {exc}") from None
        summary = merge(runs, plan, threshold=args.threshold, max_false=args.max_false)
        results[name] = StabilityResult(plan, runs, summary)
    comparison = compare(results)
    names = schema.feature_names
    print(
        f"{PROG} stability: note: streamed {n} rows in {len(parts)} row ranges; each half "
        f"sample is half of the ranges ({min(h.n for h in halves)} to "
        f"{max(h.n for h in halves)} rows)",
        file=sys.stderr,
    )
    if args.format == "json":
        out = {"file": str(args.csv), "target": schema.target, **comparison.to_dict()}
        out["feature_names"] = names
        print(json.dumps({**out, "streamed": True}, indent=2))
    elif args.format == "csv":
        print(_stability_csv(results, names), end="")
    else:
        print(_stability_text(args, results, comparison, names))
    return 0


def _stability_csv(results: dict[str, Any], names: list[str]) -> str:
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["method", "k", "unit", "name", "frequency", "stable", "bound"])
    for method, result in results.items():
        s = result.summary
        for i, k in enumerate(s.k):
            stable = set(s.stable[i])
            for u in range(s.n_units):
                freq = float(s.frequency[i, u])
                writer.writerow([method, int(k), u, names[u], freq, u in stable, s.bound[i]])
    return out.getvalue()


def _stability_text(args, results: dict[str, Any], comparison: Any, names: list[str]) -> str:
    first = next(iter(results.values()))
    plan = first.plan
    lines = [
        f"stability selection on {args.csv}: {plan.n_pairs} pairs of half samples "
        f"({plan.n_subsamples} x {len(plan.subsamples[0])} rows), k = 1..{plan.k_max}, "
        f"threshold {args.threshold}, seed {plan.random_state}"
    ]
    for method, result in results.items():
        s = result.summary
        stable = ", ".join(f"{names[u]} ({s.frequency_max[u]:.2f})" for u in s.stable_path)
        lines += [
            "",
            f"{method}: stable over the path: {stable or 'none'}; E[false] <= {s.bound_path:.3g}",
            f"{'k':>4}  {'q':>6}  {'E[V] <=':>8}  {'index':>6}  stable at k",
        ]
        for i, k in enumerate(s.k):
            at_k = ", ".join(names[u] for u in s.stable[i]) or "-"
            index = "" if math.isnan(s.nogueira[i]) else f"{s.nogueira[i]:.3f}"
            lines.append(f"{k:>4}  {s.q[i]:>6.2f}  {s.bound[i]:>8.3g}  {index:>6}  {at_k}")
    if len(results) > 1:
        lines += [
            "",
            "steadiest (Nogueira's index) at k: "
            + "; ".join(
                f"{k}: {'/'.join(m) or '-'}"
                for k, m in zip(comparison.k, comparison.steadiest, strict=True)
            ),
        ]
    return "\n".join(lines)
