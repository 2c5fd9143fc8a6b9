"""Helpers for the page tests: generating data sets and reading the Plotly figures a page
embeds (the app itself, submitting and waiting for runs: ``service_helpers``)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi.testclient import TestClient

FIGURE = re.compile(r'<script type="application/json" data-plot="([^"]+)">(.*?)</script>', re.S)


def generate(client: TestClient, generator: str, **params: Any) -> dict[str, Any]:
    response = client.post(
        "/api/datasets/generate", json={"generator": generator, "params": params}
    )
    assert response.status_code == 201, response.text
    return response.json()


def figures(html: str) -> dict[str, dict[str, Any]]:
    """The figures a page hands to Plotly, by the id of the element they are drawn in."""
    return {m.group(1): json.loads(m.group(2)) for m in FIGURE.finditer(html)}


def check_figure(figure: dict[str, Any]) -> None:
    """Valid for plotly.js (the Python package validates against the same schema), titled, and
    with titled axes."""
    import plotly.graph_objects as go

    go.Figure(figure)  # raises on any property plotly.js does not know
    layout = figure["layout"]
    assert layout["title"]["text"]
    if figure["data"]:
        assert layout["xaxis"]["title"]["text"] and layout["yaxis"]["title"]["text"]
        assert layout["font"]["family"]
