"""The classroom: questions made from a run's trace, class sessions with join codes, votes
and their tallies. Returns values; knows nothing of HTTP or HTML.

A question stops before one decision of a run and asks what it will be:

* ``enter``: a greedy forward step. The choices are the candidates the run scored (best
  first, at most ``MAX_CHOICES``); the answer is the feature the run added; the numbers are
  each candidate's forward score.
* ``delete``: a backward test (a ``remove`` or a ``check``). The choices are "none" and the
  features selected before it; the answer is the feature removed, or "none"; the numbers are
  each selected feature's deletion cost and the bar it is compared with (nu x delta).

The answers come from the trace itself (``engine.trace``), never from a recomputation.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol

from sqlalchemy import func, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.errors import Conflict, Gone, InvalidInput, NotFound
from app.models import ClassQuestion, ClassSession, ClassVote, Run, stored_id, utcnow
from app.models.classroom import CODE_ALPHABET, CODE_LENGTH
from app.services import datasets as dataset_service
from app.services import runs as run_service
from engine.trace import Event, supports_in_order

MAX_CHOICES = 6  # a phone screen shows six buttons without scrolling
MAX_QUESTIONS = 20
DEFAULT_QUESTIONS = 8
SESSION_HOURS = 12  # a join code lasts a teaching day
NONE = "none"
ENTER_PROMPT = "Which feature enters next?"
DELETE_PROMPT = "Will FoBa delete a feature now, and which one?"


@dataclass(frozen=True)
class QuestionSpec:
    step: int
    kind: str
    prompt: str
    choices: list[str]
    answer: str
    numbers: dict[str, Any] = field(default_factory=dict)


class Question(Protocol):
    """What a reveal reads of a question: a QuestionSpec, or a ClassQuestion stored from one."""

    @property
    def kind(self) -> str: ...
    @property
    def prompt(self) -> str: ...
    @property
    def choices(self) -> list[str]: ...
    @property
    def answer(self) -> str: ...
    @property
    def numbers(self) -> dict[str, Any]: ...


def _name(names: Sequence[str], j: int | None) -> str:
    if j is None:
        return NONE
    return names[j] if 0 <= j < len(names) else f"feature {j}"


def _number(x: float | None) -> float | None:
    return None if x is None or x != x else float(x)  # NaN is no number


def question_at(
    events: Sequence[Event],
    names: Sequence[str],
    index: int,
    supports: Sequence[Sequence[int]] | None = None,
) -> QuestionSpec | None:
    """The question that stops before ``events[index]``, or None when that event is no choice
    a student can predict (an entry without scored candidates, a swap, an iteration, the stop).
    ``supports`` is ``supports_in_order(events)`` when the caller asks at every step (computed
    once rather than replayed for each question)."""
    e = events[index]
    if e.kind == "add" and e.candidates and len(e.candidates.features) > 1:
        cand = e.candidates
        shown = list(zip(cand.features, cand.scores, strict=True))[:MAX_CHOICES]
        if e.feature not in [j for j, _ in shown]:
            return None
        scores = {_name(names, j): _number(s) for j, s in shown}
        return QuestionSpec(
            step=e.step,
            kind="enter",
            prompt=ENTER_PROMPT,
            choices=list(scores),
            answer=_name(names, e.feature),
            numbers={"scores": scores, "gain": _number(e.gain), "n_total": cand.n_total},
        )
    if e.kind in ("remove", "check") and e.threshold is not None and e.feature_out is None:
        if not index:
            before: Sequence[int] = []
        elif supports is not None:
            before = supports[index - 1]
        else:
            before = supports_in_order(events[:index])[-1]
        if not before or len(before) + 1 > MAX_CHOICES + 3:
            return None
        costs: dict[str, float | None] = {}
        if e.candidates:
            costs = {_name(names, j): _number(s) for j, s in zip(*_pairs(e), strict=True)}
        else:
            costs = {_name(names, e.feature): _number(e.gain)}
        return QuestionSpec(
            step=e.step,
            kind="delete",
            prompt=DELETE_PROMPT,
            choices=[NONE, *[_name(names, j) for j in before]],
            answer=_name(names, e.feature) if e.kind == "remove" else NONE,
            numbers={
                "costs": costs,
                "bar": _number(e.threshold),
                "cheapest": _name(names, e.feature),
                "cost": _number(e.gain),
            },
        )
    return None


def _pairs(e: Event) -> tuple[tuple[int, ...], tuple[float, ...]]:
    assert e.candidates is not None
    return e.candidates.features, e.candidates.scores


def questions_of(
    events: Sequence[Event], names: Sequence[str], steps: Sequence[int] | None = None
) -> list[QuestionSpec]:
    """The questions of a trace: at the given steps (those that make no question are passed
    over), else up to DEFAULT_QUESTIONS spread over the run, deletions first among equals."""
    found = [(i, question_at(events, names, i)) for i in range(len(events))]
    possible = [q for _, q in found if q is not None]
    if steps is not None:
        wanted = set(steps)
        return [q for q in possible if q.step in wanted][:MAX_QUESTIONS]
    if len(possible) <= DEFAULT_QUESTIONS:
        return possible
    deletes = [q for q in possible if q.kind == "delete" and q.answer != NONE]
    rest = [q for q in possible if q not in deletes]
    stride = max(1, len(rest) // max(1, DEFAULT_QUESTIONS - len(deletes)))
    chosen = deletes[:DEFAULT_QUESTIONS] + rest[::stride]
    return sorted(chosen[:DEFAULT_QUESTIONS], key=lambda q: q.step)


def run_questions(session: Session, run_id: int) -> tuple[Run, list[QuestionSpec]]:
    """A run and every question its trace can ask (for the lecturer to choose from)."""
    run = run_service.get_selection_run(session, run_id)
    dataset = dataset_service.get_dataset(session, run.dataset_id)
    events = run_service.trace_events(session, run_id)
    names = list(dataset.feature_names)
    return run, [q for i in range(len(events)) if (q := question_at(events, names, i))]


# --------------------------------------------------------------------------- sessions


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def create_session(
    session: Session,
    run_id: int,
    *,
    steps: Sequence[int] | None = None,
    title: str = "",
    story: str = "",
    lesson_key: str | None = None,
) -> ClassSession:
    """A class session asking the run's questions (at ``steps``, else a default choice)."""
    run = run_service.get_selection_run(session, run_id)
    dataset = dataset_service.get_dataset(session, run.dataset_id)
    events = run_service.trace_events(session, run_id)
    specs = questions_of(events, list(dataset.feature_names), steps)
    if not specs:
        raise InvalidInput(
            "this run's trace has no step to ask about: run it with candidate scores recorded "
            "(a greedy method such as FoBa), or choose other steps"
        )
    for _ in range(8):  # 25^5 codes: a clash is rare, and retried
        cls = ClassSession(
            code=new_code(),
            run_id=stored_id(run),
            title=(title or run.name or f"Run #{run.id}")[:200],
            story=story[:2000],
            lesson_key=lesson_key,
            expires_at=utcnow() + timedelta(hours=SESSION_HOURS),
        )
        session.add(cls)
        try:
            session.flush()
        except IntegrityError:
            session.rollback()
            continue
        for position, q in enumerate(specs):
            session.add(
                ClassQuestion(
                    session_id=stored_id(cls),
                    position=position,
                    step=q.step,
                    kind=q.kind,
                    prompt=q.prompt,
                    choices=q.choices,
                    answer=q.answer,
                    numbers=q.numbers,
                )
            )
        session.commit()
        return cls
    raise Conflict("no free join code was found; try again")


