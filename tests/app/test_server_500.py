"""An exception that escapes the app, or an app that returns without answering, is answered
500 by the server itself (uvicorn), outside every middleware of the app's: that answer carries
the security headers too (``app.web.middleware.ServerErrors``, installed by the protocol that
``python -m app`` serves with). Through a real uvicorn process, on a raw socket; the app is
tests/app/escaping_app.py, since no route of the real app lets an exception escape it."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest
from service_helpers import app_process, free_port

from app.web.middleware import SECURITY_HEADERS

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory):
    log = tmp_path_factory.mktemp("server500") / "log"
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "--app-dir", str(HERE), "escaping_app:app"]
    command += ["--http", "app.web.middleware:SecureH11Protocol", "--port", str(port)]
    with app_process(command, dict(os.environ), port, log):
        yield port
    assert "an exception escaped the app" in log.read_text()  # still logged, with its traceback


def exchange(port: int, path: str) -> tuple[str, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        conn.sendall(request.encode())
        answer = b""
        while chunk := conn.recv(65536):  # closed after the answer
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {
        name.strip().lower(): value.strip()
        for name, _, value in (line.partition(":") for line in lines)
    }
    return status, headers, body


@pytest.mark.parametrize("path", ["/raise", "/silent", "/starlette-raise"])
def test_the_servers_own_500_has_the_security_headers(port: int, path: str) -> None:
    status, headers, body = exchange(port, path)
    assert status.startswith("HTTP/1.1 500"), (status, body)
    for name, value in SECURITY_HEADERS.items():
        assert headers.get(name.lower()) == value, (name, headers)
    assert b"Traceback" not in body and b"escaped" not in body  # the log has it, not the client


def test_an_answer_is_untouched_but_for_the_headers(port: int) -> None:
    status, headers, body = exchange(port, "/healthz")
    assert status.startswith("HTTP/1.1 200") and body == b"ok"
    assert headers["x-frame-options"] == "DENY"
