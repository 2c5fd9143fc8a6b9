"""The cross-validation curve figure: valid for plotly.js, error bars of one standard error,
the chosen k marked, the other rule's k too when it differs, and the 1se rule's bound."""

from __future__ import annotations

from page_helpers import check_figure

from app.web.charts.cv import cv_curve_figure

K, MEAN, SE = [1, 2, 3, 4], [3.0, 1.2, 1.0, 1.1], [0.4, 0.3, 0.25, 0.2]
FOLDS = [[2.8, 1.0, 0.9, 1.0], [3.2, 1.4, 1.1, 1.2]]


def by_name(figure: dict) -> dict[str, dict]:
    return {trace["name"]: trace for trace in figure["data"]}


def test_the_chosen_k_and_the_other_rules_k_are_marked() -> None:
    figure = cv_curve_figure(
        K, MEAN, SE, k_min=3, k_1se=2, rule="1se", error_name="mean squared error", folds=FOLDS
    )
    check_figure(figure)
    traces = by_name(figure)
    assert traces["mean over the folds ± 1 standard error"]["error_y"]["array"] == SE
    assert traces["chosen (one-standard-error rule): k = 2"]["x"] == [2]
    assert traces["chosen (one-standard-error rule): k = 2"]["y"] == [1.2]
    assert traces["minimum rule: k = 3"]["x"] == [3]
    assert traces["minimum + 1 standard error"]["y"] == [1.25, 1.25]
    assert sum(t["name"] == "each fold" for t in figure["data"]) == 2
    assert figure["layout"]["shapes"][0]["x0"] == 2
    assert figure["layout"]["yaxis"]["title"]["text"] == "held-out mean squared error"


def test_one_mark_when_the_rules_agree_and_an_empty_figure_without_folds() -> None:
    figure = cv_curve_figure(K, MEAN, SE, k_min=3, k_1se=3, rule="min", error_name="log-loss")
    names = [t["name"] for t in figure["data"]]
    assert "chosen (minimum rule): k = 3" in names
    assert not any(n.startswith("one-standard-error rule") for n in names)
    empty = cv_curve_figure([], [], [], k_min=1, k_1se=1, rule="min", error_name="log-loss")
    check_figure(empty)
    assert empty["data"] == []
