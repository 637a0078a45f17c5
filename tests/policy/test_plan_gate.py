"""`inference-infra plan` as the pull-request gate: the pack's verdict decides the exit code.

Each case runs the CLI in a subprocess, as CI does, on a throwaway program that
uses none of our components.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

COMPLIANT_GPU = """
import pulumi_aws as aws

aws.ec2.Instance(
    "gpu",
    instance_type="g5.xlarge",
    ami="ami-1",
    associate_public_ip_address=False,
    metadata_options={"http_tokens": "required"},
    instance_market_options={"market_type": "spot"},
    tags={"CostCenter": "ml", "Environment": "dev", "Owner": "ml-team", "AutoShutdown": "false",
          **({} if OWNER else {"Owner": ""})},
)
"""
STACKS = {"dev": "config:\n  aws:region: us-east-1\n"}
OWNER_MISSING = (
    "aws:ec2/instance:Instance 'gpu' is missing the cost tag Owner; set it on `tags` or the provider's "
    "defaultTags."
)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "inference_infra.components.cli", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)},
    )


def _program(pulumi_project, owner: bool) -> Path:
    return pulumi_project(f"OWNER = {owner}\n" + COMPLIANT_GPU, STACKS)


def test_plan_gate_passes_a_compliant_outside_program(pulumi_project):
    run = cli("plan", "--stack", "dev", "--json", "--cwd", str(_program(pulumi_project, owner=True)))
    assert run.returncode == 0, run.stdout + run.stderr
    policy = json.loads(run.stdout)["policy"]
    assert (policy["evaluated"], policy["violations"]) == (True, [])
    # the reference stacks' configs (policy/config/dev.json) apply to the reference project only
    assert policy["config"] is None
    assert {
        "policy": "idle-watchdog-required",
        "reason": "no accelerator machine is tagged AutoShutdown=true or labelled auto-shutdown=true",
    } in (policy["not_applicable"])


def test_plan_gate_rejects_a_mandatory_violation_with_exit_1(pulumi_project):
    run = cli("plan", "--stack", "dev", "--cwd", str(_program(pulumi_project, owner=False)))
    assert run.returncode == 1, run.stderr
    assert "1 violation(s) - GATE FAILED" in run.stdout
    assert f"[mandatory] required-cost-tags: {OWNER_MISSING}" in " ".join(run.stdout.split())  # wrapped


def test_plan_gate_lets_advisory_violations_through_and_policy_config_overrides(pulumi_project, tmp_path):
    config = tmp_path / "advisory.json"
    config.write_text(
        json.dumps({"required-cost-tags": "advisory", "accelerator-spend-budget": {"maxHourlyUsd": 0.1}})
    )
    project = _program(pulumi_project, owner=False)
    run = cli("plan", "--stack", "dev", "--json", "--cwd", str(project), "--policy-config", str(config))
    assert run.returncode == 1, run.stderr  # the override's budget is below the spot g5.xlarge
    violations = json.loads(run.stdout)["policy"]["violations"]
    assert [(v["policy"], v["enforcement"]) for v in violations] == [
        ("required-cost-tags", "advisory"),
        ("accelerator-spend-budget", "mandatory"),
    ]
    config.write_text(json.dumps({"required-cost-tags": "advisory"}))
    run = cli("plan", "--stack", "dev", "--json", "--cwd", str(project), "--policy-config", str(config))
    assert run.returncode == 0, run.stderr
    assert [v["message"] for v in json.loads(run.stdout)["policy"]["violations"]] == [OWNER_MISSING]


THIRD_PARTY_PACK = """
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy

def no_p5(args, report):
    if args.props.get("instanceType", "").startswith("p5."):
        report("p5 instances need a finance ticket")

PolicyPack(
    name="finance",
    policies=[ResourceValidationPolicy(name="no-p5", description="No p5 without a ticket.", validate=no_p5)],
    enforcement_level=EnforcementLevel.MANDATORY,
)
"""


def test_plan_gate_runs_any_python_pack_given_with_policy_pack(pulumi_project, tmp_path):
    pack = tmp_path / "finance-pack"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (pack / "__main__.py").write_text(THIRD_PARTY_PACK)
    program = "import pulumi_aws as aws\naws.ec2.Instance('big', instance_type='p5.48xlarge', ami='ami-1')\n"
    project = pulumi_project(program, STACKS)
    run = cli("plan", "--stack", "dev", "--json", "--cwd", str(project), "--policy-pack", str(pack))
    assert run.returncode == 1, run.stderr
    policy = json.loads(run.stdout)["policy"]
    assert policy["pack"] == "finance@v0.0.1"
    assert [(v["policy"], v["message"]) for v in policy["violations"]] == [
        ("no-p5", "p5 instances need a finance ticket")
    ]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"accelerator-spend-budget": {"maxHourlyUsd": "lots"}},
            "accelerator-spend-budget.maxHourlyUsd 'lots' must be of type number.",
        ),
        (
            {"required-cost-tag": "advisory"},
            "policy 'required-cost-tag' is not a policy of pack inference-infra (did you mean "
            "'required-cost-tags'?).",
        ),
    ],
)
def test_plan_gate_rejects_bad_policy_config_with_exit_2(pulumi_project, tmp_path, config, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(config))
    run = cli(
        "plan",
        "--stack",
        "dev",
        "--cwd",
        str(_program(pulumi_project, owner=True)),
        "--policy-config",
        str(path),
    )
    assert run.returncode == 2
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    assert "\n\n" not in run.stderr.strip()  # one paragraph (wrapped at 100 columns)
    expected = f"inference-infra: policy config {path}: {message}"
    assert "".join(run.stderr.split()) == "".join(expected.split())


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_plan_gate_passes_the_reference_stacks_at_their_configured_levels(plan_stack, stack):
    result = plan_stack(stack)
    assert result.policy.evaluated
    assert result.policy.config == str(REPO_ROOT / "policy" / "config" / f"{stack}.json")
    assert result.policy.violations == []
    assert result.policy.undetermined == []
    assert result.exit_code == 0
