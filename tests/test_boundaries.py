"""The layers keep to their side: the engine is numerics only; ``app.ingest`` (the table reader
the CLI shares) imports no web code and no database; the job-backend interface knows no service;
models, storage, ingest, jobs and services know nothing of ``app.web``; no two packages of the
app import each other; and routers stay thin (no numerics, no SQL)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WEB = {
    "app",
    "fastapi",
    "starlette",
    "sqlmodel",
    "sqlalchemy",
    "pydantic",
    "pydantic_settings",
    "jinja2",
    "plotly",
    "uvicorn",
    "procrastinate",
    "alembic",
}
ROUTE_DECORATORS = {"get", "post", "put", "patch", "delete"}
MAX_ROUTE_LINES = 20


def imported_modules(path: Path) -> set[str]:
    """Absolute module names a file imports (relative imports resolved against its package)."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def loaded_after_import(module: str) -> set[str]:
    """Modules a fresh interpreter holds after importing ``module`` alone."""
    code = f"import sys, {module}; print('\\n'.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(out.stdout.split())


def app_package(module: str) -> str:
    """The app package a module belongs to (``app.web.views.run`` -> ``app.web``)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "app" and len(parts) > 1 else parts[0]


def package_imports() -> dict[str, set[str]]:
    """Which app packages each app package imports (module-level and in functions alike)."""
    graph: dict[str, set[str]] = {}
    for path in files("app"):
        if "versions" in path.parts:
            continue
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        source = app_package(module)
        targets = {app_package(n) for n in imported_modules(path) if n.startswith("app.")}
        graph.setdefault(source, set()).update(targets - {source})
    return graph


@pytest.mark.parametrize("path", files("engine"), ids=lambda p: str(p.relative_to(ROOT)))
def test_engine_files_import_no_web_code(path: Path) -> None:
    tops = {name.split(".")[0] for name in imported_modules(path)}
    assert not tops & WEB, f"{path.name} imports {sorted(tops & WEB)}"


def test_importing_the_engine_loads_no_web_code() -> None:
    loaded = loaded_after_import("engine, engine.datasets, engine.metrics")
    assert not {name.split(".")[0] for name in loaded} & WEB


def test_the_job_backend_interface_loads_no_service() -> None:
    loaded = loaded_after_import("app.jobs.backend")
    assert not [name for name in loaded if name.startswith(("app.services", "app.web.routers"))]


@pytest.mark.parametrize("folder", ["app/jobs", "app/services"])
def test_jobs_and_services_import_no_router(folder: str) -> None:
    for path in files(folder):
        routers = [n for n in imported_modules(path) if n.startswith("app.web.routers")]
        assert not routers, f"{path.name} imports {routers}"


@pytest.mark.parametrize("path", files("app/web/routers"), ids=lambda p: p.name)
def test_routers_stay_thin(path: Path) -> None:
    """A router parses, calls a service and answers: no engine, no SQL, no numerics, and no
    route longer than a screenful."""
    tops = {name.split(".")[0] for name in imported_modules(path)}
    assert not tops & {"engine", "sqlalchemy", "numpy", "scipy", "pandas"}, sorted(tops)
    sql = [n for n in imported_modules(path) if n.startswith("sqlmodel.")]
    sql = [n for n in sql if n != "sqlmodel.Session"]
    assert not sql, f"{path.name} imports {sql}"
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.FunctionDef):
            continue
        is_route = any(
            isinstance(d, ast.Call)
            and isinstance(d.func, ast.Attribute)
            and d.func.attr in ROUTE_DECORATORS
            for d in node.decorator_list
        )
        if is_route:
            length = node.end_lineno - node.lineno + 1
            assert length <= MAX_ROUTE_LINES, f"route {node.name} has {length} lines"
