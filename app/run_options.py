"""Run options the app adds to the engine's parameters, kept in ``Run.params``.

``Run.params`` holds the parameters ``engine.check_config`` validated; the app's own options
(``standardize``) are stored beside them in the same JSON (no table column, no migration) and
taken out again before the engine sees the parameters. Runs stored before an option existed
read as the engine's behaviour at the time (no standardisation).
"""

from __future__ import annotations

from typing import Any

STANDARDIZE = "standardize"
APP_OPTIONS = (STANDARDIZE,)


def stored(engine_params: dict[str, Any], *, standardize: bool) -> dict[str, Any]:
    """What a run row stores: the validated engine parameters and the app's options."""
    return {**engine_params, STANDARDIZE: standardize}


def engine_params(params: dict[str, Any]) -> dict[str, Any]:
    """The stored parameters without the app's options: what ``engine.check_config`` and
    ``engine.select`` take by name."""
    return {name: value for name, value in params.items() if name not in APP_OPTIONS}


def standardize(params: dict[str, Any]) -> bool:
    return bool(params.get(STANDARDIZE, False))
