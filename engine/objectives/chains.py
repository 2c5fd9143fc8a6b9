"""Sequence data for the linear-chain CRF: checking the input and encoding it as features.

Liu, Fujimaki & Ye (2014), Section 5 and Appendix D.2: every position t of a chain has D
discrete observed variables ("sensors") x_t1..x_tD and a label y_t. The selectable features
are the indicators

    f_(v, s, c)(y_t, x_t) = 1[x_tv = s] 1[y_t = c],

one per observed variable v, state s of v and label c (the paper's "activity-signal binary
features"). Feature (v, s, c) has index ``(state_offset[v] + s) * n_labels + c``, so the
features of one sensor are contiguous. Label-to-label transitions are not selectable: the CRF
always fits them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .chain_inference import ChainLayout


@dataclass(frozen=True, eq=False)
class Chains:
    """Encoded chains.

    Attributes
    ----------
    states : (n_positions, D) int, state codes of every observed variable (0..S_v - 1)
    labels : (n_positions,) int, label codes 0..C-1
    layout : ChainLayout
    state_values : per variable, the original values of its states (sorted)
    classes : the original label values (sorted)
    """

    states: np.ndarray
    labels: np.ndarray
    layout: ChainLayout
    state_values: tuple[np.ndarray, ...]
    classes: np.ndarray

    @property
    def n_positions(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_variables(self) -> int:
        return int(self.states.shape[1])

    @property
    def n_labels(self) -> int:
        return int(self.classes.shape[0])

    @property
    def n_states(self) -> np.ndarray:
        return np.array([len(v) for v in self.state_values], dtype=np.intp)

    @property
    def state_offset(self) -> np.ndarray:
        """First observation row of each variable (rows are (variable, state) pairs)."""
        return np.concatenate([[0], np.cumsum(self.n_states)[:-1]]).astype(np.intp)

    @property
    def n_rows(self) -> int:
        return int(self.n_states.sum())

    @property
    def n_features(self) -> int:
        return self.n_rows * self.n_labels

    @property
    def shape(self) -> tuple[int, int]:
        """(positions, selectable features): what ``engine.select`` checks k and groups against."""
        return (self.n_positions, self.n_features)

    def rows(self) -> np.ndarray:
        """(n_positions, D): the observation row (variable, observed state) at each position."""
        return self.states + self.state_offset[None, :]

    def indicator(self) -> sp.csr_matrix:
        """Phi, (n_positions, n_rows): 1 where position t observes (variable, state) of the row."""
        n, D = self.states.shape
        data = np.ones(n * D)
        indptr = np.arange(0, n * D + 1, D)
        return sp.csr_matrix((data, self.rows().ravel(), indptr), shape=(n, self.n_rows))

    def sensor_of_feature(self) -> np.ndarray:
        """The observed variable (sensor) of every feature, shape (n_features,)."""
        return np.repeat(np.arange(self.n_variables), self.n_states * self.n_labels)

    def feature_names(self, variable_names: Sequence[str] | None = None) -> list[str]:
        """``"x2=3 & y=1"`` for every feature, in index order."""
        names = variable_names or [f"x{v}" for v in range(self.n_variables)]
        return [
            f"{names[v]}={_show(s)} & y={_show(c)}"
            for v, values in enumerate(self.state_values)
            for s in values
            for c in self.classes
        ]


def _show(value: Any) -> str:
    return str(value.item() if isinstance(value, np.generic) else value)


def check_chains(X: Any, y: Any) -> tuple[Chains, np.ndarray]:
    """Validate sequence input and encode it.

    Parameters
    ----------
    X : array-like, shape (T, D), or a list of such arrays (one per chain)
        Discrete observations: integers, or any values taken as category names. A 1-D array
        is one chain with a single observed variable.
    y : array-like, shape (T,), or a list of such arrays
        The labels of every position.

    Returns
    -------
    (Chains, labels) : the encoded chains and their label codes.

    Raises
    ------
    ValueError
        When the labels are not sequences matching the observations, a chain is empty,
        chains disagree on the number of observed variables, there are fewer than two labels,
        or an observation is a non-integer number (the CRF needs discrete states).
    """
    xs, ys = _as_chain_lists(X, y)
    D = xs[0].shape[1]
    for i, (x, lab) in enumerate(zip(xs, ys, strict=True)):
        if x.shape[1] != D:
            raise ValueError(
                f"every chain needs the same {D} observed variables; chain {i} has {x.shape[1]}"
            )
        if x.shape[0] != lab.shape[0]:
            raise ValueError(
                f"chain {i} has {x.shape[0]} observation rows but {lab.shape[0]} labels"
            )
        if x.shape[0] == 0:
            raise ValueError(f"chain {i} is empty")
    obs = np.concatenate(xs, axis=0)
    lab = np.concatenate(ys)
    states, values = [], []
    for v in range(D):
        col = _discrete(obs[:, v], f"observed variable {v} (column {v} of X)")
        vals, codes = np.unique(col, return_inverse=True)
        values.append(vals)
        states.append(codes)
    classes, label_codes = np.unique(_discrete(lab, "y"), return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"a CRF needs at least two distinct labels; y has {len(classes)}")
    starts = np.concatenate([[0], np.cumsum([len(a) for a in ys])])
    chains = Chains(
        states=np.stack(states, axis=1).astype(np.intp),
        labels=label_codes.astype(np.intp),
        layout=ChainLayout(starts),
        state_values=tuple(values),
        classes=classes,
    )
    return chains, chains.labels


def _as_chain_lists(X: Any, y: Any) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """One chain (arrays) or many (lists of arrays), as lists of 2-D observations and 1-D labels."""
    if isinstance(X, Chains):
        raise ValueError("pass the raw observations and labels; they are encoded here")
    many = isinstance(y, list | tuple) and len(y) > 0 and not np.isscalar(y[0])
    if many:
        if not isinstance(X, list | tuple) or len(X) != len(y):
            raise ValueError(
                f"y is a list of {len(y)} label sequences, so X must be a list of as many "
                "observation arrays (one (T_i, D) array per chain)"
            )
        ys = [np.asarray(lab) for lab in y]
        xs = [np.asarray(x) for x in X]
    else:
        ys = [np.asarray(y)]
        xs = [np.asarray(X)]
    for i, lab in enumerate(ys):
        if lab.ndim != 1:
            raise ValueError(
                f"the labels of a CRF must be sequences: one 1-D array of labels per chain; "
                f"chain {i}'s labels have shape {lab.shape}"
            )
    out = []
    for i, x in enumerate(xs):
        if x.ndim == 1:
            x = x[:, None]
        if x.ndim != 2:
            raise ValueError(f"chain {i}'s observations must be a (T, D) array, got {x.shape}")
        out.append(x)
    return out, ys


def _discrete(values: np.ndarray, what: str) -> np.ndarray:
    """Numbers must be whole (states); anything else is taken as category names."""
    if values.dtype.kind in "fc":
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{what} contains NaN or infinite values")
        bad = values != np.round(values)
        if bad.any():
            raise ValueError(
                f"{what} must hold discrete states (integers or names); found "
                f"{values[np.argmax(bad)]!r}. The CRF has one indicator feature per state."
            )
        return values.astype(np.int64)
    if values.dtype.kind == "O":
        return values.astype(str)
    return values
