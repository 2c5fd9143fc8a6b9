"""A large sparse text-like design (the shape of RCV1) with a sparse least-squares response."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..registry import Param
from .base import Problem, RandomState, check_params, make_rng, names, require, seed_meta

_MAX_NNZ = 20_000_000  # ~ 250 MB of CSR; beyond this the generator is not the right tool
_ZIPF_OFFSET = 10.0  # popularity ~ 1 / (rank + 10): Zipf's law, head flattened so that the
# commonest term is not in every document
_LENGTH_SIGMA = 0.5  # log-normal spread of document lengths
_SUPPORT_POOL = 20  # true features come from the 20 k_true most frequent terms

SPARSE_PARAMS = (
    Param("n", "int", 20_000, "Number of documents (rows).", minimum=10, maximum=1_000_000),
    Param("d", "int", 50_000, "Number of terms (columns).", minimum=10, maximum=1_000_000),
    Param(
        "density",
        "float",
        0.001,
        "Fraction of nonzero entries (RCV1: about 0.0016).",
        minimum=0.0,
        maximum=0.05,
        exclusive_minimum=True,
    ),
    Param("k_true", "int", 100, "Number of true features.", minimum=1, maximum=100_000),
    Param(
        "snr",
        "float",
        5.0,
        "Signal-to-noise ratio Var(X w) / Var(noise).",
        minimum=0.0,
        exclusive_minimum=True,
    ),
)


def sparse_design(
    random_state: RandomState = None,
    *,
    n: int = 20_000,
    d: int = 50_000,
    density: float = 0.001,
    k_true: int = 100,
    snr: float = 5.0,
) -> Problem:
    """RCV1-like sparse tf-idf matrix (scipy CSR) with a ``k_true``-sparse least-squares target.

    Construction (vectorised; the default 20,000 x 50,000 at density 0.001, one million stored
    entries, takes well under two seconds):

    1. Document lengths (distinct terms per row) are log-normal with mean ``density * d``, at
       least 1.
    2. Terms are drawn with Zipf popularity ``p(rank) ~ 1 / (rank + 10)`` (sampled by inverting
       its continuous CDF, which is closed-form for this exponent), ranks assigned to
       columns by a random permutation. Repeated draws of a term in a row add up to its term
       frequency ``tf``. Draws are topped up until the matrix holds ``round(density * n * d)``
       distinct entries (to 0.5%), since repeats make the first draw fall short.
    3. Entries are tf-idf, ``(1 + log tf) * (1 + log((1 + n) / (1 + df)))`` (the smoothed idf
       keeps every weight positive), and every row is scaled to unit Euclidean norm, as in
       the RCV1 distribution.
    4. The true features are ``k_true`` columns drawn among the ``20 k_true`` most frequent
       ones, so that each of them occurs in enough rows to be learnable (a random column of a
       0.1%-dense matrix appears in about 20 of 20,000 rows); coefficients ``+-U[1, 2]``.
    5. ``y = X w + e`` with ``Var(e) = Var(X w) / snr`` (the sample variance of the signal).

    Parameters
    ----------
    random_state : int, numpy Generator or None
    n, d : int
    density : float
        In (0, 0.05]; ``density * n * d`` must not exceed 20 million.
    k_true : int
        At most ``d``.
    snr : float

    Returns
    -------
    Problem
        ``X`` is a ``scipy.sparse.csr_matrix``; ``meta["noise_std"]`` is the noise level.
    """
    p = check_params(
        "sparse_design", SPARSE_PARAMS, n=n, d=d, density=density, k_true=k_true, snr=snr
    )
    require(k_true <= d, "k_true", f"an integer between 1 and d = {d}", k_true)
    target = round(density * n * d)
    require(
        target <= _MAX_NNZ,
        "density",
        f"at most {_MAX_NNZ / (n * d):.3g} for n x d = "
        f"{n} x {d} (at most {_MAX_NNZ:,} stored entries)",
        density,
    )
    require(target >= n, "density", f"at least 1 / d = {1 / d:.3g} (one term per row)", density)
    rng = make_rng(random_state)

    counts = _term_counts(rng, n, d, target)
    X = _tfidf(counts)
    coef = np.zeros(d)
    df = np.diff(counts.tocsc().indptr)
    pool = np.argsort(-df, kind="stable")[: min(d, _SUPPORT_POOL * k_true)]
    support = np.sort(rng.choice(pool, size=k_true, replace=False))
    coef[support] = rng.uniform(1.0, 2.0, k_true) * rng.choice([-1.0, 1.0], k_true)
    signal = X @ coef
    noise_std = float(np.std(signal) / np.sqrt(snr))
    y = signal + rng.normal(0.0, noise_std, size=n)

    meta = seed_meta(random_state, p)
    meta["noise_std"] = noise_std
    meta["nnz"] = int(X.nnz)
    return Problem(
        X=X,
        y=y,
        true_coef=coef,
        support=support,
        name="sparse_design",
        task="regression",
        description=(
            f"RCV1-like sparse design: {n} x {d} tf-idf rows of unit norm, density "
            f"{X.nnz / (n * d):.2g}, {k_true} true features among the frequent terms, "
            f"least-squares response with signal-to-noise ratio {snr:g}."
        ),
        feature_names=names("t", d),
        meta=meta,
    )


def _term_counts(rng: np.random.Generator, n: int, d: int, target: int) -> sp.csr_matrix:
    """Term-frequency matrix with ``target`` stored entries (to 0.5%), summed repeats."""
    column_of_rank = rng.permutation(d)

    mean_len = target / n
    draws = rng.lognormal(np.log(mean_len) - _LENGTH_SIGMA**2 / 2, _LENGTH_SIGMA, size=n)
    lengths = np.maximum(np.rint(draws), 1).astype(np.int64)
    rows = np.repeat(np.arange(n), lengths)
    counts = _draw(rng, rows, column_of_rank, n, d)
    for _ in range(20):
        deficit = target - counts.nnz
        if deficit <= 0.005 * target:
            break
        # Repeats and collisions with existing entries: draw a little more than is missing,
        # in rows chosen in proportion to their lengths so long documents stay long.
        extra = rng.choice(n, size=int(deficit * 1.1) + 1, p=lengths / lengths.sum())
        counts = counts + _draw(rng, extra, column_of_rank, n, d)
    return counts


def _draw(
    rng: np.random.Generator, rows: np.ndarray, column_of_rank: np.ndarray, n: int, d: int
) -> sp.csr_matrix:
    """One term per entry of ``rows``, as a count matrix (repeats summed)."""
    # The density 1 / (r + c) on [0, d) has CDF log((r + c) / c) / log((d + c) / c); inverting
    # it is O(1) per draw, where a search in a tabulated CDF is cache-bound for large d.
    c = _ZIPF_OFFSET
    ranks = (c * ((d + c) / c) ** rng.random(rows.size) - c).astype(np.intp)
    ranks = np.minimum(ranks, d - 1)
    data = np.ones(rows.size)
    return sp.csr_matrix((data, (rows, column_of_rank[ranks])), shape=(n, d))


def _tfidf(counts: sp.csr_matrix) -> sp.csr_matrix:
    n = counts.shape[0]
    df = np.diff(counts.tocsc().indptr)
    idf = 1.0 + np.log((1.0 + n) / (1.0 + df))
    X = counts.copy()
    X.data = 1.0 + np.log(X.data)
    X = X.multiply(idf[None, :]).tocsr()
    row_norm = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.diags(1.0 / row_norm) @ X
    X = sp.csr_matrix(X)
    X.sort_indices()
    return X
