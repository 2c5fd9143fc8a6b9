"""Choosing k by cross-validation: a study and its folds, each fold a run of its own.

A study is checked once at submit (``engine.cv.plan_cv`` with the data set's shape and the
smallest training part), then stored with one Run row per fold (``Run.cv_id``, ``cv_fold``);
each fold is queued like any run, so the folds spread over the workers of any backend, and
``app.jobs.cv_fold`` computes a fold's held-out errors with ``engine.cv.fold_errors``. The
study has no status of its own: it is done when its folds are, and its curve and chosen k are
``engine.cv.summarise`` of the stored fold results.

On a table registered by reference (issue 28) a fold is a set of whole row ranges of its
statistics pass, dealt from the seed (``table_pass.fold_ranges``): least squares only, scored
from the ranges' stored partial statistics with no second pass over the table.
"""

from __future__ import annotations

import math

import numpy as np
from sqlmodel import Session, col, select

import engine
from app.errors import Conflict, InvalidInput, NotFound
from app.jobs import lease, table_pass
from app.jobs.backend import JobBackend
from app.jobs.evaluation import fold_split
from app.models import (
    CVStudy,
    Dataset,
    Run,
    RunConfig,
    RunStatus,
    Task,
    stored_id,
)
from app.models.cv import CVCreate, CVCurve, CVFinalCreate, CVFold, CVPublic
from app.services import catalog, idempotency, parts, reference_tables
from app.services import runs as run_service
from app.services.parts import status_of
from app.storage import ArrayStore
from engine.cv import CVPlan, FoldResult, plan_cv, summarise

# --------------------------------------------------------------------------- submitting


def _dataset(session: Session, dataset_id: int) -> Dataset:
    dataset = session.get(Dataset, dataset_id)
    if dataset is None:
        raise InvalidInput(f"data set {dataset_id} does not exist", loc=("body", "dataset_id"))
    return dataset


def _reference_training_rows(session: Session, dataset: Dataset, body: CVCreate) -> int:
    """The fewest training rows of a fold of a table registered by reference, whose folds
    are whole row ranges of its statistics pass (409 until the pass is done)."""
    if body.objective not in (None, "least_squares"):
        raise InvalidInput(
            f"cross-validation with objective {body.objective!r} needs the rows, and "
            f"{table_pass.NEEDS_ROWS}: least squares is cross-validated from them",
            loc=("body", "objective"),
        )
    if body.metric not in (None, "mse"):
        raise InvalidInput(
            f"metric {body.metric!r}: on a table registered by reference the held-out error is "
            "the mean squared error, computed from each fold's statistics; use 'mse'",
            loc=("body", "metric"),
        )
    rows = [int(r.get("rows", 0)) for r in table_pass.range_results(session, stored_id(dataset))]
    if not 2 <= body.n_folds <= len(rows):
        raise InvalidInput(
            f"n_folds {body.n_folds}: the folds of a table registered by reference are whole "
            f"row ranges of its statistics pass, and it has {len(rows)}; choose 2 to "
            f"{len(rows)}, or register the table again with n_parts >= {body.n_folds}",
            loc=("body", "n_folds"),
        )
    held = table_pass.fold_ranges(len(rows), body.n_folds, body.seed)
    return dataset.n_samples - max(sum(rows[i] for i in fold) for fold in held)


def _training_rows(dataset: Dataset, n_folds: int) -> int:
    """The fewest training rows of a fold (kfold deals the rows round-robin)."""
    if n_folds > dataset.n_samples:
        raise InvalidInput(
            f"n_folds {n_folds} is more than the data set's {dataset.n_samples} rows; "
            f"choose 2 to {min(dataset.n_samples, 20)}",
            loc=("body", "n_folds"),
        )
    return dataset.n_samples - math.ceil(dataset.n_samples / n_folds)


def _check_classes(store: ArrayStore, dataset: Dataset, plan: CVPlan, body: CVCreate) -> None:
    """A classification objective needs both classes in every fold's training rows."""
    if engine.OBJECTIVES[plan.objective].task != Task.classification:
        return
    y = store.load(dataset.file, ("y",))["y"]
    for i, (train, _) in enumerate(fold_split(y, plan.objective, body.n_folds, body.seed)):
        if len(np.unique(y[train])) < 2:
            raise InvalidInput(
                f"fold {i} would train on a single class: a class has too few rows for "
                f"{body.n_folds} folds; choose fewer folds",
                loc=("body", "n_folds"),
            )


