"""Tables larger than memory, registered by reference (issue 28): the path, the pass, its status.

A data set registered here has ``source="reference"`` and no rows in the array store: its
``meta["reference"]`` holds the path, the :class:`~app.ingest.chunked.TableSchema`, the row
ranges and the pass's status; once every range's job is done, its merged sufficient statistics
are stored under ``Dataset.file`` and its ``n_samples`` is the rows read. The ranges are runs
(``Run.table_part``) stored with their jobs as a study's parts are (``parts.store_study``), so
both job backends run them, a killed worker's range runs again, and a failed range fails the
pass (its siblings cancelled). The merge happens at the first read that finds every range
done (:func:`refresh`), once: the row that stores it is updated only while it has no file.
"""

from __future__ import annotations

import math
import os
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow.fs as pafs
from sqlalchemy import update
from sqlmodel import Session, col, select

from app.config import Settings
from app.errors import Conflict, InvalidInput
from app.ingest import table_fs
from app.ingest.chunked import StreamError, TableSchema, plan_parts, scan_table
from app.ingest.upload import na_values
from app.ingest.words import Words
from app.jobs import lease, table_pass
from app.jobs.backend import JobBackend
from app.models import (
    ColumnSummary,
    Dataset,
    ReferenceCreate,
    Run,
    RunStatus,
    Task,
    stored_id,
    utcnow,
)
from app.models.run import _aware
from app.services import parts as study_parts
from app.storage import ArrayStore

OFF = (
    "registering tables by reference is off on this server: set REFERENCE_DIRS to the "
    "directories (a mounted volume) it and its workers may read tables from"
)
OFF_URIS = (
    "registering tables in object storage is off on this server: set REFERENCE_URIS to the "
    "prefixes (such as s3://bucket/datasets/) it and its workers may read tables from"
)


# --------------------------------------------------------------------------- registering
def allowed_location(settings: Settings, raw: str) -> str:
    """Where the table is, checked: an ``s3://`` URI under one of REFERENCE_URIS that names
    an object or a prefix the server can read, else a path as :func:`allowed_path` says."""
    if not table_fs.is_uri(raw):
        return str(allowed_path(settings, raw))
    prefixes = settings.reference_prefixes()
    if not prefixes:
        raise InvalidInput(OFF_URIS, loc=("body", "path"))
    try:
        bucket, key = table_fs.split_uri(raw)
        uri = f"{table_fs.S3}{bucket}/{key}"
        if not any(f"{uri}/".startswith(prefix) for prefix in prefixes):
            raise table_fs.StorageError(
                f"{raw!r} is outside the prefixes this server may read tables from "
                f"(REFERENCE_URIS: {', '.join(prefixes)})"
            )
        # Here, so that a wrong key, bucket or credential is refused at the path.
        if table_fs.info(uri).type == pafs.FileType.NotFound:
            raise table_fs.StorageError(table_fs.absent(uri))
    except table_fs.StorageError as exc:
        raise InvalidInput(str(exc), loc=("body", "path")) from None
    return uri


def allowed_path(settings: Settings, raw: str) -> Path:
    """``raw`` resolved (symlinks followed), if it lies inside one of REFERENCE_DIRS."""
    roots = settings.reference_roots()
    if not roots:
        raise InvalidInput(OFF, loc=("body", "path"))
    given = Path(raw).expanduser()
    path = (given if given.is_absolute() else roots[0] / given).resolve()
    if not any(path == root or path.is_relative_to(root) for root in roots):
        raise InvalidInput(
            f"{raw!r} is outside the directories this server may read tables from "
            f"(REFERENCE_DIRS: {', '.join(map(str, roots))})",
            loc=("body", "path"),
        )
    if not path.exists():
        raise InvalidInput(f"{raw!r} does not exist on the server", loc=("body", "path"))
    return path


