"""The error bound of stability selection, and the threshold that meets a target.

What is bounded
---------------
V is the number of *noise* units in the stable set {j : frequency_j >= pi}: units whose
selection probability by the base procedure (here: the algorithm at k, on half of the rows)
is low. The bound implemented is

    E[V] <= q^2 / ((2 pi - 1) d),        pi in (1/2, 1],

with d the number of units (features, or feature groups when the data has groups) and q the
expected number of units the base procedure selects on a half sample.

* Meinshausen & Buehlmann (2010), "Stability selection", JRSS B 72(4), Theorem 1: subsamples
  of size floor(n/2) drawn without replacement, and two assumptions: the distribution of
  {1[j selected] : j noise} is exchangeable, and the procedure is not worse than random
  guessing (E|S ∩ N| / E|S ∩ signal| <= |N| / |signal|). Then V counts the noise units.
* Shah & Samworth (2013), "Variable selection with error control: another look at stability
  selection", JRSS B 75(1), Theorem 1: with B complementary pairs (two disjoint halves per
  pair, frequencies over the 2B halves) and *no* assumption, for theta in (0, 1),
  E|S_cpss ∩ L_theta| <= theta / (2 pi - 1) * E|S_half ∩ L_theta|, where L_theta holds the
  units of selection probability at most theta. With theta = q / d and
  E|S_half ∩ L_theta| <= q this is the same q^2 / ((2 pi - 1) d), now bounding the units of
  low selection probability (no exchangeability needed); under Meinshausen & Buehlmann's two
  assumptions every noise unit is in L_{q/d}, so it bounds the falsely selected units too.
  Their sharper bounds under unimodality or r-concavity of the frequencies (Theorems 2-3)
  are not implemented here.

q is not known; it is estimated by the mean number of units selected over the subsamples
(k itself when every path reached k and there are no groups, since then every subsample
selects exactly k). For the stable set over the whole path (max over k <= k_max of the
frequency, Meinshausen & Buehlmann's set over a regularisation range), q is the mean size of
the union over k of a subsample's supports: the same theorems applied to the procedure
"the union of the supports for k = 1..k_max" bound its CPSS set, which contains the
max-over-k set.
"""

from __future__ import annotations

import math


def error_bound(q: float, n_units: int, threshold: float) -> float:
    """Upper bound on E[V], the expected number of falsely selected units in the stable set
    at ``threshold`` (pi), when the base procedure selects q units on average out of
    ``n_units``: q^2 / ((2 pi - 1) d). See the module docstring for what it assumes."""
    _check_threshold(threshold)
    if n_units < 1:
        raise ValueError(f"n_units must be at least 1, got {n_units}")
    if not 0.0 <= q <= n_units:
        raise ValueError(f"q must be between 0 and n_units = {n_units}, got {q}")
    return q * q / ((2.0 * threshold - 1.0) * n_units)


def threshold_for(q: float, n_units: int, max_false: float) -> float | None:
    """The smallest threshold pi whose bound q^2 / ((2 pi - 1) d) is at most ``max_false``:
    pi = 1/2 + q^2 / (2 d max_false); None when that exceeds 1 (no threshold meets the target:
    select fewer features per subsample, i.e. a smaller k)."""
    if not (isinstance(max_false, int | float) and math.isfinite(max_false) and max_false > 0):
        raise ValueError(f"max_false must be a positive number, got {max_false!r}")
    if n_units < 1:
        raise ValueError(f"n_units must be at least 1, got {n_units}")
    pi = 0.5 + q * q / (2.0 * n_units * max_false)
    return pi if pi <= 1.0 else None


def _check_threshold(threshold: float) -> None:
    if not (isinstance(threshold, int | float) and 0.5 < threshold <= 1.0):
        raise ValueError(f"threshold must be in (0.5, 1], got {threshold!r}")