def _plan(body: CVCreate, dataset: Dataset, n_train: int) -> CVPlan:
    # No objective named: the data set's task decides, as for a run (one default, issue 25).
    objective = body.objective or catalog.default_objective(dataset)
    if reason := catalog.engine_only("objective", objective):
        raise InvalidInput(reason, loc=("body", "objective"))
    try:
        return plan_cv(
            body.algorithm,
            objective,
            k_max=body.k_max,
            params=body.params,
            metric=body.metric,
            n_samples=n_train,
            n_features=dataset.n_features,
            has_groups=dataset.groups is not None,
            task=dataset.task,
        )
    except engine.ConfigError as exc:
        # The engine says k for the largest k scored; a data set without groups needs
        # another algorithm.
        field = {"k": "k_max", "groups": "algorithm"}.get(exc.field, exc.field)
        message = str(exc)
        if exc.field == "k":
            message = "k_max" + message[1:] if message.startswith("k ") else f"k_max: {message}"
        raise InvalidInput(message, loc=("body", field)) from None


def submit_cv(
    session: Session, backend: JobBackend, store: ArrayStore, body: CVCreate, key: str | None
) -> CVStudy:
    """Check the request, store the study and its fold runs in one transaction, queue them;
    a repeated Idempotency-Key returns the study its first use made."""
    request_hash = idempotency.digest("cv", body)
    if seen := idempotency.lookup(session, key, request_hash):
        return get_study(session, idempotency.created(seen.cv_id, key))
    dataset = _dataset(session, body.dataset_id)
    if table_pass.is_reference(dataset):  # folds from the pass's per-range statistics
        reference_tables.require_ready(session, store, dataset)
        n_train = _reference_training_rows(session, dataset, body)
    else:
        n_train = _training_rows(dataset, body.n_folds)
    plan = _plan(body, dataset, n_train)
    _check_classes(store, dataset, plan, body)
    params = plan.params
    study = CVStudy(
        dataset_id=stored_id(dataset),
        algorithm=body.algorithm,
        objective=plan.objective,
        k_max=plan.k_max,
        params=params,
        standardize=body.standardize,
        n_folds=body.n_folds,
        rule=body.rule,
        metric=plan.metric,
        seed=body.seed,
        plan=plan.to_dict(),
    )

    def folds(study_id: int) -> list[Run]:
        return [
            Run(
                dataset_id=stored_id(dataset),
                algorithm=body.algorithm,
                objective=plan.objective,
                k=plan.k_max,
                params=params,
                seed=body.seed,
                cv_id=study_id,
                cv_fold=i,
            )
            for i in range(body.n_folds)
        ]

    study, earlier = parts.store_study(
        session,
        backend,
        study,
        folds,
        kind="cv",
        key=key,
        request_hash=request_hash,
        dataset_id=body.dataset_id,
    )
    return study if earlier is None else get_study(session, earlier)


# --------------------------------------------------------------------------- reading


def get_study(session: Session, cv_id: int) -> CVStudy:
    study = session.get(CVStudy, cv_id)
    if study is None:
        raise NotFound(f"cross-validation {cv_id} does not exist")
    return study


def _study_dataset(session: Session, study: CVStudy) -> Dataset:
    dataset = session.get(Dataset, study.dataset_id)
    if dataset is None:  # deleted meanwhile, and the study with it
        raise NotFound(f"cross-validation {study.id} does not exist")
    return dataset


def fold_runs(session: Session, cv_id: int) -> list[Run]:
    return list(session.exec(select(Run).where(col(Run.cv_id) == cv_id).order_by(col(Run.cv_fold))))


def list_studies(session: Session, dataset_id: int, limit: int = 20) -> list[CVStudy]:
    query = select(CVStudy).where(col(CVStudy.dataset_id) == dataset_id)
    return list(session.exec(query.order_by(col(CVStudy.id).desc()).limit(limit)))


def fold_results(folds: list[Run]) -> list[FoldResult]:
    return [FoldResult.from_dict(r.result) for r in folds if r.status == "done" and r.result]


def curve(study: CVStudy, folds: list[Run]) -> CVCurve | None:
    """``engine.cv.summarise`` of the stored fold results, once every fold is done."""
    if not folds or status_of(folds) != RunStatus.done:
        return None
    summary = summarise(fold_results(folds), study.rule)
    return CVCurve(
        k=summary.k.tolist(),
        mean=summary.mean.tolist(),
        se=summary.se.tolist(),
        k_min=summary.k_min,
        k_1se=summary.k_1se,
        k_best=summary.k_best,
    )


