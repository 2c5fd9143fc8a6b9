"""Sample data sets stored at start-up, so the first page view has something to explore.

Each sample has a fixed key (unique in the table): seeding twice, or from two server
processes at once, stores it once.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from app.models import Dataset
from app.services.datasets import create_from_problem
from app.storage import ArrayStore
from engine import datasets as generators
from engine.datasets import Problem

log = logging.getLogger(__name__)

# Small problems with a known support, one per task and structure; seed 0 throughout.
SAMPLE_GENERATORS = (
    "gaussian_regression",
    "zhang2008",
    "liu2014_logistic",
    "xiang2014_bilevel",
)


@dataclass(frozen=True)
class Sample:
    key: str
    name: str
    source: str
    make: Callable[[], Problem]
    target: str = "y"


def samples() -> Iterator[Sample]:
    """Every sample this engine offers."""
    for name in SAMPLE_GENERATORS:
        if name in generators.GENERATORS:
            yield Sample(
                f"generator:{name}:0",
                name,
                "generator",
                functools.partial(generators.generate, name, random_state=0),
            )
    # Bundled real data sets arrive with a later engine version.
    list_bundled = getattr(generators, "list_bundled", None)
    load_bundled = getattr(generators, "load_bundled", None)
    if list_bundled and load_bundled:
        for entry in list_bundled():
            name = entry["name"]
            yield Sample(
                f"bundled:{name}",
                entry.get("title") or name,
                "bundled",
                functools.partial(load_bundled, name),
                entry.get("target") or "y",
            )


def seed_samples(db: Engine, store: ArrayStore) -> int:
    """Store the samples not stored yet; return how many were added."""
    added = 0
    with Session(db) as session:
        present = set(session.exec(select(Dataset.sample_key)))
        for sample in samples():
            if sample.key in present:
                continue
            try:
                create_from_problem(
                    session,
                    store,
                    sample.make(),
                    name=sample.name,
                    source=sample.source,
                    sample_key=sample.key,
                    target=sample.target,
                )
                added += 1
            except IntegrityError:  # another server process stored it first
                pass
            except Exception:  # one broken sample must not keep the service down
                log.exception("could not store sample %s", sample.key)
    return added
