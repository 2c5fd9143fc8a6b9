"""Bounds and strictness of what clients send (request models and route parameters)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AllowInfNan, Strict, field_validator
from sqlalchemy import BigInteger, Integer
from sqlmodel import SQLModel
from sqlmodel._compat import SQLModelConfig

# Integers clients send are bounded: the databases store 64-bit integers (a larger id names
# nothing, and would not even reach the query), seeds are 32-bit (what every RNG takes).
MAX_ID = 2**63 - 1
MAX_SEED = 2**32 - 1
MAX_K = 2**31 - 1
# What clients send is taken as it is typed: true is not 1, "5" is not 5, NaN is no fraction.
# SQLModelConfig is the ConfigDict that SQLModel declares its model_config to be (its own module
# is private, the type is not exported elsewhere): a plain ConfigDict is not assignable to it.
STRICT = SQLModelConfig(extra="forbid", strict=True)
Fraction = Annotated[float, Strict(), AllowInfNan(False)]

# Ids (and trace steps) are 64-bit on PostgreSQL, as the API allows ids up to MAX_ID: a 32-bit
# column made an id above 2^31 - 1 a 500 and capped a deployment at 2^31 runs. On SQLite an
# INTEGER PRIMARY KEY is already 64-bit, and must stay INTEGER to remain the AUTOINCREMENT
# rowid that never reuses an id.
ID_TYPE = BigInteger().with_variant(Integer(), "sqlite")

# Text no database column should hold: NUL (PostgreSQL text cannot store it, SQLite would),
# and the bidirectional overrides and isolates that make a name display as another one.
FORBIDDEN_CHARACTERS = {
    "\x00": "a NUL character (\\x00)",
    **{
        c: f"a bidirectional control character (U+{ord(c):04X})"
        for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    },
}


def forbidden_character(text: str) -> str | None:
    """What is wrong with ``text``, or None when it may be stored as it is."""
    for char, what in FORBIDDEN_CHARACTERS.items():
        if char in text:
            return f"holds {what} at position {text.index(char)}; remove it"
    return None


class Request(SQLModel):
    """What clients send: every text field, and every text in a list field, is refused when it
    holds a character no database column should (``FORBIDDEN_CHARACTERS``), on SQLite and
    PostgreSQL alike, instead of failing with a 500 on one of them."""

    @field_validator("*", mode="after")
    @classmethod
    def _storable_text(cls, value: Any) -> Any:
        texts = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for text in texts:
            if isinstance(text, str) and (problem := forbidden_character(text)):
                raise ValueError(f"the text {problem}")
        return value
