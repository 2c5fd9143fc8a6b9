"""What every reproduction shares: the run context, the report and its figures.

A :class:`Report` is built section by section and written as ``REPORT.md`` in the paper's output
directory, with every figure saved twice: ``NAME.html`` (interactive, loading the repository's
vendored plotly.js by a relative path, so the page works offline) and ``NAME.png`` (static,
through kaleido and the system's Chromium; left out, with the reason in the report, when either
is missing).

Claims are the paper's qualitative statements checked on our numbers. The markdown lists each
with whether it held; the test suite runs ``--quick`` and asserts the claims marked ``robust``
(the ones that hold by a margin that a few repetitions cannot overturn).
"""

from __future__ import annotations

import atexit
import math
import os
import platform
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parents[1] / "results"
PLOTLY_JS = Path(__file__).resolve().parents[2] / "static" / "vendor" / "plotly.min.js"


@dataclass
class ReproConfig:
    """How one reproduction runs.

    quick: fewer repetitions and smaller sizes (the test suite's mode, under two minutes).
    seed: base seed; repetition r of an experiment uses ``seed + r`` (or a documented offset).
    out_dir: where the report and figures go (``bench/results/PAPER`` by default).
    png: also write PNG figures (needs kaleido and a Chromium).
    """

    paper: str
    quick: bool = False
    seed: int = 0
    out_dir: Path = field(default_factory=lambda: RESULTS)
    png: bool = True
    log: Any = None  # callable(str) for progress lines; print to stderr when None
    # FoBa's backward cost where a reproduction lets it vary (zhang2008): "fixed" (the
    # algorithm boxes) or "refit" (Zhang's R package foba).
    deletion_cost: str = "fixed"

    def progress(self, message: str) -> None:
        if self.log is not None:
            self.log(message)
        else:
            import sys

            print(message, file=sys.stderr, flush=True)


@dataclass
class Claim:
    text: str
    holds: bool
    detail: str = ""
    robust: bool = True


def rel_diff(ours: float, paper: float) -> float:
    """(ours - paper) / |paper|; nan when the paper's number is 0 or missing."""
    if paper is None or ours is None or not math.isfinite(paper) or paper == 0:
        return math.nan
    return (ours - paper) / abs(paper)


