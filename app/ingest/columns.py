"""Per-column statistics of a data set: computed once when it is stored (into its ``.npz``
file, next to X and y, since they are arrays too) and turned into summaries on request."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from app.models import ColumnSummary, Dataset, Task

MOMENTS = ("mean", "std", "min", "max")
MOMENT_KEYS = tuple(f"col_{m}" for m in MOMENTS)
KEYS = (*MOMENT_KEYS, "col_missing")  # the npz members


def column_stats(X: Any, y: np.ndarray, task: str, missing: list[int]) -> dict[str, np.ndarray]:
    """Moments of every feature, then of the target (NaN for class labels); ``missing`` counts
    the cells that were missing or infinite in the source, per feature then target."""
    if sp.issparse(X):
        mean = np.asarray(X.mean(axis=0)).ravel()
        square = np.asarray(X.multiply(X).mean(axis=0)).ravel()
        std = np.sqrt(np.maximum(square - mean**2, 0.0))
        low, high = X.min(axis=0).toarray().ravel(), X.max(axis=0).toarray().ravel()
    else:
        mean, low, high = X.mean(axis=0), X.min(axis=0), X.max(axis=0)
        std = _std(X, mean)
    numeric = task == Task.regression
    target = [f(y) if numeric else np.nan for f in (np.mean, np.std, np.min, np.max)]
    stats = {
        key: np.append(column, value)
        for key, column, value in zip(MOMENT_KEYS, (mean, std, low, high), target, strict=True)
    }
    stats["col_missing"] = np.asarray(missing, dtype=np.int64)
    return stats


def _std(X: np.ndarray, mean: np.ndarray, rows: int = 4096) -> np.ndarray:
    """Column standard deviations a block of rows at a time (``X.std`` would make a centred
    copy of all of X)."""
    total = np.zeros(X.shape[1])
    for start in range(0, X.shape[0], rows):
        block = X[start : start + rows] - mean
        total += np.einsum("ij,ij->j", block, block)
    return np.sqrt(total / max(X.shape[0], 1))


def summaries(dataset: Dataset, stats: dict[str, np.ndarray]) -> list[ColumnSummary]:
    """Each feature, then the target; with what the upload did to it (imputed cells, the
    text column of a one-hot indicator, an ID-like column kept)."""
    meta = dataset.meta or {}
    imputed = meta.get("imputed", {})
    id_like = meta.get("id_like", {})
    sources = {
        f"{column}={value}": column
        for column, values in meta.get("one_hot", {}).items()
        for value in values
    }
    features = [
        _summary(name, "feature", "numeric", stats, j).model_copy(
            update={
                "imputed": imputed.get(name, 0),
                "id_like": name in id_like,
                "source": sources.get(name),
            }
        )
        for j, name in enumerate(dataset.feature_names)
    ]
    target_type: Literal["numeric", "categorical"] = (
        "numeric" if dataset.task == Task.regression else "categorical"
    )
    target = _summary(dataset.target, "target", target_type, stats, dataset.n_features)
    return [*features, target]


def _summary(
    name: str,
    role: Literal["feature", "target"],
    kind: Literal["numeric", "categorical"],
    stats: dict[str, np.ndarray],
    j: int,
) -> ColumnSummary:
    moments: dict[str, Any] = {m: _finite(stats[f"col_{m}"][j]) for m in MOMENTS}  # floats or None
    return ColumnSummary(
        name=name, role=role, type=kind, missing=int(stats["col_missing"][j]), **moments
    )


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None
