"""Train/test split, the summary of a finished run (support, fit metrics, recovery), and the
error of other supports refitted on the same split (the compare page's error by k)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

import engine
from app import storage
from app.models import (
    Dataset,
    FitMetrics,
    Run,
    RunResult,
    SelectedFeature,
    SupportRecovery,
    Task,
)
from app.storage import ArrayStore
from engine import SelectionResult
from engine import metrics as measures
from engine.cv import kfold
from engine.scaling import column_scale, scale_columns


def split_rows(
    y: np.ndarray, task: str, test_fraction: float | None, seed: int
) -> tuple[np.ndarray, np.ndarray | None]:
    """Row indices to train and test on; classification splits within each class so both
    sides keep both classes."""
    n = len(y)
    if not test_fraction:
        return np.arange(n), None
    rng = np.random.default_rng(seed)
    strata = (
        [np.flatnonzero(y == c) for c in np.unique(y)]
        if task == Task.classification
        else [np.arange(n)]
    )
    test = np.concatenate(
        [rng.permutation(rows)[: round(len(rows) * test_fraction)] for rows in strata]
    )
    return np.setdiff1d(np.arange(n), test), np.sort(test)


def select_run(
    run: Run, dataset: Dataset, X: Any, y: np.ndarray, recorder: Any = None
) -> SelectionResult:
    """``engine.select`` with a run's settings, on the rows given (the one place a stored run
    becomes an engine call: the workers and the teaching mode's instant reruns use it)."""
    return engine.select(
        X,
        y,
        algorithm=run.algorithm,
        objective=run.objective,
        k=run.k,
        groups=dataset.groups,
        recorder=recorder,
        random_state=run.seed,
        record_candidates=run.record_candidates,
        standardize=run.standardize,
        **run.params,
    )


def check_split(y: np.ndarray, task: str, test_fraction: float | None, seed: int) -> str | None:
    """Why the split cannot be used, or None."""
    train, test = split_rows(y, task, test_fraction, seed)
    if test is not None and len(test) == 0:
        return f"test_fraction {test_fraction} of {len(y)} rows leaves no row to test on"
    if len(train) < 2:
        return f"test_fraction {test_fraction} of {len(y)} rows leaves fewer than 2 to train on"
    if task == Task.classification and len(np.unique(y[train])) < 2:
        return f"test_fraction {test_fraction} leaves a single class to train on"
    return None


def fit_metrics(X: Any, y: np.ndarray, coef: np.ndarray, intercept: float, task: str) -> FitMetrics:
    """MSE and R^2 for a regression objective; accuracy and log-loss for a classification one
    (y holds 0/1, the linear predictor is the log-odds of 1)."""
    eta = np.asarray(X @ coef).ravel() + intercept
    if task == Task.regression:
        mse = measures.squared_error(y, eta)
        variance = float(np.var(y))
        r2 = 1.0 - mse / variance if variance > 0 else None
        return FitMetrics(n_samples=len(y), mse=_finite(mse), r2=_finite(r2))
    log_loss = float(np.mean(np.logaddexp(0.0, eta) - y * eta))
    accuracy = measures.accuracy(y, (eta > 0).astype(float))
    return FitMetrics(n_samples=len(y), accuracy=accuracy, log_loss=_finite(log_loss))


def path_auc(events: Any, true_support: list[int], n_features: int) -> float | None:
    """The support-recovery ROC AUC of a path (features ranked by first admission, as the run
    page draws it), or None when the truth has no true or no false feature."""
    try:
        curve = measures.roc_curve(measures.path_order(events), list(true_support), n_features)
    except ValueError:
        return None
    return _finite(float(curve.auc))


def recovery(
    support: np.ndarray, true_support: list[int], names: list[str], events: Any = ()
) -> SupportRecovery:
    selected, truth = set(support.tolist()), set(true_support)
    hits = len(selected & truth)
    false_pos = measures.feature_selection_error(support, true_support)  # |S \ S*|
    false_neg = measures.feature_selection_error(true_support, support)  # |S* \ S|
    return SupportRecovery(
        true_support=[names[j] for j in sorted(truth)],
        true_positives=hits,
        false_positives=false_pos,
        false_negatives=false_neg,
        precision=hits / len(selected) if selected else 0.0,
        recall=hits / len(truth) if truth else 1.0,
        f_measure=measures.f_measure(support, true_support),
        selection_error=false_pos + false_neg,
        exact_recovery=selected == truth,
        auc=path_auc(events, true_support, len(names)),
    )


def summarise(
    result: SelectionResult,
    *,
    names: list[str],
    task: str,
    train: tuple[Any, np.ndarray],
    test: tuple[Any, np.ndarray] | None,
    true_support: list[int] | None,
) -> RunResult:
    coef, intercept = result.coef, result.intercept
    return RunResult(
        support=[
            SelectedFeature(index=int(j), name=names[j], coef=float(coef[j]))
            for j in result.support
        ],
        intercept=intercept,
        objective=_finite(result.objective),
        n_steps=result.n_steps,
        stop_reason=result.stop_reason,
        engine_seconds=result.elapsed,
        train=fit_metrics(*train, coef, intercept, task),
        test=fit_metrics(*test, coef, intercept, task) if test is not None else None,
        recovery=(
            recovery(result.support, true_support, names, result.trace)
            if true_support is not None
            else None
        ),
    )


def _finite(x: float | None) -> float | None:
    # JSON (and PostgreSQL's json type) has no NaN or infinity.
    return float(x) if x is not None and np.isfinite(x) else None


def refit_errors(
    run: Any, dataset: Any, store: ArrayStore, supports: dict[int, list[int]]
) -> tuple[dict[int, float | None], str]:
    """Test error of each support refitted on the run's training rows: mean squared error for
    a regression objective, classification error for a classification one. Returns the errors
    by k and the error's name."""
    arrays = store.load(dataset.file)
    X, y = storage.unpack_matrix(arrays), arrays["y"]
    if sp.issparse(X):
        X = sp.csc_matrix(X)
    train, test = split_rows(y, dataset.task, run.test_fraction, run.seed)
    spec = engine.OBJECTIVES[run.objective]
    own = {p.name for p in spec.params}
    params = {n: v for n, v in run.params.items() if n in own}
    X_train, X_test = X[train], X[test] if test is not None else None
    if run.standardize and "linear" in spec.capabilities:
        # Refit as the run fitted: a ridge term (lam) weighs the scaled coefficients.
        scale = column_scale(X_train, centered=bool(params.get("fit_intercept", True)))
        X_train = scale_columns(X_train, scale)
        X_test = scale_columns(X_test, scale) if X_test is not None else None
    loss = spec.factory(X_train, y[train], **params)
    rows = (X_test, y[test]) if test is not None else (X_train, y[train])
    classify = spec.task == "classification"
    errors: dict[int, float | None] = {}
    for k, support in supports.items():
        state = loss.fit_support(support)
        m = fit_metrics(*rows, state.coef, state.intercept, spec.task)
        errors[k] = (1.0 - m.accuracy) if classify and m.accuracy is not None else m.mse
    return errors, "classification error" if classify else "mean squared error"


def fold_split(y: np.ndarray, objective: str, n_folds: int, seed: int) -> list[tuple]:
    """The study's (train, test) rows: ``engine.cv.kfold``, stratified for a classification
    objective (as ``engine.cv.cross_validate_k`` splits)."""
    labels = y if engine.OBJECTIVES[objective].task == Task.classification else None
    return kfold(len(y), n_folds, y=labels, random_state=seed)
