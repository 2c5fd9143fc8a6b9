"""Idempotency-Key: a repeated submit with the same key returns what the first one created.

The key row is inserted in the same transaction as the runs it names, and the key is the
table's primary key, so of two concurrent submits with one key exactly one commits; the other
finds the winner's row and returns it.
"""

from __future__ import annotations

import hashlib
import json

from sqlmodel import Session, SQLModel

from app.errors import InvalidInput
from app.models import IdempotencyKey

HEADER = "Idempotency-Key"


def digest(scope: str, body: SQLModel) -> str:
    payload = json.dumps({"scope": scope, "body": body.model_dump(mode="json")}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def lookup(session: Session, key: str | None, request_hash: str) -> IdempotencyKey | None:
    """The earlier use of ``key``; a different request under the same key is an error."""
    if key is None:
        return None
    found = session.get(IdempotencyKey, key)
    if found is not None and found.request_hash != request_hash:
        raise InvalidInput(
            f"{HEADER} {key!r} was already used for a different request; send a new key with "
            "a new request",
            loc=("header", HEADER.lower()),
        )
    return found


def created(made_id: int | None, key: str | None) -> int:
    """The id of what the first request under ``key`` created (the key's run_id, comparison_id
    or cv_id for the digest's scope; None only when it served another kind of request)."""
    if made_id is None:
        raise InvalidInput(
            f"{HEADER} {key!r} was already used for a different request; send a new key with "
            "a new request",
            loc=("header", HEADER.lower()),
        )
    return made_id


def winner(session: Session, key: str | None, request_hash: str, dataset_id: int) -> IdempotencyKey:
    """After a failed insert: the concurrent submit that used the same key, if that was it."""
    seen = lookup(session, key, request_hash)
    if seen is None:  # the other constraint: the data set was deleted meanwhile
        raise InvalidInput(f"data set {dataset_id} does not exist", loc=("body", "dataset_id"))
    return seen
