"""What the OpenAPI schema says is valid, the server accepts; what the server refuses, the
schema says (schemathesis's ST202, found by tests/app/test_schemathesis.py)."""

from __future__ import annotations

import re
from typing import Any

JSON_SCHEMA_WORDS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
PYDANTIC_ONLY_WORDS = {"ge", "le", "gt", "lt"}


def _schemas(node: Any):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _schemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from _schemas(value)


def test_parameter_bounds_are_json_schema_words(client) -> None:
    """Ids and offsets said their bounds as "ge"/"le", which JSON Schema ignores: a client
    took -7192 as a valid offset and got a 422."""
    schema = client.get("/openapi.json").json()
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            for parameter in operation.get("parameters", []):
                words = set(parameter["schema"])
                assert not words & PYDANTIC_ONLY_WORDS, (method, path, parameter)
                if parameter["schema"].get("type") == "integer":
                    assert "minimum" in words, (method, path, parameter)
    preview = schema["paths"]["/api/datasets/{dataset_id}/preview"]["get"]["parameters"]
    offset = next(p for p in preview if p["name"] == "offset")
    assert offset["schema"]["minimum"] == 0


def test_an_integral_float_is_an_integer(client) -> None:
    """JSON Schema counts 3791.0 an integer, so the schema cannot refuse it: the server takes
    it (random_state, k, ids in a body); 1.5, "3" and true are still refused."""
    body = {"generator": "gaussian_regression", "params": {"n": 40, "d": 5}}
    made = client.post("/api/datasets/generate", json={**body, "random_state": 3791.0})
    assert made.status_code == 201, made.text
    dataset_id = made.json()["id"]
    run = client.post(
        "/api/runs", json={"dataset_id": float(dataset_id), "algorithm": "omp", "k": 2.0}
    )
    assert run.status_code == 202, run.text
    assert run.json()["k"] == 2 and isinstance(run.json()["k"], int)
    for bad in (2.5, "2", True):
        refused = client.post(
            "/api/runs", json={"dataset_id": dataset_id, "algorithm": "omp", "k": bad}
        )
        assert refused.status_code == 422, (bad, refused.text)


def test_an_edit_field_that_refuses_null_is_not_nullable(client) -> None:
    """PATCH answers 422 to a null name, notes, tags or description ("leave it out"): the
    schema says those fields are strings (lists), not nullable, and has no null default."""
    schema = client.get("/openapi.json").json()["components"]["schemas"]
    for model, fields in (
        ("RunUpdate", ("name", "notes", "tags")),
        ("DatasetUpdate", ("name", "description")),
    ):
        for name in fields:
            field = schema[model]["properties"][name]
            assert "anyOf" not in field and field["type"] in ("string", "array"), (model, field)
            assert "default" not in field, (model, field)
    blank = schema["DatasetUpdate"]["properties"]["name"]
    assert re.search(blank["pattern"], " x ") and not re.search(blank["pattern"], "   ")
    made = client.post(
        "/api/datasets/generate",
        json={"generator": "gaussian_regression", "params": {"n": 40, "d": 5}},
    ).json()
    assert (
        client.patch(f"/api/datasets/{made['id']}", json={"description": None}).status_code == 422
    )
    assert client.patch(f"/api/datasets/{made['id']}", json={"name": "   "}).status_code == 422
    assert client.patch(f"/api/datasets/{made['id']}", json={"name": " x "}).status_code == 200


def test_the_schema_says_which_texts_are_refused(client) -> None:
    """A text holding NUL or a bidirectional control is refused (422): every text field of a
    request says so with a pattern, so "x\\x00" is not schema-valid."""
    schema = client.get("/openapi.json").json()["components"]["schemas"]
    tags = schema["RunUpdate"]["properties"]["tags"]["items"]["pattern"]
    for refused in ("", "  ", "a,b", 'say "x"'):  # a tag the validator refuses: the schema too
        assert not re.search(tags, refused), refused
    for pattern in (tags, schema["RunUpdate"]["properties"]["notes"]["pattern"]):
        assert re.search(pattern, "plain and ünïcode")
        assert not re.search(pattern, "x\x00") and not re.search(pattern, "\u202eevil")
    name = schema["DatasetUpdate"]["properties"]["name"]["pattern"]
    assert not re.search(name, "a\x00b")
