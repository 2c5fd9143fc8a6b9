"""What the engine offers: algorithms, objectives and data generators, with their schemas."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.services import catalog

router = APIRouter(tags=["catalog"])


@router.get("/algorithms")
def list_algorithms() -> list[dict[str, Any]]:
    """Every algorithm, its parameters and a JSON schema of them (for ``params``)."""
    return catalog.algorithm_list()


@router.get("/objectives")
def list_objectives() -> list[dict[str, Any]]:
    """The objectives runs can use (the engine-only ones for sequence data are left out)."""
    return [spec.to_dict() for spec in catalog.OBJECTIVES.values()]


@router.get("/generators")
def list_generators() -> list[dict[str, Any]]:
    """Data generators for POST /api/datasets/generate."""
    return [spec.to_dict() for spec in catalog.GENERATORS.values()]
