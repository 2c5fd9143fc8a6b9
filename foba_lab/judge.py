"""``foba-lab select`` judging its answer (``engine.judge``): the swap certificate (on unless
``--no-certify``), the exact best support of the answer's size (``--exact``) and "why not this
feature?" (``--why-not FEATURE``, repeatable), on the problem the run solved
(``engine.judge.settings_of``). The defaults are the app's run options' (``certify`` true,
``exact`` false: app/models/run.py; tests/test_cli.py checks they agree).
"""

from __future__ import annotations

import argparse
import re
from typing import Any

import engine
from engine.judge import settings_of

CERTIFY_DEFAULT = True
EXACT_DEFAULT = False


def add_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("judging the answer")
    group.add_argument(
        "--certify",
        action=argparse.BooleanOptionalAction,
        default=CERTIFY_DEFAULT,
        help="price every exchange of one selected feature for one other: a local optimum "
        "under swaps, or the best improving exchanges (default: on; its cost grows with "
        "rows x features x k)",
    )
    group.add_argument(
        "--exact",
        action=argparse.BooleanOptionalAction,
        default=EXACT_DEFAULT,
        help="search the best support of the answer's size by branch and bound within "
        "--time-budget and print the gap to it, or 'not affordable' (default: off)",
    )
    group.add_argument(
        "--time-budget",
        type=float,
        default=engine.JUDGES["exact"].params[0].default,
        metavar="SECONDS",
        help="seconds the exact search may take (default %(default)g)",
    )
    group.add_argument(
        "--why-not",
        action="append",
        default=[],
        metavar="FEATURE",
        help="why this feature (a column name or index) is not selected, or for a selected "
        "one its best replacement, with the equally good alternatives (repeatable)",
    )


def feature_index(text: str, names: list[str]) -> int | None:
    """The column ``text`` names (a name first, then an index), or None."""
    if text in names:
        return names.index(text)
    if text.isdigit() and int(text) < len(names):
        return int(text)
    return None


def _feature(text: str, names: list[str]) -> int:
    """The column a ``--why-not`` feature names (``unknown`` checks them before the run)."""
    index = feature_index(text, names)
    if index is None:
        raise engine.ConfigError(str(unknown([text], names)), "why_not")
    return index


def unknown(features: list[str], names: list[str]) -> str | None:
    """What is wrong with the ``--why-not`` features, or None."""
    bad = [f for f in features if feature_index(f, names) is None]
    if not bad:
        return None
    return (
        f"--why-not: no column {bad[0]!r}; give a feature's name or its index "
        f"(0 to {len(names) - 1})"
    )


def judge(args: argparse.Namespace, X: Any, y: Any, names: list[str], result: Any) -> dict:
    """The judging the options ask for, as JSON-able dicts (features named)."""
    settings = settings_of(result)
    support = [int(j) for j in result.support]
    out: dict[str, Any] = {}
    if args.certify:
        cert = engine.certify(X, y, support, **settings).to_dict()
        cert.pop("events")
        out["certificate"] = cert
    if args.exact and support:
        out["exact"] = engine.exact_best(
            X, y, len(support), support=support, time_budget=args.time_budget, **settings
        ).to_dict()
    if args.why_not:
        out["why_not"] = [
            engine.why_not(X, y, support, _feature(f, names), **settings).to_dict()
            for f in args.why_not
        ]
    return out


_FEATURE = re.compile(r"\bfeature (\d+)")


def named(text: str, names: list[str]) -> str:
    """The engine's sentences name features by index; name them by column."""
    return _FEATURE.sub(
        lambda m: f"feature {names[int(m.group(1))]!r}" if int(m.group(1)) < len(names) else m[0],
        text,
    )


def as_text(judged: dict[str, Any], names: list[str]) -> list[str]:
    lines: list[str] = []
    if cert := judged.get("certificate"):
        lines.append(f"swap certificate ({cert['elapsed']:.2g} s): {named(cert['verdict'], names)}")
        for e in cert["alternatives"]:
            lines.append(
                f"  equally good: {names[e['feature_in']]} for {names[e['feature_out']]} "
                f"(objective {e['objective']:.6g})"
            )
    if exact := judged.get("exact"):
        best = ", ".join(names[j] for j in exact["support"])
        lines.append(
            f"exact best size-{exact['k']} support ({exact['elapsed']:.2g} s): "
            f"{named(exact['verdict'], names)}"
            + (f"; it is {best} (objective {exact['objective']:.6g})" if exact["optimal"] else "")
        )
    for v in judged.get("why_not", []):
        lines.append(f"why not {names[v['feature']]}: {named(v['explanation'], names)}")
        for e in v["alternatives"]:
            lines.append(
                f"  equally good: {names[e['feature_in']]} for {names[e['feature_out']]} "
                f"(objective {e['objective']:.6g})"
            )
    return lines
