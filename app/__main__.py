"""``python -m app``: the ``foba-lab`` command line (``foba_lab.cli``) for the app's two roles,
``serve`` (the default: ``python -m app`` alone serves on HOST:PORT, default 127.0.0.1:8000)
and ``worker [--check]`` (run the distributed backend's jobs, JOB_BACKEND=procrastinate, on any
host with DATABASE_URL; ``--check`` exits 0 when a worker of this host has a recent heartbeat,
a container's health check). What the commands run is here; their arguments are parsed there.
"""

from __future__ import annotations

import logging
import socket
import sys

from app.config import Settings


def serve() -> None:
    """The web app on HOST:PORT, saying where it listens once it does (after the app's
    start-up: database, samples, workers), until SIGINT or SIGTERM."""
    import uvicorn

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            host = f"[{host}]" if ":" in host else host
            print(f"FoBa Lab listening on http://{host}:{port}", flush=True)

    settings = Settings()
    config = uvicorn.Config(
        "app.main:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        log_level="warning",
        http="app.web.middleware:SecureH11Protocol",  # its own 400s carry the headers
    )
    try:
        Server(config).run()
    except KeyboardInterrupt:  # uvicorn raises the signal again once it has shut down
        pass


def worker() -> int:
    # Imported here: the web process never loads Procrastinate unless it is configured.
    from app.jobs.distributed.worker import main

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    return main()


def worker_check(within_seconds: float = 30.0) -> int:
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


def main(argv: list[str] | None = None) -> int:
    from foba_lab.cli import main as command_line

    args = sys.argv[1:] if argv is None else argv
    return command_line(args or ["serve"], prog="python -m app")


if __name__ == "__main__":  # spawned workers import this module too; they must not serve
    sys.exit(main())
