"""The capture runtime: what a program registers, as the engine would receive it."""

from __future__ import annotations

from pathlib import Path

import pulumi
import pulumi_aws as aws
import pytest

from inference_infra.components.offline_plan.model import SECRET_MASK, UNKNOWN_MASK, UNKNOWN_VALUE
from inference_infra.components.offline_plan.runtime import run_program

PROGRAM = """
import pulumi
import pulumi_aws as aws

config = pulumi.Config()

def stamp(args):
    if args.type_ == "aws:s3/bucketV2:BucketV2":
        return pulumi.ResourceTransformResult({**args.props, "tags": {"Stamped": "yes"}}, args.opts)

pulumi.runtime.register_resource_transform(stamp)

class Cache(pulumi.ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("demo:index:Cache", name, None, opts)
        self.bucket = aws.s3.BucketV2(f"{name}-bucket", opts=pulumi.ResourceOptions(parent=self))
        self.register_outputs({"bucket": self.bucket.bucket})

cache = Cache("weights")
role = aws.iam.Role("role", assume_role_policy=config.require_secret("policy"))
gpu = aws.ec2.Instance("gpu", instance_type=config.get("type") or "g5.xlarge", ami="ami-1",
                       user_data=cache.bucket.arn.apply(lambda arn: f"#!/bin/sh\\necho {arn}"))
pulumi.export("gpu_id", gpu.id)
"""


def run(tmp_path: Path, config: dict[str, str] | None = None, stack: str = "dev"):
    (tmp_path / "__main__.py").write_text(PROGRAM)
    return run_program(
        tmp_path,
        project="demo",
        stack=stack,
        config={"demo:policy": "{}", **(config or {})},
        secret_keys=["demo:policy"],
    )


def test_run_program_captures_custom_and_component_resources_with_engine_urns(tmp_path):
    capture = run(tmp_path)
    types = [r.type for r in capture.resources]
    assert types.count("pulumi:pulumi:Stack") == 1
    cache = capture.one("demo:index:Cache")
    bucket = capture.one("aws:s3/bucketV2:BucketV2")
    assert not cache.custom
    assert bucket.custom
    assert cache.urn == "urn:pulumi:dev::demo::demo:index:Cache::weights"
    assert bucket.urn == "urn:pulumi:dev::demo::demo:index:Cache$aws:s3/bucketV2:BucketV2::weights-bucket"
    assert bucket.parent == cache.urn
    assert capture.one("aws:ec2/instance:Instance").parent == capture.one("pulumi:pulumi:Stack").urn


def test_run_program_applies_stack_transforms_to_captured_inputs(tmp_path):
    capture = run(tmp_path)
    assert capture.one("aws:s3/bucketV2:BucketV2").props["tags"] == {"Stamped": "yes"}
    assert "tags" not in capture.one("aws:iam/role:Role").props


def test_run_program_keeps_secrets_and_masks_them_in_json(tmp_path):
    role = run(tmp_path).one("aws:iam/role:Role")
    assert role.props["assumeRolePolicy"] == "{}"
    assert role.as_json()["props"]["assumeRolePolicy"] == SECRET_MASK


def test_run_program_records_values_known_only_at_deploy_as_unknown(tmp_path):
    gpu = run(tmp_path).one("aws:ec2/instance:Instance")
    # The mock returns the bucket's ARN, so the apply runs and user data is known offline.
    assert gpu.props["userData"].startswith("#!/bin/sh\necho arn:aws:s3:::weights-bucket-")
    assert UNKNOWN_VALUE is not None
    assert repr(UNKNOWN_VALUE) == UNKNOWN_MASK


def test_run_program_captures_stack_and_component_outputs(tmp_path):
    capture = run(tmp_path)
    assert capture.stack_outputs["gpu_id"].startswith("i-")
    assert capture.one("demo:index:Cache").outputs["bucket"].startswith("weights-bucket-")


def test_run_program_reads_config_and_isolates_runs(tmp_path):
    first = run(tmp_path, {"demo:type": "p5.48xlarge"}, stack="prod")
    second = run(tmp_path)
    assert first.one("aws:ec2/instance:Instance").props["instanceType"] == "p5.48xlarge"
    assert second.one("aws:ec2/instance:Instance").props["instanceType"] == "g5.xlarge"
    assert first.one("aws:ec2/instance:Instance").urn.startswith("urn:pulumi:prod::")
    assert len(second.of_type("aws:ec2/instance:Instance")) == 1


def test_run_program_propagates_program_errors(tmp_path):
    (tmp_path / "__main__.py").write_text("import pulumi\nraise ValueError('bad fleet size 0')\n")
    with pytest.raises(ValueError, match="bad fleet size 0"):
        run_program(tmp_path, project="demo", stack="dev", config={})


def test_harness_captures_components_built_in_the_test(plan_of):
    class Pair(pulumi.ComponentResource):
        def __init__(self, name: str) -> None:
            super().__init__("demo:index:Pair", name, None, None)
            self.a = aws.s3.BucketV2(f"{name}-a", opts=pulumi.ResourceOptions(parent=self))
            self.b = aws.s3.BucketV2(f"{name}-b", opts=pulumi.ResourceOptions(parent=self))
            self.register_outputs({"a": self.a.id})

    pair = Pair("p")
    capture = plan_of(pair)
    component = capture.one("demo:index:Pair")
    assert sorted(r.name for r in capture.children(component)) == ["p-a", "p-b"]


def test_mocks_answer_data_sources_plausibly(plan_of):
    doc = aws.iam.get_policy_document(
        statements=[
            {
                "actions": ["ec2:StopInstances"],
                "resources": ["*"],
                "conditions": [
                    {"test": "StringEquals", "variable": "aws:ResourceTag/AutoShutdown", "values": ["true"]}
                ],
            }
        ]
    )
    ami = aws.ssm.get_parameter(
        name="/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
    )
    identity = aws.get_caller_identity()
    plan_of()
    assert '"Condition": {' in doc.json
    assert '"aws:ResourceTag/AutoShutdown": "true"' in doc.json
    assert ami.value.startswith("ami-0")
    assert identity.account_id == "123456789012"
