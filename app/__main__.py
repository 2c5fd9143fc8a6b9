"""``python -m app``: serve on HOST:PORT (default 127.0.0.1:8000)."""

from __future__ import annotations

import uvicorn

from .config import Settings

if __name__ == "__main__":  # spawned workers import this module too; they must not serve
    settings = Settings()
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        log_level="warning",
    )
