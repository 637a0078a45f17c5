"""fleet.endpoint_pool(): a fleet hands an InferenceEndpoint its targets, ports, group and slow start."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from inference_infra.components.aws import (
    GpuFleet,
    GpuFleetArgs,
    InferenceEndpoint,
    InferenceEndpointArgs,
    S3Weights,
)
from inference_infra.components.aws.endpoint import HEALTH_INTERVAL_SECONDS
from inference_infra.components.aws.network import SubnetRef
from inference_infra.components.endpoints import EndpointPool, PoolWeight, Route
from inference_infra.components.errors import InputError
from inference_infra.components.fleet import ServedModel

PIN = "ab" * 32  # a pinned manifest digest

INSTANCE = "aws:ec2/instance:Instance"
TG = "aws:lb/targetGroup:TargetGroup"
ATTACHMENT = "aws:lb/targetGroupAttachment:TargetGroupAttachment"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
LLAMA_70B = ServedModel(name="llama-3.1-70b", context_tokens=8192, concurrency=64)


def _fleet(fleet_args, name: str = "llama-70b", **overrides) -> GpuFleet:
    values = {
        "instance_type": "p5.48xlarge",
        "spot": 0,
        "on_demand": 2,
        "model": LLAMA_70B,
        "weights": S3Weights(bucket_name="acme-models", prefix="meta-llama/70b", manifest_sha256=PIN),
    }
    return GpuFleet(name, fleet_args(GpuFleetArgs, **(values | overrides)))


def _endpoint_args(*pools: EndpointPool, **overrides) -> InferenceEndpointArgs:
    values = {
        "vpc_id": "vpc-0test",
        "subnet_ids": ["subnet-0a", "subnet-0b"],
        "pools": list(pools),
        "routes": [Route(pools=[PoolWeight(pools[0].name)])],
        "client_cidr_blocks": ["10.0.0.0/16"],
    }
    return InferenceEndpointArgs(**(values | overrides))


def test_endpoint_pool_carries_the_fleets_model_ports_and_slow_start(plan_of, fleet_args):
    fleet = _fleet(fleet_args)
    pool = fleet.endpoint_pool()
    plan_of(fleet)
    assert (pool.name, pool.model, list(pool.ports)) == ("llama-70b", "llama-3.1-70b", [8000, 8001])
    assert len(pool.instance_ids) == 2  # one target per instance
    assert pool.security_group_id is fleet.security_group_id
    assert pool.slow_start_seconds == fleet.cold_start.slow_start_seconds()
    assert pool.unhealthy_after_seconds == pool.slow_start_seconds
    assert fleet.endpoint_pool("canary").name == "canary"


def test_endpoint_pool_targets_every_instance_on_every_engine_port(plan_of, fleet_args):
    fleet = _fleet(fleet_args)
    capture = plan_of(fleet, InferenceEndpoint("llm", _endpoint_args(fleet.endpoint_pool())))
    instances = [i.id for i in capture.of_type(INSTANCE)]
    assert len(instances) == 2
    targets = {(a.props["targetId"], a.props["port"]) for a in capture.of_type(ATTACHMENT)}
    assert targets == {(i, port) for i in instances for port in (8000, 8001)}


def test_endpoint_pool_sizes_the_target_groups_health_checks_from_the_cold_start(plan_of, fleet_args):
    fleet = _fleet(fleet_args)
    capture = plan_of(fleet, InferenceEndpoint("llm", _endpoint_args(fleet.endpoint_pool())))
    group = capture.one(TG).props
    slow = fleet.cold_start.slow_start_seconds()
    assert group["slowStart"] == slow
    assert group["port"] == 8000
    unhealthy = max(2, min(10, math.ceil(slow / HEALTH_INTERVAL_SECONDS)))
    assert group["healthCheck"]["unhealthyThreshold"] == unhealthy
    assert group["tags"]["Model"] == "llama-3.1-70b"


def test_endpoint_pool_opens_the_fleets_engine_ports_to_the_load_balancer(plan_of, fleet_args):
    fleet = _fleet(fleet_args)
    capture = plan_of(fleet, InferenceEndpoint("llm", _endpoint_args(fleet.endpoint_pool())))
    pool_sg = capture.one("aws:ec2/securityGroup:SecurityGroup", "llama-70b-sg")
    lb_sg = capture.one("aws:ec2/securityGroup:SecurityGroup", "llm-lb-sg")
    rule = capture.one(INGRESS, "llm-llama-70b-from-lb").props
    assert (rule["securityGroupId"], rule["referencedSecurityGroupId"]) == (pool_sg.id, lb_sg.id)
    assert (rule["fromPort"], rule["toPort"]) == (8000, 8001)


def test_endpoint_pool_rejects_a_fleet_that_serves_no_model(plan_of, fleet_args):
    fleet = _fleet(fleet_args, model=None)
    with pytest.raises(
        InputError, match=r"endpoint_pool\(\): model \(unset\) is needed for an endpoint pool"
    ):
        fleet.endpoint_pool()


def test_endpoint_pool_rejects_the_fleets_instance_ids_output_naming_endpoint_pool(plan_of, fleet_args):
    fleet = _fleet(fleet_args)
    with pytest.raises(
        InputError, match=r"instance_ids .* is one Output of the whole list.*fleet\.endpoint_pool\(\)"
    ):
        EndpointPool(
            name="llama-70b",
            model="llama-3.1-70b",
            ports=[8000],
            instance_ids=fleet.instance_ids,
            security_group_id=fleet.security_group_id,
        )


def test_inference_endpoint_old_idle_timeout_warns_and_sets_the_request_timeout(plan_of, fleet_args):
    fleet = _fleet(fleet_args)
    with pytest.warns(
        DeprecationWarning, match=r"idle_timeout_seconds=\.\.\.\) is deprecated.*request_timeout"
    ):
        args = _endpoint_args(fleet.endpoint_pool(), idle_timeout_seconds=600)
    assert args.request_timeout_seconds == 600
    capture = plan_of(fleet, InferenceEndpoint("llm", args))
    assert capture.one("aws:lb/loadBalancer:LoadBalancer").props["idleTimeout"] == 600
    assert capture.one(TG).props["deregistrationDelay"] == 600


def test_inference_endpoint_rejects_a_request_timeout_out_of_range(plan_of, fleet_args):
    fleet = _fleet(fleet_args)
    with pytest.raises(InputError, match=r"request_timeout_seconds 5000 must be 1\.\.4000"):
        InferenceEndpoint("llm", _endpoint_args(fleet.endpoint_pool(), request_timeout_seconds=5000))


def _log_principals(capture) -> list[object]:
    policy = json.loads(capture.one("aws:s3/bucketPolicy:BucketPolicy").props["policy"])
    return [s["Principal"] for s in policy["Statement"] if s["Effect"] == "Allow"]


@pytest.mark.stack_config({"aws:region": "us-west-2"})
def test_inference_endpoint_region_defaults_to_the_providers(plan_of, fleet_args):
    # the fleet's subnets are in the provider's region (a zone outside it is refused)
    fleet = _fleet(fleet_args, subnets=[SubnetRef(id="subnet-0a", availability_zone="us-west-2a")])
    capture = plan_of(fleet, InferenceEndpoint("llm", _endpoint_args(fleet.endpoint_pool())))
    assert {"AWS": "arn:aws:iam::797873946194:root"} in _log_principals(capture)  # us-west-2's ELB account


def test_inference_endpoint_region_as_given(plan_of, fleet_args):
    fleet = _fleet(fleet_args)
    args = replace(_endpoint_args(fleet.endpoint_pool()), region="eu-west-1")
    capture = plan_of(fleet, InferenceEndpoint("llm", args))
    assert {"AWS": "arn:aws:iam::156460612806:root"} in _log_principals(capture)
    assert {"Service": "logdelivery.elasticloadbalancing.amazonaws.com"} in _log_principals(capture)
