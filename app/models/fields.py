"""Bounds and strictness of what clients send (request models and route parameters)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AllowInfNan, ConfigDict, Strict

# Integers clients send are bounded: the databases store 64-bit integers (a larger id names
# nothing, and would not even reach the query), seeds are 32-bit (what every RNG takes).
MAX_ID = 2**63 - 1
MAX_SEED = 2**32 - 1
MAX_K = 2**31 - 1
# What clients send is taken as it is typed: true is not 1, "5" is not 5, NaN is no fraction.
STRICT = ConfigDict(extra="forbid", strict=True)
Fraction = Annotated[float, Strict(), AllowInfNan(False)]
