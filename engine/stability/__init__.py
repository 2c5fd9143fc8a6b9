"""How stable is a selection: complementary-pairs stability selection at every k.

Shah & Samworth's (2013) complementary pairs: B times, the rows are split at random into two
disjoint halves, and the algorithm runs on each half. A feature's *selection frequency* at k
is the fraction of the 2B half samples whose size-k answer selects it; the *stable set* at a
threshold pi keeps the features of frequency >= pi, and comes with a bound on the expected
number of false selections in it, E[V] <= q^2 / ((2 pi - 1) d) (Meinshausen & Buehlmann
2010, Theorem 1; Shah & Samworth 2013, Theorem 1; the assumptions of each in
``engine.stability.bounds``). With feature groups (one-hot categoricals) a group is one unit:
selected when any of its features is, and d counts groups.

Each half sample costs what a cross-validation fold costs, and is read the same way
(``engine.cv``): path methods run once and every k = 1..k_max is read off the path (the best
size-k support along a FoBa path, the k-th prefix of a forward path, a backward path's visit
of size k); the others (Frank-Wolfe, the Lasso, hard thresholding, replacement steps,
group-aware paths) run once per k.

The pieces are separate so that a service can run each half sample as its own job and merge
the partial results afterwards:

* :func:`plan_stability` checks the request once and lays out the subsamples (their rows
  from the seed, the seed of each run, the units counted): a :class:`StabilityPlan`;
* :func:`subsample_supports` runs one subsample: a :class:`SubsampleResult` (its support at
  every k; ``to_dict``/``from_dict`` for storage);
* :func:`summarise` merges any number of them into a :class:`StabilitySummary`: frequencies,
  stable sets and bounds per k and over the whole path, the threshold that meets a target
  E[V], and the stability index of the selection at every k (Nogueira et al. 2018) with the
  mean pairwise Jaccard similarity;
* :func:`stability_selection` does it all in this process or over joblib workers;
  :func:`compare_stability` runs several methods on the same subsamples and says which is
  steadiest at every k (:func:`compare` merges per-method results).

A service's jobs, for instance::

    plan = plan_stability("foba-obj", k_max=20, n_samples=n, n_features=d, groups=groups,
                          y=y, n_pairs=50, random_state=seed)
    # job i, in any process (the plan is rebuilt from the same request: it is deterministic
    # given random_state; or pickled):
    partial = subsample_supports(X, y, plan, i).to_dict()          # a few hundred integers
    # when some or all jobs are done (any order; a partial merge shows progress):
    summary = summarise(partials, plan, threshold=0.7, max_false=1.0).to_dict()

For a comparison, one plan per algorithm with the same ``n_samples``, ``n_pairs``, ``y`` and
``random_state`` holds the same subsamples; :func:`compare` checks that and builds the table.

Pure numpy; joblib is imported only when ``n_jobs != 1``.
"""

from .bounds import error_bound, threshold_for
from .compare import StabilityComparison, compare, compare_stability
from .plan import DEFAULT_PAIRS, StabilityPlan, complementary_pairs, plan_stability
from .subsample import Selector, SubsampleResult, subsample_supports
from .summary import (
    BOUND_STATEMENT,
    DEFAULT_THRESHOLD,
    StabilityResult,
    StabilitySummary,
    mean_jaccard,
    nogueira_index,
    nogueira_jackknife_se,
    run_subsamples,
    stability_selection,
    summarise,
)

__all__ = [
    "BOUND_STATEMENT",
    "DEFAULT_PAIRS",
    "DEFAULT_THRESHOLD",
    "Selector",
    "StabilityComparison",
    "StabilityPlan",
    "StabilityResult",
    "StabilitySummary",
    "SubsampleResult",
    "compare",
    "compare_stability",
    "complementary_pairs",
    "error_bound",
    "mean_jaccard",
    "nogueira_index",
    "nogueira_jackknife_se",
    "plan_stability",
    "run_subsamples",
    "stability_selection",
    "subsample_supports",
    "summarise",
    "threshold_for",
]
