"""The :class:`Problem` every generator returns, the :class:`DatasetSpec` describing a generator,
and the small helpers the generators share."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ..registry import Param, ParamsOwner, validate_params

TASKS = ("regression", "classification", "sequence")

RandomState = int | np.random.Generator | None


@dataclass(frozen=True, kw_only=True)
class Problem:
    """A generated data set together with the ground truth it was generated from.

    Dense arrays are made read-only so that a problem shared between runs cannot be altered by
    one of them (the dataclass being frozen only stops attributes from being rebound).

    Attributes
    ----------
    X : ndarray or scipy.sparse.csr_matrix, shape (n_samples, n_features)
    y : ndarray, shape (n_samples,)
        Real responses (regression) or class labels (classification).
    true_coef : ndarray, shape (n_features,), or None
        The coefficient vector the data were generated from; zero off ``support``. None for
        real data, whose truth is unknown.
    support : ndarray of int, sorted, or None
        Indices of the nonzero entries of ``true_coef`` (None when unknown).
    name : str
        Registry name of the generator.
    description : str
        One paragraph: what was generated and from which paper.
    task : {"regression", "classification", "sequence"}
    groups : ndarray of int, shape (n_features,), optional
        Group label of every feature, when the problem has a group structure.
    feature_names : tuple of str
    model_features : int, optional
        Number of model features when it is not X's number of columns (task "sequence": X
        holds the observed states, the features are the CRF's indicators).
    meta : dict
        Generator parameters, the seed when it was an integer, and generator-specific extras.
    """

    X: np.ndarray | sp.csr_matrix
    y: np.ndarray
    true_coef: np.ndarray | None
    support: np.ndarray | None
    name: str
    description: str
    task: str
    groups: np.ndarray | None = None
    feature_names: tuple[str, ...] = ()
    model_features: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        n, d = self.X.shape[0], self.n_features
        if self.y.shape != (n,):
            raise ValueError(f"y has shape {self.y.shape}, expected ({n},)")
        if self.true_coef is not None and self.true_coef.shape != (d,):
            raise ValueError(f"true_coef has shape {self.true_coef.shape}, expected ({d},)")
        if self.groups is not None and self.groups.shape != (d,):
            raise ValueError(f"groups has shape {self.groups.shape}, expected ({d},)")
        if self.feature_names and len(self.feature_names) != d:
            raise ValueError(f"{len(self.feature_names)} feature names for {d} features")
        for arr in (self.X, self.y, self.true_coef, self.support, self.groups):
            if isinstance(arr, np.ndarray):
                arr.flags.writeable = False

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Features of the model: X's columns, or ``model_features`` when they differ (the
        CRF's indicators of sensor, state and label)."""
        return int(self.X.shape[1] if self.model_features is None else self.model_features)

    @property
    def k_true(self) -> int | None:
        """Size of the true support (None when unknown)."""
        return None if self.support is None else int(self.support.size)


@dataclass(frozen=True)
class DatasetSpec(ParamsOwner):
    """A registered generator: what the app shows for it and how its parameters are checked."""

    name: str
    title: str
    help: str
    reference: str
    func: Callable[..., Problem]
    params: tuple[Param, ...]
    task: str
    kind: ClassVar[str] = "dataset"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "help": self.help,
            "reference": self.reference,
            "task": self.task,
            "params": [p.to_dict() for p in self.params],
            "schema": self.json_schema(),
        }


# --------------------------------------------------------------------------- helpers


def make_rng(random_state: RandomState) -> np.random.Generator:
    """A Generator from a seed, or the Generator itself (so callers can chain draws)."""
    if random_state is None or isinstance(random_state, np.random.Generator):
        return np.random.default_rng(random_state)
    if isinstance(random_state, bool) or not isinstance(random_state, int | np.integer):
        raise ValueError(
            f"random_state must be a non-negative integer, a numpy Generator or None, "
            f"got {random_state!r}"
        )
    if random_state < 0:
        raise ValueError(f"random_state must be a non-negative integer, got {random_state}")
    return np.random.default_rng(int(random_state))


def check_params(owner: str, specs: tuple[Param, ...], **given: Any) -> dict[str, Any]:
    """Range-check a direct call the same way :func:`generate` does."""
    return validate_params(f"dataset {owner!r}", specs, given)


def require(ok: bool, name: str, allowed: str, value: Any) -> None:
    """Raise the registry's style of error for a constraint linking several parameters."""
    if not ok:
        raise ValueError(f"parameter {name!r} must be {allowed}, got {value!r}")


def seed_meta(random_state: RandomState, params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters, plus the seed when it alone reproduces the problem."""
    seed = random_state if isinstance(random_state, int | np.integer) else None
    return {"params": dict(params), "random_state": None if seed is None else int(seed)}


def normalise_columns(X: np.ndarray, sq_norm: float) -> np.ndarray:
    """Scale every column of X to squared norm ``sq_norm`` (in place, also returned)."""
    X *= np.sqrt(sq_norm / np.einsum("ij,ij->j", X, X))
    return X


def support_of(coef: np.ndarray) -> np.ndarray:
    return np.flatnonzero(coef).astype(np.intp)


def names(prefix: str, d: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{j}" for j in range(d))
