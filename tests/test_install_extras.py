"""Install per cloud: the built wheel with the `[aws]` extra alone, in a fresh virtualenv, plans an
AWS-only program, and no GCP or Kubernetes SDK is installed or needed.

The wheel is built offline from a copy of the repository; its dependencies come from the wheelhouse
`make wheelhouse` fills (`pip download '.[aws]'`, part of `make test`), and pip installs with
`--no-index`, so nothing is downloaded here and pip's own resolver decides what `[aws]` brings.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
import venv
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
WHEELHOUSE = REPO_ROOT / ".wheelhouse"
FOLDERS = ("components", "infra", "lambdas", "policy")

pytestmark = pytest.mark.slow


def _run(*args: str | Path, cwd: Path | None = None, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PULUMI", "VIRTUAL_ENV"))}
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_pyproject_extras_split_the_provider_sdks():
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    base = " ".join(project["dependencies"])
    extras = project["optional-dependencies"]
    assert not any(sdk in base for sdk in ("pulumi-aws", "pulumi-gcp", "pulumi-kubernetes", "boto3"))
    assert any(r.startswith("pulumi-aws") for r in extras["aws"])
    assert any(r.startswith("pulumi-gcp") for r in extras["gcp"])
    assert any(r.startswith("pulumi-kubernetes") for r in extras["k8s"])
    assert extras["all"] == ["inference-infra[aws,gcp,k8s]"]
    assert "inference-infra[all]" in extras["dev"]


@pytest.fixture(scope="module")
def aws_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel installed as `inference-infra[aws]`, offline."""
    if not (WHEELHOUSE / ".aws").is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{WHEELHOUSE} is missing: `make test` runs `make wheelhouse` first")
        pytest.skip(f"no wheelhouse at {WHEELHOUSE}: run `make wheelhouse` (pip download, needs PyPI)")
    source = tmp_path_factory.mktemp("source")
    ignore = shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".*cache")
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(REPO_ROOT / name, source / name)
    for folder in FOLDERS:
        shutil.copytree(REPO_ROOT / folder, source / folder, ignore=ignore)
    dist = tmp_path_factory.mktemp("dist")
    built = _run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", dist, source
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = dist.glob("inference_infra-*.whl")
    root = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(root)
    installed = _run(
        root / "bin" / "python", "-m", "pip", "install", "--no-index", "--find-links", WHEELHOUSE,
        f"inference-infra[aws] @ {wheel.as_uri()}",
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return root


def test_aws_extra_installs_no_gcp_or_kubernetes_sdk(aws_only: Path):
    listed = _run(aws_only / "bin" / "python", "-m", "pip", "list", "--format=freeze").stdout.lower()
    names = {line.split("==")[0].replace("_", "-") for line in listed.split()}
    assert {"inference-infra", "pulumi", "pulumi-aws", "pulumi-policy", "boto3"} <= names
    assert not names & {"pulumi-gcp", "pulumi-kubernetes", "pulumi-random"}, names


def test_aws_extra_plans_an_aws_only_program(aws_only: Path, tmp_path: Path):
    (tmp_path / "Pulumi.yaml").write_text("name: aws-only\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (tmp_path / "__main__.py").write_text(
        textwrap.dedent(
            """
            import pulumi

            from inference_infra.components.aws import GpuFleet, GpuFleetArgs, SubnetRef
            from inference_infra.components.tagging import CostTags, register_cost_tags

            register_cost_tags(
                CostTags(cost_center="ml", environment="dev", owner="ml@example.com", auto_shutdown=False)
            )
            fleet = GpuFleet(
                "pool",
                GpuFleetArgs(
                    instance_type="g6.xlarge",
                    vpc_id="vpc-0123456789abcdef0",
                    subnets=[SubnetRef(id="subnet-0aaaaaaaaaaaaaaaa", availability_zone="us-east-1a")],
                    spot=1,
                ),
            )
            pulumi.export("instance_ids", fleet.instance_ids)
            """
        )
    )
    cli = aws_only / "bin" / "inference-infra"
    assert _run(cli, "--version").stdout.strip() == "inference-infra 0.1.0"
    planned = _run(cli, "plan", "--stack", "dev", "--json", cwd=tmp_path)
    assert planned.returncode in (0, 1), planned.stderr  # 1: the policy gate, not a failure to run
    assert '"aws:ec2/instance:Instance"' in planned.stdout
    assert "Traceback" not in planned.stderr
    # the policy pack runs too, from the installed wheel (no provider SDK needed)
    assert '"packs"' in planned.stdout
