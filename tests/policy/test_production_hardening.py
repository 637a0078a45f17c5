"""The reference components harden themselves in production, and the production policies agree.

Production is what the registered cost tags say (Environment prod or production): the ALB gets
deletion protection, its log bucket a retention rule and account-scoped delivery, a PrivateNetwork
flow logs, a GCP endpoint's backend services request logging. Each can be set either way.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from inference_infra.components.aws.endpoint import InferenceEndpoint, InferenceEndpointArgs
from inference_infra.components.aws.network import PrivateNetwork, PrivateNetworkArgs
from inference_infra.components.endpoints import EndpointPool, PoolWeight, Route
from inference_infra.components.gcp.endpoint import (
    GcpInferenceEndpoint,
    GcpInferenceEndpointArgs,
    GcpPoolBackend,
)
from inference_infra.components.tagging import CostTags, in_production, register_cost_tags
from inference_infra.policy.rules import load_balancer_hardened_in_production, vpc_flow_logs_in_production

ACCOUNT = "123456789012"  # the offline plan's account
AWS_ARGS = InferenceEndpointArgs(
    vpc_id="vpc-0a",
    subnet_ids=["subnet-0a", "subnet-0b"],
    pools=[
        EndpointPool(
            name="gpu", model="llama-3.1-8b", ports=[8000], instance_ids=["i-0a"], security_group_id="sg-0"
        )
    ],
    client_cidr_blocks=["10.0.0.0/16"],
)
GCP_ARGS = GcpInferenceEndpointArgs(
    network="net",
    subnetwork="subnet",
    pools=[
        EndpointPool(
            name="l4",
            model="qwen2.5-7b",
            ports=[8000],
            backend=GcpPoolBackend(zone="us-central1-a", instances=["vm-0"], service_account_email="l4@x"),
        )
    ],
    routes=[Route(pools=[PoolWeight("l4")])],
)


def _register(harness, environment: str) -> None:
    tags = CostTags(cost_center="ml", environment=environment, owner="ml@example.com", auto_shutdown=False)
    harness.in_loop(lambda: register_cost_tags(tags))


@pytest.fixture
def production(harness) -> None:
    _register(harness, "prod")


def test_production_hardening_follows_the_registered_environment(harness):
    assert not in_production()  # nothing registered
    _register(harness, "production")
    assert harness.in_loop(in_production)


def test_production_hardening_passes_the_policies_on_production_components(plan_of, production, run_pack):
    InferenceEndpoint("llm", AWS_ARGS)
    PrivateNetwork("net", PrivateNetworkArgs(availability_zones=["us-east-1a", "us-east-1b"]))
    GcpInferenceEndpoint("gcp-llm", GCP_ARGS)
    capture = plan_of()
    lb = capture.one("aws:lb/loadBalancer:LoadBalancer").props
    assert lb["enableDeletionProtection"] is True
    rules = capture.one("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration").props["rules"]
    assert rules[0]["expiration"] == {"days": 365}
    policy = json.loads(capture.one("aws:s3/bucketPolicy:BucketPolicy").props["policy"])
    service, account = policy["Statement"][:2]
    assert service["Condition"] == {"StringEquals": {"aws:SourceAccount": ACCOUNT}}
    assert account["Resource"].endswith(f"/llm/AWSLogs/{ACCOUNT}/*")
    flow = capture.one("aws:ec2/flowLog:FlowLog").props
    assert (flow["trafficType"], flow["logDestinationType"]) == ("ALL", "cloud-watch-logs")
    assert capture.one("aws:cloudwatch/logGroup:LogGroup").props["retentionInDays"] == 365
    trust = json.loads(capture.one("aws:iam/role:Role").props["assumeRolePolicy"])["Statement"][0]
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": ACCOUNT}}
    backend = capture.one("gcp:compute/regionBackendService:RegionBackendService").props
    assert backend["logConfig"] == {"enable": True, "sampleRate": 1.0}
    for rule in (load_balancer_hardened_in_production, vpc_flow_logs_in_production):
        report = run_pack(capture, rule.NAME, {"environment": "prod"})
        assert report.violations == []


def test_production_hardening_is_off_outside_production(plan_of, tagged):  # Environment=test
    InferenceEndpoint("llm", AWS_ARGS)
    PrivateNetwork("net", PrivateNetworkArgs(availability_zones=["us-east-1a", "us-east-1b"]))
    GcpInferenceEndpoint("gcp-llm", GCP_ARGS)
    capture = plan_of()
    assert capture.one("aws:lb/loadBalancer:LoadBalancer").props["enableDeletionProtection"] is False
    assert capture.of_type("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration") == []
    assert capture.of_type("aws:ec2/flowLog:FlowLog") == []
    assert "logConfig" not in capture.one("gcp:compute/regionBackendService:RegionBackendService").props


def test_production_hardening_rejects_a_production_stack_that_turns_it_off(plan_of, production, run_pack):
    args = replace(
        AWS_ARGS, deletion_protection=False, access_log_retention_days=None, scoped_log_delivery=False
    )
    InferenceEndpoint("llm", args)
    PrivateNetwork(
        "net", PrivateNetworkArgs(availability_zones=["us-east-1a", "us-east-1b"], flow_logs=False)
    )
    GcpInferenceEndpoint("gcp-llm", replace(GCP_ARGS, request_logging=False))
    capture = plan_of()
    hardened = run_pack(capture, load_balancer_hardened_in_production.NAME, {"environment": "prod"})
    assert sorted(v.message.split(" ")[0] for v in hardened.violations) == [
        "aws:lb/loadBalancer:LoadBalancer",
        "aws:s3/bucket:Bucket",  # the log-delivery service, for any account
        "aws:s3/bucket:Bucket",  # ELB's account, anywhere in the bucket
        "gcp:compute/regionBackendService:RegionBackendService",
    ]
    flows = run_pack(capture, vpc_flow_logs_in_production.NAME, {"environment": "prod"})
    assert [v.message.split(" ")[1] for v in flows.violations] == ["'net-vpc'"]


def test_production_hardening_rejects_bad_retention_and_sample_rate(plan_of):
    with pytest.raises(ValueError, match="access_log_retention_days 0 must be at least 1"):
        InferenceEndpoint("llm", replace(AWS_ARGS, access_log_retention_days=0))
    with pytest.raises(ValueError, match=r"access_log_retention_days 3651 must be 1\.\.3650"):
        InferenceEndpoint("llm", replace(AWS_ARGS, access_log_retention_days=3651))
    with pytest.raises(ValueError, match="request_timeout_seconds 0 must be at least 1"):
        InferenceEndpoint("llm", replace(AWS_ARGS, request_timeout_seconds=0))
    with pytest.raises(ValueError, match="flow_log_retention_days"):
        PrivateNetwork(
            "net", PrivateNetworkArgs(availability_zones=["us-east-1a"], flow_log_retention_days=42)
        )
    with pytest.raises(ValueError, match=r"request_log_sample_rate 1\.5 must be 0\.0\.\.1\.0"):
        GcpInferenceEndpoint("gcp-llm", replace(GCP_ARGS, request_log_sample_rate=1.5))
    with pytest.raises(ValueError, match=r"request_log_sample_rate -0\.1 must be at least 0\.0"):
        GcpInferenceEndpoint("gcp-llm", replace(GCP_ARGS, request_log_sample_rate=-0.1))
    with pytest.raises(ValueError, match="request_timeout_seconds 0 must be at least 1"):
        GcpInferenceEndpoint("gcp-llm", replace(GCP_ARGS, request_timeout_seconds=0))


@pytest.mark.parametrize("environment", ["production-eu", "prd", "PROD", " prod-us ", "prd-ap-1"])
def test_production_hardening_follows_every_production_name(plan_of, harness, run_pack, environment):
    # `production-eu` or `prd` used to fall through the exact-name test: no hardening, no policy.
    _register(harness, environment)
    InferenceEndpoint("llm", replace(AWS_ARGS, deletion_protection=False))
    capture = plan_of()
    hardened = run_pack(capture, load_balancer_hardened_in_production.NAME, {"environment": environment})
    assert any("deletion protection" in v.message for v in hardened.violations)


@pytest.mark.parametrize("environment", ["preprod", "non-prod", "dev", "staging-prod-like", "eu-prod"])
def test_production_hardening_passes_names_that_are_not_production(plan_of, harness, run_pack, environment):
    _register(harness, environment)
    InferenceEndpoint("llm", replace(AWS_ARGS, deletion_protection=False))
    capture = plan_of()
    assert capture.one("aws:lb/loadBalancer:LoadBalancer").props["enableDeletionProtection"] is False
    report = run_pack(capture, load_balancer_hardened_in_production.NAME, {"environment": environment})
    assert report.violations == []
