"""Parameter validation (every bad input is a ValueError naming what is wrong), the registries'
descriptions, and the documented effect of the stopping parameters."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import scipy.sparse as sp
from engine_problems import make_classification, make_regression
from engine_reference import ls_coordinate_drops, ls_refit

import engine
from engine.registry import INT_LIMIT, Param

X, Y = make_regression(0, n=30, d=8)
XC, YC = make_classification(0, n=30, d=8)


def _name(word: str) -> str:
    """Regex: the word on its own (quoted or not), not inside a longer identifier."""
    return rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])"


def _with_nan(X):
    X = X.copy()
    X[3, 2] = np.nan
    return X


BAD_CALLS = [
    # (id, kwargs for engine.select, word the message must contain)
    ("nu=2", dict(algorithm="foba-obj", k=3, nu=2), "nu"),
    ("nu=0", dict(algorithm="foba-obj", k=3, nu=0.0), "nu"),
    ("nu-str", dict(algorithm="foba-gdt", k=3, nu="0.5"), "nu"),
    ("backward=x", dict(algorithm="foba-obj", k=3, backward="x"), "backward"),
    ("unknown-param", dict(algorithm="foba-obj", k=3, foo=1), "foo"),
    ("lam-on-least-squares", dict(algorithm="omp", k=3, lam=0.1), "lam"),
    ("k=0", dict(algorithm="foba-obj", k=0), "k"),
    ("k>d", dict(algorithm="omp", k=9), "k"),
    ("k-float", dict(algorithm="omp", k=2.5), "k"),
    ("k-bool", dict(algorithm="omp", k=True), "k"),
    ("k-missing-oblivious", dict(algorithm="oblivious"), "k"),
    ("k-missing-replacement", dict(algorithm="replacement"), "k"),
    ("no-stopping-rule", dict(algorithm="foba-obj"), "k"),
    ("eps_back-missing", dict(algorithm="fb-threshold", k=3), "eps_back"),
    ("eps_back-negative", dict(algorithm="fb-threshold", k=3, eps_back=-1.0), "eps_back"),
    ("max_steps=0", dict(algorithm="foba-obj", k=3, max_steps=0), "max_steps"),
    ("max_steps-float", dict(algorithm="foba-obj", k=3, max_steps=2.5), "max_steps"),
    ("delta-negative", dict(algorithm="foba-obj", delta=-1.0), "delta"),
    ("delta-nan", dict(algorithm="forward-obj", delta=float("nan")), "delta"),
    ("epsilon-zero", dict(algorithm="omp", epsilon=0.0), "epsilon"),
    ("selection=gdt", dict(algorithm="forward-obj", k=3, selection="gdt"), "selection"),
    ("replacement=x", dict(algorithm="omp", k=3, replacement="x"), "replacement"),
    ("variant=x", dict(algorithm="replacement", k=3, variant="x"), "variant"),
    (
        "max_replacements=0",
        dict(algorithm="replacement", k=3, max_replacements=0),
        "max_replacements",
    ),
    ("fit_intercept-str", dict(algorithm="omp", k=3, fit_intercept="yes"), "fit_intercept"),
    ("unknown-algorithm", dict(algorithm="no-such-algorithm", k=3), "no-such-algorithm"),
    ("unknown-objective", dict(algorithm="omp", k=3, objective="hinge"), "hinge"),
    ("backward-on-wide-data", dict(algorithm="backward", k=3, X=X[:6], y=Y[:6]), "n_samples"),
    ("backward-on-square-data", dict(algorithm="backward", k=3, X=X[:8], y=Y[:8]), "n_features"),
    (
        "logistic-3-classes",
        dict(algorithm="omp", k=3, objective="logistic", y=np.arange(30) % 3),
        "y",
    ),
    ("logistic-1-class", dict(algorithm="omp", k=3, objective="logistic", y=np.ones(30)), "y"),
    ("logistic-lam-negative", dict(algorithm="omp", k=3, objective="logistic", lam=-1.0), "lam"),
    ("nan-in-X", dict(algorithm="foba-obj", k=3, X=_with_nan(X)), "NaN"),
    ("nan-in-sparse-X", dict(algorithm="foba-obj", k=3, X=sp.csr_matrix(_with_nan(X))), "NaN"),
    ("inf-in-y", dict(algorithm="omp", k=3, y=np.r_[np.inf, Y[1:]]), "y"),
    ("y-length", dict(algorithm="omp", k=3, y=Y[:-1]), "y"),
    ("X-1d", dict(algorithm="omp", k=1, X=X[:, 0]), "X"),
    ("X-strings", dict(algorithm="omp", k=1, X=X.astype(str)), "X"),
]


@pytest.mark.parametrize(("kwargs", "word"), [pytest.param(kw, w, id=i) for i, kw, w in BAD_CALLS])
def test_bad_parameters_raise_value_error_naming_them(kwargs, word):
    kwargs = dict(kwargs)
    objective = kwargs.get("objective", "least_squares")
    default_y = YC if objective == "logistic" else Y
    Xa = kwargs.pop("X", XC if objective == "logistic" else X)
    ya = kwargs.pop("y", default_y)
    with pytest.raises(ValueError, match=_name(word)):
        engine.select(Xa, ya, **kwargs)


SPARSE_FORMATS = ["csr", "csc", "coo", "bsr", "dia", "lil", "dok"]


@pytest.mark.parametrize("kind", ["matrix", "array"])
@pytest.mark.parametrize("fmt", SPARSE_FORMATS)
def test_every_scipy_sparse_format_is_accepted(fmt, kind):
    """``X : ndarray or scipy.sparse matrix``: any scipy.sparse format gives the dense trace."""
    Xs, ys = make_regression(3, n=40, d=12, density=0.4)
    ref = engine.select(Xs, ys, algorithm="foba-obj", k=3)
    res = engine.select(getattr(sp, f"{fmt}_{kind}")(Xs), ys, algorithm="foba-obj", k=3)
    assert [(e.kind, e.feature) for e in res.trace] == [(e.kind, e.feature) for e in ref.trace]
    assert res.objective == pytest.approx(ref.objective, rel=1e-10)


@pytest.mark.parametrize("fmt", SPARSE_FORMATS)
def test_nan_in_sparse_x_of_any_format_is_a_value_error(fmt):
    Xs = sp.lil_matrix(X)
    Xs[4, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        engine.select(Xs.asformat(fmt), Y, algorithm="omp", k=2)


def test_non_numeric_y_for_least_squares_names_y():
    with pytest.raises(ValueError, match=_name("y")):
        engine.select(X, np.array(["low", "high"] * 15), algorithm="omp", k=2)


def test_nan_message_locates_the_first_bad_entry():
    with pytest.raises(ValueError, match=r"row 3, column 2"):
        engine.select(_with_nan(X), Y, algorithm="omp", k=2)


def test_bad_names_list_what_is_allowed():
    with pytest.raises(ValueError) as err:
        engine.select(X, Y, algorithm="foba-obj", k=3, backward="x")
    for choice in ("standard", "conservative", "aggressive"):
        assert choice in str(err.value)
    with pytest.raises(ValueError) as err:
        engine.select(X, Y, algorithm="no-such-algorithm", k=3)
    assert "foba-obj" in str(err.value) and "omp" in str(err.value)
    with pytest.raises(ValueError) as err:
        engine.select(X, Y, algorithm="foba-obj", k=3, foo=1)
    assert "nu" in str(err.value) and "backward" in str(err.value)


@pytest.mark.parametrize("k", [1, 8])
def test_k_at_the_bounds_is_accepted(k):
    res = engine.select(X, Y, algorithm="forward-obj", k=k)
    assert len(res.support) == k
    res = engine.select(X, Y, algorithm="foba-obj", k=np.int64(k))
    assert len(res.support) == k


def test_backward_works_just_above_the_sample_bound():
    res = engine.select(X[:9], Y[:9], algorithm="backward", k=3)
    assert len(res.support) == 3


def test_any_two_labels_work_for_logistic():
    labels = np.where(YC == 1, "spam", "ham")
    a = engine.select(XC, labels, algorithm="foba-obj", objective="logistic", k=3)
    b = engine.select(XC, YC, algorithm="foba-obj", objective="logistic", k=3)
    assert a.support.tolist() == b.support.tolist()
    assert a.objective == pytest.approx(b.objective, rel=1e-12)


def test_result_reports_the_validated_parameters():
    res = engine.select(X, Y, algorithm="foba-obj", k=3, nu=0.25)
    assert res.params == {
        "fit_intercept": True,
        "backward": "standard",
        "nu": 0.25,
        "delta": None,
        "max_steps": None,
        "deletion_cost": "fixed",
        "path_end": "auto",
        "polish": False,
    }
    assert res.algorithm == "foba-obj" and res.objective_name == "least_squares" and res.k == 3
    res = engine.select(XC, YC, algorithm="omp", objective="logistic", k=2, lam=0.5)
    assert res.params["lam"] == 0.5 and res.params["fit_intercept"] is True


# --------------------------------------------------------------------------- registries


def test_registries_list_the_documented_entries():
    assert set(engine.ALGORITHMS) == {
        "foba-obj",
        "foba-gdt",
        "foba-refit",
        "fb-threshold",
        "forward-obj",
        "omp",
        "stepwise",
        "backward",
        "oblivious",
        "replacement",
        "frank-wolfe",
        "randomized-sparsification",
        "lasso",
        "lasso-refit",
        "group-omp",
        "sght",
        "iht",
        "ght",
        "abess",
        "abess-group",
    }
    assert set(engine.OBJECTIVES) == {
        "least_squares",
        "logistic",
        "crf",
        "smoothed_hinge",
        "smoothed_absolute",
    }
    assert [p.name for p in engine.OBJECTIVES["logistic"].params] == ["lam", "fit_intercept"]
    assert engine.OBJECTIVES["logistic"].params[0].default == 1e-4


@pytest.mark.parametrize(
    "spec", [*engine.ALGORITHMS.values(), *engine.OBJECTIVES.values()], ids=lambda s: s.name
)
def test_json_schema_describes_every_parameter(spec):
    schema = spec.json_schema()
    json.dumps(schema)  # serialisable
    names = [p.name for p in spec.params]
    assert len(names) == len(set(names))
    assert set(schema["properties"]) == set(names)
    assert schema["required"] == [p.name for p in spec.params if p.required]
    assert schema["additionalProperties"] is False
    for p in spec.params:
        prop = schema["properties"][p.name]
        assert prop["description"] == p.help
        if not p.required:
            assert prop["default"] == p.default
            assert p.validate(p.default) == p.default  # the default is itself valid
        if p.choices:
            inner = prop["anyOf"][0] if p.nullable else prop
            assert inner["enum"] == list(p.choices)
    json.dumps(spec.to_dict())


def test_param_bounds_in_schema_and_validation_agree():
    p = Param("x", "float", 0.5, "h", minimum=0.0, maximum=1.0, exclusive_minimum=True)
    s = p.json_schema()
    assert s["exclusiveMinimum"] == 0.0 and s["maximum"] == 1.0
    assert p.validate(1.0) == 1.0 and p.validate(1e-9) == 1e-9
    for bad in (0.0, 1.0000001, -1, float("inf"), None, True, "0.5"):
        with pytest.raises(ValueError, match=_name("x")):
            p.validate(bad)
    q = Param("n", "int", None, "h", minimum=1, nullable=True)
    assert q.validate(None) is None and q.validate(3) == 3
    assert isinstance(q.validate(np.int64(3)), int)
    # Strict: a float is no integer (even 3.0 or 1e300), and an int without its own maximum
    # is still bounded (the schema says so too).
    assert q.json_schema()["anyOf"][0]["maximum"] == INT_LIMIT
    for bad in (3.0, 1e300, True, "3", INT_LIMIT + 1, 2**63):
        with pytest.raises(ValueError, match=_name("n")):
            q.validate(bad)


# --------------------------------------------------------------------------- stopping rules


def test_delta_stops_foba_when_no_coordinate_drop_reaches_it():
    Xr, yr = make_regression(5, n=50, d=20, noise=1.0)
    delta = 0.02
    res = engine.select(Xr, yr, algorithm="foba-obj", delta=delta)
    assert res.k is None
    assert "delta" in res.stop_reason
    adds = [e for e in res.trace if e.kind == "add"]
    assert adds and all(e.score >= delta for e in adds)
    # At the end, every unselected feature's best one-coordinate drop is below delta.
    coef, b, _ = ls_refit(Xr, yr, res.support)
    drops = ls_coordinate_drops(Xr, yr, coef, b, set(range(20)) - set(res.support), True)
    assert max(drops.values()) < delta
    np.testing.assert_allclose(res.coef, coef, rtol=1e-8, atol=1e-10)


def test_epsilon_stops_omp_when_the_gradient_is_small():
    Xr, yr = make_regression(6, n=50, d=20, noise=1.0)
    eps = 0.05
    res = engine.select(Xr, yr, algorithm="omp", epsilon=eps)
    assert "epsilon" in res.stop_reason
    coef, b, _ = ls_refit(Xr, yr, res.support)
    grad = -Xr.T @ (yr - Xr @ coef - b) / 50
    assert np.max(np.abs(grad)) < eps
    # ... and it did not stop early: the gradient before the last add was at least epsilon.
    adds = [e.feature for e in res.trace if e.kind == "add"]
    coef, b, _ = ls_refit(Xr, yr, adds[:-1])
    assert np.max(np.abs(-Xr.T @ (yr - Xr @ coef - b) / 50)) >= eps


def test_max_steps_caps_the_path():
    Xr, yr = make_regression(7, n=50, d=20)
    res = engine.select(Xr, yr, algorithm="foba-gdt", max_steps=3)
    assert res.n_steps == 3 and "max_steps" in res.stop_reason
    res = engine.select(Xr, yr, algorithm="foba-obj", k=2, max_steps=30)
    assert res.n_steps <= 30
    assert len(res.support) == 2


def test_foba_returns_the_best_smaller_support_when_the_path_stops_short():
    # A one-step budget ends the path after the first add: it never visits a size-3 support.
    Xr, yr = make_regression(8, n=50, d=20)
    res = engine.select(Xr, yr, algorithm="foba-obj", k=3, max_steps=1)
    assert len(res.support) == 1
    assert "never reached" in res.stop_reason
    assert res.objective == pytest.approx(ls_refit(Xr, yr, res.support)[2], rel=1e-10)


def test_a_subnormal_float_parameter_is_refused_naming_the_smallest_normal() -> None:
    import engine

    with pytest.raises(engine.ConfigError, match="smallest normal number"):
        engine.check_config(
            "foba-obj", "least_squares", k=2, params={"nu": 1e-320}, n_samples=10, n_features=5
        )
    checked = engine.check_config(
        "foba-obj", "least_squares", k=2, params={"nu": 1e-300}, n_samples=10, n_features=5
    )
    assert checked.params["nu"] == 1e-300
