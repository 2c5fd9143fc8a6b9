"""What can be checked of the container set-up without a Docker daemon: the compose file parses
and runs the commands the image provides, its environment names are settings the app reads,
and the image runs as a non-root user with every package the project ships."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

from app.config import Settings

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
DOCKERFILE = (ROOT / "Dockerfile").read_text()
SERVICES = COMPOSE["services"]


def test_compose_has_the_database_the_web_process_workers_and_a_single_machine_profile() -> None:
    assert {"db", "web", "worker", "single"} <= set(SERVICES)
    assert SERVICES["single"]["profiles"] == ["single"]  # not started by a plain `up`
    for name in ("db", "web", "worker"):
        assert "profiles" not in SERVICES[name]
    assert SERVICES["worker"]["depends_on"]["web"]["condition"] == "service_healthy"
    assert SERVICES["web"]["depends_on"]["db"]["condition"] == "service_healthy"
    assert "healthcheck" in SERVICES["db"] and "healthcheck" in SERVICES["worker"]
    assert "HEALTHCHECK" in DOCKERFILE and "/healthz" in DOCKERFILE  # the web container's


def test_workers_share_nothing_with_the_web_process_but_the_database() -> None:
    for name in ("web", "worker"):
        env = SERVICES[name]["environment"]
        assert env["JOB_BACKEND"] == "procrastinate"
        assert env["STORAGE"] == "database"
        assert env["DATABASE_URL"].startswith("postgresql://")
        assert "volumes" not in SERVICES[name]
    # `--scale worker=N` needs a service without a fixed container name or host port.
    assert "container_name" not in SERVICES["worker"] and "ports" not in SERVICES["worker"]


def test_every_environment_name_is_a_setting() -> None:
    fields = {name.upper() for name in Settings.model_fields}
    for name, service in SERVICES.items():
        if name == "db":
            continue  # the postgres image's own variables
        unknown = set(service.get("environment", {})) - fields
        assert not unknown, f"{name}: {sorted(unknown)} are not settings"
    assert {"DATA_DIR", "HOST", "PORT"} <= fields  # the Dockerfile's ENV


def test_each_service_command_is_one_the_image_provides(tmp_path: Path) -> None:
    commands = {tuple(SERVICES[name]["command"]) for name in ("web", "worker", "single")}
    assert commands == {("python", "-m", "app"), ("python", "-m", "app", "worker")}
    assert re.search(r'CMD \["python", "-m", "app"\]', DOCKERFILE)
    check = SERVICES["worker"]["healthcheck"]["test"]
    assert check[1:] == ["python", "-m", "app", "worker", "--check"]
    # The health check answers (unhealthy: no database there) instead of starting a server.
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'none.db'}", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "app", "worker", "--check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "worker check failed" in done.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "app", "wroker"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "usage: python -m app" in bad.stderr  # argparse


def test_the_image_runs_as_a_non_root_user_and_ships_every_package() -> None:
    users = re.findall(r"^USER (\S+)", DOCKERFILE, re.MULTILINE)
    assert users and users[-1] not in ("root", "0")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = [p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]]
    for folder in (*packages, "templates", "static"):
        assert re.search(rf"^COPY {folder} ", DOCKERFILE, re.MULTILINE), folder
    assert "[postgres]" in DOCKERFILE  # the driver the compose set-up needs
