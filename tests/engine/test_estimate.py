"""engine.estimate: the cost model's shape (what grows the prediction), never a timing."""

from __future__ import annotations

import pytest

from engine import ConfigError
from engine.estimate import LONG_SECONDS, duration, estimate


def _est(algorithm="foba-obj", objective="logistic", n=4000, d=4000, k=40, **params):
    return estimate(algorithm, objective, n_samples=n, n_features=d, k=k, params=params)


def test_a_small_run_is_not_long_and_says_nothing() -> None:
    small = _est(n=100, d=500, k=14)
    assert not small.long and small.sentence is None and small.faster == []
    assert small.seconds < LONG_SECONDS


def test_a_big_run_is_long_and_names_faster_settings_with_what_they_change() -> None:
    big = _est(n=20000, d=2000, k=100, path_end="zhang")
    assert big.long and big.seconds > LONG_SECONDS
    settings = [f.settings for f in big.faster]
    assert {"path_end": "sparsity"} in settings
    assert {"max_steps": 200} in settings  # 2k instead of the default 5k
    for f in big.faster:
        assert f.seconds < big.seconds and f.changes
    assert big.sentence is not None
    assert big.sentence.startswith("This run is predicted to take about ")
    assert 'path_end = "sparsity"' in big.sentence and "first size-k support" in big.sentence


def test_the_refit_rule_suggests_the_objective_drop_rule() -> None:
    slow = _est("stepwise", n=1000, d=2000, k=50)
    assert slow.long
    assert [f.settings for f in slow.faster] == [{"algorithm": "forward-obj"}]


@pytest.mark.parametrize(
    ("smaller", "larger"),
    [
        ({"n": 1000}, {"n": 2000}),
        ({"d": 1000}, {"d": 2000}),
        ({"k": 10}, {"k": 40}),
        ({"path_end": "sparsity"}, {"path_end": "auto"}),
        ({"path_end": "auto"}, {"path_end": "zhang"}),
        ({"objective": "least_squares"}, {"objective": "logistic"}),
        ({"algorithm": "foba-gdt"}, {"algorithm": "foba-obj"}),
        ({"algorithm": "foba-obj"}, {"algorithm": "foba-refit"}),
    ],
)
def test_more_work_is_predicted_to_take_longer(smaller, larger) -> None:
    assert _est(**smaller).seconds < _est(**larger).seconds


def test_time_is_linear_in_the_entries_for_one_pass_rules() -> None:
    # foba-gdt: one pass a step, the refits' n x size^2 share aside (small at d >> size).
    one, two = _est("foba-gdt", d=2000, k=5), _est("foba-gdt", d=4000, k=5)
    assert two.seconds / one.seconds == pytest.approx(2.0, rel=0.05)


def test_a_huge_step_budget_costs_nothing_to_estimate() -> None:
    huge = _est(n=200, d=60, k=50, path_end="zhang", max_steps=2**31 - 1)
    assert huge.long and huge.steps == 2**31 - 1


def test_a_request_the_engine_refuses_is_refused_alike() -> None:
    with pytest.raises(ConfigError):
        _est(k=5000)  # more than d
    with pytest.raises(ConfigError):
        _est(path_end="sideways")


@pytest.mark.parametrize(
    ("seconds", "words"), [(0.2, "1 s"), (40, "40 s"), (200, "3 min"), (5400, "1.5 h")]
)
def test_duration_words(seconds, words) -> None:
    assert duration(seconds) == words
