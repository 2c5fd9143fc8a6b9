"""A real S3 endpoint for the tests: moto's server on a free port of 127.0.0.1, one per test
session, and a fresh bucket per test with the standard AWS_* variables pointing at it (so the
app, its worker processes and the CLI find it as they would find any S3-compatible store).

A plugin of tests/conftest.py: ask for the ``s3`` fixture. moto and boto3 are imported only
by a test that does.
"""

from __future__ import annotations

import socket
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REGION = "us-east-1"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@dataclass
class Bucket:
    endpoint: str
    name: str
    client: Any

    def uri(self, key: str = "") -> str:
        return f"s3://{self.name}/{key}"

    def put(self, key: str, body: bytes) -> str:
        self.client.put_object(Bucket=self.name, Key=key, Body=body)
        return self.uri(key)

    def put_file(self, key: str, path: Path) -> str:
        return self.put(key, path.read_bytes())

    @contextmanager
    def credentials_checked(self) -> Iterator[None]:
        """Moto checks signatures from now on (its IAM knows no key: every request is
        refused as from an unknown access key), until the block ends."""
        self._reset_auth(b"0")
        try:
            yield
        finally:
            self._reset_auth(b"inf")

    def _reset_auth(self, free_requests: bytes) -> None:
        url = f"{self.endpoint}/moto-api/reset-auth"
        with urllib.request.urlopen(
            urllib.request.Request(url, free_requests, {"Content-Type": "text/plain"}), timeout=10
        ):
            pass


@pytest.fixture
def s3(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Bucket:
    """A new bucket; the environment every S3 client here (and a child process) reads."""
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL_S3", "AWS_SESSION_TOKEN", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance-metadata lookups
    import boto3

    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name=REGION)
    name = f"tables-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    return Bucket(s3_endpoint, name, client)
