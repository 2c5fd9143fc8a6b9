"""A part of a study, run by ``run_job`` like any run: a fold of a cross-validation over k, or
a subsample of a stability study.

A part's run row says which study and which part (``Run.cv_id``/``cv_fold``,
``Run.stability_id``/``stability_index``); the study says the rest (the folds or subsamples
are recomputed from its seed). The part's engine runs report to the same recorder as a run's
(progress, heartbeat, cancel), but their events are not stored: the part's product is small
and is stored as the run's result (``engine.cv.FoldResult``, or
``engine.stability.SubsampleResult``). This module is the one place ``run_job`` asks about
parts: :func:`load` (None for a run of its own), :class:`PartMeter`, ``Part.run`` and
``Part.siblings`` (what to cancel when a part fails: the study has failed). A row range of the
statistics pass over a table registered by reference (``app.jobs.table_pass``) is a part too,
of its data set. On such a table a CV fold and a stability subsample read no rows: they merge
the stored statistics of whole ranges (``table_pass.fold_statistics_of``,
``table_pass.half_statistics_of``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy import ColumnElement, Engine
from sqlmodel import Session, col

import engine
from app import storage
from app.db.transient import retry
from app.errors import NotFound
from app.jobs import table_pass
from app.jobs.evaluation import fold_split
from app.jobs.table_pass import TablePassPart
from app.models import CVStudy, Dataset, Run, StabilityStudy
from app.storage import ArrayStore
from engine.cv import CVPlan, FoldResult, fold_errors, plan_cv
from engine.from_statistics import (
    fold_errors_from_statistics,
    subsample_supports_from_statistics,
)
from engine.stability import (
    StabilityPlan,
    SubsampleResult,
    plan_stability,
    subsample_supports,
)
from engine.trace import Event, StopRequested

Recorder = Callable[[Event], Any]


class Meter(Protocol):
    def observe(self, event: Event) -> None: ...

    @property
    def progress(self) -> float: ...


class Part(Protocol):
    @property
    def run(self) -> Run: ...

    @property
    def plan(self) -> CVPlan:
        """How the part reads every k: its engine runs."""
        ...

    def execute(self, store: ArrayStore, recorder: Recorder) -> tuple[dict[str, Any] | None, bool]:
        """The part's result (a small dict), or None and True when the recorder stopped it."""
        ...

    @property
    def siblings(self) -> ColumnElement[bool]:
        """SQL: the runs of the same study."""
        ...


def load(db: Engine, run: Run, dataset: Dataset) -> Part | TablePassPart | None:
    """The part ``run`` is, or None for a run of its own."""
    if run.cv_id is not None:
        return FoldPart.load(db, run, dataset)
    if run.stability_id is not None:
        return SubsamplePart.load(db, run, dataset)
    if run.table_part is not None:
        return TablePassPart.load(db, run, dataset)
    return None


def meter_of(part: Part | TablePassPart, each: Callable[[engine.Config], Meter]) -> Meter:
    """A part's progress: over its engine runs (``each`` a run's meter), or, for a range of
    a statistics pass (no engine run), over its rows."""
    if isinstance(part, TablePassPart):
        return part.meter()
    return PartMeter.of(part, each)


def _load_arrays(store: ArrayStore, dataset: Dataset) -> tuple[Any, Any]:
    arrays = retry(lambda: store.load(dataset.file))  # a database store may be busy
    return storage.unpack_matrix(arrays), arrays["y"]


@dataclass(frozen=True)
class FoldPart:
    """A fold of a cross-validation over k: its held-out error at every k."""

    run: Run
    dataset: Dataset
    study: CVStudy
    plan: CVPlan
    ranges: list[dict[str, Any]] = field(default_factory=list)  # a reference table's pass

    @classmethod
    def load(cls, db: Engine, run: Run, dataset: Dataset) -> FoldPart:
        with Session(db) as session:
            study = session.get(CVStudy, run.cv_id)
            ranges = (
                table_pass.range_results(session, dataset.id or 0)
                if table_pass.is_reference(dataset)
                else []
            )
            session.expunge_all()
        if study is None:  # deleted meanwhile, with its data set
            raise NotFound(f"cross-validation {run.cv_id} does not exist")
        plan = plan_cv(
            run.algorithm,
            run.objective,
            k_max=study.k_max,
            params=run.params,
            metric=study.metric,
            n_features=dataset.n_features,
            has_groups=dataset.groups is not None,
        )
        return cls(run, dataset, study, plan, ranges)

    @property
    def siblings(self) -> ColumnElement[bool]:
        return col(Run.cv_id) == self.study.id

    def _fold_from_statistics(self, store: ArrayStore, recorder: Recorder) -> FoldResult:
        """A fold of a table registered by reference: training statistics are the merge of
        the other folds' ranges, the held-out error is computed from the fold's own."""
        run, study = self.run, self.study
        assert run.cv_fold is not None  # execute() checked it
        train, test = table_pass.fold_statistics_of(
            store, self.ranges, self.dataset.feature_names, study.n_folds, study.seed
        )[run.cv_fold]
        return fold_errors_from_statistics(
            train,
            test,
            algorithm=run.algorithm,
            k_max=study.k_max,
            params=run.params,
            standardize=run.standardize,
            groups=self.dataset.groups,
            random_state=run.seed,
            callback=recorder,
        )

    def execute(self, store: ArrayStore, recorder: Recorder) -> tuple[dict[str, Any] | None, bool]:
        run, dataset, study = self.run, self.dataset, self.study
        if run.cv_fold is None:
            raise NotFound(f"run {run.id} is not a fold of cross-validation {study.id}")
        try:
            result = (
                self._fold_from_statistics(store, recorder)
                if table_pass.is_reference(dataset)
                else self._fold_from_rows(store, recorder)
            )
        except StopRequested:
            return None, True
        bad = [k for k, e in enumerate(result.errors, start=1) if not math.isfinite(e)]
        if bad:  # JSON has no NaN, and the curve's mean would be meaningless
            raise ValueError(
                f"the held-out {study.metric} is not finite at k = {bad[0]} (the fit diverged "
                "on this fold); try standardize, or a regularised objective"
            )
        return result.to_dict(), False

    def _fold_from_rows(self, store: ArrayStore, recorder: Recorder) -> FoldResult:
        run, dataset, study = self.run, self.dataset, self.study
        assert run.cv_fold is not None  # execute() checked it
        X, y = _load_arrays(store, dataset)
        train, test = fold_split(y, run.objective, study.n_folds, study.seed)[run.cv_fold]
        return fold_errors(
            X,
            y,
            train,
            test,
            algorithm=run.algorithm,
            objective=run.objective,
            k_max=study.k_max,
            params=run.params,
            metric=study.metric,
            standardize=run.standardize,
            groups=dataset.groups,
            random_state=run.seed,
            callback=recorder,
        )


