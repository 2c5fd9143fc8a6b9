"""Settings read from the environment and an optional ``.env`` file.

Nothing is instantiated here: ``create_app`` builds a ``Settings()`` when it is not given one,
so tests and tools can pass their own without touching the environment.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

StorageKind = Literal["directory", "database"]  # the stores of app.storage
MIN_RUN_MEMORY_MB = 64


def _default_workers() -> int:
    # One core stays free for the web process.
    return max((os.cpu_count() or 1) - 1, 1)


class Settings(BaseSettings):
    """Every knob of the service; environment names are the field names in upper case."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    data_dir: Path = Path("data")
    database_url: str = Field(
        "", description="SQLAlchemy URL; empty means a SQLite file in the data directory."
    )
    storage: StorageKind = Field(
        "directory",
        description="Where data sets keep their arrays: files under DATA_DIR (one machine) or "
        "rows of the database (workers on other hosts need nothing but DATABASE_URL).",
    )
    sqlite_busy_timeout_seconds: float = Field(
        10.0,
        gt=0,
        description="How long a write waits for another writer's lock: SQLite's busy timeout "
        "and PostgreSQL's lock_timeout (the name is older than PostgreSQL support). A longer "
        "wait is answered 503 with Retry-After and retried by workers.",
    )
    statement_timeout_seconds: float = Field(
        60.0,
        gt=0,
        description="PostgreSQL: the longest a statement of the web process may run before it "
        "is cancelled and answered 503 (a request never hangs on a stuck database).",
    )
    migrate_on_start: bool = Field(
        True,
        description="Bring an older database schema up to date on start-up (Alembic); when "
        "false, the app refuses to start on an outdated schema and says how to migrate.",
    )
    host: str = Field("127.0.0.1", description="Address `python -m app` listens on.")
    port: int = Field(8000, ge=1, le=65535)
    api_key: SecretStr | None = Field(
        None,
        description="When set, every route but sign-in, static files and /healthz needs "
        "'Authorization: Bearer <key>' or a session from the sign-in page.",
    )
    session_secret: SecretStr | None = Field(
        None,
        description="Signs session cookies (with the key); default: a random secret kept in "
        "the data directory.",
    )
    session_hours: float = Field(12.0, gt=0, le=24 * 365, description="A session's lifetime.")
    allowed_hosts: str = Field(
        "localhost,127.0.0.1,::1",
        description="Host names this server answers to, comma-separated ('*': any). Another "
        "Host header is refused, so a web page cannot reach the server by DNS rebinding. "
        "HOST is allowed too when it names one address.",
    )
    failed_keys_per_minute: int = Field(
        10,
        ge=1,
        description="Wrong API keys one client may send in a minute (bearer or sign-in); "
        "more are answered 429 with Retry-After.",
    )

    # Limits on what clients may send.
    max_upload_mb: float = Field(50.0, gt=0)
    max_columns: int = Field(
        100_000,
        ge=2,
        description="A safety cap on a CSV's columns, far above real tables (gene expression: "
        "thousands to tens of thousands of columns, the d >> n setting): what bounds an upload "
        "is its size in cells (max_cells) and bytes (max_upload_mb); this only keeps a "
        "header of a million tiny fields from costing a column statistic and a name each.",
    )
    max_json_kb: int = Field(1024, ge=1, description="Largest JSON request body.")
    body_idle_seconds: float = Field(
        30.0,
        gt=0,
        description="A request body that stops arriving for this long is answered 408 (a "
        "half-sent request would hold its connection for good).",
    )
    max_line_kb: int = Field(
        1024, ge=1, description="Longest line of an uploaded CSV; a longer one is refused at once."
    )
    max_cells: int = Field(
        20_000_000,
        ge=1,
        description="Largest data set, in rows x feature columns (uploads after one-hot "
        "encoding, and the generators).",
    )
    max_categories: int = Field(
        100, ge=2, description="Most distinct values a text column may have to be one-hot encoded."
    )
    max_parallel_uploads: int = Field(
        2, ge=1, description="CSV uploads parsed at once; the others wait (upload_wait_seconds)."
    )
    upload_wait_seconds: float = Field(
        5.0, ge=0, description="How long an upload waits for a parse slot before a 503."
    )

    # Tables larger than memory, registered by reference (POST /api/datasets/reference).
    reference_dirs: str = Field(
        "",
        description="Directories the server and its workers may read tables from (a mounted "
        "volume), separated by the path separator (':' on Linux). Empty: tables cannot be "
        "registered by reference. A path is resolved (symlinks followed) before it is checked.",
    )
    reference_uris: str = Field(
        "",
        description="Object-storage prefixes the server and its workers may read tables from, "
        "comma-separated (s3://bucket/datasets/). Empty: no s3:// table can be registered. "
        "Credentials, region and endpoint come from the standard AWS_* variables "
        "(AWS_ENDPOINT_URL for a server other than AWS's), on the server and every worker.",
    )
    reference_part_mb: float = Field(
        256.0,
        gt=0,
        description="Size of a row range of a table registered by reference: one job each.",
    )

    # Job execution. workers=0 makes an API-only node: runs wait for workers elsewhere.
    job_backend: Literal["inprocess", "procrastinate"] = Field(
        "inprocess",
        description="inprocess: workers supervised by the web process (one machine); "
        "procrastinate: a queue in PostgreSQL served by `python -m app worker` on any host.",
    )
    workers: int = Field(default_factory=_default_workers, ge=0)
    worker_concurrency: int = Field(
        1,
        ge=1,
        description="Runs one `python -m app worker` executes at once, each in a worker "
        "process of its own (JOB_BACKEND=procrastinate).",
    )
    heartbeat_seconds: float = Field(
        2.0, gt=0, description="How often a run (in-process) or a worker (procrastinate) beats."
    )
    stale_after_seconds: float = Field(
        15.0,
        gt=0,
        description="A running run whose heartbeat (in-process), or whose worker's heartbeat "
        "(procrastinate), is older is run again.",
    )
    poll_seconds: float = Field(1.0, gt=0, description="Idle workers look for queued runs.")
    monitor_seconds: float = Field(1.0, gt=0, description="Supervisor checks workers/heartbeats.")
    max_attempts: int = Field(3, ge=1, description="Worker deaths a run survives before failing.")
    max_run_seconds: float = Field(
        3600.0,
        gt=0,
        description="A run still going after this long is stopped and failed, saying so "
        "(checked at every step and at the engine's cancellation points, at least every "
        "second of work).",
    )
    max_run_memory_mb: float = Field(
        8192.0,
        ge=0,
        description="Memory a worker process may add for one run (an address-space limit); a "
        "run needing more fails, saying so, and the worker goes on. 0: no limit; otherwise at "
        "least 64 (below that the worker's own threads and connections have no room).",
    )
    trace_batch_events: int = Field(50, ge=1)
    trace_batch_seconds: float = Field(0.5, gt=0)

    seed_samples: bool = Field(True, description="Store the sample data sets on start-up.")

    @model_validator(mode="after")
    def _fill_defaults(self) -> Settings:
        self.data_dir = self.data_dir.expanduser().resolve()
        if not self.database_url:
            self.database_url = f"sqlite:///{self.data_dir / 'foba-lab.db'}"
        if self.stale_after_seconds <= 2 * self.heartbeat_seconds:
            raise ValueError(
                "stale_after_seconds must exceed twice heartbeat_seconds, or live runs would be "
                "taken for dead"
            )
        for prefix in self.reference_prefixes():
            bucket = prefix[5:].partition("/")[0] if prefix[:5].lower() == "s3://" else ""
            if not bucket:
                raise ValueError(
                    f"reference_uris: {prefix!r} is not an S3 prefix; write s3://bucket/ or "
                    "s3://bucket/folder/, comma-separated (local directories go in "
                    "REFERENCE_DIRS)"
                )
        if 0 < self.max_run_memory_mb < MIN_RUN_MEMORY_MB:
            raise ValueError(
                f"max_run_memory_mb must be 0 (no limit) or at least {MIN_RUN_MEMORY_MB}: below "
                "that a worker's own threads and connections have no room"
            )
        return self

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)

    def reference_roots(self) -> list[Path]:
        """REFERENCE_DIRS, resolved (symlinks followed); empty when the feature is off."""
        parts = [p.strip() for p in self.reference_dirs.split(os.pathsep)]
        return [Path(p).expanduser().resolve() for p in parts if p]

    def reference_prefixes(self) -> list[str]:
        """REFERENCE_URIS, each ending in '/' (a prefix is a directory: s3://b/data does not
        allow s3://b/data-private/); empty when object storage is off."""
        parts = [p.strip() for p in self.reference_uris.split(",")]
        # The scheme in lower case, as a checked URI is (app.ingest.table_fs.split_uri).
        parts = ["s3://" + p[5:] if p[:5].lower() == "s3://" else p for p in parts]
        return [p if p.endswith("/") else p + "/" for p in parts if p]

    def host_names(self) -> frozenset[str] | None:
        """The Host names to answer (lower case, no port); None means any."""
        names = {name.strip().lower().strip("[]") for name in self.allowed_hosts.split(",")}
        if "*" in names:
            return None
        if self.host not in ("0.0.0.0", "::", ""):
            names.add(self.host.lower().strip("[]"))
        return frozenset(name for name in names if name)
