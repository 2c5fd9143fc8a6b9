"""Hostile and random files: the reader returns a table or raises one of its own errors
(InvalidInput: a 422; TooLarge: a 413), never anything else (which the app would answer with
a 500). The HTTP side of the same promise: tests/app/test_upload_parsing.py."""

from __future__ import annotations

import numpy as np
import pytest
from ingest_helpers import parse

from app.errors import InvalidInput, TooLarge
from app.ingest.upload import ParsedCsv

HOSTILE = {
    "random bytes": bytes(np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8)),
    "quotes only": b'"' * 5000,
    "delimiters only": b",,,,,\n,,,,,\n,,,,,\n",
    "header of quotes": b'"a""b,"y\n1,2\n',
    "unclosed quote at the end": b'a,y\n1,"2\n',
    "whitespace lines": b"   \n\t\n  \n",
    "bom only": b"\xef\xbb\xbf",
    "utf-16 without bom": "a,y\n1,2\n".encode("utf-16-le"),
    "cr only noise": b"\r\r\r\r",
    "nan and inf everywhere": b"a,y\nnan,inf\n-inf,nan\n",
    "huge numbers": b"a,y\n1e400,1\n-1e400,2\n3,1e-400\n",
    "binary after header": b"a,y\n" + bytes(range(1, 256)),
    "only a header and blank lines": b"a,b,y\n\n\n",
    "numbers as column names": b"1,2,3\n4,5,6\n7,8,9\n",
    "tabs and commas": b"a\tb,y\n1\t2,3\n",
    "a column of empty strings": b'a,b,y\n"",1,2\n"",3,4\n"",5,7\n',
}


def outcome(body: bytes, **form: str) -> int:
    """201, 413 or 422, as the app would answer; any other exception fails the test."""
    try:
        parsed = parse(body, **form)
    except InvalidInput as exc:
        assert exc.message and exc.body()["detail"][0]["msg"]
        return 422
    except TooLarge as exc:
        assert exc.message
        return 413
    assert isinstance(parsed, ParsedCsv)
    assert parsed.X.shape[0] == parsed.y.shape[0] and np.isfinite(parsed.X).all()
    assert np.isfinite(parsed.y).all() and parsed.X.shape[1] == len(parsed.feature_names)
    return 201


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_files_get_a_table_or_the_readers_own_error(case) -> None:
    outcome(HOSTILE[case], target="y" if b"y" in HOSTILE[case] else "a")


TOKENS = [
    "1",
    "2.5",
    "-3e5",
    "",
    "NA",
    " NA ",
    "nan",
    "inf",
    "abc",
    '"x,y"',
    '"a\nb"',
    '"',
    "True",
    "1,5",
    "0x10",
    "é",
    "\r",
    "\t",
    " ",
    "1e400",
    "9" * 400,
    ";",
    "|",
    "\x0b",
]
OPTIONS = {
    "missing": ["drop", "impute"],
    "text_columns": ["drop", "onehot"],
    "id_columns": ["keep"],
    "decimal": [","],
    "encoding": ["latin-1", "utf-16", "cp1252"],
    "task": ["regression", "classification"],
    "positive_class": ["p", "1", "x,y"],
    "features": ["a", "a,b", "b,c d"],
    "groups": ['{"a": "g"}', "g,h", "[1,2]", "{"],
    "true_support": ["a", "b=p"],
}


def test_random_files_and_options_get_a_table_or_the_readers_own_error() -> None:
    """Seeded random tables: numbers, a text column, missing cells; half of them also with now
    and then a hostile cell, a ragged row, a wrong encoding and random options."""
    rng = np.random.default_rng(11)
    answers: dict[int, int] = {}
    for i in range(300):
        hostile = i % 2 == 1
        header = ["a", "b", "y", "c d", "id", "z"][: rng.integers(3, 7)]
        delimiter = str(rng.choice([",", ";", "\t", "|"]))
        lines = [delimiter.join(header)]
        for _ in range(rng.integers(5, 40)):
            ragged = hostile and rng.random() < 0.03
            width = len(header) + (int(rng.choice([-1, 1])) if ragged else 0)
            cells = [
                str(rng.choice(TOKENS))
                if hostile and rng.random() < 0.05
                else ("NA" if rng.random() < 0.02 else f"{rng.normal():.{rng.integers(1, 4)}f}")
                for _ in range(width)
            ]
            cells[0] = str(rng.choice(["p", "q", "r"]))
            lines.append(delimiter.join(cells))
        text = str(rng.choice(["\n", "\r\n", "\r"])).join(lines) + "\n" * int(rng.integers(2))
        encoding = str(rng.choice(["utf-8", "utf-16", "latin-1"]))
        body = text.encode(encoding, errors="replace")
        form = {"target": "y", "encoding": encoding, "text_columns": "onehot", "missing": "drop"}
        if hostile:
            form = {"target": str(rng.choice(["y", "a"])), "encoding": encoding}
            form |= {k: str(rng.choice(v)) for k, v in OPTIONS.items() if rng.random() < 0.2}
        status = outcome(body, **form)
        answers[status] = answers.get(status, 0) + 1
    assert answers.get(201, 0) >= 100 and answers.get(422, 0) >= 40, answers
