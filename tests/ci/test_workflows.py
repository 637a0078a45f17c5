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
        # judged by the pack and config in $POLICY (the base branch's on a pull request)
        assert f'--policy-pack "$POLICY" --policy-config "$POLICY/config/{stack}.json"' in " ".join(
            commands.split()
        )
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
    assert pulumi["with"]["policyPacks"] == _BASE_OR_OWN
    assert pulumi["with"]["policyPackConfigs"] == _BASE_OR_OWN + "/config/${{ matrix.stack }}.json"
    assert pulumi["env"]["PULUMI_ACCESS_TOKEN"] == "${{ secrets.PULUMI_ACCESS_TOKEN }}"
    for stack in stacks:
        assert (REPO_ROOT / "policy" / "config" / f"{stack}.json").is_file()
        assert (REPO_ROOT / f"Pulumi.{stack}.yaml").is_file()
    assert preview["permissions"]["id-token"] == "write"


# On a pull request, the pack and config of the base branch (checked out to the runner's temporary
# folder); on a manual run, the branch's own policy/.
_BASE_OR_OWN = (
    "${{ github.event_name == 'pull_request' && format('{0}/base-policy', runner.temp) || 'policy' }}"
)


@pytest.mark.parametrize("job_name", ["offline-gate", "preview"])
def test_workflow_judges_a_pull_request_with_the_base_branch_pack_and_config(workflow, job_name):
    """A pull request that loosens a rule or its config must not be judged by the loosened copy."""
    job = workflow["jobs"][job_name]
    steps = _steps(job)
    (checkout,) = [s for s in steps if s.get("with", {}).get("path") == ".base-policy"]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["if"] == "github.event_name == 'pull_request'"
    # the base commit, not the base branch's moving head nor the pull request's merge commit
    assert checkout["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert checkout["with"]["sparse-checkout"] == "policy"
    assert checkout["with"]["persist-credentials"] is False
    (move,) = [s for s in steps if ".base-policy/policy" in s.get("run", "")]
    assert move["if"] == checkout["if"]
    assert 'mv .base-policy/policy "$RUNNER_TEMP/base-policy"' in move["run"]
    assert "rm -rf .base-policy" in move["run"]  # lint and tests never see the base copy
    assert "exit 1" in move["run"]  # no base pack: fail, never fall back to the pull request's own
    # the base pack is in place before anything evaluates a policy
    order = [steps.index(s) for s in (checkout, move)]
    judging = [
        i for i, s in enumerate(steps)
        if "inference-infra plan" in s.get("run", "") or s.get("uses", "").startswith("pulumi/actions@")
    ]  # fmt: skip
    assert judging
    assert order[0] < order[1] < min(judging)
    for i in judging:
        step = steps[i]
        if "run" in step:
            assert step["env"]["POLICY"] == _BASE_OR_OWN
        else:
            assert step["with"]["policyPacks"] == _BASE_OR_OWN


def test_workflow_never_names_the_pull_requests_own_pack_on_a_pull_request(workflow):
    """Every place the workflow names a pack or a config goes through the base-or-own switch."""
    text = WORKFLOW.read_text()
    assert "--policy-pack policy" not in text
    assert "policyPacks: policy" not in text
    for job in workflow["jobs"].values():
        for step in _steps(job):
            run = " ".join(step.get("run", "").split())
            if "inference-infra plan" in run:
                assert "--policy-pack" in run, run
                assert "--policy-config" in run, run


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
