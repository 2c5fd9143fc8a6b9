"""What a reveal says after a prediction: the numbers that decide the answer (each choice's
forward score, or each selected feature's deletion cost against the bar nu x delta) and why a
wrong pick lost. One place for the class session's projector, the student's phone, the solo
predict page and the teaching page's "Predict first" (frames built once, views/teach.py)."""

from __future__ import annotations

from typing import Any

from app.services.classroom import NONE, Question
from app.web.views.teach_step import DELTA, NU, TIMES, g

NONE_LABEL = "None: keep them all"  # the "none" choice of a deletion question, on a button


def choice_label(choice: str) -> str:
    return NONE_LABEL if choice == NONE else choice


def why(q: Question, pick: str | None) -> dict[str, Any]:
    """The numbers that decide the answer, and why a wrong pick lost."""
    n = q.numbers
    rows: list[dict[str, Any]] = []
    if q.kind == "enter":
        for choice, score in n.get("scores", {}).items():
            rows.append({"choice": choice, "value": g(score), "right": choice == q.answer})
        label = "score"
        rule = f"The largest score enters: {q.answer}, {g(n['scores'].get(q.answer))}."
        lost = None
        if pick and pick != q.answer:
            lost = (
                f"Your pick, {pick}, scored {g(n['scores'].get(pick))}: less than "
                f"{q.answer}'s {g(n['scores'].get(q.answer))}."
            )
    else:
        costs = n.get("costs", {})
        for choice in q.choices[1:]:
            rows.append(
                {"choice": choice, "value": g(costs.get(choice)), "right": choice == q.answer}
            )
        label = "deletion cost"
        bar, cost, cheapest = n.get("bar"), n.get("cost"), n.get("cheapest")
        verdict = "below" if q.answer != NONE else "not below"
        rule = (
            f"The cheapest deletion, {cheapest}, costs {g(cost)}: {verdict} the bar "
            f"{NU} {TIMES} {DELTA} = {g(bar)}, so "
            + (f"FoBa deletes {q.answer}." if q.answer != NONE else "nothing is deleted.")
        )
        lost = None
        if pick and pick != q.answer:
            if pick == NONE:
                lost = f"“None” loses: {cheapest} costs {g(cost)}, below the bar {g(bar)}."
            elif q.answer == NONE:
                lost = (
                    f"Deleting {pick} would cost {g(costs.get(pick, cost))}, not below the bar "
                    f"{g(bar)}: FoBa keeps every feature."
                )
            else:
                lost = (
                    f"Deleting {pick} would cost {g(costs.get(pick))}; {q.answer} is cheaper, "
                    f"{g(cost)}."
                )
    return {"rows": rows, "label": label, "rule": rule, "lost": lost}


def question_frame(q: Question) -> dict[str, Any]:
    """A question as the teaching page's player asks it (``frame["question"]``): the prompt,
    the choices with their button labels, the answer, and the reveal's words for every pick
    (``why``), so that a pick is answered in the page without asking the server."""
    told = why(q, None)
    return {
        "kind": q.kind,
        "prompt": q.prompt,
        "choices": [[c, choice_label(c)] for c in q.choices],
        "answer": q.answer,
        "rule": told["rule"],
        "label": told["label"],
        "rows": told["rows"],
        "lost": {c: why(q, c)["lost"] for c in q.choices if c != q.answer},
    }
