"""scikit-learn estimators over the engine: thin layers over ``engine.select`` and ``engine.cv``.

``SparseRegressor`` and ``SparseClassifier`` fit a sparse linear model with any registered
algorithm (``algorithm=``, default FoBa-obj); ``SparseSelector`` is the same selection as a
transformer for pipelines; ``SparseRegressorCV`` and ``SparseClassifierCV`` choose k by K-fold
cross-validation from one path per fold (``engine.cv``), then fit on all the data at that k;
``StabilitySelector`` keeps the stable set of complementary-pairs stability selection
(``engine.stability``).

The algorithm's and the objective's parameters are keyword arguments (``nu=0.3``,
``lam=0.01``, ``max_steps=40``...): ``get_params`` and ``set_params`` see them, so ``clone``
and ``GridSearchCV`` work on them like on any parameter, and ``fit`` validates them through the
registry (``engine.check_config``), with the same errors as ``engine.select``.

How good is a fitted estimator's selection? The judging tools take the estimator's support
and the same objective settings (``engine.judge``)::

    est = SparseRegressor(k=5).fit(X, y)
    engine.certify(X, y, est.support_, objective=est.objective, standardize=est.standardize)
    engine.why_not(X, y, est.support_, feature=7, objective=est.objective)
    engine.exact_best(X, y, k=5, support=est.support_, objective=est.objective)

(objective parameters such as ``lam`` or ``fit_intercept`` given to the estimator go along as
keywords); ``engine.select(..., polish=True)`` / ``SparseRegressor(polish=True)`` polishes the
answer by exchanges until it is a local optimum under swaps.

Importing this package imports scikit-learn and joblib; ``import engine`` does neither.
"""

from .cv import DEFAULT_K_MAX, SparseClassifierCV, SparseRegressorCV
from .estimators import SparseClassifier, SparseRegressor, SparseSelector
from .stability import StabilitySelector

__all__ = [
    "DEFAULT_K_MAX",
    "SparseClassifier",
    "SparseClassifierCV",
    "SparseRegressor",
    "SparseRegressorCV",
    "SparseSelector",
    "StabilitySelector",
]
