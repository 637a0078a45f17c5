"""The pack as `pulumi preview --policy-pack policy` runs it: started by the Policy SDK's analyzer
host (`python -m pulumi.policy`) and called over gRPC on loopback, the way the engine calls it.

Proves the pack loads as it is (imports resolve from the project's virtualenv) and that
the served policies say what the offline plan says.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from inference_infra.policy.rules import POLICIES
from inference_infra.policy.rules import storage_encrypted as volume_rule

PACK_DIR = Path(__file__).resolve().parents[2] / "policy"


@pytest.fixture(scope="module")
def analyzer() -> Iterator[analyzer_pb2_grpc.AnalyzerStub]:
    # The analyzer host runs the pack folder with the folder as the working directory.
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:1", str(PACK_DIR)],
        cwd=PACK_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port = process.stdout.readline().strip()
        assert port.isdigit(), process.stderr.read()
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        grpc.channel_ready_future(channel).result(timeout=30)
        yield analyzer_pb2_grpc.AnalyzerStub(channel)
        channel.close()
    finally:
        process.kill()
        process.wait(timeout=10)
        process.stdout.close()
        process.stderr.close()


def _struct(value: dict) -> struct_pb2.Struct:
    return json_format.ParseDict(value, struct_pb2.Struct())


def _configure(analyzer, **properties: dict) -> None:
    config = {
        p.name: analyzer_pb2.PolicyConfig(
            enforcementLevel=analyzer_pb2.MANDATORY, properties=_struct(properties.get(p.name, {}))
        )
        for p in POLICIES
    }
    analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=config))


def test_served_pack_describes_every_policy_with_severity_and_schema(analyzer):
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty())
    assert (info.name, info.supportsConfig) == ("inference-infra", True)
    served = {p.name: p for p in info.policies}
    assert set(served) == {p.name for p in POLICIES}
    for policy in POLICIES:
        assert served[policy.name].description == policy.description
        assert served[policy.name].severity != analyzer_pb2.POLICY_SEVERITY_UNSPECIFIED
        level = policy.enforcement_level.value.upper()  # the default level each policy declares
        assert served[policy.name].enforcementLevel == analyzer_pb2.EnforcementLevel.Value(level)
    assert "maxHourlyUsd" in served["accelerator-spend-budget"].configSchema.properties


def test_served_pack_reports_what_the_check_reports(analyzer):
    _configure(analyzer)
    props = {"size": 100, "availabilityZone": "us-east-1a", "encrypted": False}
    request = analyzer_pb2.AnalyzeRequest(
        type="aws:ebs/volume:Volume",
        name="weights",
        urn="urn:pulumi:dev::p::aws:ebs/volume:Volume::weights",
        properties=_struct(props),
    )
    diagnostics = [d for d in analyzer.Analyze(request).diagnostics if d.policyName == volume_rule.NAME]
    (expected,) = volume_rule.check(
        _resource("aws:ebs/volume:Volume", "weights", props),
        {"requireCustomerManagedKeys": False, "s3Algorithms": ["AES256", "aws:kms", "aws:kms:dsse"]},
    ).violations
    assert [(d.message, d.enforcementLevel) for d in diagnostics] == [
        (f"{volume_rule.DESCRIPTION}\n{expected}", analyzer_pb2.MANDATORY)
    ]


def test_served_pack_treats_unknown_values_as_preview_gaps(analyzer):
    _configure(analyzer)
    request = analyzer_pb2.AnalyzeRequest(
        type="aws:ebs/volume:Volume",
        name="weights",
        urn="urn:pulumi:dev::p::aws:ebs/volume:Volume::weights",
        properties=_struct({"size": 100, "encrypted": UNKNOWN_STRING_VALUE}),
    )
    (diagnostic,) = [d for d in analyzer.Analyze(request).diagnostics if d.policyName == volume_rule.NAME]
    assert diagnostic.enforcementLevel == analyzer_pb2.ADVISORY
    assert diagnostic.message == (
        "can't run policy 'storage-encrypted' from policy pack 'inference-infra@v0.0.1' during preview: "
        "string value at .encrypted can't be known during preview"
    )


def test_served_pack_judges_a_group_with_its_launch_template(analyzer):
    _configure(analyzer)
    template = analyzer_pb2.AnalyzerResource(
        type="aws:ec2/launchTemplate:LaunchTemplate",
        name="lt",
        urn="urn:pulumi:dev::p::aws:ec2/launchTemplate:LaunchTemplate::lt",
        properties=_struct({"id": "lt-1", "instanceType": "g5.xlarge", "tags": TAGS}),
    )
    group = analyzer_pb2.AnalyzerResource(
        type="aws:autoscaling/group:Group",
        name="gpus",
        urn="urn:pulumi:dev::p::aws:autoscaling/group:Group::gpus",
        properties=_struct({"launchTemplate": {"id": "lt-1"}, "maxSize": 1, "minSize": 1, "tags": []}),
    )
    response = analyzer.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=[template, group]))
    messages = [d.message for d in response.diagnostics if d.policyName == "required-cost-tags"]
    assert any(
        "aws:autoscaling/group:Group 'gpus' launches g5.xlarge instances without the cost tags CostCenter, "
        "Environment, Owner, AutoShutdown" in m
        for m in messages
    ), messages


TAGS = {"CostCenter": "ml", "Environment": "dev", "Owner": "me"}


def test_served_pack_runs_the_stack_budget(analyzer):
    _configure(analyzer, **{"accelerator-spend-budget": {"maxHourlyUsd": 10, "topContributors": 1}})
    gpu = analyzer_pb2.AnalyzerResource(
        type="aws:ec2/instance:Instance",
        name="gpu",
        urn="urn:pulumi:dev::p::aws:ec2/instance:Instance::gpu",
        properties=_struct({"instanceType": "p5.48xlarge", "availabilityZone": "us-east-1a"}),
    )
    response = analyzer.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=[gpu]))
    (budget,) = [d for d in response.diagnostics if d.policyName == "accelerator-spend-budget"]
    assert budget.message.endswith(
        "estimated spend $55.04/hour ($40,179/month) exceeds maxHourlyUsd $10.00; largest: gpu "
        "$55.04/h (p5.48xlarge on-demand us-east-1)."
    )


def _resource(type_token: str, name: str, props: dict):
    from inference_infra.policy.rules._base import Resource

    return Resource(type_token, name, props)
