"""``python -m app``: serve on 127.0.0.1 (port from PORT, default 8000)."""

from __future__ import annotations

import uvicorn

from .config import Settings

if __name__ == "__main__":  # spawned workers import this module too; they must not serve
    uvicorn.run("app.main:create_app", factory=True, host="127.0.0.1", port=Settings().port)
