"""The trace: replay and best-along-path on hand-written paths, JSON, the Recorder, and the
candidate scores of the teaching mode against independently computed scores."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from engine_problems import make_decoy_problem
from engine_reference import ls_coordinate_drops, ls_refit, ls_value

import engine
from engine.trace import (
    Candidates,
    Event,
    Recorder,
    StopRequested,
    best_along_path,
    final_support,
    from_json,
    membership,
    replay,
    to_json,
)


def _path(*moves):
    """Events from Zhang's path notation: 1 adds feature 1, -3 removes feature 3; objectives
    given as (move, objective) pairs."""
    events, support = [], set()
    for step, (move, obj) in enumerate(moves):
        if move >= 0:
            support.add(move)
            events.append(Event(step, "add", obj, len(support), feature=move, gain=0.1))
        else:
            support.remove(-move)
            events.append(Event(step, "remove", obj, len(support), feature=-move, gain=0.01))
    return events


def test_replay_of_zhangs_example_path():
    # Zhang 2008, Section 4: path {1, 3, 5, -3}.
    events = _path((1, 9.0), (3, 5.0), (5, 3.0), (-3, 4.0))
    assert replay(events) == [
        frozenset({1}),
        frozenset({1, 3}),
        frozenset({1, 3, 5}),
        frozenset({1, 5}),
    ]
    assert final_support(events).tolist() == [1, 5]


def test_best_along_path_picks_the_smallest_objective_per_size():
    # Size 2 is visited twice: {1, 3} (objective 5) and {1, 5} (objective 4).
    events = _path((1, 9.0), (3, 5.0), (5, 3.0), (-3, 4.0))
    best = best_along_path(events)
    assert best[2] == (frozenset({1, 5}), 4.0, 3)
    assert best[1] == (frozenset({1}), 9.0, 0)
    assert best[3] == (frozenset({1, 3, 5}), 3.0, 2)
    # A worse revisit does not replace the earlier one; ties keep the first.
    events = _path((1, 9.0), (3, 5.0), (5, 3.0), (-3, 6.0), (7, 2.0), (-1, 5.0))
    best = best_along_path(events)
    assert best[2] == (frozenset({1, 3}), 5.0, 1)


def test_best_along_path_ignores_checks_and_stop():
    events = _path((1, 9.0), (3, 5.0))
    events.append(Event(2, "check", 5.0, 2, feature=3, gain=1.0, threshold=0.5, accepted=False))
    events.append(Event(3, "stop", 0.0, 2, reason="done"))  # a bogus objective on the stop
    assert best_along_path(events)[2] == (frozenset({1, 3}), 5.0, 1)
    assert replay(events)[-1] == frozenset({1, 3})


def test_replay_of_swaps_and_errors():
    events = [
        Event(0, "add", 1.0, 1, feature=4),
        Event(1, "add", 0.5, 2, feature=2),
        Event(2, "swap", 0.4, 2, feature=7, feature_out=4),
    ]
    assert replay(events)[-1] == frozenset({2, 7})
    with pytest.raises(ValueError, match="names no feature"):
        replay([Event(0, "add", 1.0, 1)])
    with pytest.raises(KeyError):
        replay([Event(0, "remove", 1.0, 0, feature=3)])


def test_json_keeps_non_finite_numbers_and_is_strict_json():
    events = [
        Event(
            0,
            "add",
            math.inf,
            1,
            feature=1,
            gain=-math.inf,
            score=math.nan,
            info={"a": math.nan, "b": 1.5},
        ),
        Event(
            1,
            "check",
            0.25,
            1,
            feature=1,
            gain=0.1,
            threshold=0.2,
            accepted=False,
            candidates=Candidates((1, 0), (0.1, math.inf), 2),
        ),
        Event(2, "stop", 0.25, 1, reason="done"),
    ]
    text = to_json(events)
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    back = from_json(text)
    assert back[0].objective == math.inf and back[0].gain == -math.inf
    assert math.isnan(back[0].score) and math.isnan(back[0].info["a"])
    assert back[0].info["b"] == 1.5
    assert back[1] == events[1]
    assert back[1].candidates == Candidates((1, 0), (0.1, math.inf), 2)
    assert back[2] == events[2]
    assert to_json(back) == text


def test_to_dict_is_every_field_in_order_with_json_floats():
    # The reference: dataclasses.asdict (what to_dict was before it was written out field by
    # field for speed), with the floats made JSON-safe and the candidates as their dict.
    full = Event(
        3,
        "swap",
        math.nan,
        2,
        feature=7,
        feature_out=4,
        gain=-math.inf,
        score=0.5,
        threshold=1.0,
        accepted=True,
        reason="why",
        info={"polish": 1.0, "x": math.inf},
        candidates=Candidates((7, 1), (0.5, 0.25), 9),
    )
    for event in (full, Event(0, "add", 1.0, 1, feature=2), Event(1, "stop", 0.5, 1)):
        expected = dataclasses.asdict(event)
        for key in ("objective", "gain", "score", "threshold"):
            v = expected[key]
            expected[key] = v if v is None or math.isfinite(v) else str(v)  # "nan", "-inf"
        expected["info"] = {
            k: v if math.isfinite(v) else str(v) for k, v in expected["info"].items()
        }
        c = event.candidates
        expected["candidates"] = c.to_dict() if c is not None else None
        got = event.to_dict()
        assert list(got) == [f.name for f in dataclasses.fields(Event)]
        assert got == expected


def _membership_by_replay(events):
    """Reference: each feature's segments read off the support after every event."""
    order, segments, previous = [], {}, frozenset()
    for step, now in enumerate(replay(events)):
        for j in sorted(previous - now):
            start, _ = segments[j].pop()
            segments[j].append((start, step))
        for j in sorted(now - previous):
            if j not in segments:
                order.append(j)
                segments[j] = []
            segments[j].append((step, None))
        previous = now
    return order, segments


