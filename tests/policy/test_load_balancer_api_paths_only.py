"""load-balancer-api-paths-only: a route to a serving engine is restricted to /v1/... and /health."""

from __future__ import annotations

import pulumi_aws as aws
import pulumi_gcp as gcp

from inference_infra.components.aws.endpoint import InferenceEndpoint
from inference_infra.components.gcp.endpoint import GcpInferenceEndpoint
from inference_infra.policy.rules import load_balancer_api_paths_only as rule
from inference_infra.policy.rules._base import UNKNOWN
from tests.components.endpoints.test_api_paths_only import AWS_ARGS, GCP_ARGS

FIX = "add a path condition of /v1/* and /health only"


def _engine_group(name: str = "engines", **extra) -> aws.lb.TargetGroup:
    return aws.lb.TargetGroup(
        name,
        vpc_id="vpc-0a",
        port=8000,
        protocol="HTTP",
        health_check={"path": "/health"},
        tags={"Model": "llama-3.1-8b"},
        **extra,
    )


def _listener(default_group: aws.lb.TargetGroup | None = None) -> aws.lb.Listener:
    action = (
        {"type": "forward", "target_group_arn": default_group.arn}
        if default_group is not None
        else {
            "type": "fixed-response",
            "fixed_response": {"content_type": "text/plain", "status_code": "404"},
        }
    )
    return aws.lb.Listener("listener", load_balancer_arn="arn:lb", port=80, default_actions=[action])


def _rule(name: str, listener, group, conditions) -> None:
    aws.lb.ListenerRule(
        name,
        listener_arn=listener.arn,
        priority=10,
        conditions=conditions,
        actions=[{"type": "forward", "target_group_arn": group.arn}],
    )


def test_load_balancer_api_paths_only_passes_the_library_endpoints(plan_of, run_pack):
    InferenceEndpoint("llm", AWS_ARGS)
    GcpInferenceEndpoint("gllm", GCP_ARGS)
    report = run_pack(plan_of(), rule.NAME)
    assert report.violations == []


def test_load_balancer_api_paths_only_passes_a_rule_with_the_api_paths(plan_of, run_pack):
    group = _engine_group()
    listener = _listener()
    _rule(
        "api",
        listener,
        group,
        [{"host_header": {"values": ["llama.*"]}}, {"path_pattern": {"values": ["/v1/*", "/health"]}}],
    )
    assert run_pack(plan_of(), rule.NAME).violations == []


def test_load_balancer_api_paths_only_rejects_a_host_rule_without_a_path(plan_of, run_pack):
    group = _engine_group()
    listener = _listener()
    _rule("by-host", listener, group, [{"host_header": {"values": ["llama.*"]}}])
    _rule(
        "by-header", listener, group, [{"http_header": {"http_header_name": "X-Model-Pool", "values": ["a"]}}]
    )
    messages = [v.message for v in run_pack(plan_of(), rule.NAME).violations]
    assert len(messages) == 2
    assert all("(no path-pattern condition)" in m and FIX in m for m in messages)


def test_load_balancer_api_paths_only_rejects_patterns_wider_than_the_api(plan_of, run_pack):
    group = _engine_group()
    listener = _listener()
    for i, patterns in enumerate((["/*"], ["/v1*"], ["/v1/*", "/invocations"], ["/V1/*"], ["*"])):
        _rule(f"wide{i}", listener, group, [{"path_pattern": {"values": patterns}}])
    assert len(run_pack(plan_of(), rule.NAME).violations) == 5


def test_load_balancer_api_paths_only_rejects_a_listener_forwarding_by_default(plan_of, run_pack):
    _listener(_engine_group())
    (violation,) = run_pack(plan_of(), rule.NAME).violations
    assert "default action forwards every path to a serving engine" in violation.message


def test_load_balancer_api_paths_only_leaves_other_target_groups_alone(plan_of, run_pack):
    # A web app's target group (no Model tag, no /health check) is not a serving engine.
    web = aws.lb.TargetGroup("web", vpc_id="vpc-0a", port=80, protocol="HTTP", health_check={"path": "/"})
    _rule("web", _listener(), web, [{"host_header": {"values": ["www.*"]}}])
    report = run_pack(plan_of(), rule.NAME)
    assert report.violations == []


def test_load_balancer_api_paths_only_allowed_names_exempt_a_rule(plan_of, run_pack):
    group = _engine_group()
    _rule("proxied", _listener(), group, [{"host_header": {"values": ["llama.*"]}}])
    assert run_pack(plan_of(), rule.NAME, {"allowedNames": ["proxied"]}).violations == []


def _gcp_backend(name: str = "engines") -> gcp.compute.RegionBackendService:
    check = gcp.compute.RegionHealthCheck(
        f"{name}-hc", region="us-central1", http_health_check={"request_path": "/health", "port": 8000}
    )
    return gcp.compute.RegionBackendService(
        name, region="us-central1", load_balancing_scheme="INTERNAL_MANAGED", health_checks=check.id
    )


def test_load_balancer_api_paths_only_rejects_a_url_map_matching_every_path(plan_of, run_pack):
    service = _gcp_backend()
    gcp.compute.RegionUrlMap(
        "urls",
        region="us-central1",
        default_service=service.id,
        host_rules=[{"hosts": ["*"], "path_matcher": "all"}],
        path_matchers=[
            {
                "name": "all",
                "default_service": service.id,
                "route_rules": [
                    {"priority": 1, "match_rules": [{"prefix_match": "/"}], "service": service.id}
                ],
                "path_rules": [{"paths": ["/invocations"], "service": service.id}],
            }
        ],
    )
    messages = [v.message for v in run_pack(plan_of(), rule.NAME).violations]
    assert len(messages) == 4  # the map's default, the matcher's default, its route rule, its path rule
    assert any("routeRules[0] matches" in m for m in messages)
    assert any("pathRules[0] routes ['/invocations']" in m for m in messages)


def test_load_balancer_api_paths_only_rejects_hostile_url_matches(plan_of, run_pack):
    service = _gcp_backend()
    abort = {"fault_injection_policy": {"abort": {"http_status": 404, "percentage": 100}}}
    hostile = [
        {"regex_match": "/v1/.*"},
        {"prefix_match": "/v1/", "ignore_case": True},
        {"prefix_match": "/v1"},
    ]
    gcp.compute.RegionUrlMap(
        "urls",
        region="us-central1",
        default_service=service.id,
        default_route_action=abort,
        host_rules=[{"hosts": ["*"], "path_matcher": "m"}],
        path_matchers=[
            {
                "name": "m",
                "default_service": service.id,
                "default_route_action": abort,
                "route_rules": [
                    {"priority": i + 1, "match_rules": [match], "service": service.id}
                    for i, match in enumerate(hostile)
                ],
            }
        ],
    )
    assert len(run_pack(plan_of(), rule.NAME).violations) == 3


def test_load_balancer_api_paths_only_does_not_judge_conditions_not_known_yet(check):
    group_rule = {"actions": [{"type": "forward", "targetGroupArn": "arn:tg"}], "conditions": UNKNOWN}
    # Alone, the rule's target group is not known to be an engine: not applicable rather than a guess.
    assert check(rule, "aws:lb/listenerRule:ListenerRule", group_rule).not_applicable