def fmt(x: Any, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if isinstance(x, bool | np.bool_):
        return "yes" if x else "no"
    if isinstance(x, int | np.integer):
        return str(int(x))
    x = float(x)
    if math.isnan(x):
        return "-"
    if x != 0 and (abs(x) >= 1e5 or abs(x) < 1e-3):
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"


class Report:
    """A markdown report under construction, with its figures and claims."""

    def __init__(self, ctx: ReproConfig, title: str) -> None:
        self.ctx = ctx
        self.title = title
        self.dir = Path(ctx.out_dir) / ctx.paper
        self.dir.mkdir(parents=True, exist_ok=True)
        self.parts: list[str] = []
        self.claims: list[Claim] = []
        self.figures: dict[str, Path] = {}
        self.png_note: str | None = None
        self.data: dict[str, Any] = {}  # raw numbers, for tests and for REPORT.json
        self._start = time.perf_counter()

    # ----------------------------------------------------------------- building
    def section(self, heading: str, text: str = "") -> None:
        self.parts.append(f"## {heading}\n")
        if text:
            self.parts.append(text.strip() + "\n")

    def text(self, text: str) -> None:
        self.parts.append(text.strip() + "\n")

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += ["| " + " | ".join(fmt(c) for c in row) + " |" for row in rows]
        self.parts.append("\n".join(lines) + "\n")

    def comparison(
        self, rows: Sequence[tuple[str, float | None, float | None]], *, what: str = "value"
    ) -> None:
        """A table of (label, paper, ours) with the relative difference (ours - paper)/|paper|."""
        out = []
        for label, paper, ours in rows:
            rd = rel_diff(ours, paper) if paper is not None and ours is not None else math.nan
            out.append((label, paper, ours, "-" if math.isnan(rd) else f"{100 * rd:+.0f}%"))
        self.table(("", f"paper {what}", f"ours {what}", "rel. diff"), out)

    def claim(self, text: str, holds: bool, detail: str = "", *, robust: bool = True) -> Claim:
        c = Claim(text, bool(holds), detail, robust)
        self.claims.append(c)
        return c

    def figure(self, fig, name: str, caption: str = "") -> None:
        """Save a plotly figure as NAME.html (and NAME.png) and link it from the report."""
        html = self.dir / f"{name}.html"
        # The page loads the plotly.js the app vendors (static/vendor), by a relative path:
        # offline, and one 4.8 MB copy in the repository instead of one per report.
        src = os.path.relpath(PLOTLY_JS, self.dir)
        fig.write_html(html, include_plotlyjs=src, full_html=True)
        self.figures[name] = html
        link = f"[{name}.html]({name}.html)"
        if self.ctx.png and self._write_png(fig, self.dir / f"{name}.png"):
            self.parts.append(f"![{caption or name}]({name}.png)\n\n{caption} ({link})\n")
        else:
            self.parts.append(f"{caption} (figure: {link})\n")

    def _write_png(self, fig, path: Path) -> bool:
        if self.png_note is not None:
            return False
        missing = png_unavailable()
        if missing:
            # Checked first: without a browser kaleido fails in its own thread and the
            # caller would wait forever (HTML figures only, the reason in the report).
            self.png_note = f"PNG figures not written (HTML only): {missing}"
            return False
        try:
            _start_kaleido()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "kopts is ignored if using a server"
                width = fig.layout.width or 900  # a figure's own size, where it sets one
                height = fig.layout.height or 520
                fig.write_image(path, width=width, height=height, scale=1)
        except Exception as exc:  # kaleido missing, or no Chromium for it to drive
            self.png_note = f"PNG figures not written: {type(exc).__name__}: {exc}".splitlines()[0]
            return False
        return True

    # ----------------------------------------------------------------- output
    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self._start

    def write(self) -> Path:
        mode = "quick" if self.ctx.quick else "full"
        head = [
            f"# {self.title}\n",
            f"Mode: **{mode}**, seed {self.ctx.seed}. Wall time {self.elapsed:.1f} s on "
            f"{os.cpu_count()} cores ({platform.processor() or platform.machine()}, "
            f"Python {platform.python_version()}, numpy {np.__version__}). "
            f"Command: `python bench/reproduce.py {self.ctx.paper}"
            f"{' --quick' if self.ctx.quick else ''}`.\n",
        ]
        if self.png_note:
            head.append(f"> {self.png_note}\n")
        claims = ["## Claims checked\n", "| claim | holds | detail |", "|---|---|---|"]
        claims += [
            f"| {c.text} | {'yes' if c.holds else '**no**'} | {c.detail} |" for c in self.claims
        ]
        body = "\n".join(head + self.parts + ["\n".join(claims) + "\n"])
        path = self.dir / "REPORT.md"
        path.write_text(body)
        return path


_KALEIDO_STARTED = False


def png_unavailable() -> str | None:
    """Why PNG figures cannot be written here, or None when kaleido and a Chromium are there.

    kaleido (1.x) drives a Chromium-based browser found by choreographer: ``BROWSER_PATH``,
    one on the PATH or in the usual places, or its own download (``kaleido.get_chrome_sync``).
    """
    try:
        import kaleido  # noqa: F401
    except ImportError:
        return "kaleido is not installed"
    try:
        from choreographer.browsers.chromium import Chromium
    except ImportError:
        return "kaleido's browser driver (choreographer) is missing"
    try:
        found = Chromium.find_browser(skip_local=False)
    except Exception as exc:  # a broken install: treat as missing, with the reason
        return f"looking for a Chromium failed ({type(exc).__name__}: {exc})"
    if found and not os.access(found, os.X_OK):
        return f"the browser {found} (BROWSER_PATH or found on the system) is not executable"
    if not found:
        return (
            "no Chromium-based browser found (install chromium, set BROWSER_PATH, or run "
            "kaleido.get_chrome_sync())"
        )
    return None


def _start_kaleido() -> None:
    """One Chromium for all PNGs of the process (about 0.2 s a figure instead of 2 s)."""
    global _KALEIDO_STARTED
    if _KALEIDO_STARTED:
        return
    import kaleido

    kaleido.start_sync_server(silence_warnings=True)
    atexit.register(kaleido.stop_sync_server, silence_warnings=True)
    _KALEIDO_STARTED = True


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    a = np.asarray(values, dtype=float)
    return float(a.mean()), float(a.std(ddof=1)) if a.size > 1 else 0.0
