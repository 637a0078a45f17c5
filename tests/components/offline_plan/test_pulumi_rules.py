"""The plan runs a program the way `pulumi up` runs it, and `pulumi install` works for this repository.

The rules, read in Pulumi v3.259.0 (commit 0ac56e876614aedf12771d73ef7e80959b8a6fd4):

- pkg/engine/project.go:45-71 (getPwdMain): `main` is relative to the folder of Pulumi.yaml; when it
  names a folder, that folder is the program's working directory and the entry point is "."; when it
  names a file, the file's folder is the working directory and the entry point is the file's name
  ("So that any relative paths inside of the program are correct").
- sdk/python/cmd/pulumi-language-python-exec:147-149: `sys.argv = [args.PROGRAM] + args.ARGS`, then
  `os.chdir(args.pwd)`, then `runpy.run_path(args.PROGRAM, run_name="__main__")` (line 188).
- pkg/cmd/pulumi/install/install.go:178 and sdk/python/cmd/pulumi-language-python/main.go:1369:
  `pulumi install` installs the dependencies of ProgramInfo(root, pwd, main) in the program's folder.
- sdk/python/toolchain/pip.go:543-551: pip reads `requirements.txt` from the program's folder (none:
  nothing is installed) and runs there (pip.go:499: `pipCmd.Dir = cwd`), so a relative path in it is
  read from the program's folder; toolchain.go:140-167 and pip.go:583-591: `virtualenv` is relative
  to the project root, and with no `toolchain` option a uv.lock or poetry.lock picks that tool.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.offline_plan import plan
from inference_infra.components.offline_plan.project import load_project

ROOT = Path(__file__).resolve().parents[3]

READS_A_FILE = """
import pathlib, sys
import pulumi
pulumi.export("userdata", pathlib.Path("userdata.sh").read_text())
pulumi.export("argv", sys.argv)
"""


def test_plan_runs_the_program_in_its_main_folder(pulumi_project):
    folder = pulumi_project(READS_A_FILE, main="src")
    (folder / "src" / "userdata.sh").write_text("#!/bin/sh\necho boot\n")
    outputs = plan(folder, "dev").capture.stack_outputs
    assert outputs["userdata"] == "#!/bin/sh\necho boot\n"
    assert outputs["argv"] == ["."]  # the entry point Pulumi passes for a folder


def test_plan_rejects_a_root_relative_path_that_pulumi_would_not_find(pulumi_project):
    folder = pulumi_project(READS_A_FILE, main="src")
    (folder / "userdata.sh").write_text("#!/bin/sh\n")  # beside Pulumi.yaml, not beside the program
    with pytest.raises(InputError, match=r"src/__main__\.py:4: .*FileNotFoundError.*userdata\.sh"):
        plan(folder, "dev")


def test_plan_runs_a_main_file_in_its_own_folder(pulumi_project):
    folder = pulumi_project("raise SystemExit('not this one')\n", main="app")
    (folder / "app" / "stack.py").write_text(READS_A_FILE)
    (folder / "app" / "userdata.sh").write_text("echo file\n")
    (folder / "Pulumi.yaml").write_text("name: outside\nruntime: python\nmain: app/stack.py\n")
    project = load_project(folder)
    assert (project.program_dir, project.entry) == ((folder / "app").resolve(), "stack.py")
    outputs = plan(folder, "dev").capture.stack_outputs
    assert outputs["userdata"] == "echo file\n"
    assert outputs["argv"] == ["stack.py"]


def test_install_layout_reads_requirements_from_the_program_folder(pulumi_project):
    folder = pulumi_project("import pulumi\n", main="infra")
    options = "  options:\n    toolchain: pip\n    virtualenv: venv\n"
    (folder / "Pulumi.yaml").write_text(f"name: p\nruntime:\n  name: python\n{options}main: infra/\n")
    layout = load_project(folder).install_layout()
    assert layout.toolchain == "pip"
    assert layout.virtualenv == folder.resolve() / "venv"  # relative to the project root
    assert layout.requirements == folder.resolve() / "infra" / "requirements.txt"
    assert layout.pip_cwd == folder.resolve() / "infra"


def test_install_layout_picks_the_toolchain_from_a_lock_file(pulumi_project):
    folder = pulumi_project("import pulumi\n", main="infra")
    (folder / "uv.lock").write_text("")
    assert load_project(folder).install_layout().toolchain == "uv"


def test_plan_warns_when_pulumi_install_would_miss_the_root_requirements(pulumi_project):
    folder = pulumi_project("import pulumi\n", main="infra")
    (folder / "requirements.txt").write_text("pulumi>=3\n")
    warnings = plan(folder, "dev").warnings()
    assert any(
        "reads requirements.txt from the program's folder infra/, not requirements.txt" in w for w in warnings
    )
    (folder / "infra" / "requirements.txt").write_text("pulumi>=3\n")
    assert not any("pulumi install" in w for w in plan(folder, "dev").warnings())


def _requirement_lines(path: Path) -> list[str]:
    return [
        line.split("#", 1)[0].strip()
        for line in path.read_text().splitlines()
        if line.split("#", 1)[0].strip()
    ]


def test_pulumi_install_builds_this_repository(tmp_path):
    """The reference project: `pulumi install` reads the requirements Pulumi's pip toolchain looks for,
    and the editable path in them, read from pip's working directory, is this distribution."""
    layout = load_project(ROOT).install_layout()
    assert layout.toolchain == "pip"
    assert layout.virtualenv == ROOT / ".venv"
    assert layout.requirements.is_file(), f"pulumi install reads {layout.requirements}"
    lines = _requirement_lines(layout.requirements)
    editable = [line for line in lines if line.startswith("-e ")]
    assert len(editable) == 1, lines
    target = (layout.pip_cwd / editable[0].removeprefix("-e ").split("[", 1)[0]).resolve()
    project = tomllib.loads((target / "pyproject.toml").read_text())["project"]
    assert project["name"] == "inference-infra"
    extras = re.search(r"\[([a-z,]+)\]", editable[0])
    assert extras is not None, editable[0]
    assert "all" in extras.group(1).split(","), "the reference stack uses every cloud"
