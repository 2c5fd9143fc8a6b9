"""Best-subset splicing (abess) as a baseline: the state of the art run on the user's data.

Zhu, Wen, Zhang, Wang & Wang (2020), "A polynomial algorithm for best-subset selection
problem" (PNAS), implemented by the ``abess`` package: from an initial support, splice, i.e.
exchange up to ``exchange_num`` selected features for unselected ones by their sacrifices
(backward and forward), while that lowers the loss. It returns a support of size k (``abess``)
or of k features in whole groups (``abess-group``).

abess fits its own model (least squares, or unpenalised logistic regression) on columns it
normalises itself; as for the Lasso-Pipeline, the support it returns is refitted here with the
run's own objective (logistic with its ridge ``lam``), so its objective is comparable with every
other algorithm's. The trace is one ``add`` per selected feature (largest abess coefficient
first; ``score`` = |abess coefficient|, ``gain`` = the refit's objective decrease), then ``stop``.

abess is imported lazily (``import engine`` does not load it). It is a dependency of the project
(pyproject.toml); where it cannot be installed, ``engine.check_config`` refuses the algorithm
with a message saying so.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..objectives import CollinearFeature, Objective
from ..registry import Param, Requirements, Traits, register_algorithm
from ..trace import Recorder
from .common import Solution, emit_stop

_REFERENCE = (
    "Zhu, Wen, Zhang, Wang & Wang 2020, PNAS (adaptive best-subset selection, splicing); "
    "the abess package"
)


def abess_available() -> bool:
    return importlib.util.find_spec("abess") is not None


def _needs_abess(k: int | None, params: Mapping[str, Any]) -> None:
    if not abess_available():
        raise ValueError(
            "this algorithm runs the abess package, which is not installed here "
            "(pip install abess; wheels exist for CPython on Linux, macOS and Windows x86_64)"
        )


SPLICING_PARAMS = (
    Param(
        "exchange_num",
        "int",
        5,
        "Most features exchanged in one splicing step (abess's exchange_num).",
        minimum=1,
        maximum=1000,
    ),
    Param(
        "max_iter",
        "int",
        20,
        "Most splicing iterations (abess's max_iter).",
        minimum=1,
        maximum=10_000,
    ),
)


def _data(objective: Objective) -> tuple[np.ndarray, np.ndarray, bool]:
    X = objective.design.scaled_X()  # the columns as selected on (standardised or not)
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    y = np.asarray(objective.y, dtype=float)
    logistic = "quadratic" not in type(objective).capabilities
    return np.ascontiguousarray(X), y, logistic


def _abess_fit(
    objective: Objective,
    size: int,
    *,
    exchange_num: int,
    max_iter: int,
    group: np.ndarray | None = None,
    columns: np.ndarray | None = None,
) -> np.ndarray:
    """abess's coefficients for ``size`` features (or groups), shape (n_features,)."""
    import abess  # lazily: an optional heavy import

    X, y, logistic = _data(objective)
    if columns is not None:
        X = X[:, columns]
    cls = abess.LogisticRegression if logistic else abess.LinearRegression
    model = cls(
        support_size=size,
        fit_intercept=objective.fit_intercept,
        exchange_num=exchange_num,
        max_iter=max_iter,
        group=group,
        thread=1,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    coef = np.zeros(objective.n_features)
    if columns is not None:
        coef[columns] = np.ravel(model.coef_)
    else:
        coef[:] = np.ravel(model.coef_)
    return coef


def _refit_trace(objective: Objective, rec: Recorder, coef: np.ndarray, reason: str) -> Solution:
    support = np.flatnonzero(coef)
    order = support[np.argsort(-np.abs(coef[support]), kind="stable")]
    state = objective.start()
    for j in order:
        try:
            gain = state.add(int(j))
        except CollinearFeature:
            continue
        rec.added(
            int(j),
            objective=state.value,
            support_size=len(state.support),
            gain=gain,
            score=float(abs(coef[j])),
            reason="in the support abess returned",
        )
    emit_stop(rec, state, reason)
    return Solution.of(state, reason)


@register_algorithm(
    name="abess",
    title="abess (best-subset splicing)",
    summary="The state of the art for best-subset selection: abess's splicing exchanges features "
    "in and out of a size-k support while that lowers the loss; its support is refitted with "
    "this objective.",
    reference=_REFERENCE,
    params=SPLICING_PARAMS,
    k="required",
    family="splicing",
    requires=Requirements(capabilities=frozenset({"splicing"}), check=_needs_abess),
    traits=Traits(path="final"),
    size_k_answer=True,
)
def abess_splicing(
    objective: Objective,
    rec: Recorder,
    *,
    k: int,
    rng: np.random.Generator,
    exchange_num: int,
    max_iter: int,
) -> Solution:
    """abess's best size-k support, refitted with ``objective``.

    Parameters
    ----------
    objective : Objective
        Least squares or logistic (the losses abess splices).
    rec : Recorder
        One ``add`` per feature of abess's support, then ``stop``.
    k : int
        Support size.
    rng : numpy.random.Generator
        Unused (abess is deterministic).
    exchange_num, max_iter : int
        abess's splicing parameters.

    Returns
    -------
    Solution
        The refit on abess's support.
    """
    coef = _abess_fit(objective, k, exchange_num=exchange_num, max_iter=max_iter)
    return _refit_trace(objective, rec, coef, f"abess splicing with support size k = {k}")


@register_algorithm(
    name="abess-group",
    title="abess, group splicing",
    summary="abess's group best-subset splicing: whole groups exchanged in and out; the most "
    "groups whose features number at most k, refitted with this objective.",
    reference=_REFERENCE,
    params=SPLICING_PARAMS,
    k="required",
    family="splicing",
    requires=Requirements(capabilities=frozenset({"splicing"}), groups=True, check=_needs_abess),
    traits=Traits(path="final"),
)
def abess_group(
    objective: Objective,
    rec: Recorder,
    *,
    k: int,
    rng: np.random.Generator,
    groups: np.ndarray,
    exchange_num: int,
    max_iter: int,
) -> Solution:
    """abess's group splicing: the largest number of groups whose features fit in k.

    abess counts its support in groups and needs each group's columns adjacent, so the columns
    are ordered by group for it; it is run for 1, 2, ... groups until the groups it picks hold
    more than k features, and the last fit that held at most k is refitted with ``objective``.
    """
    groups = np.asarray(groups)
    columns = np.argsort(groups, kind="stable")
    index = groups[columns]
    n_groups = int(index.max()) + 1 if index.size else 0
    best = np.zeros(objective.n_features)
    chosen = 0
    for size in range(1, n_groups + 1):
        coef = _abess_fit(
            objective,
            size,
            exchange_num=exchange_num,
            max_iter=max_iter,
            group=index,
            columns=columns,
        )
        if np.count_nonzero(coef) > k:
            break
        best, chosen = coef, size
    reason = f"abess group splicing: {chosen} group(s), at most k = {k} features"
    return _refit_trace(objective, rec, best, reason)
