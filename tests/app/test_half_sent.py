"""A request whose body stops arriving half-way is answered 408 instead of holding its
connection (and a server slot) for good: through the real server, on a raw socket."""

from __future__ import annotations

import os
import socket
import sys

from service_helpers import app_process, free_port


def test_a_half_sent_body_is_answered_408(tmp_path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "DATA_DIR": str(tmp_path / "data"),
        "WORKERS": "0",
        "SEED_SAMPLES": "false",
        "BODY_IDLE_SECONDS": "0.5",
    }
    with app_process([sys.executable, "-m", "app"], env, port, tmp_path / "log"):
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(
                b"POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                b'{"dataset_id": '
            )
            answer = ""
            while "stopped arriving" not in answer and (chunk := conn.recv(65536)):
                answer += chunk.decode("latin-1")
    assert answer.startswith("HTTP/1.1 408"), answer[:300]
    assert "stopped arriving" in answer
