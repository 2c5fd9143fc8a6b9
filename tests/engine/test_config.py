"""``engine.check_config``: the one validation, and the requirements and traits it reads."""

from __future__ import annotations

import numpy as np
import pytest
from engine_problems import make_classification, make_regression

import engine
from engine.config import algorithms_for
from engine.trace import EVENT_KINDS

# Every registered algorithm with parameters that let it run on a small grouped problem.
RUNNABLE = {
    "fb-threshold": {"eps_back": 0.05},
    "frank-wolfe": {"B1": 5.0},
    "randomized-sparsification": {"B1": 5.0},
    "ght": {"s2": 2},
    "sght": {"s2": 2},
}


def test_the_crf_is_offered_exactly_the_active_set_algorithms() -> None:
    """What the CRF's hand-written list said (and FoBa with the refit rule, added since), now
    derived from the declared requirements."""
    crf = engine.OBJECTIVES["crf"]
    assert set(algorithms_for(crf)) == {
        "foba-obj",
        "foba-refit",
        "foba-gdt",
        "fb-threshold",
        "forward-obj",
        "omp",
        "stepwise",
        "backward",
        "oblivious",
        "replacement",
    }
    assert set(algorithms_for(engine.OBJECTIVES["least_squares"])) == set(engine.ALGORITHMS)


@pytest.mark.parametrize(
    ("request_", "field", "words"),
    [
        ({"algorithm": "magic"}, "algorithm", ["unknown algorithm 'magic'", "foba-obj"]),
        ({"algorithm": "omp", "objective": "hinge", "k": 2}, "objective", ["'hinge'"]),
        ({"algorithm": "lasso", "objective": "smoothed_hinge", "k": 2}, "objective", ["l1-path"]),
        ({"algorithm": "sght", "objective": "crf", "k": 2}, "objective", ["'crf' works with"]),
        (
            {"algorithm": "lasso", "objective": "logistic", "k": 2, "params": {"path": "lars"}},
            "params",
            ["'path' = 'lars'", "least squares"],
        ),
        ({"algorithm": "omp", "k": 2, "params": {"nu": 0.5}}, "params", ["no parameter 'nu'"]),
        ({"algorithm": "backward"}, "k", ["needs k", "1 to 10"]),
        ({"algorithm": "omp", "k": 11}, "k", ["between 1 and 10", "got 11"]),
        ({"algorithm": "omp", "k": True}, "k", ["integer"]),
        ({"algorithm": "ght", "k": 2, "params": {"s2": 1}}, "k", ["does not take k"]),
        ({"algorithm": "group-omp", "k": 2, "has_groups": False}, "groups", ["needs groups"]),
        ({"algorithm": "foba-obj"}, "params", ["the path needs an end"]),
        ({"algorithm": "omp"}, "params", ["stopping threshold"]),
        ({"algorithm": "group-omp", "has_groups": True}, "params", ["k, n_groups or epsilon"]),
        ({"algorithm": "backward", "k": 2, "n_samples": 10}, "algorithm", ["more samples"]),
        (
            {"algorithm": "omp", "objective": "logistic", "k": 2, "task": "regression"},
            "objective",
            ["binary target"],
        ),
    ],
)
def test_refusals_name_the_field_and_what_is_allowed(request_, field, words) -> None:
    request_ = {"n_samples": 40, "n_features": 10, **request_}
    with pytest.raises(engine.ConfigError) as caught:
        engine.check_config(
            request_.pop("algorithm"), request_.pop("objective", "least_squares"), **request_
        )
    assert caught.value.field == field
    for word in words:
        assert word in str(caught.value)


def test_select_refuses_with_the_same_words_as_check_config() -> None:
    X, y = make_regression(0, n=30, d=8)
    for algorithm, kw in [("backward", {}), ("omp", {"k": 9}), ("group-omp", {"k": 2})]:
        with pytest.raises(engine.ConfigError) as direct:
            engine.check_config(
                algorithm, k=kw.get("k"), n_samples=30, n_features=8, has_groups=False
            )
        with pytest.raises(ValueError, match=str(direct.value).split("(")[0][:40]):
            engine.select(X, y, algorithm=algorithm, **kw)


def test_defaults_are_filled_and_the_path_length_is_zhangs_5k() -> None:
    config = engine.check_config("foba-obj", k=4, n_features=50)
    assert config.params["nu"] == 0.5 and config.params["fit_intercept"] is True
    assert config.path_length == 20
    assert engine.check_config("foba-obj", k=4, params={"max_steps": 7}).path_length is None
    assert (
        engine.check_config("foba-obj", k=4, params={"max_steps": 7}, n_features=9).path_length == 7
    )
    assert engine.check_config("omp", k=4, n_features=50).path_length is None
    assert (
        engine.check_config("forward-obj", k=3, params={"selection": "quad"}).forward_rule == "quad"
    )


def test_the_registry_names_one_default_algorithm_and_every_path_meaning() -> None:
    assert engine.REGISTRY.default_algorithm == "foba-obj"
    for spec in engine.ALGORITHMS.values():
        assert spec.traits.path in engine.registry.PATHS
        d = spec.to_dict()
        assert d["requires"]["groups"] == spec.uses_groups and d["path"] == spec.traits.path


@pytest.mark.parametrize("algorithm", sorted(engine.ALGORITHMS))
def test_every_event_of_a_kind_carries_the_same_fields(algorithm: str) -> None:
    """The recorder helpers fix each kind's fields: adds are accepted and name a feature,
    checks are refused, swaps name both features, stops give a reason."""
    X, y = make_regression(3, n=40, d=12)
    groups = np.arange(12) // 3
    spec = engine.ALGORITHMS[algorithm]
    k = None if spec.k == "unused" else 4
    result = engine.select(
        X, y, algorithm=algorithm, k=k, groups=groups, random_state=0, **RUNNABLE.get(algorithm, {})
    )
    assert {e.kind for e in result.trace} <= set(EVENT_KINDS)
    for e in result.trace:
        if e.kind in ("add", "remove", "swap"):
            assert e.feature is not None and e.accepted is True, e
        if e.kind == "swap":
            assert e.feature_out is not None, e
        if e.kind == "check":
            assert e.accepted is False and e.gain is not None and e.threshold is not None, e
        if e.kind == "stop":
            assert e.reason and e is result.trace[-1], e
    assert result.trace[-1].kind == "stop"


def test_logistic_data_with_a_regression_task_is_refused_by_select_too() -> None:
    X, y = make_classification(0, n=30, d=5)
    with pytest.raises(ValueError, match="must be numeric"):
        engine.select(X, np.where(y > 0, "yes", "no"), algorithm="omp", k=2)
