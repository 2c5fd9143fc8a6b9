"""The design matrix, dense or sparse, with optional implicit column centring.

Least squares with an unpenalised intercept is least squares on centred columns and a centred
target. Centring a sparse matrix would densify it, and copying a large dense one costs more
than a forward step, so the centring is applied inside the products instead:
``Xc @ v = X @ v - (mean @ v)`` and ``Xc.T @ r = X.T @ r - mean * sum(r)``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class Design:
    """Read-only view of X used by the objectives.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n_samples, n_features)
    center : bool
        Behave as if every column had its mean subtracted.
    """

    def __init__(self, X, *, center: bool) -> None:
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
        self.n_samples, self.n_features = X.shape
        self.center = center
        n = self.n_samples
        if self.sparse:
            raw_sq = np.asarray(X.multiply(X).sum(axis=0)).ravel()
            col_sum = np.asarray(X.sum(axis=0)).ravel()
        else:
            raw_sq = np.einsum("ij,ij->j", X, X)
            col_sum = X.sum(axis=0)
        self.mean = col_sum / n if center else np.zeros(self.n_features)
        # ||x_j - mean_j||^2 = ||x_j||^2 - n mean_j^2; clip the rounding of constant columns.
        sq = raw_sq - n * self.mean**2 if center else raw_sq
        self.sq_norms = np.maximum(sq, 0.0)
        self.sq_norms[self.sq_norms <= 1e-12 * np.maximum(raw_sq, 1e-300)] = 0.0

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """Xc.T @ r for every feature, shape (n_features,)."""
        out = self.X.T @ r
        if self.center:
            out = out - self.mean * r.sum()
        return np.asarray(out).ravel()

    def columns(self, idx) -> np.ndarray:
        """Dense (centred) columns ``idx``, shape (n_samples, len(idx))."""
        idx = np.asarray(idx, dtype=np.intp)
        cols = self.X[:, idx]
        cols = cols.toarray() if self.sparse else np.array(cols)
        if self.center:
            cols -= self.mean[idx]
        return cols

    def column(self, j: int) -> np.ndarray:
        return self.columns([j])[:, 0]

    def matvec(self, idx, v: np.ndarray) -> np.ndarray:
        """Xc[:, idx] @ v without forming more than the needed columns."""
        idx = np.asarray(idx, dtype=np.intp)
        if len(idx) == 0:
            return np.zeros(self.n_samples)
        out = np.asarray(self.X[:, idx] @ v).ravel()
        if self.center:
            out = out - self.mean[idx] @ v
        return out

    def full_matvec(self, w: np.ndarray) -> np.ndarray:
        """Xc @ w for a full coefficient vector."""
        nz = np.flatnonzero(w)
        return self.matvec(nz, w[nz])