def get_session(session: Session, session_id: int) -> ClassSession:
    cls = session.get(ClassSession, session_id)
    if cls is None:
        raise NotFound(f"there is no class session {session_id}")
    return cls


def by_code(session: Session, code: str) -> ClassSession:
    """The live session a join code names (codes are read case-insensitively)."""
    code = code.strip().upper()
    cls = session.exec(select(ClassSession).where(ClassSession.code == code)).first()
    if cls is None:
        raise NotFound(f"no class session has the code {code[:12]!r}: check the code")
    if cls.expires_at.replace(tzinfo=utcnow().tzinfo) < utcnow():
        raise Gone(f"the class session {code} has ended; ask for a new code")
    return cls


def questions(session: Session, cls: ClassSession) -> list[ClassQuestion]:
    return list(
        session.exec(
            select(ClassQuestion)
            .where(ClassQuestion.session_id == stored_id(cls))
            .order_by(col(ClassQuestion.position))
        )
    )


def current_question(session: Session, cls: ClassSession) -> ClassQuestion | None:
    if cls.position < 0:
        return None
    return session.exec(
        select(ClassQuestion).where(
            ClassQuestion.session_id == stored_id(cls), ClassQuestion.position == cls.position
        )
    ).first()


def count_questions(session: Session, cls: ClassSession) -> int:
    query = select(func.count()).where(col(ClassQuestion.session_id) == stored_id(cls))
    return int(session.exec(query).one())


