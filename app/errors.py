"""Errors as values users can act on: each names what is wrong and what is allowed.

Services raise these; ``app.web.errors`` turns them into responses. Invalid input uses FastAPI's
validation-error shape (``{"detail": [{"loc", "msg", "type", "ctx"}]}``) so every 422 reads
alike; the other statuses (503 with a Retry-After header) carry ``{"detail": "<message>"}``.
A transient database error (a lock held too long, a dropped connection) is a 503 too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


class AppError(Exception):
    status_code = 400
    headers: dict[str, str] | None = None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def body(self) -> dict[str, Any]:
        return {"detail": self.message}


class NotFound(AppError):
    status_code = 404


class Conflict(AppError):
    status_code = 409


class Gone(AppError):
    """What the request names existed but its content is lost for good."""

    status_code = 410


class TooLarge(AppError):
    status_code = 413


class Busy(AppError):
    """Every slot for this kind of work is taken: try again after ``retry_after`` seconds."""

    status_code = 503

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.headers = {"Retry-After": str(retry_after)}


class InvalidInput(AppError):
    """A request that parsed but cannot be used; ``loc`` points at the field, ``ctx`` adds the
    column, row or parameter at fault. ``also`` holds further problems found in the same
    request, reported together (each its own entry of ``detail``)."""

    status_code = 422

    def __init__(
        self,
        message: str,
        loc: Sequence[str | int] = ("body",),
        also: Sequence[InvalidInput] = (),
        **ctx: Any,
    ) -> None:
        super().__init__(message)
        self.loc = list(loc)
        self.ctx = ctx
        self.also = list(also)

    @classmethod
    def all_of(cls, problems: Sequence[InvalidInput]) -> InvalidInput:
        """One error reporting every problem, the first one's message as its own."""
        first, *rest = problems
        return cls(first.message, first.loc, also=[*first.also, *rest], **first.ctx)

    def entry(self) -> dict[str, Any]:
        error: dict[str, Any] = {"type": "value_error", "loc": self.loc, "msg": self.message}
        if self.ctx:
            error["ctx"] = self.ctx
        return error

    def body(self) -> dict[str, Any]:
        return {"detail": [self.entry(), *(p.entry() for p in self.also)]}


def json_safe(value: Any) -> Any:
    """JSON has no NaN or Infinity: a client that sent them (Python's json writes them) gets
    them back as text in the error naming them, not a failure to write the error."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value
