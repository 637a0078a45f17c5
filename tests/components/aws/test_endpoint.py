"""InferenceEndpoint: targets are the pools' instances and engine ports; rules, weights, health, security."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from inference_infra.components.aws.endpoint import InferenceEndpoint, InferenceEndpointArgs
from inference_infra.components.endpoints import POOL_HEADER, EndpointPool, PoolWeight, Route

TG = "aws:lb/targetGroup:TargetGroup"
ATTACHMENT = "aws:lb/targetGroupAttachment:TargetGroupAttachment"
RULE = "aws:lb/listenerRule:ListenerRule"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"

POOLS = [
    EndpointPool(
        name="llama-8b",
        model="llama-3.1-8b",
        ports=[8000],
        instance_ids=["i-0a", "i-0b"],
        security_group_id="sg-0gpu",
    ),
    EndpointPool(
        name="inf2-llama-8b",
        model="llama-3.1-8b",
        ports=[8000],
        instance_ids=["i-0c"],
        security_group_id="sg-0inf",
        slow_start_seconds=300,
        unhealthy_after_seconds=300,
    ),
    EndpointPool(
        name="llama-70b",
        model="llama-3.1-70b",
        ports=[8000, 8001],
        instance_ids=["i-0d"],
        security_group_id="sg-0big",
    ),
]
ROUTES = [
    Route(pools=[PoolWeight("llama-8b", 95), PoolWeight("inf2-llama-8b", 5)], sticky_seconds=300),
    Route(pools=[PoolWeight("llama-70b")], model="llama-3.1-70b", host="llama-70b.llm.internal"),
]
ARGS = InferenceEndpointArgs(
    vpc_id="vpc-0a",
    subnet_ids=["subnet-0a", "subnet-0b"],
    pools=POOLS,
    routes=ROUTES,
    client_cidr_blocks=["10.0.0.0/16"],
)


def test_inference_endpoint_is_an_internal_alb_with_access_logs(plan_of):
    capture = plan_of(InferenceEndpoint("llm", ARGS))
    lb = capture.one("aws:lb/loadBalancer:LoadBalancer").props
    assert lb["internal"] is True
    assert lb["loadBalancerType"] == "application"
    assert lb["idleTimeout"] == 900
    assert lb["accessLogs"]["enabled"] is True
    listener = capture.one("aws:lb/listener:Listener").props
    assert (listener["port"], listener["protocol"]) == (80, "HTTP")
    policy = json.loads(capture.one("aws:s3/bucketPolicy:BucketPolicy").props["policy"])
    principals = [s["Principal"] for s in policy["Statement"] if s["Effect"] == "Allow"]
    assert {"AWS": "arn:aws:iam::127311923021:root"} in principals


def test_inference_endpoint_targets_every_instance_on_every_engine_port(plan_of):
    capture = plan_of(InferenceEndpoint("llm", ARGS))
    targets = {(a.props["targetId"], a.props["port"]) for a in capture.of_type(ATTACHMENT)}
    assert targets == {("i-0a", 8000), ("i-0b", 8000), ("i-0c", 8000), ("i-0d", 8000), ("i-0d", 8001)}


def test_inference_endpoint_health_checks_the_engine_sized_for_model_load(plan_of):
    capture = plan_of(InferenceEndpoint("llm", ARGS))
    groups = {g.props["tags"]["Pool"]: g.props for g in capture.of_type(TG)}
    check = groups["inf2-llama-8b"]["healthCheck"]
    assert (check["path"], check["matcher"], check["port"]) == ("/health", "200", "traffic-port")
    assert check["unhealthyThreshold"] == 10  # 300 s of failures at 30 s
    assert groups["inf2-llama-8b"]["slowStart"] == 300
    assert groups["llama-8b"]["healthCheck"]["unhealthyThreshold"] == 3


def test_inference_endpoint_routes_weighted_by_host_and_by_header(plan_of):
    capture = plan_of(InferenceEndpoint("llm", ARGS))
    rules = {r.name: r.props for r in capture.of_type(RULE)}
    header = rules["llm-header-llama-70b"]["conditions"][0]["httpHeader"]
    assert (header["httpHeaderName"], header["values"]) == (POOL_HEADER, ["llama-70b"])
    canary = rules["llm-route0"]
    assert canary["conditions"][0]["hostHeader"]["values"] == ["llama-3-1-8b.*"]
    forward = canary["actions"][0]["forward"]
    assert [g["weight"] for g in forward["targetGroups"]] == [95, 5]
    assert forward["stickiness"] == {"enabled": True, "duration": 300}
    assert rules["llm-route1"]["conditions"][0]["hostHeader"]["values"] == ["llama-70b.llm.internal"]
    assert max(r["priority"] for n, r in rules.items() if "header" in n) < canary["priority"]


def test_inference_endpoint_pools_admit_engine_ports_from_the_lb_only(plan_of):
    capture = plan_of(InferenceEndpoint("llm", ARGS))
    lb_sg = capture.one("aws:ec2/securityGroup:SecurityGroup")
    rules = {
        r.props["securityGroupId"]: r.props for r in capture.of_type(INGRESS) if r.name.endswith("-from-lb")
    }
    assert set(rules) == {"sg-0gpu", "sg-0inf", "sg-0big"}
    assert (rules["sg-0big"]["fromPort"], rules["sg-0big"]["toPort"]) == (8000, 8001)
    assert lb_sg.id
    assert {r["referencedSecurityGroupId"] for r in rules.values()} == {lb_sg.id}
    assert all("cidrIpv4" not in r for r in rules.values())


def test_inference_endpoint_https_with_certificate(plan_of):
    args = replace(ARGS, certificate_arn="arn:aws:acm:us-east-1:123456789012:certificate/abc")
    listener = plan_of(InferenceEndpoint("llm", args)).one("aws:lb/listener:Listener").props
    assert (listener["port"], listener["protocol"]) == (443, "HTTPS")
    assert listener["sslPolicy"].startswith("ELBSecurityPolicy-TLS13")


def test_inference_endpoint_rejects_weights_not_summing_to_100(plan_of):
    routes = [Route(pools=[PoolWeight("llama-8b", 90), PoolWeight("inf2-llama-8b", 5)])]
    with pytest.raises(ValueError, match=r"routes\[0\]\.pools\[\]\.weight \[90, 5\] must sum to 100"):
        plan_of(InferenceEndpoint("llm", replace(ARGS, routes=routes)))


def test_inference_endpoint_rejects_a_negative_weight_by_its_bound(plan_of):
    """-5 and 105 sum to 100: the weight's own bound (arg(ge=0), check_types) refuses it."""
    routes = [Route(pools=[PoolWeight("llama-8b", 105), PoolWeight("inf2-llama-8b", -5)])]
    with pytest.raises(ValueError, match=r"routes\[0\]\.pools\[1\]\.weight -5 must be at least 0"):
        plan_of(InferenceEndpoint("llm", replace(ARGS, routes=routes)))


