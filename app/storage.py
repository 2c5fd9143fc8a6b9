"""Array files under the data directory.

Names are generated here (never taken from a client), files appear atomically (written to a
hidden temporary name, then renamed), and loading refuses pickles.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import numpy as np
import scipy.sparse as sp

DATASETS_DIR = "datasets"
# New files and folders readable by their owner only: data sets, the SQLite database and its
# WAL, the session secret.
OWNER_ONLY_UMASK = 0o077


def owner_only_files() -> None:
    """Set once at the start of the web process and of workers (spawned ones inherit it)."""
    os.umask(OWNER_ONLY_UMASK)


def save_arrays(data_dir: Path, arrays: dict[str, np.ndarray]) -> str:
    """Write ``arrays`` to a new ``.npz`` file; return its name relative to ``data_dir``."""
    folder = data_dir / DATASETS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    stem = uuid.uuid4().hex
    final = folder / f"{stem}.npz"
    partial = folder / f".{stem}.partial"
    try:
        with partial.open("wb") as fh:
            np.savez(fh, **arrays)
        os.replace(partial, final)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return f"{DATASETS_DIR}/{final.name}"


def load_arrays(
    data_dir: Path, name: str, keys: tuple[str, ...] | None = None
) -> dict[str, np.ndarray]:
    """All arrays of the file, or only ``keys`` (npz members are read one by one)."""
    with np.load(_resolve(data_dir, name), allow_pickle=False) as npz:
        return {key: npz[key] for key in (npz.files if keys is None else keys)}


def delete_file(data_dir: Path, name: str) -> None:
    _resolve(data_dir, name).unlink(missing_ok=True)


def _resolve(data_dir: Path, name: str) -> Path:
    path = (data_dir / name).resolve()
    if not path.is_relative_to(data_dir.resolve()):
        raise ValueError(f"file name {name!r} points outside the data directory")
    return path


def pack_matrix(X: np.ndarray | sp.spmatrix) -> dict[str, np.ndarray]:
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


def unpack_matrix(arrays: dict[str, np.ndarray]) -> np.ndarray | sp.csr_matrix:
    if "X" in arrays:
        return arrays["X"]
    shape = tuple(int(n) for n in arrays["X_shape"])
    return sp.csr_matrix((arrays["X_data"], arrays["X_indices"], arrays["X_indptr"]), shape=shape)
