"""`plan` runs the program in the virtualenv Pulumi.yaml names (`runtime.options.virtualenv`), as
`pulumi up` does (pulumi v3.259.0 sdk/python/toolchain/pip.go: relative to the project root, must hold
bin/python, the program runs under it activated)."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

from inference_infra.components.cli import main

PROGRAM = """
import os
import sys

import pulumi
import only_in_the_virtualenv

pulumi.export("marker", only_in_the_virtualenv.MARKER)
pulumi.export("prefix", sys.prefix)
pulumi.export("virtual_env", os.environ.get("VIRTUAL_ENV"))
"""


def _virtualenv(folder: Path, *, with_library: bool) -> Path:
    """A virtualenv with a module of its own; with_library: it also sees this checkout's packages (a
    .pth line, standing in for `pip install -r requirements.txt`, which would need the network)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    (site,) = (folder / "lib").glob("python3*/site-packages")
    (site / "only_in_the_virtualenv.py").write_text("MARKER = 'from the project virtualenv'\n")
    if with_library:
        ours = sysconfig.get_paths()["purelib"]
        (site / "this_checkout.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return folder


def _project(pulumi_project, venv: str = "venv", program: str = PROGRAM) -> Path:
    folder = pulumi_project(program, {"dev": "config:\n  aws:region: us-east-1\n"})
    (folder / "Pulumi.yaml").write_text(
        f"name: outside\nruntime:\n  name: python\n  options:\n    virtualenv: {venv}\n"
    )
    return folder


def test_plan_runs_the_program_in_the_projects_virtualenv(pulumi_project, capfd):
    folder = _project(pulumi_project)
    venv = _virtualenv(folder / "venv", with_library=True)
    assert main(["plan", "--cwd", str(folder), "--stack", "dev", "--json"]) == 0
    outputs = json.loads(capfd.readouterr().out)["outputs"]
    assert outputs["marker"] == "from the project virtualenv"
    assert Path(outputs["prefix"]).resolve() == venv.resolve()
    assert Path(outputs["virtual_env"]).resolve() == venv.resolve()


def test_plan_runs_here_and_warns_when_the_virtualenv_does_not_exist(pulumi_project, capfd):
    """pulumi up would refuse (ValidateVenv); the offline plan still runs, in its own Python, and says so."""
    folder = _project(pulumi_project, venv="missing-venv", program="import pulumi\npulumi.export('ok', 1)\n")
    assert main(["plan", "--cwd", str(folder), "--stack", "dev", "--json"]) == 0
    warnings = " ".join(" ".join(json.loads(capfd.readouterr().out)["warnings"]).split())
    missing = folder.resolve() / "missing-venv"
    assert f"runtime.options.virtualenv {missing} does not exist, so the plan ran the program in" in warnings
    assert f"`pulumi up` would refuse to run it. Make it: `python3 -m venv {missing}" in warnings


def test_plan_says_when_the_virtualenv_lacks_inference_infra(pulumi_project, capsys):
    folder = _project(pulumi_project)
    _virtualenv(folder / "venv", with_library=False)
    assert main(["plan", "--cwd", str(folder), "--stack", "dev"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "inference-infra is not installed there" in err
    assert "inference-infra[aws]" in err
