"""The distribution as a user installs it: one import package, beside a project's own code.

The wheel is built offline from a copy of the repository, installed with no
dependencies into a fresh virtualenv (the dependencies come from the test's own
environment through a path file, so nothing is downloaded), and then used from a
Pulumi project that has its own `components`, `infra` and `policy` packages.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("components", "infra", "lambdas", "policy")

pytestmark = pytest.mark.slow


def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PULUMI", "VIRTUAL_ENV"))}
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source")
    ignore = shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".*cache")
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(REPO_ROOT / name, source / name)
    for folder in FOLDERS:
        shutil.copytree(REPO_ROOT / folder, source / folder, ignore=ignore)
    out = tmp_path_factory.mktemp("wheel")
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", out, source)
    assert built.returncode == 0, built.stdout + built.stderr
    assert "Deprecat" not in built.stdout + built.stderr, built.stdout + built.stderr
    (path,) = out.glob("inference_infra-*.whl")
    return path


@pytest.fixture(scope="module")
def fresh_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(root)
    python = root / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").stdout.strip())
    # Dependencies (pulumi, the providers, boto3...) from this environment's site folders, without its
    # editable install of the project: a plain path line adds a folder but runs none of its .pth files.
    ours = [p for p in sys.path if p.endswith("site-packages")] or [sysconfig.get_path("purelib")]
    (site / "zz_test_dependencies.pth").write_text("".join(f"{p}\n" for p in ours))
    installed = _run(python, "-m", "pip", "install", "--no-deps", "--no-index", wheel)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return root


def test_wheel_has_one_top_level_package(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/", 1)[0] for name in names}
    assert top == {"inference_infra", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}
    (top_level,) = [n for n in names if n.endswith("top_level.txt")]
    assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["inference_infra"]


def test_wheel_carries_the_files_components_read_at_run_time(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in (
        "inference_infra/policy/PulumiPolicy.yaml",
        "inference_infra/policy/__main__.py",
        "inference_infra/policy/config/prod.json",
        "inference_infra/components/aws/node/engine-api-key.sh",
        "inference_infra/components/aws/node/nvme-cache.sh",
        "inference_infra/infra/config.schema.json",
        "inference_infra/lambdas/idle_gpu_watchdog/handler.py",
        # the watchdogs' archives ship the shared core and the parent package (components/function_source.py)
        "inference_infra/lambdas/__init__.py",
        "inference_infra/lambdas/watchdog_core/loop.py",
        "inference_infra/lambdas/gcp_idle_watchdog/requirements.txt",
        "inference_infra/components/serving/data/vllm-options-nvidia-vllm.json",
        "inference_infra/components/serving/data/vllm-options-neuron-vllm.json",
        "inference_infra/components/serving/data/vllm-options-tpu-vllm.json",
    ):
        assert path in names, path
    assert not any("__pycache__" in n or n.startswith("tests/") for n in names)


def test_wheel_console_script_points_into_the_namespace(wheel: Path):
    archive = zipfile.ZipFile(wheel)
    (entry_points,) = [n for n in archive.namelist() if n.endswith("entry_points.txt")]
    assert "inference-infra = inference_infra.components.cli:run" in archive.read(entry_points).decode()


USER_MAIN = '''\
"""A user's stack: its own components/ and policy/ packages beside the library's."""
import pulumi

from components.naming import fleet_name
from infra.network import VPC_ID
from policy.owners import OWNER
from inference_infra.components.aws import GpuFleet, GpuFleetArgs, SubnetRef
from inference_infra.components.tagging import CostTags, register_cost_tags

register_cost_tags(CostTags(cost_center="search", environment="prod", owner=OWNER, auto_shutdown=False))
fleet = GpuFleet(
    fleet_name("ranker"),
    GpuFleetArgs(
        instance_type="g5.xlarge",
        vpc_id=VPC_ID,
        subnets=[SubnetRef(id="subnet-0aaa", availability_zone="us-east-1a")],
        spot=1,
    ),
)
pulumi.export("fleet", fleet_name("ranker"))
'''


def _user_project(root: Path) -> Path:
    files = {
        # The program at the project root, as `pulumi new` makes it: its own packages sit beside it.
        "Pulumi.yaml": "name: user-ranker\nruntime: python\n",
        "Pulumi.prod.yaml": "config:\n  aws:region: us-east-1\n",
        "components/__init__.py": "",
        "components/naming.py": "def fleet_name(base):\n    return f'team-{base}'\n",
        "__main__.py": USER_MAIN,
        "infra/__init__.py": "",
        "infra/network.py": "VPC_ID = 'vpc-0123456789abcdef0'\n",
        "policy/__init__.py": "",
        "policy/owners.py": "OWNER = 'search@example.com'\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


def test_installed_library_is_imported_from_site_packages(fresh_venv: Path):
    found = _run(
        fresh_venv / "bin" / "python",
        "-c",
        "import inference_infra.components.aws as a, inference_infra.policy as p; "
        "print(a.__file__, p.__file__)",
        cwd=fresh_venv,
    )
    assert found.returncode == 0, found.stderr
    assert all(path.startswith(str(fresh_venv)) for path in found.stdout.split()), found.stdout


def test_user_project_with_own_packages_plans_with_installed_wheel(fresh_venv: Path, tmp_path: Path):
    project = _user_project(tmp_path / "user")
    result = _run(fresh_venv / "bin" / "inference-infra", "plan", "--stack", "prod", "--json", cwd=project)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["project"] == "user-ranker"
    assert report["outputs"]["fleet"] == "team-ranker"
    fleets = [r for r in report["resources"] if r["type"] == "inference-infra:aws:GpuFleet"]
    assert [f["name"] for f in fleets] == ["team-ranker"]
    assert report["cost"]["hourly_usd"] > 0
    assert report["policy"]["evaluated"] is True


def test_user_project_with_own_packages_imports_both_under_plain_python(fresh_venv: Path, tmp_path: Path):
    project = _user_project(tmp_path / "user")
    result = _run(
        fresh_venv / "bin" / "python",
        "-c",
        "import components.naming, infra.network, policy.owners; "
        "import inference_infra.components.aws.gpu_fleet as g; "
        "print(components.naming.__file__, g.__file__)",
        cwd=project,
    )
    assert result.returncode == 0, result.stderr
    own, library = result.stdout.split()
    assert own.startswith(str(project))
    assert library.startswith(str(fresh_venv))


def test_installed_policy_pack_loads_from_site_packages(fresh_venv: Path, tmp_path: Path):
    project = _user_project(tmp_path / "user")
    pack = _run(
        fresh_venv / "bin" / "python",
        "-c",
        "from inference_infra.components.offline_plan import DEFAULT_POLICY_PACK as d; print(d)",
        cwd=project,
    ).stdout.strip()
    assert pack.startswith(str(fresh_venv))
    assert Path(pack, "PulumiPolicy.yaml").is_file()