def test_inference_endpoint_rejects_unknown_pool(plan_of):
    routes = [Route(pools=[PoolWeight("llama-9b")])]
    with pytest.raises(
        ValueError, match=r"routes\[0\]\.pools\[0\]\.pool 'llama-9b' is not a pool of this endpoint"
    ):
        plan_of(InferenceEndpoint("llm", replace(ARGS, routes=routes)))


def test_inference_endpoint_rejects_pools_with_different_models(plan_of):
    routes = [Route(pools=[PoolWeight("llama-8b", 50), PoolWeight("llama-70b", 50)])]
    with pytest.raises(ValueError, match="serve different models"):
        plan_of(InferenceEndpoint("llm", replace(ARGS, routes=routes)))


def test_inference_endpoint_rejects_pool_not_serving_the_route_model(plan_of):
    routes = [Route(pools=[PoolWeight("llama-8b")], model="llama-3.1-70b")]
    with pytest.raises(ValueError, match=r"serves llama-3\.1-8b, not the route's model llama-3\.1-70b"):
        plan_of(InferenceEndpoint("llm", replace(ARGS, routes=routes)))


def test_inference_endpoint_rejects_internet_facing_without_public(plan_of):
    with pytest.raises(ValueError, match="internet_facing True needs public: true"):
        plan_of(InferenceEndpoint("llm", replace(ARGS, internet_facing=True)))


def test_inference_endpoint_rejects_public_client_range_when_internal(plan_of):
    with pytest.raises(ValueError, match=r"client_cidr_blocks\[0\] '0\.0\.0\.0/0' is not a private range"):
        plan_of(InferenceEndpoint("llm", replace(ARGS, client_cidr_blocks=["0.0.0.0/0"])))


def test_inference_endpoint_rejects_before_registering_anything(plan_of):
    with pytest.raises(ValueError, match="must list 2 or more subnets"):
        InferenceEndpoint("llm", replace(ARGS, subnet_ids=["subnet-0a"]))
    assert [r.type for r in plan_of().resources if r.type != "pulumi:pulumi:Stack"] == []
