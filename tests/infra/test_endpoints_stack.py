"""The stack's endpoints: prod wiring (canary, host, header, GCP pools) and config errors named by key."""

from __future__ import annotations

import json

import pytest

from inference_infra.infra import endpoints_stack
from inference_infra.infra.stack_file import ConfigError, parse_stack_settings
from tests.components.gcp.helpers import expanded

RULE = "aws:lb/listenerRule:ListenerRule"
ATTACHMENT = "aws:lb/targetGroupAttachment:TargetGroupAttachment"
FLEET = {
    "name": "serving",
    "instanceType": "g6e.xlarge",
    "model": {"name": "llama-3.1-8b", "contextTokens": 4096, "concurrency": 4},
    "onDemand": 1,
    "modelPrefix": "meta-llama/Llama-3.1-8B-Instruct",
    "manifestSha256": "abababababababababababababababababababababababababababababababab",
}
BASE = {
    "costCenter": "ml-platform",
    "owner": "ml-team@example.com",
    "awsNetwork": json.dumps(
        {
            "vpcId": "vpc-0abc",
            "subnets": [
                {"id": "subnet-0a", "availabilityZone": "us-east-1a"},
                {"id": "subnet-0b", "availabilityZone": "us-east-1b"},
            ],
        }
    ),
    "modelStore": json.dumps({"bucketName": "models"}),
}


def _problems(fleets: list[dict], endpoints: list[dict]) -> list[str]:
    raw = {**BASE, "awsGpuFleets": json.dumps(fleets), "endpoints": json.dumps(endpoints)}
    settings = parse_stack_settings(raw, stack="dev")
    return [str(p) for p in endpoints_stack.validate(settings)]


def _endpoint(**overrides: object) -> dict:
    return {"name": "llm", "cloud": "aws", "routes": [{"pools": [{"pool": "serving"}]}], **overrides}


def test_prod_endpoint_routes_8b_and_70b_by_host_and_mistral_by_header(plan_stack):
    capture = plan_stack("prod").capture
    rules = {r.name: r.props for r in capture.of_type(RULE)}
    route = rules["llm-route0"]
    assert route["conditions"][0]["hostHeader"]["values"] == ["llama-3-1-8b.*"]
    # The Inferentia2 canary is off the endpoint while its engine (vLLM 0.9.1) sits inside
    # GHSA-94f4-hr76-p5j6 (components/advisories.py): the 8B route is the GPU pool's alone.
    assert [g["weight"] for g in route["actions"][0]["forward"]["targetGroups"]] == [100]
    assert not any("inf2" in n for n in rules)
    assert rules["llm-route1"]["conditions"][0]["hostHeader"]["values"] == ["llama-70b.llm.internal"]
    assert "llm-header-mistral-7b" in rules
    assert not any("mistral" in json.dumps(r["actions"]) and "route" in n for n, r in rules.items())
    # TP=4 on 8 H100s: two engines per node; the elastic pool (#25) has a target group per engine port,
    # both attached to its group.
    groups = [
        t for t in capture.of_type("aws:lb/targetGroup:TargetGroup") if t.name.startswith("llm-llama-70b-")
    ]
    assert sorted(t.props["port"] for t in groups) == [8000, 8001]
    sources = capture.of_type("aws:autoscaling/trafficSourceAttachment:TrafficSourceAttachment")
    assert sum(a.name.startswith("llm-llama-70b-") for a in sources) == 2
    route = rules["llm-route1"]["actions"][0]["forward"]["targetGroups"]
    assert [g["weight"] for g in route] == [100, 100]  # the pool's weight, shared equally


def test_prod_plan_notes_cold_start_per_serving_fleet(plan_stack):
    notes = [n for n in plan_stack("prod").notes() if n.startswith("cold start of ")]
    assert len(notes) == 8  # 4 AWS pools, 2 GCP GPU fleets, 1 TPU VM, 1 Kubernetes pool
    assert all("GiB" in n and "health-check grace" in n for n in notes)


def test_endpoints_validate_passes_a_serving_pool():
    assert _problems([FLEET], [_endpoint()]) == []


def test_endpoints_validate_rejects_unknown_pool():
    [problem] = _problems([FLEET], [_endpoint(routes=[{"pools": [{"pool": "nope"}]}])])
    assert problem.startswith("inference-infra:endpoints[0].pools 'nope' is not a AWS fleet of this stack")


def test_endpoints_validate_rejects_pool_without_a_model():
    bare = {k: v for k, v in FLEET.items() if k != "model"}
    [problem] = _problems([bare], [_endpoint()])
    assert "serves no model" in problem


def test_endpoints_validate_rejects_weights_not_summing_to_100():
    other = {**FLEET, "name": "other"}
    routes = [{"pools": [{"pool": "serving", "weight": 60}, {"pool": "other", "weight": 60}]}]
    [problem] = _problems([FLEET, other], [_endpoint(routes=routes)])
    assert problem.startswith(
        "inference-infra:endpoints[0].routes[0].pools[].weight [60, 60] must sum to 100"
    )


def test_endpoints_validate_rejects_route_model_mismatch():
    routes = [{"model": "llama-3.1-70b", "pools": [{"pool": "serving"}]}]
    [problem] = _problems([FLEET], [_endpoint(routes=routes)])
    assert "serves llama-3.1-8b, not the route's model llama-3.1-70b" in problem


