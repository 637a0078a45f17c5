"""no-plaintext-secrets: tokens in user data, SSM String parameters, container env and Helm values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pulumi_aws as aws

from inference_infra.policy.rules import no_plaintext_secrets as rule
from inference_infra.policy.rules._base import UNKNOWN, Outcome

REPO_ROOT = Path(__file__).resolve().parents[2]
HF = "hf_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3x"
RANDOM = "q8Zr2LmX4vT9cW1nB6kP3sY7"
INSTANCE = "aws:ec2/instance:Instance"
PARAMETER = "aws:ssm/parameter:Parameter"
FIX = (
    "keep it in a secret store (Secrets Manager, SSM SecureString, Secret Manager, a Kubernetes Secret) and "
    "read it at run time."
)
HF_KIND = "a Hugging Face token (hf_...)"
NAMED = "a high-entropy value under a secret-like name"


def test_no_plaintext_secrets_passes_references_to_a_secret_store(check):
    script = (
        "#!/bin/bash\nHF_TOKEN=$(aws secretsmanager get-secret-value --secret-id hf --query SecretString)\n"
    )
    assert check(rule, INSTANCE, {"instanceType": "g5.xlarge", "userData": script}) == Outcome()
    secure = {"name": "/ml/hf-token", "type": "SecureString", "value": HF}
    assert check(rule, PARAMETER, secure) == Outcome()
    pointer = {
        "name": "/ml/hf-token-arn",
        "type": "String",
        "value": "arn:aws:secretsmanager:us-east-1:1:secret:hf",
    }
    assert check(rule, PARAMETER, pointer) == Outcome()
    assert check(rule, "aws:s3/bucket:Bucket", {}).not_applicable


def test_no_plaintext_secrets_rejects_tokens_in_user_data_and_ssm_strings(check):
    script = f"#!/bin/bash\nexport HF_TOKEN={HF}\n"
    outcome = check(rule, INSTANCE, {"instanceType": "g5.xlarge", "userData": script}, name="gpu")
    assert outcome.violations == (
        f"{INSTANCE} 'gpu' has {HF_KIND} in plain text at userData line 2 (HF_TOKEN); {FIX}",
    )
    parameter = {"name": "/ml/hf-token", "type": "String", "value": RANDOM}
    assert check(rule, PARAMETER, parameter, name="hf").violations == (
        f"{PARAMETER} 'hf' has {NAMED} in plain text at value (hf-token); {FIX}",
    )
    assert all(RANDOM not in m and HF not in m for m in outcome.violations)


def test_no_plaintext_secrets_rejects_container_env_and_helm_values(check):
    pod = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "vllm", "env": [{"name": "HF_TOKEN", "value": HF}]}]}
            }
        }
    }
    deployment = check(rule, "kubernetes:apps/v1:Deployment", pod, name="vllm")
    assert deployment.violations == (
        "kubernetes:apps/v1:Deployment 'vllm' has a Hugging Face token (hf_...) in plain text at "
        f"spec.template.spec.containers[0].env[0] (HF_TOKEN); {FIX}",
    )
    values = {"values": {"grafana": {"adminPassword": RANDOM}}}
    assert check(rule, "kubernetes:helm.sh/v3:Release", values, name="obs").violations == (
        f"kubernetes:helm.sh/v3:Release 'obs' has {NAMED} in plain text at values.grafana.adminPassword; "
        f"{FIX}",
    )
    definitions = json.dumps([{"name": "vllm", "environment": [{"name": "OPENAI_API_KEY", "value": RANDOM}]}])
    assert check(
        rule, "aws:ecs/taskDefinition:TaskDefinition", {"containerDefinitions": definitions}
    ).violations
    lambda_env = {"environment": {"variables": {"HF_TOKEN": HF}}}
    assert check(rule, "aws:lambda/function:Function", lambda_env).violations


def test_no_plaintext_secrets_does_not_judge_values_not_known_yet(check):
    assert check(rule, INSTANCE, {"instanceType": "g5.xlarge", "userData": UNKNOWN}) == Outcome(
        unknown=("userData",)
    )
    assert check(rule, PARAMETER, {"type": "String", "value": UNKNOWN}) == Outcome(unknown=("value",))


def test_no_plaintext_secrets_on_captured_resources(plan_of, run_pack):
    aws.ssm.Parameter("hf", name="/ml/hf-token", type="String", value=HF)
    aws.ssm.Parameter("model", name="/ml/model", type="String", value="meta-llama/Llama-3.1-8B-Instruct")
    report = run_pack(plan_of(), rule.NAME)
    assert [v.message for v in report.violations] == [
        f"{PARAMETER} 'hf' has {HF_KIND} in plain text at value (hf-token); {FIX}"
    ]


PROGRAM = f"""
import pulumi_aws as aws

aws.ssm.Parameter("hf", name="/ml/hf-token", type="String", value="{HF}")
aws.ec2.Instance(
    "gpu", instance_type="g5.xlarge", ami="ami-1",
    user_data="#!/bin/bash\\nexport HF_TOKEN={HF}\\nexport API_KEY={RANDOM}\\n",
)
"""


def test_no_plaintext_secrets_rejects_with_the_value_absent_from_plan_json(pulumi_project):
    project = pulumi_project(PROGRAM, {"dev": "config:\n  aws:region: us-east-1\n"})
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "inference_infra.components.cli",
            "plan",
            "--stack",
            "dev",
            "--json",
            "--cwd",
            str(project),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)},
    )
    assert run.returncode == 1, run.stderr
    assert HF not in run.stdout + run.stderr
    assert RANDOM not in run.stdout + run.stderr
    document = json.loads(run.stdout)
    found = [v["message"] for v in document["policy"]["violations"] if v["policy"] == rule.NAME]
    assert sorted(found) == [
        f"{INSTANCE} 'gpu' has {HF_KIND} in plain text at userData line 2 (HF_TOKEN); {FIX}",
        f"{INSTANCE} 'gpu' has {NAMED} in plain text at userData line 3 (API_KEY); {FIX}",
        f"{PARAMETER} 'hf' has {HF_KIND} in plain text at value (hf-token); {FIX}",
    ]
    props = {r["name"]: r["props"] for r in document["resources"]}
    assert (props["hf"]["value"], props["gpu"]["userData"]) == ("[secret]", "[secret]")
