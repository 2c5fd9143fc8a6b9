"""Bounds and strictness of what clients send (request models and route parameters)."""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any

from pydantic import AllowInfNan, Strict, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema
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

# A field of an update that may be left out but not sent as null (an edit answers 422 to a
# null): the schema says only its type, and no default (a null default would invite one).
Omitted = SkipJsonSchema[None]


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


# A field that may be left out but not sent as null: no default in the schema.
OMITTED_SCHEMA: dict[str, Any] = {"json_schema_extra": _no_default}

# Ids (and trace steps) are 64-bit on PostgreSQL, as the API allows ids up to MAX_ID: a 32-bit
# column made an id above 2^31 - 1 a 500 and capped a deployment at 2^31 runs. On SQLite an
# INTEGER PRIMARY KEY is already 64-bit, and must stay INTEGER to remain the AUTOINCREMENT
# rowid that never reuses an id.
ID_TYPE = BigInteger().with_variant(Integer(), "sqlite")
# Seeds go up to MAX_SEED = 2^32 - 1, past PostgreSQL's 32-bit integer (a seed above 2^31 - 1
# was a 500 there, stored fine by SQLite): 64-bit columns, as SQLite's INTEGER already is.
SEED_TYPE = BigInteger().with_variant(Integer(), "sqlite")

# Text no database column should hold: NUL (PostgreSQL text cannot store it, SQLite would),
# and the bidirectional overrides and isolates that make a name display as another one.
FORBIDDEN_CHARACTERS = {
    "\x00": "a NUL character (\\x00)",
    **{
        c: f"a bidirectional control character (U+{ord(c):04X})"
        for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    },
}


# The schema's word for the same rule, on every text field of a request (JSON escapes them).
STORABLE_TEXT = "^[^" + "".join(FORBIDDEN_CHARACTERS) + "]*$"
STORABLE_NOT_BLANK = "^[^{0}]*[^\\s{0}][^{0}]*$".format("".join(FORBIDDEN_CHARACTERS))


def _say_storable(node: dict[str, Any]) -> None:
    """Adds STORABLE_TEXT to the text schemas in a property's schema (itself, its items, the
    members of its anyOf) that carry no pattern, enum or format of their own."""
    for part in (node, node.get("items"), *node.get("anyOf", [])):
        if not isinstance(part, dict):
            continue
        if part is not node and part.get("anyOf"):
            _say_storable(part)
        if part.get("type") == "string" and not {"pattern", "enum", "const", "format"} & set(part):
            part["pattern"] = STORABLE_TEXT


def forbidden_character(text: str) -> str | None:
    """What is wrong with ``text``, or None when it may be stored as it is."""
    for char, what in FORBIDDEN_CHARACTERS.items():
        if char in text:
            return f"holds {what} at position {text.index(char)}; remove it"
    return None


def _takes_int(annotation: Any) -> tuple[bool, bool]:
    """Whether a field's type is an integer (``int``, ``int | None``, bounded), and whether a
    list of them."""
    if typing.get_origin(annotation) is Annotated:
        return _takes_int(typing.get_args(annotation)[0])
    if annotation is int:
        return True, False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        found = [_takes_int(a) for a in typing.get_args(annotation) if a is not type(None)]
        return found[0] if len(found) == 1 else (False, False)
    if origin is list:
        return _takes_int(typing.get_args(annotation)[0])[0], True
    return False, False


def _integral(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class Request(SQLModel):
    """What clients send: every text field, and every text in a list field, is refused when it
    holds a character no database column should (``FORBIDDEN_CHARACTERS``), on SQLite and
    PostgreSQL alike, instead of failing with a 500 on one of them.

    An integer field takes a float with an integral value (``3.0``): JSON Schema counts it an
    integer, so a schema cannot say it is refused. Other floats, strings and booleans are
    still refused (strict)."""

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
        """The schema says which texts are refused (a pattern without FORBIDDEN_CHARACTERS),
        so clients need not learn it from a 422."""
        schema = handler(core_schema)
        for prop in handler.resolve_ref_schema(schema).get("properties", {}).values():
            _say_storable(prop)
        return schema

    @model_validator(mode="before")
    @classmethod
    def _integral_floats(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        fixed = dict(data)
        for name, field in cls.model_fields.items():
            key = field.alias or name
            if key not in fixed:
                continue
            is_int, is_list = _takes_int(field.annotation)
            if is_int and is_list and isinstance(fixed[key], list):
                fixed[key] = [_integral(v) for v in fixed[key]]
            elif is_int:
                fixed[key] = _integral(fixed[key])
        return fixed

    @field_validator("*", mode="after")
    @classmethod
    def _storable_text(cls, value: Any) -> Any:
        texts = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for text in texts:
            if isinstance(text, str) and (problem := forbidden_character(text)):
                raise ValueError(f"the text {problem}")
        return value
