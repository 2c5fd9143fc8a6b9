"""How stable is a selection: a stability study and its subsamples, each a run of its own.

A study is checked once at submit (``engine.stability.plan_stability`` for every method with
the data set's shape), then stored with one Run row per (method, subsample)
(``Run.stability_id``, ``stability_index``); each is queued like any run, so the subsamples
spread over the workers of any backend, as cross-validation folds do, and
``app.jobs.study_part`` runs one with ``engine.stability.subsample_supports``. The study has
no status of its own (``parts.status_of`` of its runs); its frequencies are
``engine.stability.summarise`` of the stored subsample results (a partial merge while they
run), and with several methods ``engine.stability.compare`` says which is steadiest at every
k. Every method plans from the same seed and number of pairs: the same subsamples. On a table
registered by reference a subsample is half of the row ranges of its statistics pass
(complementary pairs of halves, ``table_pass.half_ranges``), least squares run from their
merged statistics (``engine.subsample_supports_from_statistics``); nothing reads the table.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlmodel import Session, col, select

import engine
from app import storage
from app.errors import Conflict, InvalidInput, NotFound
from app.jobs import lease, table_pass
from app.jobs.backend import JobBackend
from app.models import (
    Dataset,
    Run,
    RunStatus,
    StabilityCreate,
    StabilityMethod,
    StabilityPart,
    StabilityPublic,
    StabilityStudy,
    part_of,
    stored_id,
)
from app.services import catalog, idempotency, parts, reference_tables
from app.services.parts import status_of
from app.storage import ArrayStore
from engine import judge
from engine.from_statistics import check_statistics_config
from engine.stability import (
    StabilityPlan,
    StabilityResult,
    SubsampleResult,
    compare,
    plan_stability,
    summarise,
)

# --------------------------------------------------------------------------- submitting


def _dataset(session: Session, store: ArrayStore, dataset_id: int) -> Dataset:
    dataset = session.get(Dataset, dataset_id)
    if dataset is None:
        raise InvalidInput(f"data set {dataset_id} does not exist", loc=("body", "dataset_id"))
    if table_pass.is_reference(dataset):  # subsamples from the pass's per-range statistics
        reference_tables.require_ready(session, store, dataset)
    return dataset


def _source_run(session: Session, body: StabilityCreate) -> Run | None:
    if body.run_id is None:
        return None
    run = session.get(Run, body.run_id)
    loc = ("body", "run_id")
    if run is None:
        raise InvalidInput(f"run {body.run_id} does not exist", loc=loc)
    if run.dataset_id != body.dataset_id:
        raise InvalidInput(
            f"run {run.id} is on data set {run.dataset_id}, not {body.dataset_id}", loc=loc
        )
    if part := part_of(run):
        raise InvalidInput(f"run {run.id} is {part.label}, not a selection", loc=loc)
    return run


@dataclasses.dataclass(frozen=True)
class Request:
    """The request with the defaults filled in (from the run asked about, or the data set)."""

    algorithm: str
    objective: str
    params: dict[str, Any]
    k_max: int
    seed: int
    standardize: bool


def _resolve(body: StabilityCreate, dataset: Dataset, run: Run | None) -> Request:
    def pick(given: Any, from_run: Any, default: Any) -> Any:
        return given if given is not None else from_run if run is not None else default

    algorithm = pick(body.algorithm, run and run.algorithm, engine.REGISTRY.default_algorithm)
    objective = pick(body.objective, run and run.objective, catalog.default_objective(dataset))
    k_max = body.k_max if body.k_max is not None else (run.k if run is not None else None)
    if k_max is None:
        k_max = min(dataset.n_features, max(10, 2 * catalog.default_k(dataset)))
    return Request(
        algorithm=algorithm,
        objective=objective,
        params=dict(pick(body.params, run and run.params, {})),
        k_max=k_max,
        seed=pick(body.seed, run and run.seed, 0),
        standardize=pick(body.standardize, run and run.standardize, True),
    )


def _plan(
    dataset: Dataset, request: Request, n_pairs: int, algorithm: str, params: dict[str, Any]
) -> StabilityPlan:
    """The engine's plan: every subsample's rows (the same for every method: one seed), the
    units counted. Without y: stratification only moves rows, and the jobs pass y."""
    return plan_stability(
        algorithm,
        request.objective,
        k_max=request.k_max,
        n_samples=dataset.n_samples,
        n_features=dataset.n_features,
        params=params,
        n_pairs=n_pairs,
        groups=dataset.groups,
        standardize=request.standardize,
        random_state=request.seed,
        task=dataset.task,
    )


def _check(
    body: StabilityCreate, dataset: Dataset, request: Request
) -> list[tuple[str, dict[str, Any]]]:
    """Every method with its parameters (defaults filled in), each checked by the engine."""
    if reason := catalog.engine_only("objective", request.objective):
        raise InvalidInput(reason, loc=("body", "objective"))
    if dataset.n_samples < 4:
        raise InvalidInput(
            f"stability selection halves the rows; {dataset.n_samples} rows are too few",
            loc=("body", "dataset_id"),
        )
    names = [request.algorithm, *body.compare_with]
    if len(set(names)) < len(names):
        raise InvalidInput(f"an algorithm is named twice in {names}", loc=("body", "compare_with"))
    methods = []
    for i, name in enumerate(names):
        params = request.params if i == 0 else {}
        try:
            plan = _plan(dataset, request, 1, name, params)
        except engine.ConfigError as exc:
            raise _config_problem(exc, name, i > 0) from None
        methods.append((name, plan.cv.params))
    return methods


def _config_problem(exc: engine.ConfigError, name: str, compared: bool) -> InvalidInput:
    """The engine's refusal at the request's field (k_max for k; compare_with for a method
    compared with the first)."""
    field = {"k": "k_max", "groups": "algorithm"}.get(exc.field, exc.field)
    message = str(exc)
    if exc.field == "k" and message.startswith("k "):
        message = "k_max" + message[1:]
    if compared:
        field, message = "compare_with", f"{name}: {message}"
    return InvalidInput(message, loc=("body", field))


def _check_reference(
    session: Session,
    dataset: Dataset,
    body: StabilityCreate,
    request: Request,
) -> None:
    """A table registered by reference: its half samples are halves of the ranges of its
    statistics pass (``table_pass.half_ranges``), each method least squares from their
    statistics (``engine.check_statistics_config``, with the smallest half's rows)."""
    if request.objective != "least_squares":
        raise InvalidInput(
            f"stability selection with objective {request.objective!r} needs the rows, and "
            f"{table_pass.NEEDS_ROWS}: least squares runs from them",
            loc=("body", "objective"),
        )
    rows = [int(r.get("rows", 0)) for r in table_pass.range_results(session, stored_id(dataset))]
    if len(rows) < 2:
        raise InvalidInput(
            f"the half samples of a table registered by reference are halves of the row ranges "
            f"of its statistics pass, and it has {len(rows)}; register the table again with "
            "n_parts >= 4",
            loc=("body", "dataset_id"),
        )
    halves = table_pass.half_ranges(len(rows), body.n_pairs, request.seed)
    smallest = min(sum(rows[i] for i in held) for held in halves)
    methods = [(request.algorithm, request.params), *((name, {}) for name in body.compare_with)]
    for i, (name, params) in enumerate(methods):
        try:
            check_statistics_config(
                name,
                k=request.k_max,
                params=params,
                n_samples=smallest,
                n_features=dataset.n_features,
                has_groups=dataset.groups is not None,
            )
        except engine.ConfigError as exc:
            raise _config_problem(exc, name, i > 0) from None


def submit_stability(
    session: Session,
    backend: JobBackend,
    store: ArrayStore,
    body: StabilityCreate,
    key: str | None,
) -> StabilityStudy:
    """Check the request, store the study and its subsample runs in one transaction, queue
    them; a repeated Idempotency-Key returns the study its first use made. On a table
    registered by reference (once its statistics pass is done) the subsamples are halves of
    its row ranges, run from their stored statistics: least squares only."""
    request_hash = idempotency.digest("stability", body)
    if seen := idempotency.lookup(session, key, request_hash):
        return get_study(session, idempotency.created(seen.stability_id, key))
    dataset = _dataset(session, store, body.dataset_id)
    request = _resolve(body, dataset, _source_run(session, body))
    if table_pass.is_reference(dataset):  # before _check: what it refuses, in its words
        _check_reference(session, dataset, body, request)
    methods = _check(body, dataset, request)
    plan = _plan(dataset, request, body.n_pairs, request.algorithm, request.params)
    study = StabilityStudy(
        dataset_id=stored_id(dataset),
        run_id=body.run_id,
        algorithm=request.algorithm,
        objective=request.objective,
        k_max=request.k_max,
        methods=[{"algorithm": name, "params": params} for name, params in methods],
        standardize=request.standardize,
        n_pairs=body.n_pairs,
        threshold=body.threshold,
        max_false=body.max_false,
        seed=request.seed,
        plan=plan.to_dict(),
    )

    def subsamples(study_id: int) -> list[Run]:
        # Subsample by subsample, every method: the methods advance together.
        return [
            Run(
                dataset_id=stored_id(dataset),
                algorithm=name,
                objective=request.objective,
                k=request.k_max,
                params=params,
                standardize=request.standardize,
                seed=request.seed,
                stability_id=study_id,
                stability_index=i,
            )
            for i in range(plan.n_subsamples)
            for name, params in methods
        ]

    study, earlier = parts.store_study(
        session,
        backend,
        study,
        subsamples,
        kind="stability",
        key=key,
        request_hash=request_hash,
        dataset_id=body.dataset_id,
    )
    return study if earlier is None else get_study(session, earlier)


# --------------------------------------------------------------------------- reading


def get_study(session: Session, study_id: int) -> StabilityStudy:
    study = session.get(StabilityStudy, study_id)
    if study is None:
        raise NotFound(f"stability study {study_id} does not exist")
    return study


def _study_dataset(session: Session, study: StabilityStudy) -> Dataset:
    dataset = session.get(Dataset, study.dataset_id)
    if dataset is None:  # deleted meanwhile, and the study with it
        raise NotFound(f"stability study {study.id} does not exist")
    return dataset


def part_runs(session: Session, study_id: int) -> list[Run]:
    query = select(Run).where(col(Run.stability_id) == study_id)
    return list(session.exec(query.order_by(col(Run.stability_index), col(Run.id))))


def list_studies(session: Session, dataset_id: int, limit: int = 20) -> list[StabilityStudy]:
    query = select(StabilityStudy).where(col(StabilityStudy.dataset_id) == dataset_id)
    return list(session.exec(query.order_by(col(StabilityStudy.id).desc()).limit(limit)))


def plan_of(study: StabilityStudy, dataset: Dataset) -> StabilityPlan:
    """The study's plan, rebuilt (it is deterministic given the seed)."""
    request = Request(
        study.algorithm,
        study.objective,
        study.methods[0]["params"],
        study.k_max,
        study.seed,
        study.standardize,
    )
    return _plan(dataset, request, study.n_pairs, study.algorithm, request.params)


def results(study: StabilityStudy, parts: list[Run]) -> dict[str, list[SubsampleResult]]:
    """The subsample results done, by method (in the study's order)."""
    out: dict[str, list[SubsampleResult]] = {m["algorithm"]: [] for m in study.methods}
    for run in parts:
        if run.status == RunStatus.done and run.result:
            out[run.algorithm].append(SubsampleResult.from_dict(run.result))
    return out


def summaries(
    study: StabilityStudy, dataset: Dataset, parts: list[Run]
) -> dict[str, StabilityResult | None]:
    """``engine.stability.summarise`` of every method's subsamples done (None: none yet)."""
    plan = plan_of(study, dataset)
    out: dict[str, StabilityResult | None] = {}
    for name, done in results(study, parts).items():
        own = dataclasses.replace(plan, algorithm=name)
        out[name] = (
            StabilityResult(
                own,
                done,
                summarise(done, own, threshold=study.threshold, max_false=study.max_false),
            )
            if done
            else None
        )
    return out


def public(session: Session, study: StabilityStudy) -> StabilityPublic:
    parts = part_runs(session, stored_id(study))
    dataset = _study_dataset(session, study)
    by_method = summaries(study, dataset, parts)
    status = status_of(parts) if parts else RunStatus.failed
    steadiest = None
    if status == RunStatus.done and len(by_method) > 1:
        steadiest = compare({m: r for m, r in by_method.items() if r}).steadiest
    failed = next((r for r in parts if r.status == RunStatus.failed), None)
    plan = study.plan
    return StabilityPublic(
        **study.model_dump(include={"id", "dataset_id", "run_id", "algorithm", "objective"}),
        **study.model_dump(include={"k_max", "standardize", "n_pairs", "threshold"}),
        **study.model_dump(include={"max_false", "seed", "created_at"}),
        mode=plan.get("mode", ""),
        mode_reason=plan.get("reason", ""),
        status=status,
        parts_done=sum(r.status == RunStatus.done for r in parts),
        parts_total=len(parts),
        progress=sum(r.progress for r in parts) / len(parts) if parts else 0.0,
        unit_names=unit_names(study, dataset),
        methods=[
            StabilityMethod(
                algorithm=m["algorithm"],
                params=m["params"],
                subsamples_done=len(r.subsamples) if (r := by_method[m["algorithm"]]) else 0,
                summary=r.summary.to_dict() if r else None,
            )
            for m in study.methods
        ],
        steadiest=steadiest,
        parts=[_part(r) for r in parts],
        error=f"{failed.algorithm}, subsample {failed.stability_index}: {failed.error}"
        if failed
        else None,
        url=f"/api/stability/{study.id}",
        page_url=f"/stability/{study.id}",
        frequencies_url=f"/api/stability/{study.id}/frequencies",
    )


def unit_names(study: StabilityStudy, dataset: Dataset) -> list[str]:
    """The feature names, or the group labels when the data set has groups."""
    if dataset.groups is None:
        return list(dataset.feature_names)
    return list(study.plan.get("unit_names", []))


def _part(run: Run) -> StabilityPart:
    done = run.status == RunStatus.done and run.result
    return StabilityPart(
        method=run.algorithm,
        subsample=run.stability_index or 0,
        run_id=stored_id(run),
        status=RunStatus(run.status),
        progress=run.progress,
        seconds=float(run.result["elapsed"]) if done and run.result else None,
        error=run.error,
    )


def frequency_rows(public: StabilityPublic) -> list[dict[str, Any]]:
    """Every (method, k, unit) with its selection frequency, whether the unit is stable at k,
    and the bound at k: the export (long format)."""
    rows = []
    for method in public.methods:
        s = method.summary
        if s is None:
            continue
        for i, k in enumerate(s["k"]):
            stable = set(s["stable"][i])
            for u, name in enumerate(public.unit_names):
                rows.append(
                    {
                        "method": method.algorithm,
                        "k": k,
                        "unit": u,
                        "name": name,
                        "frequency": s["frequency"][i][u],
                        "stable": u in stable,
                        "threshold": s["threshold"],
                        "bound": s["bound"][i],
                        "subsamples": s["n_subsamples"],
                    }
                )
    return rows


# --------------------------------------------------------------------------- why not

WHY_NOT_MAX_CELLS = 5_000_000  # rows x features: it runs in the web process


def why_not(
    session: Session, store: ArrayStore, study_id: int, unit: int, k: int, method: str | None
) -> dict[str, Any]:
    """Why is (or is not) feature ``unit`` in the selection at k? ``engine.judge.why_not`` on
    all rows, against the run the study was started from when it is done and of this k, else
    against the k features the method selected most often at k."""
    study = get_study(session, study_id)
    dataset = _study_dataset(session, study)
    names = {m["algorithm"]: m for m in study.methods}
    method = method or study.algorithm
    if method not in names:
        raise InvalidInput(f"the study has no method {method!r}", loc=("query", "method"))
    if table_pass.is_reference(dataset):
        raise Conflict(table_pass.needs_rows("'why not'"))
    if dataset.groups is not None:
        raise Conflict("'why not' answers name single features; this data set's units are groups")
    if dataset.n_samples * dataset.n_features > WHY_NOT_MAX_CELLS:
        raise Conflict(
            f"'why not' answers are for data sets of at most {WHY_NOT_MAX_CELLS:,} cells"
        )
    if not 0 <= unit < dataset.n_features:
        raise InvalidInput(
            f"feature must be between 0 and {dataset.n_features - 1}", loc=("query", "feature")
        )
    if not 1 <= k <= study.k_max:
        raise InvalidInput(f"k must be between 1 and {study.k_max}", loc=("query", "k"))
    run = session.get(Run, study.run_id) if study.run_id else None
    frequency = None
    summary = summaries(study, dataset, part_runs(session, stored_id(study)))[method]
    if summary is not None:
        frequency = float(summary.summary.frequency[k - 1, unit])
    if run is not None and run.k == k and run.status == RunStatus.done and run.result:
        support = [f["index"] for f in run.result["support"]]
        reference = f"run #{run.id}'s selection (k = {k})"
    elif summary is not None:
        at_k = summary.summary.frequency[k - 1]
        support = sorted(sorted(range(len(at_k)), key=lambda u: (-at_k[u], u))[:k])
        reference = f"the {k} features {method} selected most often at k = {k}"
    else:
        raise Conflict("no subsample of this method has finished yet")
    X, y = _arrays(store, dataset)
    objective = engine.OBJECTIVES[study.objective]
    own = {p.name for p in objective.params}
    params = {n: v for n, v in names[method]["params"].items() if n in own}
    verdict = judge.why_not(
        X, y, support, unit, objective=study.objective, standardize=study.standardize, **params
    )
    return {
        "study_id": study.id,
        "method": method,
        "k": k,
        "feature": unit,
        "name": dataset.feature_names[unit],
        "frequency": frequency,
        "reference": reference,
        "support": [dataset.feature_names[j] for j in support],
        "verdict": verdict.to_dict(),
    }


def _arrays(store: ArrayStore, dataset: Dataset) -> tuple[Any, Any]:
    arrays = store.load(dataset.file)
    return storage.unpack_matrix(arrays), arrays["y"]


# --------------------------------------------------------------------------- acting


def cancel_study(session: Session, study_id: int) -> StabilityStudy:
    """Cancel the subsamples still queued (at once) or running (at their next event)."""
    study = get_study(session, study_id)
    lease.cancel_parts(session.get_bind().engine, col(Run.stability_id) == study_id)
    session.expire_all()  # the parts changed in another transaction
    return study
