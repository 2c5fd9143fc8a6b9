"""A request too malformed to reach the app is answered 400 by the server itself (uvicorn's
h11 protocol); that answer carries the security headers every answer of the app carries.
Through the real server (``python -m app``), on a raw socket."""

from __future__ import annotations

import os
import socket
import sys

import pytest
from service_helpers import app_process, free_port

from app.web.middleware import SECURITY_HEADERS

MALFORMED = [
    b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n",  # no colon
    b"GET /\x01 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",  # a control character in the target
    b"POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
]


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("server400")
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "DATA_DIR": str(tmp / "data"),
        "WORKERS": "0",
        "SEED_SAMPLES": "false",
    }
    with app_process([sys.executable, "-m", "app"], env, port, tmp / "log"):
        yield port


@pytest.mark.parametrize("request_bytes", MALFORMED, ids=["header", "target", "chunk"])
def test_the_servers_own_400_has_the_security_headers(port: int, request_bytes: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(request_bytes)
        answer = b""
        while chunk := conn.recv(65536):  # the server closes the connection after a 400
            answer += chunk
    head = answer.decode("latin-1").split("\r\n\r\n")[0]
    assert head.startswith("HTTP/1.1 400"), head
    headers = {
        name.strip().lower(): value.strip()
        for name, _, value in (line.partition(":") for line in head.split("\r\n")[1:])
    }
    for name, value in SECURITY_HEADERS.items():
        assert headers.get(name.lower()) == value, (name, head)


def test_a_well_formed_request_is_served(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
    assert b"x-frame-options: deny" in answer.lower()