def register(
    session: Session, backend: JobBackend, settings: Settings, body: ReferenceCreate
) -> Dataset:
    """Scan the table (its columns, and the categories of its text columns), plan its row
    ranges and queue one job each; the data set is answered at once, its pass under way."""
    path = allowed_location(settings, body.path)
    try:
        schema = scan_table(
            path,
            body.target,
            features=body.features,
            categorical=body.categorical,
            missing=body.missing,
            na_values=na_values(body.na_values, Words()),
            delimiter=body.delimiter,
            decimal=body.decimal,
            encoding=body.encoding,
            categorical_missing=body.categorical_missing,
        )
        ranges = plan_parts(
            schema, n_parts=body.n_parts, part_bytes=int(settings.reference_part_mb * 2**20)
        )
        part_rows = _part_rows(schema, ranges)
    except table_fs.StorageError as exc:  # the object went, or the credentials, since the scan
        raise InvalidInput(str(exc), loc=("body", "path")) from None
    except StreamError as exc:  # at the option it names, if it names one
        raise InvalidInput(str(exc), loc=("body", *([exc.field] if exc.field else []))) from None
    if schema.n_features < 1:
        raise InvalidInput("the table has no feature column", loc=("body", "features"))
    grouped = bool(schema.categories)
    dataset = Dataset(
        name=body.name or PurePosixPath(path).name,
        description=body.description,
        source=table_pass.SOURCE,
        task=Task.regression,
        target=schema.target,
        n_samples=0,  # the rows read, once the pass is done
        n_features=schema.n_features,
        feature_names=schema.feature_names,
        groups=schema.groups if grouped else None,
        meta={
            "reference": {
                "path": body.path,
                "schema": schema.to_dict(),
                "parts": [r.to_dict() for r in ranges],
                "part_rows": part_rows,
                "status": RunStatus.queued,
            }
        },
        file="",  # the merged statistics' key, once the pass is done
    )

    def make_parts(dataset_id: int) -> list[Run]:
        return [
            Run(
                dataset_id=dataset_id,
                algorithm=table_pass.PASS_ALGORITHM,
                objective="least_squares",
                params=r.to_dict(),
                table_part=i,
            )
            for i, r in enumerate(ranges)
        ]

    stored, _ = study_parts.store_study(
        session,
        backend,
        dataset,
        make_parts,
        kind="dataset",
        key=None,
        request_hash="",
        dataset_id=0,
    )
    return stored


def _part_rows(schema: TableSchema, ranges: list[Any]) -> list[float]:
    """Rows per range, for progress: exact for Parquet (row groups), estimated for CSV from
    the bytes per line of the file's first MB."""
    out: list[float] = []
    if schema.format == "parquet":
        import pyarrow.parquet as pq

        for r in ranges:
            with table_fs.open_input(schema.files[r.file]) as handle:
                meta = pq.ParquetFile(handle).metadata
            out.append(float(sum(meta.row_group(g).num_rows for g in range(r.start, r.stop))))
        return out
    per_line: dict[int, float] = {}
    for r in ranges:
        if r.file not in per_line:
            with table_fs.open_input(schema.files[r.file]) as handle:
                head = handle.read(1 << 20)
            per_line[r.file] = max(len(head) / max(head.count(b"\n"), 1), 1.0)
        out.append((r.stop - r.start) / per_line[r.file])
    return out


# --------------------------------------------------------------------------- the pass
def pass_runs(session: Session, dataset_id: int) -> list[Run]:
    return list(
        session.exec(
            select(Run)
            .where(col(Run.dataset_id) == dataset_id, col(Run.table_part).is_not(None))
            .order_by(col(Run.table_part))
        )
    )