def state_key(cls: ClassSession) -> str:
    """Changes whenever what the students see changes (question, phase, round)."""
    return f"{cls.position}.{cls.phase}.{cls.round}"


# --------------------------------------------------------------------------- the lecturer


def advance(session: Session, cls: ClassSession, to: int | None = None) -> ClassSession:
    """The next question (or question ``to``), asked in round 1."""
    total = count_questions(session, cls)
    target = cls.position + 1 if to is None else to
    cls.position = max(-1, min(target, total))
    cls.phase, cls.round = "ask", 1
    session.add(cls)
    session.commit()
    return cls


def reveal(session: Session, cls: ClassSession) -> ClassSession:
    if current_question(session, cls) is None:
        raise Conflict("no question is being asked")
    cls.phase = "reveal"
    session.add(cls)
    session.commit()
    return cls


def vote_again(session: Session, cls: ClassSession) -> ClassSession:
    """Round 2 of the current question ("vote again after discussion"); round 1 is kept."""
    if current_question(session, cls) is None:
        raise Conflict("no question is being asked")
    cls.phase, cls.round = "ask", 2
    session.add(cls)
    session.commit()
    return cls


# --------------------------------------------------------------------------- votes


def vote(session: Session, cls: ClassSession, token: str, position: int, choice: str) -> str:
    """Record a student's answer to the question being asked; a second answer in the same
    round replaces the first. Returns the choice recorded."""
    q = current_question(session, cls)
    if q is None or q.position != position:
        raise Conflict("that question is no longer being asked")
    if cls.phase != "ask":
        raise Conflict("the answer has been revealed: voting on this question is closed")
    if choice not in q.choices:
        raise InvalidInput(f"{choice[:40]!r} is not one of this question's choices")
    qid, rnd = stored_id(q), cls.round
    replace = (
        update(ClassVote)
        .where(
            col(ClassVote.question_id) == qid,
            col(ClassVote.round) == rnd,
            col(ClassVote.token) == token,
        )
        .values(choice=choice, voted_at=utcnow())
    )
    if session.execute(replace).rowcount == 0:  # type: ignore[attr-defined]
        session.add(ClassVote(question_id=qid, round=rnd, token=token, choice=choice))
        try:
            session.flush()
        except IntegrityError:  # the same student's other request won the insert
            session.rollback()
            session.execute(replace)
    session.commit()
    return choice


def my_vote(session: Session, question_id: int, rnd: int, token: str) -> str | None:
    return session.exec(
        select(ClassVote.choice).where(
            ClassVote.question_id == question_id, ClassVote.round == rnd, ClassVote.token == token
        )
    ).first()


def tally(session: Session, question_id: int, rnd: int) -> dict[str, int]:
    """Votes per choice in one round: one aggregate query."""
    rows = session.exec(
        select(ClassVote.choice, func.count())
        .where(ClassVote.question_id == question_id, ClassVote.round == rnd)
        .group_by(col(ClassVote.choice))
    )
    return {choice: int(n) for choice, n in rows}


def tallies(session: Session, question_id: int) -> dict[int, dict[str, int]]:
    """Both rounds' votes per choice, one aggregate query."""
    rows = session.exec(
        select(ClassVote.round, ClassVote.choice, func.count())
        .where(ClassVote.question_id == question_id)
        .group_by(col(ClassVote.round), col(ClassVote.choice))
    )
    found: dict[int, dict[str, int]] = {1: {}, 2: {}}
    for rnd, choice, n in rows:
        found.setdefault(int(rnd), {})[choice] = int(n)
    return found


def student_score(session: Session, cls: ClassSession, token: str) -> tuple[int, int]:
    """(right, answered) over the revealed questions, each counted on the student's last
    round."""
    asked = questions(session, cls)
    done = [
        q
        for q in asked
        if q.position < cls.position or (q.position == cls.position and cls.phase == "reveal")
    ]
    if not done:
        return 0, 0
    votes = session.exec(
        select(ClassVote.question_id, ClassVote.round, ClassVote.choice).where(
            col(ClassVote.question_id).in_([stored_id(q) for q in done]), ClassVote.token == token
        )
    ).all()
    last: dict[int, tuple[int, str]] = {}
    for qid, rnd, choice in votes:
        if qid not in last or rnd > last[qid][0]:
            last[qid] = (rnd, choice)
    answers = {stored_id(q): q.answer for q in done}
    right = sum(1 for qid, (_, choice) in last.items() if answers.get(qid) == choice)
    return right, len(last)
