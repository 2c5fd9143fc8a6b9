"""Sufficient statistics of least squares, from one pass over the rows in chunks.

Least squares, with or without an intercept and with or without standardised columns, depends
on the data only through n, the column means, X'X, X'y and y'y. They are accumulated here in
their centred form (Welford, Chan et al.): every chunk is centred on its own means before its
cross-products are taken, and two partials are merged with the correction term
``(n_a n_b / n) (mean_b - mean_a)(mean_b - mean_a)'``. A column that sits at 1e6 with unit
spread then keeps its variance to ~1e-16 relative, where summing raw squares (1e12 each) would
leave only ~1e-4 of it. The raw sums (``xtx``, ``xty``, ``yty``, ``col_sums``) are derived on
demand for callers that want them.

Merging is addition: it is associative and commutative up to rounding, so the pass may be split
into any row ranges, run by any number of workers in any order, and merged when all are in.
``merge_all`` merges a list as a balanced tree (rounding grows with log of the count, not the
count). A partial is stored with :meth:`SufficientStatistics.to_bytes` (an ``.npz`` image).

Folds for cross-validation and subsamples for stability come from per-chunk partials without a
second pass: a fold's training statistics are the merge of the other folds' chunks
(:func:`fold_statistics`); :meth:`SufficientStatistics.__sub__` removes a part from a total when
only the total and the part are at hand (it loses the precision of a difference).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "StatisticsAccumulator",
    "SufficientStatistics",
    "block_pairs",
    "fold_blocks",
    "fold_statistics",
    "merge_all",
    "statistics_scale",
]


@dataclass(frozen=True, eq=False)
class SufficientStatistics:
    """Centred sufficient statistics of (X, y) over n rows.

    Attributes
    ----------
    n : int
        Number of rows.
    mean : ndarray, shape (d,)
        Column means.
    y_mean : float
    xx : ndarray, shape (d, d)
        ``sum_i (x_i - mean)(x_i - mean)'`` (the centred Gram matrix).
    xy : ndarray, shape (d,)
        ``sum_i (x_i - mean)(y_i - y_mean)``.
    yy : float
        ``sum_i (y_i - y_mean)^2``.
    feature_names : tuple of str, optional
        Column names, carried through merges (which require them equal).
    """

    n: int
    mean: np.ndarray
    y_mean: float
    xx: np.ndarray
    xy: np.ndarray
    yy: float
    feature_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        d = self.mean.shape[0]
        if self.mean.ndim != 1 or self.xx.shape != (d, d) or self.xy.shape != (d,):
            raise ValueError(
                f"inconsistent shapes: mean {self.mean.shape}, xx {self.xx.shape}, "
                f"xy {self.xy.shape}"
            )
        if self.n < 0:
            raise ValueError(f"n must be >= 0, got {self.n}")
        if self.feature_names is not None and len(self.feature_names) != d:
            raise ValueError(f"{len(self.feature_names)} feature names for {d} columns")

    # ----------------------------------------------------------------- building
    @classmethod
    def empty(
        cls, n_features: int, feature_names: Sequence[str] | None = None
    ) -> SufficientStatistics:
        """The statistics of no rows (the identity of ``merge``)."""
        d = int(n_features)
        return cls(
            n=0,
            mean=np.zeros(d),
            y_mean=0.0,
            xx=np.zeros((d, d)),
            xy=np.zeros(d),
            yy=0.0,
            feature_names=tuple(feature_names) if feature_names is not None else None,
        )

    @classmethod
    def from_arrays(
        cls,
        X: np.ndarray,
        y: np.ndarray,
        *,
        feature_names: Sequence[str] | None = None,
        block_rows: int = 65536,
    ) -> SufficientStatistics:
        """The statistics of the rows of a dense X (n, d) and y (n,).

        Rows are taken ``block_rows`` at a time (each block centred on its own means, then
        merged), so a large chunk costs at most one centred copy of a block.
        """
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64).ravel()
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows")
        names = tuple(feature_names) if feature_names is not None else None
        n, d = X.shape
        if n == 0:
            return cls.empty(d, names)
        parts = [
            cls._block(X[lo : lo + block_rows], y[lo : lo + block_rows], names)
            for lo in range(0, n, max(1, int(block_rows)))
        ]
        return merge_all(parts)

    @classmethod
    def _block(
        cls, X: np.ndarray, y: np.ndarray, names: tuple[str, ...] | None
    ) -> SufficientStatistics:
        mean = X.mean(axis=0)
        y_mean = float(y.mean())
        Xc = X - mean
        yc = y - y_mean
        xx = Xc.T @ Xc
        xx = (xx + xx.T) / 2  # exactly symmetric, whatever the BLAS did
        return cls(
            n=X.shape[0],
            mean=mean,
            y_mean=y_mean,
            xx=xx,
            xy=Xc.T @ yc,
            yy=float(yc @ yc),
            feature_names=names,
        )

    # ----------------------------------------------------------------- merging
    @property
    def n_features(self) -> int:
        return int(self.mean.shape[0])

    def _check_compatible(self, other: SufficientStatistics) -> None:
        if not isinstance(other, SufficientStatistics):
            raise TypeError(f"cannot merge statistics with {type(other).__name__}")
        if other.n_features != self.n_features:
            raise ValueError(
                f"cannot merge statistics of {self.n_features} and {other.n_features} columns"
            )
        if (
            self.feature_names is not None
            and other.feature_names is not None
            and self.feature_names != other.feature_names
        ):
            raise ValueError("cannot merge statistics of different columns (feature names differ)")

    def merge(self, other: SufficientStatistics) -> SufficientStatistics:
        """The statistics of the union of both row sets (Chan et al.'s pairwise update)."""
        self._check_compatible(other)
        names = self.feature_names if self.feature_names is not None else other.feature_names
        if other.n == 0:
            return self if names == self.feature_names else _renamed(self, names)
        if self.n == 0:
            return other if names == other.feature_names else _renamed(other, names)
        na, nb = self.n, other.n
        n = na + nb
        delta = other.mean - self.mean
        dy = other.y_mean - self.y_mean
        f = na * nb / n
        xx = self.xx + other.xx + f * np.outer(delta, delta)
        return SufficientStatistics(
            n=n,
            mean=self.mean + delta * (nb / n),
            y_mean=self.y_mean + dy * (nb / n),
            xx=(xx + xx.T) / 2,
            xy=self.xy + other.xy + f * delta * dy,
            yy=self.yy + other.yy + f * dy * dy,
            feature_names=names,
        )

    __add__ = merge

    def __radd__(self, other: object) -> SufficientStatistics:
        if isinstance(other, int) and other == 0:  # sum(parts) starts from 0
            return self
        return NotImplemented

    def __sub__(self, part: SufficientStatistics) -> SufficientStatistics:
        """The statistics of this row set without ``part`` (which must be a subset of it).

        The inverse of ``merge``; it takes a difference, so prefer merging the remaining
        parts (``fold_statistics``) when they are at hand.
        """
        self._check_compatible(part)
        if part.n > self.n:
            raise ValueError(f"cannot remove {part.n} rows from {self.n}")
        if part.n == 0:
            return self
        n, nb = self.n, part.n
        na = n - nb
        if na == 0:
            return SufficientStatistics.empty(self.n_features, self.feature_names)
        # mean = mean_a + (mean_b - mean_a) nb / n  =>  mean_b - mean_a = (mean_b - mean) n / na
        delta = (part.mean - self.mean) * (n / na)
        dy = (part.y_mean - self.y_mean) * (n / na)
        f = na * nb / n
        xx = self.xx - part.xx - f * np.outer(delta, delta)
        return SufficientStatistics(
            n=na,
            mean=part.mean - delta,
            y_mean=part.y_mean - dy,
            xx=(xx + xx.T) / 2,
            xy=self.xy - part.xy - f * delta * dy,
            yy=max(self.yy - part.yy - f * dy * dy, 0.0),
            feature_names=self.feature_names,
        )

    # ----------------------------------------------------------------- raw sums
    @property
    def col_sums(self) -> np.ndarray:
        return self.mean * self.n

    @property
    def y_sum(self) -> float:
        return self.y_mean * self.n

    @property
    def xtx(self) -> np.ndarray:
        """X'X (uncentred)."""
        return self.xx + self.n * np.outer(self.mean, self.mean)

    @property
    def xty(self) -> np.ndarray:
        """X'y (uncentred)."""
        return self.xy + self.n * self.mean * self.y_mean

    @property
    def yty(self) -> float:
        """y'y (uncentred)."""
        return self.yy + self.n * self.y_mean**2

    # ----------------------------------------------------------------- storing
    def to_bytes(self) -> bytes:
        """An ``.npz`` image of the statistics (what a job stores for its row range)."""
        buf = io.BytesIO()
        arrays: dict[str, np.ndarray] = {
            "n": np.array(self.n, dtype=np.int64),
            "mean": self.mean,
            "y_mean": np.array(self.y_mean),
            "xx": self.xx,
            "xy": self.xy,
            "yy": np.array(self.yy),
        }
        if self.feature_names is not None:
            arrays["feature_names"] = np.array(self.feature_names, dtype=str)
        np.savez(buf, **arrays)  # type: ignore[arg-type]
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> SufficientStatistics:
        with np.load(io.BytesIO(data), allow_pickle=False) as f:
            names = tuple(str(s) for s in f["feature_names"]) if "feature_names" in f else None
            return cls(
                n=int(f["n"]),
                mean=np.array(f["mean"], dtype=np.float64),
                y_mean=float(f["y_mean"]),
                xx=np.array(f["xx"], dtype=np.float64),
                xy=np.array(f["xy"], dtype=np.float64),
                yy=float(f["yy"]),
                feature_names=names,
            )

    def to_npz(self, path: str) -> None:
        with open(path, "wb") as handle:
            handle.write(self.to_bytes())

    @classmethod
    def from_npz(cls, path: str) -> SufficientStatistics:
        with open(path, "rb") as handle:
            return cls.from_bytes(handle.read())


def _renamed(s: SufficientStatistics, names: tuple[str, ...] | None) -> SufficientStatistics:
    return SufficientStatistics(s.n, s.mean, s.y_mean, s.xx, s.xy, s.yy, names)


def merge_all(parts: Sequence[SufficientStatistics]) -> SufficientStatistics:
    """Merge partial statistics as a balanced tree (in the given order)."""
    items = list(parts)
    if not items:
        raise ValueError("nothing to merge")
    while len(items) > 1:
        merged = [a.merge(b) for a, b in zip(items[0::2], items[1::2], strict=False)]
        if len(items) % 2:
            merged.append(items[-1])
        items = merged
    return items[0]


def fold_statistics(
    parts: Sequence[SufficientStatistics],
    n_folds: int,
    *,
    shuffle: bool = False,
    random_state: int | None = None,
) -> list[tuple[SufficientStatistics, SufficientStatistics]]:
    """(training, held-out) statistics of every fold, from per-chunk partials, no second pass.

    Chunk i goes to fold ``i % n_folds`` (after a seeded permutation with ``shuffle``); a fold
    holds out its chunks and trains on the merge of the other folds' chunks. A fold is therefore
    as random as the chunks are: with rows in a meaningful order (by date, by site), shuffle the
    rows when writing the table, or use many small chunks with ``shuffle=True``.
    """
    blocks = fold_blocks(len(parts), n_folds, shuffle=shuffle, random_state=random_state)
    folds = [merge_all([parts[i] for i in held]) for held in blocks]
    out = []
    for f in range(n_folds):
        train = merge_all([folds[g] for g in range(n_folds) if g != f])
        out.append((train, folds[f]))
    return out


def fold_blocks(
    n_blocks: int,
    n_folds: int,
    *,
    shuffle: bool = False,
    random_state: int | None = None,
) -> list[list[int]]:
    """The chunks each fold holds out (sorted), as :func:`fold_statistics` deals them: chunk
    ``order[i]`` goes to fold ``i % n_folds``, ``order`` a seeded permutation with ``shuffle``.

    Deterministic given the seed, so every worker computing one fold (and a test rebuilding
    the same folds from rows) finds the same assignment.
    """
    if not 2 <= n_folds <= n_blocks:
        raise ValueError(
            f"n_folds must be between 2 and the number of chunks ({n_blocks}), got {n_folds}"
        )
    order = np.arange(n_blocks)
    if shuffle:
        order = np.random.default_rng(random_state).permutation(n_blocks)
    return [sorted(int(i) for i in order[f::n_folds]) for f in range(n_folds)]


def block_pairs(n_blocks: int, n_pairs: int, *, random_state: int | None = 0) -> list[list[int]]:
    """Complementary pairs of half samples made of whole chunks (stability selection from
    per-chunk partials): for each pair the chunks are shuffled and dealt into two disjoint
    halves of ``n_blocks // 2`` chunks (with an odd count, one sits the pair out). Returns the
    2B chunk lists (sorted); pair j is entries 2j and 2j + 1. Seeded and deterministic.

    The halves hold half the chunks, not exactly half the rows when chunks differ in size.
    """
    if n_blocks < 2:
        raise ValueError(f"need at least 2 chunks to halve, got {n_blocks}")
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, int | np.integer) or n_pairs < 1:
        raise ValueError(f"n_pairs must be a positive integer, got {n_pairs!r}")
    rng = np.random.default_rng(random_state)
    half = n_blocks // 2
    out: list[list[int]] = []
    for _ in range(n_pairs):
        order = rng.permutation(n_blocks)
        out += [
            sorted(int(i) for i in order[:half]),
            sorted(int(i) for i in order[half : 2 * half]),
        ]
    return out