def pass_status(session: Session, dataset: Dataset) -> dict[str, Any]:
    """The pass as the data set page shows it: status, ranges done, rows read, workers,
    progress and an estimate of the time left (from the pace so far)."""
    runs = pass_runs(session, stored_id(dataset))
    ref = dataset.meta.get("reference", {})
    status = study_parts.status_of(runs) if runs else RunStatus(ref.get("status", "failed"))
    done = [r for r in runs if r.status == RunStatus.done and r.result]
    progress = sum(1.0 if r.status == RunStatus.done else r.progress for r in runs)
    progress = progress / len(runs) if runs else 0.0
    started = [_aware(r.started_at) for r in runs if r.started_at is not None]
    left = None
    if status == RunStatus.running and started and 0 < progress < 1:
        elapsed = (utcnow() - min(started)).total_seconds()
        left = max(elapsed, 0.0) * (1 - progress) / progress
    errors = [r.error for r in runs if r.status == RunStatus.failed and r.error]
    return {
        "status": str(status),
        "parts": len(runs),
        "parts_done": len(done),
        "rows": sum(int((r.result or {}).get("rows", 0)) for r in done),
        "workers": len({r.worker for r in runs if r.worker}),
        "retried": sum(max(r.attempt - 1, 0) for r in runs),
        "progress": progress,
        "seconds_left": left,
        "error": errors[0] if errors else None,
        "format": ref.get("schema", {}).get("format"),
        "files": len(ref.get("schema", {}).get("files", [])),
    }


def refresh(session: Session, store: ArrayStore, dataset: Dataset) -> Dataset:
    """The data set with its pass's status recorded; the partials merged and stored once
    every range is done. A data set of another source is returned as it is."""
    if not table_pass.is_reference(dataset) or dataset.file:
        return dataset
    state = pass_status(session, dataset)
    ref = dict(dataset.meta["reference"])
    if state["status"] != RunStatus.done:
        if ref.get("status") != state["status"]:
            dataset.meta = {**dataset.meta, "reference": {**ref, "status": state["status"]}}
            session.add(dataset)
            session.commit()
            session.refresh(dataset)
        return dataset
    runs = pass_runs(session, stored_id(dataset))
    keys = [str((r.result or {})["key"]) for r in runs]
    stats = table_pass.merge_parts(store, keys, dataset.feature_names)
    ref.update(
        status=RunStatus.done,
        rows=stats.n,
        chunks=sum(int((r.result or {}).get("batches", 0)) for r in runs),
        parts=ref["parts"],
        workers=state["workers"],
        retried=state["retried"],
        seconds=_span(runs),
    )
    key = store.save(table_pass.stats_arrays(stats), session)
    stored = session.exec(
        update(Dataset)
        .where(col(Dataset.id) == dataset.id, col(Dataset.file) == "")
        .values(file=key, n_samples=stats.n, meta={**dataset.meta, "reference": ref})
    ).rowcount
    if stored:
        session.commit()
    else:  # another request merged it first: the same statistics
        session.rollback()
        store.discard(key)
    session.refresh(dataset)
    return dataset


def _span(runs: list[Run]) -> float | None:
    """Seconds from the first range's start to the last one's end."""
    starts = [_aware(r.started_at) for r in runs if r.started_at]
    ends = [_aware(r.finished_at) for r in runs if r.finished_at]
    return (max(ends) - min(starts)).total_seconds() if starts and ends else None


def require_ready(session: Session, store: ArrayStore, dataset: Dataset) -> None:
    """Conflict unless the pass is done (runs need the merged statistics)."""
    refresh(session, store, dataset)
    if not dataset.file:
        status = dataset.meta.get("reference", {}).get("status")
        raise Conflict(
            f"data set {dataset.id} is a table registered by reference whose statistics pass "
            f"is {status}; runs start once it is done (see its page for the progress)"
        )


def cancel_pass(session: Session, store: ArrayStore, dataset: Dataset) -> Dataset:
    """Stop the statistics pass: queued ranges at once, running ones at their next batch (the
    data set can then be deleted; it cannot be run on)."""
    if not table_pass.is_reference(dataset):
        raise InvalidInput(
            f"data set {dataset.id} is not a table registered by reference", loc=("path",)
        )
    lease.cancel_parts(
        session.get_bind(),  # type: ignore[arg-type]
        (col(Run.dataset_id) == dataset.id) & col(Run.table_part).is_not(None),
    )
    session.expire_all()
    return refresh(session, store, dataset)


