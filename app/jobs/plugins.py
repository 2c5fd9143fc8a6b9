"""``FOBA_TEST_PLUGINS``: Python files a worker process runs when it starts (a test hook).

The test suite registers test-only engine entries (``tests/blocking_algorithm.py``: an
algorithm that runs until the test releases it). Worker processes import the engine fresh,
spawned or started as ``python -m app worker``, so they must run the same registration; the
variable lists the files, separated by ``os.pathsep``. Unset (as in production) it does nothing.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

VARIABLE = "FOBA_TEST_PLUGINS"


def load_test_plugins() -> None:
    """Import each file named in ``FOBA_TEST_PLUGINS`` once, as a module named by its stem."""
    for entry in filter(None, os.environ.get(VARIABLE, "").split(os.pathsep)):
        path = Path(entry)
        if path.stem in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"{VARIABLE}: cannot load {entry}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
