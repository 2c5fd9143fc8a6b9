"""The figure builders and the teaching narration on hand-made traces."""

from __future__ import annotations

import pytest
from page_helpers import check_figure

import engine
from app.models import Run
from app.web.charts import compare, player, recovery, style
from app.web.charts import run as run_charts
from app.web.charts.teach import candidates_figure
from app.web.views import teach_step as teach
from engine.trace import Event, best_along_path, membership, supports_in_order

NAMES = ["alpha", "beta", "gamma", "delta", "eps"]


def ev(step, kind, feature=None, objective=1.0, size=0, **extra):
    return Event(step, kind, objective, size, feature=feature, **extra)


TRACE = [
    ev(0, "add", 2, 5.0, 1, gain=3.0, score=3.1),
    ev(1, "check", 2, 5.0, 1, gain=3.0, threshold=1.5, accepted=False),
    ev(2, "add", 0, 3.0, 2, gain=2.0, score=2.2),
    ev(3, "add", 1, 1.0, 3, gain=2.0, score=1.9),
    ev(4, "remove", 2, 1.2, 2, gain=0.2, threshold=1.0, accepted=True),
    ev(5, "swap", 3, 1.1, 2, feature_out=0),
    ev(6, "stop", None, 1.1, 2, reason="reached k = 2 features"),
]


def test_membership_and_frames_follow_adds_removes_and_swaps():
    member = membership(TRACE)
    assert member.order == [2, 0, 1, 3]
    assert member.segments[2] == [(0, 4)]
    assert member.segments[0] == [(2, 5)]
    assert member.segments[3] == [(5, None)]
    frames = player.player_frames(TRACE, NAMES)
    assert [f["step"] for f in frames["frames"]] == list(range(7))
    last = frames["supports"][frames["frames"][-1]["support"]]
    assert sorted(last) == [1, 3]
    assert "delete gamma" in frames["frames"][4]["text"]
    assert supports_in_order(TRACE)[-1] == [1, 3]


def test_long_traces_thin_iterations_but_keep_every_decision():
    events = [ev(0, "add", 0, 2.0, 1)]
    events += [ev(i, "iterate", None, 1.0, 1) for i in range(1, 5000)]
    events += [ev(5000, "stop", None, 1.0, 1, reason="done")]
    frames = player.player_frames(events, NAMES)["frames"]
    assert len(frames) <= style.MAX_FRAMES + 1
    assert frames[0]["kind"] == "add" and frames[-1]["kind"] == "stop"


def test_every_figure_is_valid_plotly_with_names_and_distinct_markers():
    path = run_charts.path_figure(TRACE, NAMES, true_support=[1, 3], best_step=4, k=2)
    check_figure(path)
    symbols = {t["name"]: t["marker"]["symbol"] for t in path["data"] if t["mode"] == "markers"}
    assert symbols["addition"] != symbols["deletion"]
    assert path["layout"]["yaxis"]["categoryarray"][0] == "gamma"
    assert "beta ★" in path["layout"]["yaxis"]["categoryarray"]
    for fig in (
        run_charts.objective_step_figure(TRACE, best_step=4, k=2),
        run_charts.objective_size_figure(TRACE, k=2),
        run_charts.coef_figure(
            [{"index": 1, "name": "beta", "coef": 1.5}], true_support=[1, 3], names=NAMES
        ),
        recovery.roc_figure([recovery.roc_of(TRACE, [1, 3], 5, "run")]),
        compare.by_k_figure([compare.Series("a", [1, 2], [2.0, 1.0])], title="t", ytitle="y"),
        compare.time_figure(["a"], [0.1], [0.2]),
        candidates_figure(
            ["beta", "alpha"],
            [0.2, 0.9],
            chosen=0,
            backward=True,
            accepted=True,
            threshold=0.5,
            score_label="cost",
            title="c",
        ),
    ):
        check_figure(fig)
    for empty in (
        run_charts.path_figure([], NAMES),
        run_charts.objective_step_figure([]),
        recovery.roc_figure([]),
        run_charts.coef_figure([]),
    ):
        check_figure(empty)