def _held_out_rows(session: Session, study: CVStudy, dataset: Dataset) -> list[int]:
    """Each fold's held-out rows: kfold deals rows round-robin; on a table registered by
    reference a fold holds out whole ranges of the statistics pass."""
    n_rows, k = dataset.n_samples, study.n_folds
    if not table_pass.is_reference(dataset):
        return [len(range(f, n_rows, k)) for f in range(k)]
    rows = [int(r.get("rows", 0)) for r in table_pass.range_results(session, stored_id(dataset))]
    if len(rows) < k:  # not expected: the study was checked against the ranges
        return [0] * k
    return [sum(rows[i] for i in held) for held in table_pass.fold_ranges(len(rows), k, study.seed)]


def _fold(run: Run, n_rows: int, held_out: list[int]) -> CVFold:
    result = FoldResult.from_dict(run.result) if run.result and run.status == "done" else None
    n_test = held_out[run.cv_fold or 0]
    return CVFold(
        fold=run.cv_fold or 0,
        run_id=stored_id(run),
        status=RunStatus(run.status),
        progress=run.progress,
        n_train=result.n_train if result else n_rows - n_test,
        n_test=result.n_test if result else n_test,
        seconds=result.elapsed if result else None,
        error=run.error,
    )


def public(session: Session, study: CVStudy) -> CVPublic:
    folds = fold_runs(session, stored_id(study))
    dataset = _study_dataset(session, study)
    final = session.get(Run, study.final_run_id) if study.final_run_id else None
    failed = next((r for r in folds if r.status == RunStatus.failed), None)
    held_out = _held_out_rows(session, study, dataset)
    return CVPublic(
        **study.model_dump(include={"id", "dataset_id", "algorithm", "objective", "k_max"}),
        **study.model_dump(include={"n_folds", "rule", "metric", "seed", "created_at"}),
        params=study.params,
        standardize=study.standardize,
        mode=study.plan.get("mode", ""),
        mode_reason=study.plan.get("reason", ""),
        status=status_of(folds) if folds else RunStatus.failed,
        folds_done=sum(r.status == RunStatus.done for r in folds),
        folds_total=study.n_folds,
        folds=[_fold(r, dataset.n_samples, held_out) for r in folds],
        error=f"fold {failed.cv_fold}: {failed.error}" if failed else None,
        curve=curve(study, folds),
        final_run_id=final.id if final else None,
        final_run_url=f"/api/runs/{final.id}" if final else None,
        url=f"/api/cv/{study.id}",
        page_url=f"/cv/{study.id}",
    )


# --------------------------------------------------------------------------- acting


def submit_final(session: Session, backend: JobBackend, cv_id: int, body: CVFinalCreate) -> Run:
    """The run at the chosen k (or ``body.k``) on all rows, with the study's settings; the
    same request again returns the same run."""
    study = get_study(session, cv_id)
    folds = fold_runs(session, cv_id)
    summary = curve(study, folds)
    if summary is None:
        raise Conflict(
            f"the final run needs every fold of cross-validation {cv_id} done; it is "
            f"{status_of(folds)}"
        )
    k = summary.k_best if body.k is None else body.k
    if k > study.k_max:
        raise InvalidInput(
            f"k must be between 1 and k_max = {study.k_max}, the sizes the study scored",
            loc=("body", "k"),
        )
    final = session.get(Run, study.final_run_id) if study.final_run_id else None
    if final is not None and final.k == k and final.record_candidates == body.record_candidates:
        return final
    config = RunConfig(
        algorithm=study.algorithm,
        objective=study.objective,
        k=k,
        params=study.params,
        record_candidates=body.record_candidates,
        standardize=study.standardize,
    )
    dataset = _study_dataset(session, study)
    params = run_service.validate_config(config, dataset)
    run = Run(
        dataset_id=study.dataset_id,
        algorithm=study.algorithm,
        objective=study.objective,
        k=k,
        params=params,
        standardize=config.standardize,
        record_candidates=body.record_candidates,
        seed=study.seed,
    )
    session.add(run)
    session.flush()
    study.final_run_id = run.id
    session.add(study)
    backend.enqueue(session, [stored_id(run)])
    session.commit()
    backend.submit(stored_id(run))
    return run


def cancel_study(session: Session, cv_id: int) -> CVStudy:
    """Cancel the folds still queued (at once) or running (at their next event)."""
    study = get_study(session, cv_id)
    lease.cancel_parts(session.get_bind().engine, col(Run.cv_id) == cv_id)
    session.expire_all()  # the folds changed in another transaction
    return study
