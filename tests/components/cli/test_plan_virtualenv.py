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


def _project(pulumi_project, venv: str = "venv") -> Path:
    folder = pulumi_project(PROGRAM, {"dev": "config:\n  aws:region: us-east-1\n"})
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


def test_plan_refuses_a_virtualenv_that_does_not_exist_as_pulumi_does(pulumi_project, capsys):
    folder = _project(pulumi_project, venv="missing-venv")
    assert main(["plan", "--cwd", str(folder), "--stack", "dev"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"virtualenv is 'missing-venv', but {folder.resolve() / 'missing-venv'} does not exist" in err
    assert "python3 -m venv" in err


def test_plan_says_when_the_virtualenv_lacks_inference_infra(pulumi_project, capsys):
    folder = _project(pulumi_project)
    _virtualenv(folder / "venv", with_library=False)
    assert main(["plan", "--cwd", str(folder), "--stack", "dev"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "inference-infra is not installed there" in err
    assert "inference-infra[aws]" in err
