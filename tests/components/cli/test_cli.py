"""The `inference-infra` command as users and CI run it: exit codes, stdout, stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "inference_infra.components.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)},
    )


def assert_one_paragraph(stderr: str) -> None:
    assert stderr.startswith("inference-infra: ")
    assert "Traceback" not in stderr
    assert "\n\n" not in stderr.strip()


def test_plan_json_on_an_outside_program(pulumi_project):
    project = pulumi_project(
        "import pulumi_aws as aws\naws.ec2.Instance('g', instance_type='g5.xlarge', ami='ami-1')\n",
        {"dev": "config:\n  aws:region: us-east-1\n"},
    )
    run = cli("plan", "--stack", "dev", "--json", "--cwd", str(project))
    assert run.returncode == 1, run.stderr  # an untagged GPU on IMDSv1 fails the policy gate
    doc = json.loads(run.stdout)
    assert doc["project"] == "outside"
    assert [r["name"] for r in doc["resources"] if r["custom"]] == ["g"]
    assert doc["cost"]["hourly_usd"] > 0
    failed = {v["policy"] for v in doc["policy"]["violations"] if v["enforcement"] == "mandatory"}
    assert {"required-cost-tags", "accelerator-imdsv2-required"} <= failed


def test_plan_table_on_the_reference_stack(capsys):
    """In-process, on the session's plan of prod (tests/conftest.py): CI plans prod with the real
    command before the tests, and the subprocess path is tested on an outside program above."""
    from inference_infra.components.cli import main

    assert main(["plan", "--stack", "prod", "--cwd", str(REPO_ROOT)]) == 0
    assert "Plan for stack 'prod' of project 'inference-infra'" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("plan", "--stack", "staging"), "unknown stack 'staging'"),
        (("plan", "--stak", "prod"), "No such option '--stak'"),
        (("plan", "--cwd", "/nonexistent-dir"), "no Pulumi.yaml in /nonexistent-dir"),
        (("plan", "--policy-pack", "/nonexistent-dir"), "--policy-pack '/nonexistent-dir' is not a folder"),
        (("frobnicate",), "No such command 'frobnicate'"),
    ],
)
def test_cli_rejects_bad_input_with_exit_2_and_one_paragraph(args, fragment):
    run = cli(*args)
    assert run.returncode == 2
    assert run.stdout == ""
    assert_one_paragraph(run.stderr)
    assert fragment in " ".join(run.stderr.split())


def test_plan_rejects_a_config_typo_naming_key_value_and_allowed(pulumi_project, tmp_path):
    stack = REPO_ROOT / "Pulumi.dev.yaml"
    project = tmp_path / "copy"
    project.mkdir()
    (project / "Pulumi.yaml").write_text((REPO_ROOT / "Pulumi.yaml").read_text())
    (project / "infra").symlink_to(REPO_ROOT / "infra")
    (project / "Pulumi.dev.yaml").write_text(stack.read_text() + "  inference-infra:costCentre: ml\n")
    run = cli("plan", "--stack", "dev", "--cwd", str(project))
    assert run.returncode == 2
    assert_one_paragraph(run.stderr)
    message = " ".join(run.stderr.split())
    assert "inference-infra:costCentre is not a setting here (did you mean 'costCenter'?)" in message


def test_plan_reports_a_failing_program_without_traceback(pulumi_project):
    project = pulumi_project("raise RuntimeError('boom at startup')\n")
    run = cli("plan", "--cwd", str(project))
    assert run.returncode == 2
    assert_one_paragraph(run.stderr)
    assert "the stack program failed at" in run.stderr
    assert "RuntimeError: boom at startup" in " ".join(run.stderr.split())


def test_plan_rejects_invalid_yaml(pulumi_project):
    project = pulumi_project("", {"dev": "config:\n  a: [1,\n"})
    run = cli("plan", "--cwd", str(project))
    assert run.returncode == 2
    assert "Pulumi.dev.yaml is not valid YAML at line" in " ".join(run.stderr.split())


def test_catalog_lists_instance_types_as_json():
    run = cli("catalog", "--cloud", "aws", "--json")
    assert run.returncode == 0
    rows = json.loads(run.stdout)
    assert {r["cloud"] for r in rows} == {"aws"}
    assert any(r["name"] == "p5.48xlarge" and r["accelerator_count"] == 8 for r in rows)


def test_plan_imports_only_the_provider_sdks_the_stack_uses():
    # The dev stack is AWS-only: planning it must not pay for importing the GCP or Kubernetes SDKs.
    code = (
        "import sys; from pathlib import Path; from inference_infra.components.offline_plan import plan; "
        "plan(Path('.'), 'dev'); "
        "print(sorted(m for m in ('pulumi_aws', 'pulumi_gcp', 'pulumi_kubernetes') if m in sys.modules))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)},
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "['pulumi_aws']"
