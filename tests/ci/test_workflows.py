"""The pull-request workflow: parses, gates every pull request offline, previews with the pack
only where cloud credentials exist, and pins what it uses."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = REPO_ROOT / ".github" / "workflows" / "pull-request.yml"


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _steps(job: dict) -> list[dict]:
    return job["steps"]


def _runs(job: dict) -> str:
    return "\n".join(s.get("run", "") for s in _steps(job))


def test_workflow_runs_on_every_pull_request_with_read_only_default_permissions(workflow):
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as a boolean
    assert "pull_request" in triggers
    assert triggers["pull_request"] is None  # every pull request, every branch
    assert workflow["permissions"] == {"contents": "read"}


def test_workflow_offline_gate_plans_both_stacks_and_runs_the_suite_without_credentials(workflow):
    gate = workflow["jobs"]["offline-gate"]
    assert "if" not in gate
    commands = _runs(gate)
    assert "make venv" in commands
    for stack in ("dev", "prod"):
        assert f".venv/bin/inference-infra plan --stack {stack}" in commands
    assert "./.ci/run" in commands  # make test: system deps, lint, pytest
    assert "secrets." not in WORKFLOW.read_text().split("preview:")[0]


def test_workflow_preview_runs_the_pack_per_stack_only_with_cloud_credentials(workflow):
    preview = workflow["jobs"]["preview"]
    assert preview["needs"] == "offline-gate"
    assert "vars.HAS_CLOUD_CREDENTIALS == 'true'" in preview["if"]
    assert "head.repo.full_name == github.repository" in preview["if"]  # forks get no secrets
    stacks = preview["strategy"]["matrix"]["stack"]
    assert stacks == ["dev", "prod"]
    (pulumi,) = [s for s in _steps(preview) if s.get("uses", "").startswith("pulumi/actions@")]
    assert pulumi["with"]["command"] == "preview"
    assert pulumi["with"]["policyPacks"] == "policy"
    assert pulumi["with"]["policyPackConfigs"] == "policy/config/${{ matrix.stack }}.json"
    assert pulumi["env"]["PULUMI_ACCESS_TOKEN"] == "${{ secrets.PULUMI_ACCESS_TOKEN }}"
    for stack in stacks:
        assert (REPO_ROOT / "policy" / "config" / f"{stack}.json").is_file()
        assert (REPO_ROOT / f"Pulumi.{stack}.yaml").is_file()
    assert preview["permissions"]["id-token"] == "write"


def test_workflow_pins_every_action_by_version(workflow):
    uses = [s["uses"] for job in workflow["jobs"].values() for s in _steps(job) if "uses" in s]
    assert uses
    for ref in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@v\d+(\.\d+){0,2}", ref), ref
    assert re.fullmatch(r"pulumi/actions@v\d+\.\d+\.\d+", next(u for u in uses if u.startswith("pulumi/")))


def test_workflow_jobs_stop_within_20_minutes(workflow):
    for name, job in workflow["jobs"].items():
        assert job["timeout-minutes"] <= 20, name


def test_make_plan_shows_progress_while_it_installs(tmp_path):
    """A first `make plan` on a cold machine installs for minutes: it says so, and pip prints a line
    per package it collects and installs (no --quiet on that install)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # Run as a top-level make even under `make test` (a sub-make prints "make[1]: Entering directory").
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "plan", f"VENV={tmp_path / 'venv'}"], cwd=REPO_ROOT,
        capture_output=True, text=True, timeout=60, check=True, env=env,
    ).stdout.splitlines()  # fmt: skip
    assert dry[0].startswith('echo "== creating')
    assert "a few minutes the first time" in dry[0]
    install = next(line for line in dry if "pip install" in line and "-e '.[dev]'" in line)
    assert "--quiet" not in install
    assert "-q " not in install
    assert dry[-1].endswith("inference-infra plan --stack prod")
