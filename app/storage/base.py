"""The array-store interface, its one error, and the ``.npz`` encoding every store shares.

A store keeps the arrays of a data set under a key it chooses itself (never a client's name);
the data set row holds the key. Arrays travel as one ``.npz`` archive (no pickles), so a
store only ever moves bytes.

The archive is uncompressed and every member is written in row order (C order, a block of
rows at a time: no copy of a Fortran-ordered X), so rows ``start:stop`` of a member are one
byte range at a known offset: ``read_rows`` reads that range and the archive's directory,
nothing else (a data set page shows 15 rows of X without reading X). Archives written before,
with Fortran-ordered members, are read whole instead.
"""

from __future__ import annotations

import struct
import zipfile
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

    def rows(self, key: str, name: str, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` of the array ``name`` (elements, for a 1-D one), reading only
        them; ArraysMissing when the arrays are gone, KeyError when there is no ``name``."""

    def delete(self, key: str) -> None:
        """Remove the arrays (after their row is deleted); a missing key is no error."""

    def missing(self, keys: Iterable[str]) -> set[str]:
        """The ones of ``keys`` the store does not hold (for /healthz)."""

    def sweep(self, in_use: Callable[[], set[str]], grace_seconds: float) -> int:
        """Remove arrays no data set names, left by a crash between storing arrays and their
        row or between deleting a row and its arrays; return how many. ``in_use`` is called
        after the candidates are listed, so arrays whose row commits meanwhile are kept;
        files younger than ``grace_seconds`` may belong to an upload still in progress."""


BLOCK_BYTES = 8 << 20  # bytes of rows converted to C order at a time
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a ZIP member's local file header


def write_npz(arrays: Arrays, fh: IO[bytes]) -> None:
    """``np.savez``, but every member in C order (see the module's docstring)."""
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            array = np.asanyarray(value)
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                if array.ndim < 2 or array.flags.c_contiguous:
                    np.lib.format.write_array(member, array, allow_pickle=False)
                    continue
                header = np.lib.format.header_data_from_array_1_0(array)
                np.lib.format.write_array_header_2_0(member, {**header, "fortran_order": False})
                row_bytes = array.itemsize * int(np.prod(array.shape[1:]))
                step = max(1, BLOCK_BYTES // max(row_bytes, 1))
                for start in range(0, array.shape[0], step):
                    member.write(np.ascontiguousarray(array[start : start + step]).data)


def read_rows(fh: IO[bytes], name: str, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of member ``name`` of the archive in ``fh`` (a seekable file),
    reading the archive's directory, the member's headers and those rows' bytes only."""
    with zipfile.ZipFile(fh) as archive:
        info = archive.getinfo(f"{name}.npy")  # KeyError: no such array
        if info.compress_type != zipfile.ZIP_STORED:
            return _sliced(archive, info, start, stop)
        fh.seek(info.header_offset)
        fields = _LOCAL_HEADER.unpack(fh.read(_LOCAL_HEADER.size))
        fh.seek(info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1])
        version = np.lib.format.read_magic(fh)
        read_header = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )
        shape, fortran, dtype = read_header(fh)
        if fortran or not shape or dtype.hasobject:  # an archive from before: read it whole
            return _sliced(archive, info, start, stop)
        start, stop, _ = slice(start, stop).indices(shape[0])
        stop = max(start, stop)
        row_bytes = dtype.itemsize * int(np.prod(shape[1:]))
        fh.seek(start * row_bytes, 1)
        data = fh.read((stop - start) * row_bytes)
        if len(data) != (stop - start) * row_bytes:
            raise EOFError("the archive ends inside an array")
        return np.frombuffer(data, dtype=dtype).reshape((stop - start, *shape[1:])).copy()


def _sliced(archive: zipfile.ZipFile, info: zipfile.ZipInfo, start: int, stop: int) -> np.ndarray:
    with archive.open(info) as member:
        return np.lib.format.read_array(member, allow_pickle=False)[start:stop]


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


def matrix_rows(store: ArrayStore, key: str, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of the X stored under ``key``, dense, read without the others."""
    try:
        return store.rows(key, "X", start, stop)
    except KeyError:  # sparse: the rows' part of the CSR arrays
        pass
    n_columns = int(store.rows(key, "X_shape", 1, 2)[0])
    indptr = store.rows(key, "X_indptr", start, stop + 1)
    if len(indptr) == 0:
        return np.zeros((0, n_columns))
    first, last = int(indptr[0]), int(indptr[-1])
    rows = sp.csr_matrix(
        (
            store.rows(key, "X_data", first, last),
            store.rows(key, "X_indices", first, last),
            indptr - first,
        ),
        shape=(len(indptr) - 1, n_columns),
    )
    return rows.toarray()


def unpack_matrix(arrays: Arrays) -> np.ndarray | sp.csr_matrix:
    if "X" in arrays:
        return arrays["X"]
    shape = tuple(int(n) for n in arrays["X_shape"])
    return sp.csr_matrix((arrays["X_data"], arrays["X_indices"], arrays["X_indptr"]), shape=shape)
