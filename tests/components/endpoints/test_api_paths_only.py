"""Only the API the engine's key guards reaches an engine: every rule of both endpoints, both reference plans.

The engines (vLLM) check their API key under /v1 only; /invocations runs the same handlers without it
(vllm-project/vllm issue #58144). So the load balancers forward /v1/... and /health and answer every
other path themselves (ALB: a path-pattern condition on every rule, a fixed-response 404 default; GCP:
path-restricted match rules, every default aborted with 404).
"""

from __future__ import annotations

import pytest

from inference_infra.components.aws.endpoint import InferenceEndpoint, InferenceEndpointArgs
from inference_infra.components.endpoints import (
    ALB_PATH_PATTERNS,
    POOL_HEADER,
    EndpointPool,
    PoolWeight,
    Route,
)
from inference_infra.components.endpoints.routing import alb_pattern_in_api, url_match_in_api
from inference_infra.components.gcp.endpoint import (
    GcpInferenceEndpoint,
    GcpInferenceEndpointArgs,
    GcpPoolBackend,
)
from tests.components.endpoints.lb_routing import (
    API_PATHS,
    HOSTILE_PATHS,
    Request,
    alb_forwards,
    engine_guards,
    url_map_forwards,
)

RULE = "aws:lb/listenerRule:ListenerRule"
LISTENER = "aws:lb/listener:Listener"
URL_MAP = "gcp:compute/regionUrlMap:RegionUrlMap"

AWS_ARGS = InferenceEndpointArgs(
    vpc_id="vpc-0a",
    subnet_ids=["subnet-0a", "subnet-0b"],
    pools=[
        EndpointPool(
            name="a", model="llama-3.1-8b", ports=[8000], instance_ids=["i-1"], security_group_id="sg-1"
        ),
        EndpointPool(
            name="b", model="llama-3.1-8b", ports=[8000], instance_ids=["i-2"], security_group_id="sg-2"
        ),
    ],
    routes=[Route(pools=[PoolWeight("a", 95), PoolWeight("b", 5)])],
    client_cidr_blocks=["10.0.0.0/16"],
)
GCP_ARGS = GcpInferenceEndpointArgs(
    network="net",
    subnetwork="subnet",
    pools=[
        EndpointPool(
            name="a",
            model="qwen2.5-7b",
            ports=[8000],
            backend=GcpPoolBackend(zone="us-central1-a", instances=["vm"]),
        ),
        EndpointPool(
            name="b",
            model="qwen2.5-7b",
            ports=[8000],
            backend=GcpPoolBackend(zone="us-central1-a", tpu_ips=["10.0.0.9"]),
        ),
    ],
    routes=[Route(pools=[PoolWeight("a", 80), PoolWeight("b", 20)])],
)
# Requests that name a pool every way a client can: its model's host, the pool header, both, neither.
WAYS = (
    {"host": "llama-3-1-8b.llm.internal"},
    {"host": "qwen2-5-7b"},
    {"headers": {POOL_HEADER: "a"}},
    {"headers": {POOL_HEADER.lower(): "b"}},
    {"host": "llama-3-1-8b.llm.internal", "headers": {POOL_HEADER: "b"}},
    {},
)


def _alb(capture):
    return capture.one(LISTENER).props, [r.props for r in capture.of_type(RULE)]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_inference_endpoint_rejects_every_path_the_key_does_not_guard(plan_of, path):
    listener, rules = _alb(plan_of(InferenceEndpoint("llm", AWS_ARGS)))
    for way in WAYS:
        forwarded = alb_forwards(listener, rules, Request(path=path, **way))
        assert forwarded == engine_guards(path), (path, way)


def test_inference_endpoint_forwards_the_api_and_health_by_host_and_header(plan_of):
    listener, rules = _alb(plan_of(InferenceEndpoint("llm", AWS_ARGS)))
    for path in API_PATHS:
        assert alb_forwards(listener, rules, Request(path=path, host="llama-3-1-8b.llm.internal"))
        assert alb_forwards(listener, rules, Request(path=path, headers={POOL_HEADER: "b"}))
        assert not alb_forwards(listener, rules, Request(path=path))  # no model, no pool: 404
    assert listener["defaultActions"][0]["fixedResponse"]["statusCode"] == "404"


