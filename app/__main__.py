"""``python -m app``: serve on HOST:PORT (default 127.0.0.1:8000); ``python -m app worker``:
run the distributed backend's jobs (JOB_BACKEND=procrastinate, any host with DATABASE_URL);
``python -m app worker --check``: exit 0 when a worker of this host has a recent heartbeat
(a container's health check)."""

from __future__ import annotations

import logging
import sys

from app.config import Settings


def serve() -> None:
    import uvicorn

    settings = Settings()
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        log_level="warning",
        http="app.web.middleware:SecureH11Protocol",  # its own 400s carry the headers
    )


def worker() -> int:
    # Imported here: the web process never loads Procrastinate unless it is configured.
    from app.jobs.distributed.worker import main

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    return main()


def worker_check(within_seconds: float = 30.0) -> int:
    import socket

    from app.db import make_db
    from app.jobs.distributed.queue import alive_here

    db = make_db(Settings().database_url)
    try:
        alive = alive_here(db, socket.gethostname(), within_seconds)
    except Exception as exc:  # no database, no queue schema: not healthy, and say why
        print(f"worker check failed: {exc}", file=sys.stderr)
        return 1
    finally:
        db.dispose()
    return 0 if alive else 1


USAGE = "usage: python -m app [worker [--check]]"

if __name__ == "__main__":  # spawned workers import this module too; they must not serve
    args = sys.argv[1:]
    if args == ["worker"]:
        sys.exit(worker())
    if args == ["worker", "--check"]:
        sys.exit(worker_check())
    if args:
        sys.exit(f"{USAGE}\nunknown arguments: {' '.join(args)}")
    serve()
