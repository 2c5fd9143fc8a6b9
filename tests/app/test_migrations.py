"""The schema under Alembic: empty databases, databases made by ``create_all`` before
migrations existed, newer and older ones; on SQLite files and fresh PostgreSQL databases."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from service_helpers import make_settings, postgres_database, serve
from sqlalchemy import Engine, text
from sqlmodel import Session, SQLModel, select

from app.db import make_db
from app.migrations import FIRST, SchemaError, config, head, prepare_schema
from app.models import Dataset, Run

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of its own: a SQLite file, or a PostgreSQL database dropped after."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'm.db'}"
        return
    with postgres_database(request.getfixturevalue("postgres_user"), "m") as url:
        yield url


@pytest.fixture
def db(url: str) -> Iterator[Engine]:
    db = make_db(url)
    yield db
    db.dispose()


def revision(db: Engine) -> str | None:
    with db.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def differences(db: Engine) -> list:
    """What Alembic finds between the database and the models (nothing, when in step)."""
    with db.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        return compare_metadata(context, SQLModel.metadata)


def create_all_of_before(db: Engine) -> None:
    """The tables as create_all made them before migrations (SQL captured from that code)."""
    script = (FIXTURES / f"schema_before_migrations.{db.dialect.name}.sql").read_text()
    lines = [line for line in script.splitlines() if not line.startswith("--")]
    with db.begin() as conn:
        for statement in "\n".join(lines).split(";\n"):
            if statement.strip():
                conn.exec_driver_sql(statement)


def upgrade_to(db: Engine, target: str) -> None:
    with db.begin() as conn:
        command.upgrade(config(conn), target)


def add_dataset(db: Engine, name: str = "d") -> int:
    """A row written with the columns of revision 0001 (present in every later schema): the
    models may have columns an older schema lacks."""
    with db.begin() as conn:
        return conn.execute(
            text(
                "INSERT INTO datasets (name, description, source, task, target, n_samples, "
                "n_features, feature_names, meta, file, created_at) VALUES (:name, '', "
                "'upload', 'regression', 'y', 3, 1, '[\"a\"]', '{}', 'datasets/x.npz', :now) "
                "RETURNING id"
            ),
            {"name": name, "now": datetime.now(UTC)},
        ).scalar_one()


def add_run(db: Engine, dataset_id: int) -> int:
    with db.begin() as conn:
        return conn.execute(
            text(
                "INSERT INTO runs (dataset_id, algorithm, objective, k, params, "
                "record_candidates, seed, status, cancel_requested, progress, attempt, "
                "created_at) VALUES (:dataset, 'omp', 'least_squares', 1, '{}', :no, 0, "
                "'done', :no, 1.0, 1, :now) RETURNING id"
            ),
            {"dataset": dataset_id, "no": False, "now": datetime.now(UTC)},
        ).scalar_one()


def delete_dataset(db: Engine, dataset_id: int) -> None:
    with db.begin() as conn:
        conn.execute(text("DELETE FROM datasets WHERE id = :id"), {"id": dataset_id})


def test_an_empty_database_is_brought_to_head(db: Engine) -> None:
    assert prepare_schema(db) == head() == revision(db)
    assert differences(db) == []
    assert prepare_schema(db) == head()  # again: nothing to do


def test_a_create_all_database_is_stamped_then_upgraded_keeping_its_rows(db: Engine) -> None:
    create_all_of_before(db)
    first, newest = add_dataset(db, "kept"), add_dataset(db, "newest")
    run = add_run(db, first)
    assert revision(db) is None

    assert prepare_schema(db) == head()
    assert differences(db) == []
    with Session(db) as session:
        assert [(d.id, d.name) for d in session.exec(select(Dataset))] == [
            (first, "kept"),
            (newest, "newest"),
        ]
        assert [(r.id, r.dataset_id) for r in session.exec(select(Run))] == [(run, first)]
    # Before the migration SQLite gave a deleted newest row's id to the next one.
    delete_dataset(db, newest)
    assert add_dataset(db) > newest


def test_ids_are_never_reused_after_the_newest_is_deleted(db: Engine) -> None:
    prepare_schema(db)
    add_dataset(db)
    newest = add_dataset(db)
    delete_dataset(db, newest)
    assert add_dataset(db) == newest + 1


def test_every_table_with_ids_keeps_autoincrement_at_head_on_sqlite(tmp_path: Path) -> None:
    # A batch rebuild in a later revision once dropped it from runs (reflection forgets it).
    db = make_db(f"sqlite:///{tmp_path / 'a.db'}")
    prepare_schema(db)
    with db.connect() as conn:
        sql = dict(
            conn.execute(text("SELECT name, sql FROM sqlite_master WHERE type='table'")).all()
        )
    for table, model in SQLModel.metadata.tables.items():
        if model.kwargs.get("sqlite_autoincrement"):
            assert "AUTOINCREMENT" in sql[table], table
    db.dispose()


def test_a_newer_database_stops_the_start_naming_both_revisions(
    db: Engine, url: str, tmp_path: Path
) -> None:
    prepare_schema(db)
    with db.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0099'"))
    with pytest.raises(SchemaError, match=f"revision 0099.*newest is {head()}"):
        prepare_schema(db)
    settings = make_settings(tmp_path / "data", database_url=url)
    with pytest.raises(SchemaError, match="0099"), serve(settings):
        pass
    assert revision(db) == "0099"  # left as it was


def test_an_older_database_is_migrated_only_when_told(db: Engine) -> None:
    upgrade_to(db, FIRST)
    add_dataset(db)
    with pytest.raises(SchemaError, match=f"revision {FIRST}.*python -m app.migrations upgrade"):
        prepare_schema(db, migrate=False)
    assert revision(db) == FIRST
    assert prepare_schema(db, migrate=True) == head()
    assert differences(db) == []


def test_the_command_line_upgrades_the_configured_database(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
        "PYTHONPATH": str(ROOT),  # this checkout's app, not an installed one
    }
    done = subprocess.run(
        [sys.executable, "-m", "app.migrations", "upgrade"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == f"database at {head()}"
    current = subprocess.run(
        [sys.executable, "-m", "app.migrations", "current"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"database at {head()}" in current.stdout


def test_two_servers_starting_at_once_migrate_one_after_the_other(url: str) -> None:
    engines = [make_db(url), make_db(url)]
    outcomes: list[str | BaseException] = []

    def start(db: Engine) -> None:
        try:
            outcomes.append(prepare_schema(db))
        except BaseException as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=start, args=(db,)) for db in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    try:
        assert not any(thread.is_alive() for thread in threads), "the two starts deadlocked"
        assert outcomes == [head(), head()]
        assert differences(engines[0]) == []
    finally:
        for db in engines:
            db.dispose()
