"""Shared checks for the GCP boot scripts."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def shellcheck(tmp_path: Path) -> Callable[[str], None]:
    """Asserts that a rendered bash script passes shellcheck (a system dependency, never skipped)."""

    def check(script: str) -> None:
        assert shutil.which("shellcheck"), "shellcheck is a system dependency (.ci/system-deps)"
        path = tmp_path / "startup.sh"
        path.write_text(script)
        result = subprocess.run(
            ["shellcheck", "-s", "bash", str(path)], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stdout

    return check
