"""A gate in front of every range of a table's statistics pass (the idea of
``blocking_algorithm.py``, for a job that runs no algorithm): with ``FOBA_TEST_TABLE_GATE`` set
to a file path (under ``tmp_path``) in the environment the worker processes inherit, a range
appends its pid to ``<gate>.started`` and waits until the gate file exists before it reads a
row. A test can then kill the worker holding a range, see the range start again, and let it
finish. Unset (every other test), the pass reads as usual.

Loaded by the worker processes through ``FOBA_TEST_PLUGINS`` (``tests/conftest.py``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

from app.jobs import table_pass

VARIABLE = "FOBA_TEST_TABLE_GATE"
TIMEOUT_SECONDS = 120.0  # a gate nobody opens fails the range instead of hanging the suite
_read = table_pass.iter_batches


def _gated(schema: Any, part: Any = None, **kwargs: Any) -> Iterator[Any]:
    gate = os.environ.get(VARIABLE)
    if gate:
        with open(f"{gate}.started", "a") as handle:
            handle.write(f"{os.getpid()}\n")
        deadline = time.monotonic() + TIMEOUT_SECONDS
        while not os.path.exists(gate):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{VARIABLE}: the test never opened the gate")
            time.sleep(0.05)
    yield from _read(schema, part, **kwargs)


table_pass.iter_batches = _gated  # type: ignore[assignment]
