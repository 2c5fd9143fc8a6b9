"""Where a streamed table's files are read from: the local disk, or object storage (S3).

A table's location is a path on this machine or an ``s3://bucket/key`` URI; :func:`resolve`
turns it into a ``pyarrow.fs.FileSystem`` and the path within it, so the chunked reader
(``app.ingest.chunked``) opens, sizes, lists and seeks through one interface whatever holds the
bytes. Only the location string travels (in ``TableSchema.files``): every process makes its own
filesystem from it and from its environment, so a worker on another host reads the same table
with its own credentials.

S3 is configured by the standard AWS variables, as the AWS SDK reads them:
``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN`` (or ``AWS_PROFILE``),
``AWS_DEFAULT_REGION``/``AWS_REGION``, and an endpoint other than AWS's (MinIO, Ceph, a test
server) by ``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL``: pyarrow (26) honours those two in
``FileSystem.from_uri``, which is why the filesystem is made from a URI and not by
``S3FileSystem()`` (whose constructor ignores them). A URI's query string would set filesystem
options (``?endpoint_override=...``), so it is refused: a caller names objects, never where to
send the server's credentials.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path, PurePosixPath

import pyarrow as pa
import pyarrow.fs as pafs

__all__ = [
    "S3",
    "StorageError",
    "absent",
    "info",
    "is_uri",
    "list_files",
    "open_input",
    "resolve",
    "size",
    "split_uri",
]

S3 = "s3://"
# The environment a filesystem is made from: a change (another credential) makes a new one.
_ENVIRONMENT = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_REGION",
    "AWS_REGION",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
)


class StorageError(ValueError):
    """A location that cannot be read: the message names it and what to check."""


def is_uri(location: str) -> bool:
    """Whether ``location`` names an object in S3 rather than a local path."""
    return location[: len(S3)].lower() == S3


def split_uri(uri: str) -> tuple[str, str]:
    """The bucket and the key (without a trailing '/') of an ``s3://`` URI, checked."""
    rest = uri[len(S3) :]
    if "?" in rest or "#" in rest:
        raise StorageError(
            f"{uri!r}: an s3:// URI names an object or a prefix; it takes no '?' options or "
            "'#' fragment (the endpoint and credentials come from the server's AWS_* variables)"
        )
    bucket, _, key = rest.partition("/")
    if not bucket:
        raise StorageError(f"{uri!r} names no bucket: write s3://bucket/key")
    if any(part in (".", "..") for part in key.split("/")):
        raise StorageError(f"{uri!r}: a key with '.' or '..' segments is not allowed")
    return bucket, key.rstrip("/")


def resolve(location: str) -> tuple[pafs.FileSystem, str]:
    """The filesystem holding ``location`` and its path there."""
    if not is_uri(location):
        return pafs.LocalFileSystem(), location
    bucket, key = split_uri(location)
    env = tuple(os.environ.get(name) for name in _ENVIRONMENT)
    return _s3(bucket, env, os.getpid()), f"{bucket}/{key}" if key else bucket


@functools.lru_cache(maxsize=32)
def _s3(bucket: str, env: tuple[str | None, ...], pid: int) -> pafs.FileSystem:
    """One S3 filesystem per bucket, environment and process (a forked child makes its own:
    the SDK's connections do not survive a fork)."""
    del env, pid  # parts of the cache key only
    try:
        fs, _ = pafs.FileSystem.from_uri(f"{S3}{bucket}")
    except (OSError, pa.ArrowException) as exc:
        raise StorageError(_storage_message(f"{S3}{bucket}", exc)) from None
    return fs


def _storage_message(location: str, exc: BaseException) -> str:
    what = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if not is_uri(location):  # a local directory this process may not list, say
        return f"{location} cannot be read ({what}); check its permissions"
    return (
        f"{location} cannot be read from object storage ({what}); check the bucket and the "
        "key, and the server's credentials and endpoint (AWS_ACCESS_KEY_ID, "
        "AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL)"
    )


def info(location: str) -> pafs.FileInfo:
    """What is at ``location`` (a file, a directory or prefix, or nothing)."""
    fs, path = resolve(location)
    try:
        return fs.get_file_info(path)
    except (OSError, pa.ArrowException) as exc:
        raise StorageError(_storage_message(location, exc)) from None


def absent(location: str) -> str:
    """Why nothing is at ``location``, in words: for S3, whether the bucket or the key is
    missing (one more request, on this error path only)."""
    if not is_uri(location):
        return f"{location} does not exist"
    bucket, key = split_uri(location)
    if info(f"{S3}{bucket}").type == pafs.FileType.NotFound:
        return (
            f"{location} does not exist: there is no bucket {bucket!r} at the S3 endpoint "
            "(or these credentials cannot see it)"
        )
    return f"{location} does not exist: no key or prefix {key!r} in bucket {bucket!r}"


def list_files(location: str) -> list[str]:
    """The files directly in a directory (or under an S3 prefix, not deeper), as locations."""
    fs, path = resolve(location)
    try:
        entries = fs.get_file_info(pafs.FileSelector(path))
    except (OSError, pa.ArrowException) as exc:
        raise StorageError(_storage_message(location, exc)) from None
    files = [e for e in entries if e.type == pafs.FileType.File]
    if is_uri(location):
        return [f"{S3}{e.path}" for e in files]
    return [str(Path(location) / PurePosixPath(e.path).name) for e in files]


def open_input(location: str) -> pa.NativeFile:
    """``location`` opened for random access (seek, read, size), as a context manager."""
    fs, path = resolve(location)
    try:
        return fs.open_input_file(path)
    except FileNotFoundError:
        if not is_uri(location):
            raise
        raise StorageError(absent(location)) from None
    except (OSError, pa.ArrowException) as exc:
        if not is_uri(location):
            raise
        raise StorageError(_storage_message(location, exc)) from None


def size(location: str) -> int:
    """The size of a file, in bytes."""
    found = info(location)
    if found.type != pafs.FileType.File:
        raise StorageError(absent(location))
    return int(found.size)