def test_inference_endpoint_every_rule_holds_the_path_condition_within_alb_limits(plan_of):
    _, rules = _alb(plan_of(InferenceEndpoint("llm", AWS_ARGS)))
    assert len(rules) == 3
    for rule in rules:
        paths = [c["pathPattern"]["values"] for c in rule["conditions"] if "pathPattern" in c]
        assert paths == [list(ALB_PATH_PATTERNS)]
        # ELB quotas: at most 5 condition values and 5 wildcards per rule.
        values = [v for c in rule["conditions"] for key in c for v in c[key]["values"]]
        assert len(values) <= 5
        assert sum(v.count("*") + v.count("?") for v in values) <= 5


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_gcp_endpoint_rejects_every_path_the_key_does_not_guard(plan_of, path):
    url_map = plan_of(GcpInferenceEndpoint("llm", GCP_ARGS)).one(URL_MAP).props
    for way in WAYS:
        assert url_map_forwards(url_map, Request(path=path, **way)) == engine_guards(path), (path, way)


def test_gcp_endpoint_forwards_the_api_and_health_by_host_and_header(plan_of):
    url_map = plan_of(GcpInferenceEndpoint("llm", GCP_ARGS)).one(URL_MAP).props
    for path in API_PATHS:
        assert url_map_forwards(url_map, Request(path=path, host="qwen2-5-7b"))
        assert url_map_forwards(url_map, Request(path=path, headers={POOL_HEADER: "a"}))
        assert not url_map_forwards(url_map, Request(path=path))


@pytest.mark.parametrize(
    ("pattern", "inside"),
    [
        ("/v1/*", True),
        ("/health", True),
        ("/v1/chat/completions", True),
        ("/*", False),
        ("*", False),
        ("/v1*", False),  # matches /v1x and /v10/...
        ("/?1/*", False),
        ("/V1/*", False),
        ("/healthz", False),
        ("/invocations", False),
        (None, False),
        (["/v1/*"], False),
    ],
)
def test_alb_pattern_in_api_judges_hostile_patterns(pattern, inside):
    assert alb_pattern_in_api(pattern) is inside


@pytest.mark.parametrize(
    ("match", "inside"),
    [
        ({"prefixMatch": "/v1/"}, True),
        ({"fullPathMatch": "/health"}, True),
        ({"prefixMatch": "/v1/", "headerMatches": [{"headerName": POOL_HEADER, "exactMatch": "a"}]}, True),
        ({"prefixMatch": "/"}, False),
        ({"prefixMatch": "/v1"}, False),
        ({"prefixMatch": "/v1/", "ignoreCase": True}, False),
        ({"regexMatch": "/v1/.*"}, False),
        ({"fullPathMatch": "/invocations"}, False),
        ({"headerMatches": [{"headerName": POOL_HEADER, "exactMatch": "a"}]}, False),
        ({}, False),
        ("/v1/", False),
    ],
)
def test_url_match_in_api_judges_hostile_matches(match, inside):
    assert url_match_in_api(match) is inside


@pytest.mark.parametrize("stack", ["prod", "dev"])
def test_reference_plans_forward_only_the_guarded_api(plan_stack, stack):
    capture = plan_stack(stack).capture
    listeners = capture.of_type(LISTENER)
    maps = capture.of_type(URL_MAP)
    assert listeners or maps
    for listener in listeners:
        rules = [r.props for r in capture.of_type(RULE) if r.parent == listener.parent]
        assert rules
        assert all(any("pathPattern" in c for c in r["conditions"]) for r in rules), listener.name
        hosts = {
            v for r in rules for c in r["conditions"] if "hostHeader" in c for v in c["hostHeader"]["values"]
        }
        pools = {
            v for r in rules for c in r["conditions"] if "httpHeader" in c for v in c["httpHeader"]["values"]
        }
        ways = [{"host": h.replace("*", "x")} for h in hosts] + [{"headers": {POOL_HEADER: p}} for p in pools]
        for way in ways:
            for path in HOSTILE_PATHS:
                assert alb_forwards(listener.props, rules, Request(path=path, **way)) == engine_guards(path)
            assert alb_forwards(listener.props, rules, Request(path="/v1/chat/completions", **way))
    for url_map in maps:
        props = url_map.props
        hosts = {h for r in props["hostRules"] for h in r["hosts"]}
        pools = {
            h["exactMatch"]
            for m in props["pathMatchers"]
            for r in m.get("routeRules", [])
            for mr in r["matchRules"]
            for h in mr.get("headerMatches", [])
        }
        ways = [{"host": h.replace("*", "x")} for h in hosts] + [{"headers": {POOL_HEADER: p}} for p in pools]
        for way in ways:
            for path in HOSTILE_PATHS:
                assert url_map_forwards(props, Request(path=path, **way)) == engine_guards(path), (path, way)
