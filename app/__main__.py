"""``python -m app``: serve on HOST:PORT (default 127.0.0.1:8000); ``python -m app worker``:
run the distributed backend's jobs (JOB_BACKEND=procrastinate, any host with DATABASE_URL)."""

from __future__ import annotations

import logging
import sys

from .config import Settings


def serve() -> None:
    import uvicorn

    settings = Settings()
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        log_level="warning",
    )


def worker() -> int:
    # Imported here: the web process never loads Procrastinate unless it is configured.
    from .jobs.worker import main

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    return main()


if __name__ == "__main__":  # spawned workers import this module too; they must not serve
    if sys.argv[1:] == ["worker"]:
        sys.exit(worker())
    serve()
