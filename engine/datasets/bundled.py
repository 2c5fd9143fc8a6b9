"""Small real data sets shipped with the package (CSV files under ``data/``).

``manifest.json`` beside the files records each set's provenance, target column and task. The
truth behind real data is unknown, so these problems carry no true support.
"""

from __future__ import annotations

import csv
import json
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from .base import Problem


@cache
def _manifest() -> tuple[dict[str, Any], ...]:
    text = resources.files(__package__).joinpath("data/manifest.json").read_text("utf-8")
    return tuple(json.loads(text))


def list_bundled() -> list[dict[str, Any]]:
    """Name, title, source, task, target, shape and the papers that use each bundled set."""
    return [dict(entry) for entry in _manifest()]


def bundled_path(name: str):
    """Path-like resource of the CSV file of bundled set ``name``."""
    return resources.files(__package__).joinpath("data", _entry(name)["file"])


def load_bundled(name: str) -> Problem:
    """The bundled data set ``name`` as a :class:`Problem` (features and target as in its CSV)."""
    entry = _entry(name)
    with bundled_path(name).open("r", encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        rows = list(reader)
    target = header.index(entry["target"])
    features = [h for i, h in enumerate(header) if i != target]
    X = np.array([[float(v) for i, v in enumerate(r) if i != target] for r in rows])
    raw_y = [r[target] for r in rows]
    y = np.array(raw_y, dtype=float) if entry["task"] == "regression" else np.array(raw_y)
    return Problem(
        X=X,
        y=y,
        true_coef=None,
        support=None,
        name=name,
        description=f"{entry['title']}. Source: {entry['source']}",
        task=entry["task"],
        feature_names=tuple(features),
        meta={"source": entry["source"], "target": entry["target"]},
    )


def _entry(name: str) -> dict[str, Any]:
    for entry in _manifest():
        if entry["name"] == name:
            return entry
    known = ", ".join(e["name"] for e in _manifest())
    raise ValueError(f"unknown bundled data set {name!r}; available: {known}")