def test_membership_matches_the_replayed_supports():
    rng = np.random.default_rng(0)
    for _ in range(200):
        events, support = [], []
        for step in range(int(rng.integers(1, 40))):
            out = [j for j in range(8) if j not in support]
            move = rng.choice(["add", "remove", "swap", "check"])
            if move == "add" and out:
                j = int(rng.choice(out))
                support.append(j)
                events.append(Event(step, "add", 1.0, len(support), feature=j))
            elif move == "remove" and support:
                j = support.pop(int(rng.integers(len(support))))
                events.append(Event(step, "remove", 1.0, len(support), feature=j))
            elif move == "swap" and support and out:
                j_out, j_in = int(rng.choice(support)), int(rng.choice(out))
                support[support.index(j_out)] = j_in
                events.append(
                    Event(step, "swap", 1.0, len(support), feature=j_in, feature_out=j_out)
                )
            else:
                events.append(Event(step, "check", 1.0, len(support), feature=0))
        member = membership(events)
        assert (member.order, member.segments) == _membership_by_replay(events)
    with pytest.raises(KeyError, match="not selected"):
        membership([Event(0, "remove", 1.0, 0, feature=3)])
    with pytest.raises(ValueError, match="names no feature"):
        membership([Event(0, "swap", 1.0, 0, feature=3)])


def test_recorder_numbers_events_and_relays_them():
    seen = []
    rec = Recorder(seen.append)
    a = rec.emit("add", feature=3, objective=1.0, support_size=1)
    b = rec.emit("stop", objective=1.0, support_size=1)
    assert (a.step, b.step) == (0, 1)
    assert seen == rec.events == [a, b]
    with pytest.raises(ValueError, match="unknown event kind"):
        rec.emit("jump", objective=1.0, support_size=1)


def test_recorder_stops_on_false_but_never_on_stop():
    rec = Recorder(lambda e: False)
    with pytest.raises(StopRequested):
        rec.emit("add", feature=3, objective=1.0, support_size=1)
    assert len(rec.events) == 1  # the event is recorded before the run stops
    rec.emit("stop", objective=1.0, support_size=1)  # no exception
    # None (or True) keeps going.
    rec = Recorder(lambda e: None)
    rec.emit("add", feature=3, objective=1.0, support_size=1)


