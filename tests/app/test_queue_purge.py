"""Procrastinate's finished jobs are purged after a day (its remove_old_jobs was never
scheduled, so the jobs and events tables only grew)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import psycopg
from service_helpers import postgres_database

from app.jobs.distributed import queue


def _jobs(info: str) -> list[tuple[int, str]]:
    with psycopg.connect(info) as conn:
        return conn.execute("SELECT id, status FROM procrastinate_jobs ORDER BY id").fetchall()


def test_the_purge_is_scheduled_and_removes_only_old_finished_jobs(postgres_user: str) -> None:
    with postgres_database(postgres_user, "foba_purge") as url:
        info = queue.conninfo(url)
        queue.ensure_schema(info)
        app = queue.make_queue(info)
        assert any(p.periodic_id == "purge" for p in app.periodic_registry.periodic_tasks.values())

        async def scenario() -> None:
            async with app.open_async():
                task = app.tasks[queue.TASK_NAME]
                for run_id in (1, 2, 3, 4):
                    await task.configure(lock=f"run-{run_id}").defer_async(run_id=run_id)
                with psycopg.connect(info, autocommit=True) as conn:
                    # Job 1 succeeded and job 2 failed two days ago, job 3 failed an hour
                    # ago; job 4 still waits.
                    for job_id, status, age in (
                        (1, "succeeded", "2 days"),
                        (2, "failed", "2 days"),
                        (3, "failed", "1 hour"),
                    ):
                        conn.execute(
                            "UPDATE procrastinate_jobs SET status = %s WHERE id = %s",
                            (status, job_id),
                        )
                        conn.execute(
                            "UPDATE procrastinate_events SET at = now() - %s::interval "
                            "WHERE job_id = %s",
                            (age, job_id),
                        )
                        conn.execute(
                            "INSERT INTO procrastinate_events (job_id, type, at) "
                            "VALUES (%s, %s, now() - %s::interval)",
                            (job_id, status, age),
                        )
                await queue.purge_old_jobs(SimpleNamespace(app=app), timestamp=0)

        asyncio.run(scenario())
        assert [job_id for job_id, _ in _jobs(info)] == [3, 4]