def part_keys(session: Session, dataset_id: int | None = None) -> set[str]:
    """The keys of stored partial statistics (of one data set, or of all)."""
    query = select(Run.result).where(col(Run.table_part).is_not(None))
    if dataset_id is not None:
        query = query.where(col(Run.dataset_id) == dataset_id)
    return {str(r["key"]) for r in session.exec(query) if r and "key" in r}


# --------------------------------------------------------------------------- describing
def columns(store: ArrayStore, dataset: Dataset) -> list[ColumnSummary]:
    """Column summaries from the merged statistics (means and standard deviations; the
    minimum and maximum are not among them); none before the pass is done."""
    if not dataset.file:
        return []
    stats = table_pass.load_statistics(store, dataset)
    dof = max(stats.n - 1, 1)
    ref = dataset.meta["reference"]
    categories = ref["schema"]["categories"]
    imputed = ref["schema"].get("imputed", {})  # missing=impute: cells filled, per column
    # A numeric column is its own group; the indicators of a text column share its name.
    groups: list[str] = list(dataset.groups or dataset.feature_names)
    out = [
        ColumnSummary(
            name=name,
            role="feature",
            type="categorical" if group in categories else "numeric",
            missing=int(imputed.get(name, 0)),
            imputed=int(imputed.get(name, 0)),
            id_like=False,
            source=group if group in categories else None,
            mean=float(stats.mean[j]),
            std=math.sqrt(max(float(stats.xx[j, j]), 0.0) / dof),
        )
        for j, (name, group) in enumerate(zip(dataset.feature_names, groups, strict=True))
    ]
    out.append(
        ColumnSummary(
            name=dataset.target,
            role="target",
            type="numeric",
            missing=0,
            imputed=0,
            id_like=False,
            source=None,
            mean=stats.y_mean,
            std=math.sqrt(max(stats.yy, 0.0) / dof),
        )
    )
    return out


def display_path(dataset: Dataset) -> str:
    return os.fspath(dataset.meta.get("reference", {}).get("path", ""))


def statistics_line(dataset: Dataset) -> str | None:
    """What a run on a table registered by reference was computed from, in words (None for
    other data sets, or before the pass is done)."""
    ref = dataset.meta.get("reference") if table_pass.is_reference(dataset) else None
    if not ref or ref.get("status") != RunStatus.done:
        return None
    files = len(ref["schema"]["files"])
    workers, retried = int(ref.get("workers", 0)), int(ref.get("retried", 0))
    line = (
        f"least squares' sufficient statistics of {ref['rows']} rows read from "
        f"{display_path(dataset)} ({files} {ref['schema']['format']} file{'s' * (files != 1)}) "
        f"in {ref['chunks']} chunks over {len(ref['parts'])} ranges by {workers} "
        f"worker{'s' * (workers != 1)}"
    )
    if retried:
        line += f"; {retried} range attempt{'s' * (retried != 1)} rerun after a worker died"
    return line


def passes_line(dataset: Dataset, passes: dict[str, int] | None) -> str | None:
    """How a logistic run read a table registered by reference, in words (None for the
    other runs)."""
    if not passes or not table_pass.is_reference(dataset):
        return None
    n, total, full = passes["n_samples"], passes["passes"], passes["full_passes"]
    line = (
        f"read {display_path(dataset)} {total} times by one worker (the passes follow each "
        f"other: each needs the model the one before fitted): {full} pass"
        f"{'es' * (full != 1)} over every column, the others over the selected features and a "
        f"few candidates; {passes['rows_read']} rows read in all, {n} rows a pass"
    )
    if passes.get("fit_passes"):
        line += "; one more pass measured the fit"
    return line
