"""Helpers for the table reader's unit tests: ``app.ingest.upload.parse_csv`` on bytes, with
the app's default limits, and its errors in the shape an HTTP client receives them."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pandas as pd
import pytest

from app.config import Settings
from app.errors import InvalidInput, TooLarge, json_safe
from app.ingest.upload import ParsedCsv, UploadLimits, parse_csv
from app.ingest.words import Words
from app.models import UploadOptions

_DEFAULTS = Settings.model_fields


def limits(**given: int) -> UploadLimits:
    """The app's default limits (Settings), ``max_line_kb`` and the others overridable."""
    values = {
        name: given.get(name, _DEFAULTS[name].default)
        for name in ("max_columns", "max_line_kb", "max_cells", "max_categories")
    }
    return UploadLimits(
        max_columns=values["max_columns"],
        max_line_chars=values["max_line_kb"] * 1024,
        max_cells=values["max_cells"],
        max_categories=values["max_categories"],
    )


def csv_text(header: list[str], rows: list[list[Any]], delimiter: str = ",") -> str:
    lines = [delimiter.join(header)]
    lines += [delimiter.join(str(v) for v in row) for row in rows]
    return "\n".join(lines) + "\n"


def parse(
    content: str | bytes,
    *,
    limit: UploadLimits | None = None,
    words: Words | None = None,
    **form: Any,
) -> ParsedCsv:
    """Parse as an upload would; the target defaults to the column ``y``."""
    body = content.encode() if isinstance(content, str) else content
    opts = UploadOptions(**{"target": "y", **form})
    return parse_csv(io.BytesIO(body), opts, limit or limits(), words)


def refused(content: str | bytes, **form: Any) -> list[dict[str, Any]]:
    """The problems of a refused file, as the 422's ``detail`` lists them (JSON types)."""
    with pytest.raises(InvalidInput) as caught:
        parse(content, **form)
    return json.loads(json.dumps(json_safe(caught.value.body())))["detail"]


def too_large(content: str | bytes, **form: Any) -> str:
    """The message of a file refused as too large (a 413)."""
    with pytest.raises(TooLarge) as caught:
        parse(content, **form)
    return caught.value.message


def european_csv(n: int = 1200, seed: int = 4) -> bytes:
    """A Latin-1 CSV written as a European spreadsheet writes it: ';' between the fields, ','
    in the numbers, accents in a text column, and missing cells (NA, empty) in a numeric
    column, the text column and the target."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 3)) * [1.0, 4.0, 0.5] + [0.0, 50.0, -3.0])
    df.columns = ["a", "b", "c"]
    df["région"] = rng.choice(["Île", "Gâtinais", "Périgord"], n, p=[0.5, 0.3, 0.2])
    df["y"] = 1.5 * df.a - 0.2 * df.b + (df["région"] == "Île") + rng.normal(size=n)
    df = df.round(6).astype(object)
    df.loc[[7, 400, 1100], "b"] = "NA"
    df.loc[[9, 401], "a"] = ""
    df.loc[[12, 650, 651], "région"] = ""
    df.loc[[20, 900], "y"] = "NA"
    text = df.to_csv(sep=";", decimal=",", index=False)
    # pandas writes the object columns' floats with '.': write every number with ','.
    lines = [
        ";".join(cell.replace(".", ",") for cell in line.split(";")) for line in text.splitlines()
    ]
    return ("\n".join(lines) + "\n").encode("latin-1")
