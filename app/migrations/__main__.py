"""``python -m app.migrations``: the schema commands (see this package's docstring).

python -m app.migrations upgrade        # the database of DATABASE_URL to head
python -m app.migrations current        # its revision, and this code's head
python -m app.migrations new "message"  # write the next revision from the models
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

from alembic import command
from alembic.migration import MigrationContext

from app.config import Settings
from app.db import make_db
from app.migrations import config, head, prepare_schema


def upgrade() -> None:
    db = make_db(Settings().database_url)
    try:
        print(f"database at {prepare_schema(db, migrate=True)}")
    finally:
        db.dispose()


def current() -> None:
    db = make_db(Settings().database_url)
    try:
        with db.connect() as conn:
            revision = MigrationContext.configure(conn).get_current_revision()
    finally:
        db.dispose()
    print(f"database at {revision or 'no revision'}; this code's head is {head()}")


def new(message: str) -> None:
    """Autogenerate the next revision against a scratch SQLite database at head."""
    number = f"{int(head()) + 1:04d}"
    slug = re.sub(r"[^a-z0-9]+", "_", message.lower()).strip("_")[:40]
    with tempfile.TemporaryDirectory() as scratch:
        db = make_db(f"sqlite:///{Path(scratch) / 'head.db'}")
        try:
            prepare_schema(db)
            with db.connect() as conn:
                cfg = config(conn)
                cfg.set_main_option("file_template", f"%%(rev)s_{slug}")
                if shutil.which("ruff"):  # the project's formatting, as the rest of the code
                    cfg.set_section_option("post_write_hooks", "hooks", "ruff")
                    cfg.set_section_option("post_write_hooks", "ruff.type", "exec")
                    cfg.set_section_option("post_write_hooks", "ruff.executable", "ruff")
                    cfg.set_section_option(
                        "post_write_hooks", "ruff.options", "format REVISION_SCRIPT_FILENAME"
                    )
                command.revision(cfg, message=message, autogenerate=True, rev_id=number)
                conn.commit()
        finally:
            db.dispose()


def main(argv: list[str]) -> int:
    commands = {"upgrade": upgrade, "current": current}
    if len(argv) == 2 and argv[0] == "new":
        new(argv[1])
        return 0
    if len(argv) == 1 and argv[0] in commands:
        commands[argv[0]]()
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
