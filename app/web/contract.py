"""The OpenAPI schema tells the truth about errors: statuses that every operation of a kind
can return are added here, in one place, rather than on each route (the routes document their
own 404, 409 and 503). Security is declared only when the server has a key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute

MESSAGE = {
    "title": "Message",
    "type": "object",
    "properties": {"detail": {"type": "string", "title": "Detail"}},
    "required": ["detail"],
}
SERVER_ERROR = {
    "title": "ServerError",
    "type": "object",
    "properties": {
        "detail": {"type": "string", "title": "Detail"},
        "request_id": {"type": "string", "title": "Request Id"},
    },
    "required": ["detail", "request_id"],
}
WRITES = ("post", "put", "patch", "delete")


def _answer(description: str, model: str) -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{model}"}
    return {"description": description, "content": {"application/json": {"schema": ref}}}


def _common(method: str, path: str, operation: dict[str, Any], keyed: bool) -> dict[str, Any]:
    """The statuses this operation can return besides its own."""
    extra: dict[str, Any] = {}
    if keyed and path.startswith("/api"):
        extra["401"] = _answer("The API key is missing or wrong.", "Message")
    if "{" in path:
        extra["404"] = _answer("Nothing has this id.", "Message")
    if path.startswith("/api"):
        # app.errors: a transient database error changes nothing and says when to retry.
        extra["503"] = _answer(
            "The database is briefly busy or unreachable; nothing changed (see Retry-After).",
            "Message",
        )
    if method in WRITES:
        extra["413"] = _answer("The body is too large (MAX_JSON_KB, MAX_UPLOAD_MB).", "Message")
        extra["507"] = _answer("The server's disk is full; nothing was stored.", "ServerError")
    if "requestBody" in operation:
        extra["400"] = _answer("The body could not be parsed (JSON or multipart).", "Message")
    return extra


def _name_lists(schemas: dict[str, Any]) -> None:
    """The names a field takes are the engine's registries (the routes check them with their
    own messages, listing the names; the schema says so too)."""
    from app.services import catalog

    names = {
        "algorithm": sorted(catalog.engine.ALGORITHMS),
        "objective": sorted(catalog.OBJECTIVES),
        "generator": sorted(catalog.GENERATORS),
    }
    for model in schemas.values():
        for field, allowed in names.items():
            prop = model.get("properties", {}).get(field)
            if prop is not None and prop.get("type") == "string":
                prop["enum"] = allowed


def _binary_files(schemas: dict[str, Any]) -> None:
    """A file field as OpenAPI 3.0 spelled it (``format: binary``) beside 3.1's
    ``contentMediaType``: the common generators (openapi-python-client, openapi-typescript)
    read the 3.1 form as text, and their clients then sent the file as a plain field, which
    the server refuses."""
    for schema in schemas.values():
        for prop in schema.get("properties", {}).values():
            if prop.get("type") == "string" and "contentMediaType" in prop:
                prop.setdefault("format", "binary")


def documented_openapi(app: FastAPI, keyed: bool) -> Callable[[], dict[str, Any]]:
    """A replacement for ``app.openapi``: FastAPI's schema with the common error statuses."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = generate()
        schemas = schema.setdefault("components", {}).setdefault("schemas", {})
        schemas.setdefault("Message", MESSAGE)
        schemas.setdefault("ServerError", SERVER_ERROR)
        _name_lists(schemas)
        _binary_files(schemas)
        for path, item in schema.get("paths", {}).items():
            for method, operation in item.items():
                responses = operation.setdefault("responses", {})
                for status, answer in _common(method, path, operation, keyed).items():
                    responses.setdefault(status, answer)
        app.openapi_schema = schema
        return schema

    return openapi


def operation_id(route: APIRoute) -> str:
    """An operation's id is its route function's name (``upload_dataset``, ``get_run``):
    short and stable, so generated clients get readable methods. FastAPI's default appended
    the path and method (``upload_dataset_api_datasets_post``). Route functions' names must
    therefore be unique across routers (the schema test checks it)."""
    return route.name
