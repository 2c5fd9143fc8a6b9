"""Exact projections onto sparse and group-sparse sets (hard thresholding).

Xiang, Yang & Ye (KDD 2014), Section 3. The sparse group hard thresholding (SGHT) problem

    minimise (1/2) ||x - v||^2   s.t.  ||x||_0 <= s1  and  x is nonzero in at most s2 groups

(their Eq. (2)) keeps ``x_i = v_i`` on a chosen set and zero elsewhere (Lemma 1), so it is the
Sparse Group Subset Selection (SGSS) problem of Proposition 1: choose at most s1 entries from at
most s2 groups maximising the sum of ``v_i^2``. Algorithm 3 solves it by dynamic programming over
the table ``T(i, j, k)`` = best value using the first i groups, at most j groups and at most k
entries, with ``CH(i, t)`` = the sum of the t largest ``v^2`` of group i; the path table ``P``
and the backtracking of Algorithm 4 recover how many entries each group keeps.

What this implementation adds to the paper's boxes, keeping the answer exact:

* Only the ``min(s1, |G_i|)`` largest entries of a group can be selected, so one O(p) pass
  (a partition per group) reduces the problem to at most ``G * s1`` numbers; the paper's
  O(p log p) sort and O(p s1 s2) table become independent of p.
* Candidate groups: a group that is not among the s2 best groups (by ``CH(., t)``) for any
  count t can be swapped out of any solution for one that is, without loss (see
  :func:`candidate_groups`), so the table only runs over those groups.
* Row band: with "empty slots" (a group counted with t = 0 entries), an optimum uses exactly
  ``s2`` slots, so after i of G groups only ``j >= s2 - (G - i)`` can lie on an optimal path.
* The inner maximisation ``max_t T(i-1, j-1, k-t) + CH(i, t)`` is a (max,+) convolution with
  a concave kernel (``CH(i, .)`` has decreasing increments), so its largest maximiser is
  non-decreasing in k; it is evaluated by divide and conquer over k, O(s1 log s1) per row
  instead of O(s1^2), vectorised over all rows j at once.

Every function takes ``v`` of shape (p,) and a :class:`GroupIndex` built once per grouping (the
iterative algorithms project hundreds of times with the same groups).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The per-group top-s1 entries are found on a padded (G, max group size) array when that array
# is at most this many times larger than v; badly unbalanced groups fall back to one
# np.argpartition per group.
_PAD_FACTOR = 2.0
# Kernels up to this length are convolved by dense enumeration (one gather over
# rows x k x t); longer ones by divide and conquer, whose ~12 passes per level only pay off then.
_DENSE_KERNEL = 24

_NOT_SELECTED = -1  # P(i, j, k) for "group i not selected"; t >= 0 means selected with t entries


@dataclass(frozen=True)
class GroupIndex:
    """Features arranged by group, computed once per grouping.

    Attributes
    ----------
    codes : ndarray of int, shape (p,)
        Group code (0..G-1) of every feature.
    n_groups : int
        G.
    sizes : ndarray of int, shape (G,)
        Features per group.
    order : ndarray of int, shape (p,)
        Features sorted by group (stable); group g is ``order[starts[g]:starts[g + 1]]``.
    starts : ndarray of int, shape (G + 1,)
    rank : ndarray of int, shape (p,)
        Position of ``order[q]`` within its group.
    grouped : bool
        The codes are already sorted (``order`` is the identity).
    """

    codes: np.ndarray
    n_groups: int
    sizes: np.ndarray
    order: np.ndarray
    starts: np.ndarray
    rank: np.ndarray
    grouped: bool

    @property
    def n_features(self) -> int:
        return len(self.codes)

    @property
    def max_size(self) -> int:
        return int(self.sizes.max(initial=0))


def group_index(groups, n_groups: int | None = None) -> GroupIndex:
    """Build the :class:`GroupIndex` of integer group codes.

    Parameters
    ----------
    groups : array-like of int, shape (p,)
        Group code of every feature, in ``0..n_groups-1``.
    n_groups : int, optional
        Number of groups (default ``max(groups) + 1``); groups without features are allowed.

    Returns
    -------
    GroupIndex
    """
    codes = np.asarray(groups).ravel()
    if codes.size and not np.issubdtype(codes.dtype, np.integer):
        raise ValueError(f"groups must be integer codes, got dtype {codes.dtype}")
    codes = codes.astype(np.intp, copy=False)
    if codes.size and codes.min() < 0:
        raise ValueError("groups must be integer codes >= 0")
    G = int(codes.max()) + 1 if codes.size else 0
    if n_groups is not None:
        if n_groups < G:
            raise ValueError(f"n_groups = {n_groups} but groups uses code {G - 1}")
        G = int(n_groups)
    sizes = np.bincount(codes, minlength=G)
    starts = np.zeros(G + 1, dtype=np.intp)
    np.cumsum(sizes, out=starts[1:])
    grouped = bool(codes.size == 0 or np.all(codes[1:] >= codes[:-1]))
    if grouped:
        order = np.arange(codes.size, dtype=np.intp)  # contiguous groups: the common layout
    else:
        # numpy's stable sort is a radix sort for 16-bit keys: O(p) for up to 65,536 groups.
        key = codes.astype(np.uint16) if G <= 1 << 16 else codes
        order = np.argsort(key, kind="stable").astype(np.intp, copy=False)
    rank = np.arange(codes.size, dtype=np.intp) - np.repeat(starts[:-1], sizes)
    return GroupIndex(codes, G, sizes, order, starts, rank, grouped)


# --------------------------------------------------------------------------- simple cases


def hard_threshold_support(v: np.ndarray, s: int) -> np.ndarray:
    """Indices of the s largest ``|v_i|`` (Lemma 1, feature constraint only), sorted.

    Parameters
    ----------
    v : ndarray, shape (p,)
    s : int
        Number of entries to keep (all when ``s >= p``).

    Returns
    -------
    ndarray of int, shape (min(s, p),)
    """
    v = np.asarray(v)
    p = v.shape[0]
    if s >= p:
        return np.arange(p, dtype=np.intp)
    if s <= 0:
        return np.empty(0, dtype=np.intp)
    keep = np.argpartition(-np.abs(v), s - 1)[:s]
    return np.sort(keep).astype(np.intp, copy=False)


def group_hard_threshold_support(v: np.ndarray, index: GroupIndex, s2: int) -> np.ndarray:
    """Indices of every entry of the s2 groups of largest ``||v_G||_2`` (Lemma 1), sorted.

    Parameters
    ----------
    v : ndarray, shape (p,)
    index : GroupIndex
    s2 : int

    Returns
    -------
    ndarray of int
    """
    w = np.square(np.asarray(v, dtype=np.float64))
    norms = np.bincount(index.codes, weights=w, minlength=index.n_groups)
    if s2 >= index.n_groups:
        return np.arange(len(w), dtype=np.intp)
    top = np.argpartition(-norms, s2 - 1)[:s2]
    chosen = np.zeros(index.n_groups, dtype=bool)
    chosen[top] = True
    return np.flatnonzero(chosen[index.codes])


# --------------------------------------------------------------------------- SGHT


@dataclass(frozen=True)
class TopEntries:
    """The largest entries of every group, best first.

    Attributes
    ----------
    values : ndarray, shape (G, m)
        ``v_i^2`` of the m largest entries of each group in decreasing order, 0 past the group's
        size.
    features : ndarray of int, shape (G, m)
        Their feature indices (-1 past the group's size).
    counts : ndarray of int, shape (G,)
        ``min(m, |G_i|)``.
    """

    values: np.ndarray
    features: np.ndarray
    counts: np.ndarray


def top_entries(w: np.ndarray, index: GroupIndex, m: int) -> TopEntries:
    """The m largest values of ``w`` (>= 0) in each group, sorted: one O(p) pass.

    Parameters
    ----------
    w : ndarray, shape (p,)
        Nonnegative scores (``v^2``).
    index : GroupIndex
    m : int
        How many to keep per group (the paper's CH(i, t) is only needed for t <= s1).

    Returns
    -------
    TopEntries
    """
    G, size = index.n_groups, index.max_size
    m = max(0, min(m, size))
    counts = np.minimum(index.sizes, m)
    if G * size <= _PAD_FACTOR * len(w) + 1024:
        cand_vals, cand_feats = _top_padded(w, index, m)
    else:
        cand_vals, cand_feats = _top_loop(w, index, m)
    # Sort the m survivors of each group (G m log m, independent of p); -1 pads sort last.
    by = np.argsort(-cand_vals, axis=1, kind="stable")
    values = np.take_along_axis(cand_vals, by, axis=1)
    features = np.take_along_axis(cand_feats, by, axis=1)
    pad = np.arange(m)[None, :] >= counts[:, None]
    values[pad] = 0.0
    features[pad] = -1
    return TopEntries(values, features, counts)


def _top_padded(w: np.ndarray, index: GroupIndex, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Top m of every group through a (G, max size) array padded with -1: no Python loop."""
    G, size = index.n_groups, index.max_size
    grouped_codes = index.codes[index.order]
    if index.grouped and len(w) == G * size:  # equal contiguous groups
        pad_vals = w.reshape(G, size)  # a view, no scatter
        pad_feats = None
    else:
        pad_vals = np.full((G, size), -1.0)
        pad_vals[grouped_codes, index.rank] = w[index.order]
        pad_feats = np.full((G, size), -1, dtype=np.intp)
        pad_feats[grouped_codes, index.rank] = index.order
    if m < size:
        cols = np.argpartition(pad_vals, size - m, axis=1)[:, size - m :]
    else:
        cols = np.broadcast_to(np.arange(size), (G, size))
    vals = np.take_along_axis(pad_vals, cols, axis=1)
    if pad_feats is None:
        feats = cols + (np.arange(G) * size)[:, None]
    else:
        feats = np.take_along_axis(pad_feats, cols, axis=1)
    return np.array(vals, dtype=np.float64), np.array(feats, dtype=np.intp)


def _top_loop(w: np.ndarray, index: GroupIndex, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Top m of every group, one argpartition per group (for badly unbalanced group sizes)."""
    G = index.n_groups
    vals = np.full((G, m), -1.0)
    feats = np.full((G, m), -1, dtype=np.intp)
    grouped = w[index.order]
    for g in np.flatnonzero(index.sizes):
        lo, hi = index.starts[g], index.starts[g + 1]
        seg = grouped[lo:hi]
        c = min(m, hi - lo)
        pick: np.ndarray | slice = (
            np.argpartition(seg, len(seg) - c)[len(seg) - c :] if c < len(seg) else slice(None)
        )
        vals[g, :c] = seg[pick]
        feats[g, :c] = index.order[lo:hi][pick]
    return vals, feats


def candidate_groups(ch: np.ndarray, s2: int) -> np.ndarray:
    """Groups that can be needed by an optimal SGSS solution.

    If a selected group i with t entries has s2 groups ranked at least as high by ``CH(., t)``,
    one of them is unselected and taking its top t entries instead loses nothing; each such swap
    moves a group up the ranking at its level, so some optimum only uses groups that are among
    the s2 best at some level t. (Ties may be broken arbitrarily, level by level.)

    Parameters
    ----------
    ch : ndarray, shape (G, m)
        ``CH(i, t)`` for t = 1..m, constant past a group's size.
    s2 : int

    Returns
    -------
    ndarray of int, sorted
    """
    G = ch.shape[0]
    if s2 >= G or ch.shape[1] == 0:
        return np.arange(G, dtype=np.intp)
    best = np.argpartition(-ch, s2 - 1, axis=0)[:s2]
    return np.unique(best).astype(np.intp, copy=False)


def sgss_tables(ch: list[np.ndarray], s1: int, s2: int) -> tuple[float, np.ndarray]:
    """Algorithm 3: the table T (kept one layer at a time) and the path table P.

    Parameters
    ----------
    ch : list of ndarray
        ``ch[i]`` has shape (m_i + 1,): ``CH(i, t)`` for t = 0..m_i (``CH(i, 0) = 0``),
        nondecreasing and concave.
    s1, s2 : int
        Budgets; needs ``len(ch) >= s2``.

    Returns
    -------
    value : float
        ``T(G, s2, s1)``, the SGSS optimum.
    P : ndarray of int, shape (G, s2 + 1, s1 + 1)
        ``P[i - 1, j, k]`` is -1 when group i is not selected in ``T(i, j, k)``, else the number
        of its entries selected (0 for an empty slot, needed only where j = i).
    """
    G = len(ch)
    n = s1 + 1
    dtype = np.int16 if s1 < np.iinfo(np.int16).max else np.int32
    P = np.full((G, s2 + 1, n), _NOT_SELECTED, dtype=dtype)
    # T[j] = best with "exactly j slots", -inf while fewer than j groups have been seen.
    T = np.full((s2 + 1, n), -np.inf)
    T[0] = 0.0
    for i in range(1, G + 1):
        lo, hi = max(1, s2 - (G - i)), min(i, s2)
        if lo > hi:
            continue
        h, t = concave_maxplus(T[lo - 1 : hi], ch[i - 1])
        take = h > T[lo : hi + 1]  # ties keep the group out: fewer groups, same value
        T[lo : hi + 1] = np.where(take, h, T[lo : hi + 1])
        P[i - 1, lo : hi + 1] = np.where(take, t, _NOT_SELECTED)
    return float(T[s2, s1]), P


def backtrack(P: np.ndarray, s1: int, s2: int) -> np.ndarray:
    """Algorithm 4: entries taken from each group along the optimal path.

    Parameters
    ----------
    P : ndarray of int, shape (G, s2 + 1, s1 + 1)
    s1, s2 : int

    Returns
    -------
    cnt : ndarray of int, shape (G,)
    """
    G = P.shape[0]
    cnt = np.zeros(G, dtype=np.intp)
    j, k = s2, s1
    for i in range(G - 1, -1, -1):
        t = int(P[i, j, k])
        if t != _NOT_SELECTED:
            cnt[i] = t
            j -= 1
            k -= t
    return cnt


def concave_maxplus(F: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``H[r, k] = max_{0 <= t <= min(k, m)} F[r, k - t] + g[t]`` for a concave g, with argmax.

    Parameters
    ----------
    F : ndarray, shape (R, n)
        Finite rows.
    g : ndarray, shape (m + 1,)
        Concave (nonincreasing increments).

    Returns
    -------
    H : ndarray, shape (R, n)
    t : ndarray of int, shape (R, n)
        The smallest maximising t (the largest maximiser k - t).
    """
    if len(g) <= _DENSE_KERNEL:
        return _maxplus_dense(F, g)
    return _maxplus_monotone(F, g)


def _maxplus_dense(F: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (row, k, t) at once: O(R n m), for short kernels (small groups or small s1)."""
    n = F.shape[1]
    m = len(g) - 1
    k = np.arange(n)[:, None]
    src = k - np.arange(m + 1)[None, :]  # (n, m + 1): the k - t read for every (k, t)
    cand = F[:, np.maximum(src, 0)] + g[None, None, :]
    cand[:, src < 0] = -np.inf
    t = np.argmax(cand, axis=2)
    return np.take_along_axis(cand, t[:, :, None], axis=2)[:, :, 0], t


def _maxplus_monotone(F: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Divide and conquer over k using the monotone argmax of a concave-kernel convolution.

    With a concave kernel, ``M[k, a] = F[a] + g[k - a]`` is inverse Monge on its band
    ``k - m <= a <= k``, so the largest maximiser ``A(k)`` is non-decreasing in k. Levels of
    stride d = 2^L, ..., 1 fill in the odd multiples of d, searching ``a`` only between the
    maximisers of the neighbours k - d and k + d, already known; every level costs O(n) per row.
    All rows and all k of a level are one flat (ragged) batch.
    """
    R, n = F.shape
    m = len(g) - 1
    A = np.zeros((R, n), dtype=np.intp)
    H = np.empty((R, n))
    H[:, 0] = F[:, 0] + g[0]
    if n == 1:
        return H, A
    flat = F.ravel()
    row_base = (np.arange(R) * n)[:, None]
    d = 1 << ((n - 1).bit_length() - 1)
    while d >= 1:
        ks = np.arange(d, n, 2 * d)
        left = A[:, ks - d]
        right = np.where(ks + d < n, A[:, np.minimum(ks + d, n - 1)], ks)
        lo = np.maximum(left, ks - m)
        hi = np.minimum(right, ks)
        H[:, ks], A[:, ks] = _ragged_argmax(flat, g, row_base, ks, lo, hi)
        d //= 2
    return H, np.arange(n)[None, :] - A


def _ragged_argmax(
    flat: np.ndarray,
    g: np.ndarray,
    row_base: np.ndarray,
    ks: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """For every (row r, k): max and largest argmax over a in [lo, hi] of F[r, a] + g[k - a].

    The (row, k) segments are laid end to end; every per-element index is ``pos`` plus one
    per-segment offset, so each gather costs a single ``np.repeat`` (the hot loop of the table).
    """
    # 32-bit indices move half the bytes; a level touches at most ~2 cells per table cell.
    idx = np.int32 if 2 * flat.size + len(g) < np.iinfo(np.int32).max else np.intp
    lengths = (hi - lo + 1).ravel().astype(idx)
    ends = np.cumsum(lengths, dtype=idx)
    starts = ends - lengths
    pos = np.arange(ends[-1], dtype=idx)
    first = (lo.ravel() - starts).astype(idx)  # a = pos + first on every segment
    f_off = np.repeat(((row_base + lo).ravel() - starts).astype(idx), lengths)
    g_off = np.repeat((np.broadcast_to(ks, lo.shape).ravel() - first).astype(idx), lengths)
    vals = flat[pos + f_off]
    vals += g[g_off - pos]
    best = np.maximum.reduceat(vals, starts)
    # The last position of each segment holding its maximum: the largest maximiser a.
    hits = np.flatnonzero(vals == np.repeat(best, lengths))
    at = hits[np.searchsorted(hits, ends - 1, side="right") - 1]
    return best.reshape(lo.shape), (at + first).reshape(lo.shape)


@dataclass(frozen=True)
class Projection:
    """Result of a projection.

    Attributes
    ----------
    support : ndarray of int, sorted
        Indices kept (``x_i = v_i``); may include zeros of v when fewer nonzeros exist.
    value : float
        ``sum of v_i^2`` over the support (the SGSS objective; the distance is
        ``(||v||^2 - value) / 2``).
    """

    support: np.ndarray
    value: float


def sght(v: np.ndarray, index: GroupIndex, s1: int, s2: int) -> Projection:
    """Exact sparse group hard thresholding: Eq. (2) solved by Algorithms 3-4.

    Parameters
    ----------
    v : ndarray, shape (p,)
    index : GroupIndex
        Groups of the p entries.
    s1 : int
        At most s1 nonzero entries (>= 0).
    s2 : int
        At most s2 nonzero groups (>= 0).

    Returns
    -------
    Projection
        The projection is ``x = 0; x[support] = v[support]``.

    Notes
    -----
    Cost: O(p) to extract the ``min(s1, |G_i|)`` largest entries of each group, then
    O(G' s2 s1 log s1) for the table over the G' <= G candidate groups (O(G' s2 s1 m) with small
    group sizes m), independent of p. Xiang, Yang & Ye (2014), Section 3.
    """
    v = np.asarray(v, dtype=np.float64)
    if v.shape != (index.n_features,):
        raise ValueError(f"v has shape {v.shape}, the groups describe {index.n_features} entries")
    w = np.square(v)
    G = int(np.count_nonzero(index.sizes))
    s1, s2 = max(0, int(s1)), max(0, min(int(s2), G))
    if s1 == 0 or s2 == 0:
        return Projection(np.empty(0, dtype=np.intp), 0.0)
    if s1 <= s2:  # s1 entries touch at most s1 groups: the group budget cannot bind
        keep = hard_threshold_support(v, s1)
        return Projection(keep, float(w[keep].sum()))
    if s1 >= np.sort(index.sizes)[::-1][:s2].sum():  # any s2 groups fit: s1 cannot bind
        keep = group_hard_threshold_support(v, index, s2)
        return Projection(keep, float(w[keep].sum()))
    top = top_entries(w, index, s1)
    ch = np.cumsum(top.values, axis=1)
    cand = candidate_groups(ch, s2)
    s2 = min(s2, len(cand))
    kernels = [np.concatenate((np.zeros(1), ch[g, : top.counts[g]])) for g in cand]
    value, P = sgss_tables(kernels, s1, s2)
    cnt = backtrack(P, s1, s2)
    take = np.arange(top.values.shape[1])[None, :] < cnt[:, None]
    keep = np.sort(top.features[cand][take])
    return Projection(keep, value)


def sght_project(v: np.ndarray, index: GroupIndex, s1: int, s2: int) -> np.ndarray:
    """The SGHT projection of v as a vector (zero off the kept entries), shape (p,)."""
    v = np.asarray(v, dtype=np.float64)
    x = np.zeros_like(v)
    keep = sght(v, index, s1, s2).support
    x[keep] = v[keep]
    return x
