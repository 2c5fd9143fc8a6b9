"""The part of the engine the app can run.

The app's data sets are feature tables with a regression or classification target. The engine
also has an objective and a generator for other data: the linear-chain CRF and its chains
(labelled sequences of discrete observations, task "sequence"), whose features are indicators
built from the observations rather than the table's columns. Those stay engine-only for now;
the app lists what it can run and says why when asked for the rest.
"""

from __future__ import annotations

import engine as fs
from engine import datasets as generators

from ..models import Task

TABLE_TASKS = frozenset(t.value for t in Task)

OBJECTIVES = {name: s for name, s in fs.OBJECTIVES.items() if s.task in TABLE_TASKS}
GENERATORS = {name: s for name, s in generators.GENERATORS.items() if s.task in TABLE_TASKS}


def engine_only(kind: str, name: str) -> str | None:
    """Why the engine's objective or generator ``name`` cannot be used here, or None."""
    registry = fs.OBJECTIVES if kind == "objective" else generators.GENERATORS
    spec = registry.get(name)
    if spec is None or spec.task in TABLE_TASKS:
        return None
    what = "takes" if kind == "objective" else "makes"
    return (
        f"{kind} {name!r} {what} labelled sequences ({spec.title}), not a feature table; the "
        "app's data sets are tables, so use it through the engine: engine.select(X_chains, "
        "y_chains, objective='crf', ...)"
    )