def test_recorder_candidates_order_and_truncation():
    feats = np.array([10, 11, 12, 13, 14])
    scores = np.array([0.3, 0.9, 0.1, 0.9, 0.5])
    assert Recorder().candidates(feats, scores) is None  # not recording
    rec = Recorder(record_candidates=True, max_candidates=3)
    c = rec.candidates(feats, scores)
    assert c.features == (11, 13, 14) and c.scores == (0.9, 0.9, 0.5) and c.n_total == 5
    c = rec.candidates(feats, scores, largest_first=False)
    assert c.features == (12, 10, 14)
    rec0 = Recorder(record_candidates=True, max_candidates=0)
    assert len(rec0.candidates(feats, scores).features) == 5
    assert rec.candidates(np.array([], dtype=int), np.array([])) is None


def test_teaching_mode_candidates_are_the_independent_scores():
    """Candidates attached to add events are the forward scores of every unselected feature
    (best first, the chosen feature on top); those on backward decisions are the deletion costs
    of the selected features (cheapest first)."""
    X, y = make_decoy_problem(2, n=60, d=25, k=4)
    res = engine.select(
        X, y, algorithm="foba-obj", k=4, record_candidates=True, max_candidates=0, standardize=False
    )
    supports = replay(res.trace)
    assert any(e.kind == "remove" for e in res.trace)
    for i, e in enumerate(res.trace):
        before = supports[i - 1] if i else frozenset()
        if e.kind == "add":
            c = e.candidates
            assert c.features[0] == e.feature and c.scores[0] == e.score
            assert c.n_total == 25 - len(before) == len(c.features)
            assert set(c.features) == set(range(25)) - before
            assert list(c.scores) == sorted(c.scores, reverse=True)
            coef, b, _ = ls_refit(X, y, sorted(before))
            ref = ls_coordinate_drops(X, y, coef, b, c.features, True)
            np.testing.assert_allclose(
                c.scores, [ref[f] for f in c.features], rtol=1e-7, atol=1e-12
            )
        elif e.kind in ("remove", "check"):
            c = e.candidates
            assert c.features[0] == e.feature and c.scores[0] == e.gain
            assert set(c.features) == before and c.n_total == len(before)
            assert list(c.scores) == sorted(c.scores)
            coef, b, val = ls_refit(X, y, sorted(before))
            for f, s in zip(c.features, c.scores, strict=True):
                w = coef.copy()
                w[f] = 0.0
                ref = ls_value(X, y, w, np.mean(y - X @ w)) - val
                assert s == pytest.approx(ref, rel=1e-7, abs=1e-12)


def test_max_candidates_limits_the_attached_scores():
    X, y = make_decoy_problem(0, n=60, d=25, k=4)
    res = engine.select(
        X, y, algorithm="omp", k=4, record_candidates=True, max_candidates=5, standardize=False
    )
    adds = [e for e in res.trace if e.kind == "add"]
    assert all(len(e.candidates.features) == 5 for e in adds)
    assert [e.candidates.n_total for e in adds] == [25, 24, 23, 22]
    plain = engine.select(X, y, algorithm="omp", k=4, standardize=False)
    assert all(e.candidates is None for e in plain.trace)


def test_select_uses_a_given_recorder():
    X, y = make_decoy_problem(1, n=40, d=10)
    rec = Recorder(record_candidates=True)
    res = engine.select(X, y, algorithm="forward-obj", k=3, recorder=rec, standardize=False)
    assert rec.events == res.trace
    assert res.trace[0].candidates is not None


def test_result_best_along_path_is_the_trace_analysis():
    X, y = make_decoy_problem(2, n=60, d=25, k=4)
    res = engine.select(X, y, algorithm="foba-obj", k=4, standardize=False)
    assert res.best_along_path() == best_along_path(res.trace)
    # Each size's best is the least-squares optimum of its own support, reached at that step.
    for size, (support, value, step) in res.best_along_path().items():
        assert value == pytest.approx(ls_refit(X, y, sorted(support))[2], rel=1e-9)
        assert res.trace[step].support_size == size


def test_a_recorder_callback_may_say_why_it_stops_the_run():
    X, y = make_decoy_problem(2, n=60, d=25, k=4)
    result = engine.select(
        X, y, algorithm="foba-obj", k=4, recorder=lambda e: "enough" if e.step == 3 else True
    )
    assert result.cancelled and result.stop_reason == "enough"
    assert [e.kind for e in result.trace][-1] == "stop" and result.trace[-1].reason == "enough"
    assert len(result.trace) == 5  # steps 0-3, then the stop
