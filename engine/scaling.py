"""Column scaling for ``engine.select(..., standardize=True)``.

Greedy scores such as |gradient| and every l1 or ridge penalty depend on the units of the
columns: a column in grams outranks the same column in kilograms. Standardizing makes the
selection independent of units, as glmnet and abess do by default. Only the scale is changed:
with an unpenalised intercept, centring a column changes nothing the intercept cannot absorb,
so it is never applied (and a sparse X stays sparse). Without an intercept the scale is the
root mean square, so that a column's scale is what the model sees of it.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def column_scale(X: np.ndarray | sp.spmatrix, *, centered: bool) -> np.ndarray:
    """Each column's standard deviation (``centered``) or root mean square; 1 where that is 0
    (a constant column carries no information a scale could change)."""
    n = X.shape[0]
    if sp.issparse(X):
        # SciPy has no stubs (sp.spmatrix is Any), so issparse cannot narrow X's union.
        mean_sq = np.asarray(X.multiply(X).sum(axis=0)).ravel() / n  # type: ignore[union-attr]
        mean = np.asarray(X.sum(axis=0)).ravel() / n
    else:
        mean_sq = np.einsum("ij,ij->j", X, X) / n
        mean = X.sum(axis=0) / n
    return scale_from_sums(mean_sq, mean, centered=centered)


def scale_from_sums(mean_sq: np.ndarray, mean: np.ndarray, *, centered: bool) -> np.ndarray:
    """:func:`column_scale` from each column's mean square and mean."""
    var = mean_sq - mean**2 if centered else mean_sq
    # Rounding can leave a tiny positive variance on a constant column; treat it as constant.
    var[var <= 1e-24 * np.maximum(mean_sq, 1e-300)] = 0.0
    scale = np.sqrt(np.maximum(var, 0.0))
    scale[scale == 0.0] = 1.0
    return scale


def scale_columns(X: np.ndarray | sp.spmatrix, scale: np.ndarray) -> np.ndarray | sp.spmatrix:
    """X with column j divided by ``scale[j]`` (a new array; sparse stays sparse)."""
    if sp.issparse(X):
        return sp.csc_matrix(X @ sp.diags(1.0 / scale))
    return X / scale
