"""Real Prometheus tools for the monitoring tests: they fail, never skip, when a tool is missing."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest


def _tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: run .ci/system-deps (Debian package {package}).")
    return path


@pytest.fixture(scope="session")
def promtool() -> str:
    return _tool("promtool", "prometheus")


@pytest.fixture(scope="session")
def amtool() -> str:
    return _tool("amtool", "prometheus-alertmanager")


@pytest.fixture(scope="session")
def prometheus_bin() -> str:
    return _tool("prometheus", "prometheus")


Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def run() -> Run:
    """Run a tool with a bounded time; the test asserts on returncode and output."""

    def call(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
        )

    return call