def statistics_scale(stats: SufficientStatistics, *, centered: bool) -> np.ndarray:
    """The column scales ``engine.select(standardize=True)`` uses (``engine.scaling``), from the
    statistics: the standard deviation (``centered``) or root mean square, 1 where it is 0."""
    n = max(stats.n, 1)
    var_c = np.maximum(np.diag(stats.xx), 0.0) / n
    mean_sq = var_c + stats.mean**2
    var = var_c if centered else mean_sq
    var = np.where(var <= 1e-24 * np.maximum(mean_sq, 1e-300), 0.0, var)
    scale = np.sqrt(var)
    scale[scale == 0.0] = 1.0
    return scale


class StatisticsAccumulator:
    """Merges statistics as they arrive (one per chunk of a pass) as a balanced tree, holding
    O(log count) partials: the rounding of ``merge_all`` without keeping every chunk."""

    def __init__(self) -> None:
        self._stack: list[tuple[int, SufficientStatistics]] = []

    def add(self, stats: SufficientStatistics) -> None:
        level, item = 0, stats
        while self._stack and self._stack[-1][0] == level:
            _, left = self._stack.pop()
            item = left.merge(item)
            level += 1
        self._stack.append((level, item))

    def result(self, n_features: int | None = None) -> SufficientStatistics:
        """The merge of everything added (empty statistics of ``n_features`` if nothing was)."""
        if not self._stack:
            if n_features is None:
                raise ValueError("nothing was added")
            return SufficientStatistics.empty(n_features)
        return merge_all([s for _, s in self._stack])
