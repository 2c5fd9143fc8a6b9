"""Choosing k by cross-validation, from one path per fold.

A grid search over k refits a whole path for every k. One path holds more than that: FoBa's
path holds the best support of every size it visited (Zhang 2008, Section 4), a forward path
holds every prefix, and backward elimination visits every size once. So each fold runs the
algorithm once on its training part and scores every k = 1..k_max from that one trace: the
size-k answer read off the path, refitted on the training part, is evaluated on the held-out
part. The answers read off the path are exactly those that ``engine.select(k=k)`` would give
on the fold (the tests check it), so the curve is that of the method itself, not of an
approximation:

* ``best-k``: the path's decisions do not depend on k, only where it stops (``max_steps``,
  Zhang's 5k by default), so the run at k is the first ``path_length(k)`` support changes of
  the run at k_max; the size-k answer is the best size-k support along those steps
  (``engine.trace.best_along_path``).
* ``prefix``: the support after the k-th addition.
* ``backward``: the run goes down to one feature; the support when it passed size k.
* ``final`` (Frank-Wolfe, the Lasso, hard thresholding, and forward methods with replacement
  steps), and group-aware paths (whose sizes inside a group are not answers): the sizes along
  the path are not answers, so the fold runs the algorithm once per k. Correct, and k_max
  times slower; ``CVPlan.mode`` says which way a fold goes.

The pieces are separate so that a service can run each fold as its own job:
:func:`plan_cv` checks a request once (a :class:`~engine.config.ConfigError` naming the field at
fault), :func:`fold_errors` scores one fold, :func:`summarise` turns the folds into the curve
(mean and standard error per k) and the chosen k (minimum, or the one-standard-error rule).
:func:`kfold` makes the folds and :func:`cross_validate_k` runs them all in this process.
Pure numpy: the scikit-learn estimators (``engine.sklearn``) sit on top of these functions.
"""

from .folds import Callback, FoldResult, fold_errors, kfold, score
from .plan import (
    DEFAULT_METRIC,
    METRICS,
    METRICS_FOR_TASK,
    MODES,
    RULES,
    CVPlan,
    plan_cv,
    supports_by_k,
)
from .summary import CVResult, CVSummary, choose_k, cross_validate_k, summarise

__all__ = [
    "DEFAULT_METRIC",
    "METRICS",
    "METRICS_FOR_TASK",
    "MODES",
    "RULES",
    "CVPlan",
    "CVResult",
    "CVSummary",
    "Callback",
    "FoldResult",
    "choose_k",
    "cross_validate_k",
    "fold_errors",
    "kfold",
    "plan_cv",
    "score",
    "summarise",
    "supports_by_k",
]
