"""Component test fixtures. systemd_verify: systemd-analyze verify in a scratch root with stub binaries."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

_STUB_UNIT = "[Unit]\nDescription=stand-in for {name}\n[Service]\nType=oneshot\nExecStart=/usr/bin/true\n"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed; run .ci/system-deps (Debian package 'systemd')")
    return path


@pytest.fixture
def systemd_verify(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """verify(units={name: text}, binaries=[...], stub_units=[...], instances=, extra_files=) -> result.

    The scratch root holds the host's unit library (targets), the stub units the engine needs
    (docker.service, the prefetch) and only the binaries named, so a unit whose ExecStart names a
    missing binary fails verification.
    """
    tool = _tool("systemd-analyze")

    def verify(
        units: dict[str, str],
        binaries: list[str],
        stub_units: list[str],
        instances: dict[str, str] | None = None,
        extra_files: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        root = tmp_path / "root"
        shutil.copytree("/lib/systemd/system", root / "usr/lib/systemd/system", symlinks=True)
        etc = root / "etc/systemd/system"
        etc.mkdir(parents=True)
        for binary in ["/usr/bin/true", *binaries]:
            target = root / binary.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("#!/bin/sh\nexit 0\n")
            target.chmod(0o755)
        for name in stub_units:
            (etc / name).write_text(_STUB_UNIT.format(name=name))
        for name, text in units.items():
            (etc / name).write_text(text)
        for instance, template in (instances or {}).items():
            (etc / instance).symlink_to(
                template
            )  # an instance of a template unit, as `systemctl enable` links
        for path, text in (extra_files or {}).items():
            target = root / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        checked = [*units, *(instances or {})]
        return subprocess.run(
            [tool, "verify", f"--root={root}", *[f"/etc/systemd/system/{n}" for n in checked]],
            capture_output=True,
            text=True,
            check=False,
        )

    return verify
