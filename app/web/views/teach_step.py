"""Teaching mode: one decision of a run explained, with the scores behind it.

A forward step shows every candidate's score (objective drop or |gradient|) with the chosen one
highlighted and the gain delta; a backward check shows each selected feature's deletion cost
against the bar ``nu * delta`` and the decision, with one plain sentence saying why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import engine
from app.models import Run
from app.web.charts.kinds import kind_key, kind_of
from app.web.charts.style import DASH, Figure, feature_name, num
from app.web.charts.teach import candidates_figure
from engine.registry import Traits
from engine.trace import Event, supports_in_order

NU, TIMES, DELTA = "\u03bd", "\u00d7", "\u03b4"

SCORE_LABELS = {
    "obj": "objective drop",
    "quad": "estimated objective drop",
    "gdt": "|gradient|",
    "refit": "objective drop after refit",
    "alone": "objective drop on its own",
    "score": "score",
}
SCORE_HELP = {
    "obj": "how much the objective falls when the feature's coefficient alone moves to its "
    "best value (FoBa-obj's forward score)",
    "quad": "the quadratic approximation g^2 / (2h) of the one-coordinate objective drop",
    "gdt": "the size of the objective's partial derivative in the feature's direction "
    "(FoBa-gdt's and OMP's forward score)",
    "refit": "how much the objective falls when the feature is added and all coefficients "
    "are refitted (forward stepwise)",
    "alone": "how much the objective falls with this feature alone in the model",
    "score": "the algorithm's forward score",
}


@dataclass
class TeachStep:
    index: int  # position in the trace
    total: int
    event: Event
    kind: str
    kind_label: str
    sentence: str
    facts: list[tuple[str, str]] = field(default_factory=list)
    support_before: list[str] = field(default_factory=list)
    support_after: list[str] = field(default_factory=list)
    added: str | None = None
    removed: str | None = None
    figure: Figure | None = None
    has_candidates: bool = False
    score_help: str = ""
    scores_choice: bool = True  # the step is a choice among scored candidates


def g(x: Any) -> str:
    """A number as a reader says it: three significant digits."""
    value = num(x)
    return DASH if value is None else f"{value:.3g}"


def traits_of(run: Run) -> Traits:
    spec = engine.ALGORITHMS.get(run.algorithm)
    return spec.traits if spec is not None else Traits()


def rule_of(run: Run) -> str:
    """The forward score the run's algorithm adds by (a key of SCORE_LABELS)."""
    rule = traits_of(run).rule(run.params)
    return rule if rule in SCORE_LABELS else "score"


def explain(
    run: Run,
    names: Sequence[str],
    events: Sequence[Event],
    index: int,
    *,
    best_step: int | None = None,
    answer: Sequence[str] = (),
    supports: Sequence[Sequence[int]] | None = None,
) -> TeachStep:
    """The decision at ``events[index]``, explained; ``supports`` is
    ``supports_in_order(events)`` when the caller explains every step (computed once)."""
    e = events[index]
    kind = e.kind
    after_all = supports if supports is not None else supports_in_order(events)
    before = after_all[index - 1] if index else ()
    after = after_all[index]
    name = feature_name(names, e.feature)
    step = TeachStep(
        index=index,
        total=len(events),
        event=e,
        kind=kind,
        kind_label=kind_of(kind_key(e)).heading,
        sentence="",
        support_before=[feature_name(names, j) for j in before],
        support_after=[feature_name(names, j) for j in after],
    )
    prev_obj = num(events[index - 1].objective) if index else None
    if prev_obj is None and kind == "add":
        value, gain = num(e.objective), num(e.gain)
        prev_obj = value + gain if value is not None and gain is not None else None
    step.facts.append(("objective before", g(prev_obj)))
    step.facts.append(("objective after", g(e.objective)))
    rule = rule_of(run)

    greedy = traits_of(run).forward_rule is not None
    if kind == "add" and not greedy:
        step.added = name
        step.sentence = _entry_sentence(e, name)
        step.scores_choice = False
        if num(e.score) is not None:
            step.facts.append(("score", g(e.score)))
    elif kind == "add":
        step.added = name
        step.sentence = _forward_sentence(run, e, name, rule, after)
        step.facts += [
            (f"score ({SCORE_LABELS[rule]})", g(e.score)),
            (f"gain {DELTA} (objective drop after refit)", g(e.gain)),
        ]
    elif kind == "remove" and traits_of(run).deletion_for(run.params) is None:
        step.removed = name
        step.scores_choice = False
        step.sentence = _exit_sentence(e, name)
    elif kind == "check" and e.feature_out is not None:  # the swap certificate, after the run
        out = feature_name(names, e.feature_out)
        step.scores_choice = False
        step.sentence = (
            f"Swap certificate, after the run: bringing in {name} for {out} would change the "
            f"refitted objective by {g(e.gain)} (nothing is changed). {e.reason or ''}"
        ).strip()
        step.facts.append(("objective change", g(e.gain)))
    elif kind in ("remove", "check"):
        if kind == "remove":
            step.removed = name
        step.sentence = _backward_sentence(run, e, name, len(before))
        step.facts.append(("deletion cost", g(e.gain)))
        if num(e.threshold) is not None:
            step.facts.append(("threshold", g(e.threshold)))
    elif kind == "swap":
        out = feature_name(names, e.feature_out)
        step.added, step.removed = name, out
        step.sentence = (
            f"{name} replaced {out}: with {name} in its place the refitted objective is "
            f"{g(e.objective)}."
        )
    elif kind == "iterate":
        step.sentence = (
            f"An iteration that left the support unchanged ({e.support_size} features); "
            f"the objective is now {g(e.objective)}."
        )
    else:
        step.sentence = f"The run stopped: {e.reason or 'done'}."
        if answer:
            where = f", found at step {best_step}" if best_step is not None else ""
            step.sentence += f" Its answer is {', '.join(answer)}{where}."
    step.figure, step.has_candidates = _figure(run, e, names, rule, index)
    if kind == "add" and greedy:
        step.score_help = SCORE_HELP[rule]
    elif kind in ("remove", "check"):
        refit = traits_of(run).deletion_for(run.params) == "refit"
        how = "with the others refitted" if refit else "without refitting"
        step.score_help = f"how much the objective rises when the feature is deleted {how}"
    return step


