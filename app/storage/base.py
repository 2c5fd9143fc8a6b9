"""The array-store interface, its one error, and the ``.npz`` encoding every store shares.

A store keeps the arrays of a data set under a key it chooses itself (never a client's name);
the data set row holds the key. Arrays travel as one ``.npz`` archive (no pickles), so a
store only ever moves bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import IO, Protocol

import numpy as np
import scipy.sparse as sp
from sqlmodel import Session

from app.errors import Gone

Arrays = dict[str, np.ndarray]


class ArraysMissing(Gone):
    """The row names arrays the store no longer has (a deleted file, a lost volume, blob rows
    gone). The message names no server path: it reaches clients and run errors."""

    def __init__(self) -> None:
        super().__init__(
            "the stored arrays of this data set are missing (deleted or lost from storage); "
            "delete the data set and upload or generate it again"
        )


class ArrayStore(Protocol):
    kind: str  # the STORAGE setting that chose it

    def save(self, arrays: Arrays, session: Session) -> str:
        """Store ``arrays``; return their new key. A store that lives in the database writes
        through ``session`` so that the arrays commit (or roll back) with the data set row;
        the caller calls ``discard`` when that transaction fails."""

    def discard(self, key: str) -> None:
        """Undo a ``save`` whose transaction was rolled back (nothing to do in the database)."""

    def load(self, key: str, keys: Iterable[str] | None = None) -> Arrays:
        """All arrays under ``key``, or only ``keys``; ArraysMissing when they are gone."""

    def delete(self, key: str) -> None:
        """Remove the arrays (after their row is deleted); a missing key is no error."""

    def missing(self, keys: Iterable[str]) -> set[str]:
        """The ones of ``keys`` the store does not hold (for /healthz)."""

    def sweep(self, in_use: Callable[[], set[str]], grace_seconds: float) -> int:
        """Remove arrays no data set names, left by a crash between storing arrays and their
        row or between deleting a row and its arrays; return how many. ``in_use`` is called
        after the candidates are listed, so arrays whose row commits meanwhile are kept;
        files younger than ``grace_seconds`` may belong to an upload still in progress."""


def write_npz(arrays: Arrays, fh: IO[bytes]) -> None:
    # numpy's stub: **kwds would also fill savez's allow_pickle: bool, which no key of ours names.
    np.savez(fh, **arrays)  # type: ignore[arg-type]


def read_npz(fh: IO[bytes], keys: Iterable[str] | None) -> Arrays:
    """All members, or only ``keys`` (members are read one by one, on demand)."""
    with np.load(fh, allow_pickle=False) as npz:
        return {key: npz[key] for key in (npz.files if keys is None else keys)}


def pack_matrix(X: np.ndarray | sp.spmatrix) -> Arrays:
    """Arrays that store X: dense as is, sparse as its CSR parts (npz holds no objects)."""
    if not sp.issparse(X):
        return {"X": np.asarray(X, dtype=np.float64)}
    csr = sp.csr_matrix(X, dtype=np.float64)
    return {
        "X_data": csr.data,
        "X_indices": csr.indices,
        "X_indptr": csr.indptr,
        "X_shape": np.array(csr.shape),
    }


def unpack_matrix(arrays: Arrays) -> np.ndarray | sp.csr_matrix:
    if "X" in arrays:
        return arrays["X"]
    shape = tuple(int(n) for n in arrays["X_shape"])
    return sp.csr_matrix((arrays["X_data"], arrays["X_indices"], arrays["X_indptr"]), shape=shape)
