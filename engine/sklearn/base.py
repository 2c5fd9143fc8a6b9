"""What the estimators share: the engine's parameters as keyword arguments, the fitted
attributes, the default k, binary labels and the tags."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..api import SelectionResult, select
from ..config import default_k
from ..registry import REGISTRY

_ACCEPT_SPARSE = ("csr", "csc")
_FIT_CHECKS = {"accept_sparse": _ACCEPT_SPARSE, "dtype": np.float64, "ensure_min_samples": 2}


class _EngineParams:
    """What every estimator here shares: the engine's parameters as keyword arguments.

    They are kept in ``_params`` (not as attributes: they are not in ``__init__``'s signature)
    and added to ``get_params``; ``set_params`` takes any name and ``fit`` checks it.
    """

    # Set by every estimator's __init__ (its signature, which get_params reads).
    algorithm: str
    objective: str
    standardize: bool
    groups: Any
    random_state: int | None
    _params: dict[str, Any]

    # The ignores below: scikit-learn has no stubs, and mypy sees object, not the BaseEstimator
    # after this mixin in every estimator's MRO, as the provider of get_params, set_params and
    # _get_param_names.
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        params = super().get_params(deep=deep)  # type: ignore[misc]
        params.update(self._params)
        return params

    def set_params(self, **params: Any) -> Any:
        # Names outside the signature go to the engine; ``fit`` checks them against the
        # algorithm chosen (which may change in this same call), as scikit-learn validates
        # parameters in ``fit``.
        own = set(self._get_param_names())  # type: ignore[attr-defined]
        extra = {n: v for n, v in params.items() if n not in own and "__" not in n}
        super().set_params(**{n: v for n, v in params.items() if n not in extra})  # type: ignore[misc]
        if extra:
            self._params = {**self._params, **extra}
        return self

    def _select(self, X, y, k: int | None, objective: str | None = None) -> SelectionResult:
        """``objective``: the one resolved at fit when it differs from the parameter's."""
        return select(
            X,
            y,
            algorithm=self.algorithm,
            objective=objective or self.objective,
            k=k,
            groups=self.groups,
            random_state=self.random_state,
            standardize=self.standardize,
            **self._params,
        )

    def _check_task(self, task: str, objective: str | None = None) -> None:
        spec = REGISTRY.objective(objective or self.objective)
        if spec.task != task:
            fitting = [n for n, s in REGISTRY.objectives.items() if s.task == task]
            raise ValueError(
                f"{type(self).__name__} needs a {task} objective ({', '.join(fitting)}); "
                f"objective {spec.name!r} is for {spec.task}"
            )

    def _store(self, result: SelectionResult) -> None:
        self.coef_ = result.coef
        self.intercept_ = result.intercept
        self.support_ = result.support
        self.objective_ = result.objective
        self.trace_ = result.trace
        self.stop_reason_ = result.stop_reason


def _default_k(estimator: Any, n_features: int, objective: str | None = None) -> int | None:
    """k when none is given: the engine's one default (``engine.default_k``: the algorithm's
    own stopping rule when its parameters give one, otherwise 5 features), as the app and the
    command line apply it; ``objective`` is the one resolved at fit, if not the parameter."""
    objective = objective or estimator.objective
    return default_k(estimator.algorithm, objective, n_features, estimator._params)


def _tags(tags: Any) -> Any:
    tags.input_tags.sparse = True
    return tags


class _SparseLinear(_EngineParams):
    """A fitted sparse linear model: coef_, intercept_, support_, trace_."""

    def _decision(self, X) -> np.ndarray:
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_


class _Binary:
    """Two classes: ``classes_[1]`` is the positive class, predicted when the decision
    function is positive (the engine's classification objectives read labels that way)."""

    objective: str
    if TYPE_CHECKING:
        # Provided by _SparseLinear, which every estimator mixing this in also derives from.
        def _decision(self, X) -> np.ndarray: ...

    def _encode(self, y) -> np.ndarray:
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(
                f"Only binary classification is supported by {type(self).__name__}: y must hold "
                f"exactly 2 classes, found {len(self.classes_)} class(es): "
                f"{self.classes_[:5].tolist()}"
            )
        return (y == self.classes_[1]).astype(np.float64)

    def decision_function(self, X) -> np.ndarray:
        """Signed score of the positive class ``classes_[1]``, shape (n_samples,)."""
        return self._decision(X)

    def predict(self, X) -> np.ndarray:
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(np.intp)]

    def _has_proba(self) -> bool:
        return self.objective == "logistic"

    @available_if(_has_proba)
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities of the logistic model (``objective="logistic"`` only)."""
        p = 1.0 / (1.0 + np.exp(-self.decision_function(X)))
        return np.column_stack([1.0 - p, p])

    @available_if(_has_proba)
    def predict_log_proba(self, X) -> np.ndarray:
        d = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0.0, d), -np.logaddexp(0.0, -d)])


def _classifier_tags(tags: Any) -> Any:
    tags = _tags(tags)
    tags.classifier_tags.multi_class = False
    return tags