def test_endpoints_validate_rejects_internet_facing_without_public():
    [problem] = _problems([FLEET], [_endpoint(internetFacing=True)])
    assert problem.startswith("inference-infra:endpoints[0].internetFacing True needs public: true")


def test_endpoints_validate_rejects_bad_engine_args_through_the_fleet():
    from inference_infra.infra import aws_stack

    fleet = {**FLEET, "model": {**FLEET["model"], "engineArgs": ["--port", "9000"]}}
    raw = {**BASE, "awsGpuFleets": json.dumps([fleet])}
    problems = [str(p) for p in aws_stack.validate(parse_stack_settings(raw, stack="dev"))]
    assert problems == [
        "inference-infra:awsGpuFleets[0].model.engineArgs[0] '--port' is set from the capacity plan; "
        "change the fleet's model instead"
    ]


def test_prod_tpu_vm_and_gpu_vms_start_their_engines(plan_stack):
    capture = plan_stack("prod").capture
    tpu = capture.one("gcp:tpu/v2Vm:V2Vm", "qwen7b-tpu-tpu").props
    script = expanded(tpu["metadata"]["startup-script"])
    assert "systemctl start --no-block inference-engine@0.service inference-engine@1.service" in script
    assert "vllm/vllm-tpu@sha256:" in script
    a3 = capture.one("gcp:compute/instance:Instance", "llama70b-h100-0").props
    assert "--tensor-parallel-size 4" in expanded(a3["metadata"]["startup-script"])
    # Its API ports answer the load balancer only (the gcp-llm endpoint's rule), no rule of its own.
    firewalls = [r.name for r in capture.of_type("gcp:compute/firewall:Firewall")]
    assert "llama70b-h100-serving" not in firewalls


def test_prod_aws_pools_open_engine_ports_to_the_load_balancer_and_prometheus_only(plan_stack):
    capture = plan_stack("prod").capture
    ingress = capture.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    engine_rules = [r for r in ingress if r.props.get("fromPort") == 8000]
    metrics = [r for r in ingress if r.props["description"].startswith("engine /metrics only")]
    # Prometheus reaches every engine's metrics-only port (the 70B pool's two engines: 9000-9001), never
    # the API ports.
    assert {r.name: (r.props["fromPort"], r.props["toPort"]) for r in metrics}[
        "llama-70b-metrics9000-sg0"
    ] == (
        9000,
        9001,
    )
    monitoring = {r.props["referencedSecurityGroupId"] for r in metrics}
    rules = engine_rules
    assert sorted(r.name for r in rules) == [
        "llm-llama-70b-from-lb",
        "llm-llama-8b-from-lb",
        "llm-mistral-7b-from-lb",
    ]
    assert len({r.props["referencedSecurityGroupId"] for r in rules}) == 1  # the ALB's group
    assert monitoring.isdisjoint(r.props["referencedSecurityGroupId"] for r in rules)
    assert all("cidrIpv4" not in r.props for r in rules)


def test_endpoints_validate_passes_a_pool_whose_machine_the_planner_chooses():
    planned = {k: v for k, v in FLEET.items() if k != "instanceType"}
    assert _problems([planned], [_endpoint()]) == []


def test_endpoints_validate_leaves_a_fleet_that_cannot_plan_to_the_fleet():
    """The fleet's own problem says why it cannot serve; the endpoint adds no false 'serves no model'."""
    from inference_infra.infra import aws_stack

    huge = {**FLEET, "model": {"name": "llama-3.1-70b", "contextTokens": 8192, "concurrency": 64}}
    assert _problems([huge], [_endpoint()]) == []
    raw = {**BASE, "awsGpuFleets": json.dumps([huge]), "endpoints": json.dumps([_endpoint()])}
    fleet_problems = [str(p) for p in aws_stack.validate(parse_stack_settings(raw, stack="dev"))]
    assert len(fleet_problems) == 1
    assert fleet_problems[0].startswith("inference-infra:awsGpuFleets[0]")


def test_endpoints_validate_rejects_a_pool_whose_fleet_has_no_model():
    bare = {k: v for k, v in FLEET.items() if k not in ("model", "modelPrefix")}
    [problem] = _problems([bare], [_endpoint()])
    assert "serves no model" in problem


def test_prod_endpoint_targets_each_aws_instance_once_per_engine_port(plan_stack):
    capture = plan_stack("prod").capture
    pool = capture.descendants(capture.one("inference-infra:aws:GpuFleet", "llama-70b"))
    instances = {r.id for r in pool if r.type == "aws:ec2/instance:Instance"}
    targets = {
        (a.props["targetId"], a.props["port"])
        for a in capture.of_type(ATTACHMENT)
        if a.name.startswith("llm-llama-70b-")
    }
    assert targets == {(i, port) for i in instances for port in (8000, 8001)}


def test_endpoints_config_rejects_a_request_timeout_out_of_bounds_by_its_key():
    with pytest.raises(
        ConfigError, match=r"inference-infra:endpoints\[0\].requestTimeoutSeconds = 5000: must be 1 to 4000"
    ):
        _problems([FLEET], [_endpoint(requestTimeoutSeconds=5000)])