def _entry_sentence(e: Event, name: str) -> str:
    """A feature entering under a method that does not pick the best-scored candidate: the l1
    path (a coefficient leaves zero as the penalty falls), hard thresholding (the projection
    keeps it), group OMP (its group was chosen)."""
    info = e.info
    if "alpha" in info:
        return (
            f"{name} entered the l1 path at alpha = {g(info['alpha'])}: as the penalty falls, "
            f"its coefficient leaves zero; the objective is now {g(e.objective)}."
        )
    if "group" in info:
        return (
            f"{name} added with its group ({int(info['group'])}), the group whose gradient is "
            f"largest in norm ({g(e.score)}); the objective is now {g(e.objective)}."
        )
    return (
        f"{name} entered the support at this iteration: after the gradient step its "
        f"coefficient ({g(e.score)}) is among those the projection keeps; the objective is now "
        f"{g(e.objective)}."
    )


def _exit_sentence(e: Event, name: str) -> str:
    if "alpha" in e.info:
        return (
            f"{name} left the l1 path at alpha = {g(e.info['alpha'])}: its coefficient crossed "
            "zero as the penalty fell."
        )
    return f"{name} left the support: this iteration set its coefficient to zero."


def _features(n: int) -> str:
    return "the feature" if n == 1 else f"the {n} features"


def _forward_sentence(run: Run, e: Event, name: str, rule: str, after: Sequence[int]) -> str:
    cand = e.candidates
    label = SCORE_LABELS[rule]
    text = f"{name} added: it has the largest {label}, {g(e.score)}"
    if cand and cand.n_total:
        text += f", of the {cand.n_total} candidates"
        if len(cand.features) > 1:
            text += f" (runner-up {g(cand.scores[1])})"
    text += (
        f". After refitting on {_features(len(after))} selected the objective fell by {g(e.gain)}"
    )
    if "nu" in run.params:
        nu, gain = num(run.params.get("nu")), num(e.gain)
        text += (
            f"; this gain {DELTA} = {g(e.gain)} sets the bar for deleting a feature "
            f"from a support of this size: {NU} {TIMES} {DELTA} = {g(nu)} {TIMES} "
            f"{g(e.gain)} = {g(nu * gain if nu is not None and gain is not None else None)}"
        )
    return text + "."


def _backward_sentence(run: Run, e: Event, name: str, size_before: int) -> str:
    cost, threshold = g(e.gain), num(e.threshold)
    traits = traits_of(run)
    if traits.deletion_for(run.params) == "refit" and traits.backward_param is None:
        return (
            f"{name} removed: of the {size_before} selected features, deleting it (with a "
            f"refit) raises the objective least, by {cost}."
        )
    rule = str(run.params[traits.backward_param]) if traits.backward_param else "fixed"
    nu = num(run.params.get("nu"))
    if rule in ("standard", "conservative") and nu and threshold is not None:
        delta = threshold / nu
        which = (
            "the gain δ of the step that last grew the support to this size"
            if rule == "standard"
            else "the smallest forward gain so far"
        )
        bar = f"{g(nu)} {TIMES} {g(delta)} = {g(threshold)} ({NU} {TIMES} {which})"
    elif rule == "fixed":
        bar = f"the fixed threshold eps_back = {g(threshold)}"
    else:
        bar = (
            f"{g(threshold)} (aggressive rule: {NU} times the forward gains this backward phase "
            "undoes, less what it has already spent)"
        )
    if e.kind == "remove":
        return f"{name} removed: deleting it raises the objective by {cost}, below {bar}."
    return (
        f"Nothing removed: the cheapest deletion, {name}, would raise the objective by {cost}, "
        f"not below {bar}; {_features(size_before)} {'stays' if size_before == 1 else 'stay'} "
        "and the next forward step follows."
    )


def _figure(
    run: Run, e: Event, names: Sequence[str], rule: str, index: int
) -> tuple[Figure | None, bool]:
    cand = e.candidates
    kind = e.kind
    if kind not in ("add", "remove", "check"):
        return None, bool(cand)
    if not cand or not cand.features:
        return None, False
    features = list(cand.features)
    labels = [feature_name(names, j) for j in features]
    scores = [num(s) for s in cand.scores]
    chosen = features.index(e.feature) if e.feature in features else None
    backward = kind != "add"
    shown = len(features)
    total = cand.n_total or shown
    if backward:
        title = f"Step {e.step}: the cost of deleting each selected feature"
        score_label = "Deletion cost (objective increase)"
    else:
        title = f"Step {e.step}: every candidate's {SCORE_LABELS[rule]}"
        score_label = SCORE_LABELS[rule][0].upper() + SCORE_LABELS[rule][1:]
    if shown < total:
        title += f" (best {shown} of {total})"
    figure = candidates_figure(
        labels,
        scores,
        chosen=chosen,
        backward=backward,
        accepted=bool(e.accepted),
        threshold=num(e.threshold) if backward else None,
        score_label=score_label,
        title=title,
    )
    return figure, True
