"""Alembic revisions, one file each, numbered in order (see ``app.migrations``)."""