@dataclass(frozen=True)
class SubsamplePart:
    """A subsample of a stability study: the support its method selects at every k."""

    run: Run
    dataset: Dataset
    study: StabilityStudy
    plan: CVPlan
    ranges: list[dict[str, Any]] = field(default_factory=list)  # a reference table's pass

    @classmethod
    def load(cls, db: Engine, run: Run, dataset: Dataset) -> SubsamplePart:
        with Session(db) as session:
            study = session.get(StabilityStudy, run.stability_id)
            ranges = (
                table_pass.range_results(session, dataset.id or 0)
                if table_pass.is_reference(dataset)
                else []
            )
            session.expunge_all()
        if study is None:  # deleted meanwhile, with its data set
            raise NotFound(f"stability study {run.stability_id} does not exist")
        plan = plan_cv(
            run.algorithm,
            run.objective,
            k_max=study.k_max,
            params=run.params,
            n_samples=dataset.n_samples // 2,
            n_features=dataset.n_features,
            has_groups=dataset.groups is not None,
        )
        return cls(run, dataset, study, plan, ranges)

    @property
    def siblings(self) -> ColumnElement[bool]:
        return col(Run.stability_id) == self.study.id

    def execute(self, store: ArrayStore, recorder: Recorder) -> tuple[dict[str, Any] | None, bool]:
        run, dataset, study = self.run, self.dataset, self.study
        if run.stability_index is None:
            raise NotFound(f"run {run.id} is not a subsample of stability study {study.id}")
        reference = table_pass.is_reference(dataset)
        X, y = (None, None) if reference else _load_arrays(store, dataset)
        # The plan is deterministic given the seed: every part rebuilds the same subsamples.
        plan = plan_stability(
            run.algorithm,
            run.objective,
            k_max=study.k_max,
            n_samples=dataset.n_samples,
            n_features=dataset.n_features,
            params=run.params,
            n_pairs=study.n_pairs,
            groups=dataset.groups,
            y=y,
            standardize=run.standardize,
            random_state=study.seed,
        )
        try:
            if reference:
                result = self._subsample_from_statistics(store, plan, recorder)
            else:
                result = subsample_supports(X, y, plan, run.stability_index, callback=recorder)
        except StopRequested:
            return None, True
        return result.to_dict(), False

    def _subsample_from_statistics(
        self, store: ArrayStore, plan: StabilityPlan, recorder: Recorder
    ) -> SubsampleResult:
        """A subsample of a table registered by reference: its half is a set of whole ranges
        of the statistics pass (complementary pairs of half the ranges, dealt from the
        study's seed), merged from their stored partials; the plan gives the run's seed,
        parameters and how every k is read, as for rows."""
        index, study = self.run.stability_index, self.study
        assert index is not None  # execute() checked it
        held = table_pass.half_ranges(len(self.ranges), study.n_pairs, study.seed)[index]
        half = table_pass.half_statistics_of(store, self.ranges, self.dataset.feature_names, held)
        return subsample_supports_from_statistics(half, plan, index, callback=recorder)


@dataclass
class PartMeter:
    """Progress over the part's engine runs (one on a path, one per k otherwise): each ends
    with a stop event, after which the next run's meter counts."""

    meters: Sequence[Meter]
    done: int = 0

    @classmethod
    def of(cls, part: Part, meter: Callable[[engine.Config], Meter]) -> PartMeter:
        return cls([meter(config) for config in part.plan.runs])

    def observe(self, event: Event) -> None:
        if event.kind == "stop":
            self.done = min(self.done + 1, len(self.meters))
        elif self.done < len(self.meters):
            self.meters[self.done].observe(event)

    @property
    def progress(self) -> float:
        current = self.meters[self.done].progress if self.done < len(self.meters) else 0.0
        return min((self.done + current) / len(self.meters), 0.99)
