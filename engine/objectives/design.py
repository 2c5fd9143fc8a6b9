"""The design matrix, dense or sparse, with optional implicit column centring and scaling.

Least squares with an unpenalised intercept is least squares on centred columns and a centred
target. Centring a sparse matrix would densify it, and copying a large dense one costs more
than a forward step, so the centring is applied inside the products instead:
``Xc @ v = X @ v - (mean @ v)`` and ``Xc.T @ r = X.T @ r - mean * sum(r)``.

The column scaling of ``engine.select(standardize=True)`` can be folded in the same way
(``standardize=True``): column j of the design is ``X[:, j] / scale[j]``, applied to the
products (``X.T @ r`` times 1/scale, ``X @ (v / scale)``) and to the columns taken out, so X
is never copied; the scales come from the column sums and squared norms the design computes
anyway (one pass over X for both instead of four).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .. import threads
from ..scaling import scale_columns, scale_from_sums


class Design:
    """Read-only view of X used by the objectives.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n_samples, n_features)
    center : bool
        Behave as if every column had its mean subtracted.
    standardize : bool
        Behave as if every column were divided by its scale (``engine.scaling.column_scale``
        with ``centered=scale_centered``: the standard deviation, else the root mean square);
        ``scale`` holds the scales (None without).
    scale_centered : bool or None
        Whether the scale is the standard deviation; default ``center``. A loss with an
        unpenalised intercept but no implicit centring (logistic) scales by the standard
        deviation without centring.
    """

    def __init__(
        self,
        X,
        *,
        center: bool,
        standardize: bool = False,
        scale_centered: bool | None = None,
    ) -> None:
        if sp.issparse(X):
            # CSC: column slices are cheap and X.T @ r runs as a CSR product.
            X = sp.csc_matrix(X, dtype=np.float64)
            X.sum_duplicates()
            self.sparse = True
        else:
            X = np.asarray(X, dtype=np.float64)
            self.sparse = False
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
        self.X = X
        # Built once: scipy rebuilds the transposed view on every X.T, which costs a noticeable
        # fraction of a sparse product.
        self.XT = X.T
        self.n_samples, self.n_features = X.shape
        self.center = center
        n = self.n_samples
        if self.sparse:
            raw_sq = np.asarray(X.multiply(X).sum(axis=0)).ravel()
            col_sum = np.asarray(X.sum(axis=0)).ravel()
        else:
            raw_sq = np.einsum("ij,ij->j", X, X)
            col_sum = X.sum(axis=0)
        self.scale: np.ndarray | None = None
        self._inv: np.ndarray | None = None  # 1 / scale
        if standardize:
            centered = center if scale_centered is None else scale_centered
            self.scale = scale_from_sums(raw_sq / n, col_sum / n, centered=centered)
            self._inv = 1.0 / self.scale
            raw_sq = raw_sq * self._inv**2
            col_sum = col_sum * self._inv
        self.mean = col_sum / n if center else np.zeros(self.n_features)
        # ||x_j - mean_j||^2 = ||x_j||^2 - n mean_j^2; clip the rounding of constant columns.
        sq = raw_sq - n * self.mean**2 if center else raw_sq
        self.sq_norms = np.maximum(sq, 0.0)
        self.sq_norms[self.sq_norms <= 1e-12 * np.maximum(raw_sq, 1e-300)] = 0.0

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """Xc.T @ r for every feature, shape (n_features,).

        The one product of a path large enough to gain from BLAS threads (engine.threads).
        """
        out = self.raw_rmatvec(r)
        if self.center:
            out = out - self.mean * r.sum()
        return out

    def raw_rmatvec(self, r: np.ndarray) -> np.ndarray:
        """X.T @ r without the centring (with the scaling), shape (n_features,)."""
        if self.sparse:
            out = self.XT @ r
        else:
            with threads.wide(self.X.size):
                out = self.XT @ r
        out = np.asarray(out).ravel()
        if self._inv is not None:
            out *= self._inv
        return out

    def columns(self, idx) -> np.ndarray:
        """Dense (centred) columns ``idx``, shape (n_samples, len(idx))."""
        idx = np.asarray(idx, dtype=np.intp)
        cols = self.X[:, idx]
        cols = cols.toarray() if self.sparse else np.array(cols)
        if self._inv is not None:
            cols *= self._inv[idx]
        if self.center:
            cols -= self.mean[idx]
        return cols

    def column(self, j: int) -> np.ndarray:
        """Dense (centred) column j."""
        if not self.sparse:
            col = self.X[:, j].copy()
            if self._inv is not None:
                col *= self._inv[j]
        else:
            col = np.zeros(self.n_samples)
            rows, vals = self.stored_entries(j)
            col[rows] = vals
        if self.center:
            col -= self.mean[j]
        return col

    def stored_entries(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """(row indices, values) of the stored entries of sparse column j (uncentred)."""
        lo, hi = self.X.indptr[j], self.X.indptr[j + 1]
        vals = self.X.data[lo:hi]
        if self._inv is not None:
            vals = vals * self._inv[j]
        return self.X.indices[lo:hi], vals

    def matvec(self, idx, v: np.ndarray) -> np.ndarray:
        """Xc[:, idx] @ v without forming more than the needed columns."""
        idx = np.asarray(idx, dtype=np.intp)
        if len(idx) == 0:
            return np.zeros(self.n_samples)
        if self._inv is not None:
            v = v * self._inv[idx]
        out = np.asarray(self.X[:, idx] @ v).ravel()
        if self.center:
            out = out - self.mean[idx] @ v
        return out

    def dense_matvec(self, w: np.ndarray) -> np.ndarray:
        """X @ w (uncentred) for a full coefficient vector, with the wide BLAS threads when X
        is large and dense (the iterative methods' other large product)."""
        if self._inv is not None:
            w = w * self._inv
        if self.sparse:
            return np.asarray(self.X @ w).ravel()
        with threads.wide(self.X.size):
            return self.X @ w

    def scaled_X(self):
        """X with the scaling applied (uncentred): X itself, or a scaled copy (for solvers
        that need the matrix, such as scikit-learn's Lasso)."""
        if self.scale is None:
            return self.X
        return scale_columns(self.X, self.scale)

    def centred_fortran(self) -> np.ndarray:
        """A fresh Fortran-ordered copy of the dense (centred, scaled) design."""
        if self._inv is None:
            return np.subtract(self.X, self.mean, order="F")
        out = np.multiply(self.X, self._inv, order="F")
        out -= self.mean
        return out

    def gram(self) -> np.ndarray:
        """The dense d x d Gram matrix of the (centred, scaled) sparse design."""
        gram = (self.XT @ self.X).toarray()
        if self._inv is not None:
            gram *= np.outer(self._inv, self._inv)
        return gram - self.n_samples * np.outer(self.mean, self.mean)


class SupportBlock:
    """The (centred) columns of a support, kept in the form that makes products cheap.

    Dense X: the columns are copied into a contiguous row-major store that grows by doubling,
    so products are single BLAS calls. Sparse X: the stored entries of the support's columns are
    kept as flat arrays (row, value, owner position), so products cost O(nnz of the support)
    with no per-call matrix construction.
    """

    def __init__(self, design: Design) -> None:
        self.design = design
        self.features: list[int] = []
        if design.sparse:
            self._dense = None
            self._rows = np.empty(0, dtype=np.intp)
            self._vals = np.empty(0)
            self._owner = np.empty(0, dtype=np.intp)
        else:
            cap = min(16, design.n_features)
            self._dense = np.empty((cap, design.n_samples))

    def __len__(self) -> int:
        return len(self.features)

    def append(self, j: int, column: np.ndarray) -> None:
        """Add feature j whose centred column is ``column``."""
        k = len(self.features)
        if self._dense is not None:
            if k == self._dense.shape[0]:
                grown = np.empty((min(2 * k, self.design.n_features), self.design.n_samples))
                grown[:k] = self._dense
                self._dense = grown
            self._dense[k] = column
        else:
            rows, vals = self.design.stored_entries(j)
            self._rows = np.concatenate([self._rows, rows])
            self._vals = np.concatenate([self._vals, vals])
            self._owner = np.concatenate([self._owner, np.full(len(rows), k)])
        self.features.append(j)

    def delete(self, p: int) -> None:
        """Remove the feature at position p."""
        k = len(self.features)
        if self._dense is not None:
            self._dense[p : k - 1] = self._dense[p + 1 : k]
        else:
            keep = self._owner != p
            self._rows, self._vals = self._rows[keep], self._vals[keep]
            owner = self._owner[keep]
            self._owner = owner - (owner > p)
        del self.features[p]

    def matvec(self, w: np.ndarray) -> np.ndarray:
        """Xc_S @ w."""
        k = len(self.features)
        if k == 0:
            return np.zeros(self.design.n_samples)
        if self._dense is not None:
            return w @ self._dense[:k]
        out = np.bincount(
            self._rows, weights=self._vals * w[self._owner], minlength=self.design.n_samples
        )
        if self.design.center:
            out -= self.design.mean[self.features] @ w
        return out

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """Xc_S.T @ r."""
        k = len(self.features)
        if k == 0:
            return np.zeros(0)
        if self._dense is not None:
            return self._dense[:k] @ r
        out = np.bincount(self._owner, weights=self._vals * r[self._rows], minlength=k)
        if self.design.center:
            out -= self.design.mean[self.features] * r.sum()
        return out

    def copy(self) -> SupportBlock:
        new = SupportBlock.__new__(SupportBlock)
        new.__dict__.update(self.__dict__)
        new.features = list(self.features)
        if self._dense is not None:
            new._dense = self._dense.copy()
        return new  # the sparse arrays are replaced, never modified in place