def test_roc_needs_true_and_false_features():
    assert recovery.roc_of(TRACE, [], 5, "x") is None
    roc = recovery.roc_of(TRACE, [2], 5, "x")
    assert roc is not None and roc.auc == pytest.approx(1.0)


def test_best_by_size_is_zhangs_best_along_the_path():
    best = {k: (sorted(s), v, step) for k, (s, v, step) in best_along_path(TRACE).items()}
    assert best[1] == ([2], 5.0, 0)
    assert best[2] == ([1, 3], 1.1, 5)  # the swap beats the deletion's 1.2 and the add's 3.0
    assert best[3] == ([0, 1, 2], 1.0, 3)


def _run(algorithm: str, **params) -> Run:
    spec = engine.ALGORITHMS[algorithm]
    return Run(
        dataset_id=1,
        algorithm=algorithm,
        objective="least_squares",
        k=2,
        params=spec.validate(params),
    )


@pytest.mark.parametrize(
    ("algorithm", "params", "expected"),
    [
        ("foba-obj", {}, "below 0.5 \u00d7 2 = 1"),
        ("foba-obj", {"backward": "conservative", "nu": 0.25}, "the smallest forward gain so far"),
        ("fb-threshold", {"eps_back": 1.0}, "the fixed threshold eps_back = 1"),
    ],
)
def test_removal_sentences_name_the_rule(algorithm, params, expected):
    step = teach.explain(_run(algorithm, **params), NAMES, TRACE, 4)
    assert step.sentence.startswith("gamma removed: deleting it raises the objective by 0.2")
    assert expected in step.sentence
    assert step.removed == "gamma" and "gamma" not in step.support_after


def test_check_and_forward_sentences():
    run = _run("foba-obj")
    check = teach.explain(run, NAMES, TRACE, 1)
    assert check.sentence.startswith("Nothing removed: the cheapest deletion, gamma")
    forward = teach.explain(run, NAMES, TRACE, 2)
    assert forward.sentence.startswith("alpha added: it has the largest objective drop, 2.2")
    assert forward.added == "alpha" and forward.figure is None  # no candidates recorded
    stop = teach.explain(run, NAMES, TRACE, 6, best_step=4, answer=["alpha", "beta"])
    assert "alpha, beta" in stop.sentence and "step 4" in stop.sentence
    gdt = teach.explain(_run("foba-gdt"), NAMES, TRACE, 0)
    assert "|gradient|" in gdt.sentence


def test_the_answer_is_where_its_support_was_first_reached_when_the_path_goes_past_it():
    past = [
        ev(0, "add", 0, 5.0, 1, gain=1.0),
        ev(1, "add", 1, 3.0, 2, gain=2.0),
        ev(2, "remove", 0, 2.0, 1, gain=0.1, threshold=1.0, accepted=True),  # {1}: the answer
        ev(3, "add", 2, 1.0, 2, gain=1.0),
        ev(4, "remove", 2, 1.9999, 1, gain=0.9, threshold=1.0, accepted=True),  # {1} again
        ev(5, "add", 3, 0.5, 2, gain=1.5),
        ev(6, "stop", None, 0.5, 2, reason="done"),
    ]
    assert player.answer_found(past, 1) == 2  # first reached, not the tie-break's step 4
    frames = player.player_frames(past, NAMES, 1)
    assert frames["answer"] == {"step": 2, "k": 1, "text": player.answer_sentence(2, 1)}
    assert frames["answer"]["text"].startswith("The answer was found at step 2; the path")
    assert "no return to k = 1 improves it" in frames["answer"]["text"]
    # A path that ends at its answer says nothing; neither does a run without k.
    assert player.answer_found([*past[:3], ev(3, "stop", None, 2.0, 1)], 1) is None
    assert player.player_frames(past, NAMES)["answer"] is None
