"""load-balancer-api-paths-only: a load balancer sends an engine only the API its key guards.

vLLM's API key guards the OpenAI API under `/v1` and nothing else the engine serves on the same port:
`POST /invocations` runs the chat and completion handlers without the key, and `/tokenize`,
`/detokenize`, `/pooling`, `/score`, `/metrics` are open too (vllm-project/vllm issue #58144; vLLM's
security guide). So a route that reaches a serving port must hold a path restriction to `/v1/...` and
the health path; anything else must end at the load balancer (a fixed 404).

A serving backend is what the library's components make: an AWS target group tagged `Model` or
health-checked on the engine's `/health`; a GCP backend service whose health check requests `/health`
or whose named port is `engine`. This stack policy flags:

- an ALB listener rule that forwards to a serving target group without a `path-pattern` condition, or
  with a pattern outside `/v1/...` and `/health` (a rule ANDs its conditions: a Host or header alone
  forwards every path);
- an ALB listener whose default action forwards to a serving target group (a default has no path);
- a GCP URL map that reaches a serving backend service from a default that is not aborted with a
  fault-injection 404 (the map's own or a path matcher's), from a route rule matching anything but
  `/v1/...` and `/health` (a regular expression, `ignoreCase`, `/`), or from a path rule outside them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity

from inference_infra.components.endpoints.routing import (
    alb_pattern_in_api,
    url_match_in_api,
    url_path_in_api,
)
from inference_infra.components.resources import StackIndex, get_path
from inference_infra.components.serving.engines import HEALTH_PATH
from inference_infra.policy.rules._base import (
    UNKNOWN,
    Findings,
    Outcome,
    Resource,
    judged_stack_policy,
    not_applicable,
    rule_metadata,
)

NAME = "load-balancer-api-paths-only"
SEVERITY = Severity.HIGH
ENFORCEMENT = EnforcementLevel.MANDATORY
DESCRIPTION = (
    "Load-balancer routes to a serving engine match only the API its key guards (/v1/...) and /health; "
    "any other path ends at the load balancer."
)
CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "allowedNames": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Names of listener rules, listeners or URL maps allowed to forward every path "
            "(e.g. behind an authenticating proxy of your own).",
        },
    }
)

TARGET_GROUPS = frozenset({"aws:lb/targetGroup:TargetGroup", "aws:alb/targetGroup:TargetGroup"})
LISTENER_RULES = frozenset({"aws:lb/listenerRule:ListenerRule", "aws:alb/listenerRule:ListenerRule"})
LISTENERS = frozenset({"aws:lb/listener:Listener", "aws:alb/listener:Listener"})
URL_MAPS = frozenset({"gcp:compute/regionUrlMap:RegionUrlMap", "gcp:compute/uRLMap:URLMap"})
BACKEND_SERVICES = frozenset(
    {"gcp:compute/regionBackendService:RegionBackendService", "gcp:compute/backendService:BackendService"}
)
HEALTH_CHECKS = frozenset(
    {
        "gcp:compute/regionHealthCheck:RegionHealthCheck",
        "gcp:compute/healthCheck:HealthCheck",
        "gcp:compute/httpHealthCheck:HttpHealthCheck",
    }
)
APPLIES_TO = "ALB listeners and rules and GCP URL maps that reach a serving engine"
_FIX = (
    "add a path condition of /v1/* and /health only (InferenceEndpoint and GcpInferenceEndpoint do), "
    "and answer every other path 404 at the load balancer"
)


def _serving_target_group(group: Resource) -> bool:
    tags = group.props.get("tags")
    if isinstance(tags, dict) and "Model" in tags:
        return True
    return get_path(group.props, "healthCheck", "path") == HEALTH_PATH


def _serving_backend(service: Resource, stack: StackIndex) -> bool:
    if service.props.get("portName") == "engine":
        return True
    for check in stack.dependencies(service, HEALTH_CHECKS):
        paths = (
            get_path(check.props, "httpHealthCheck", "requestPath"),
            get_path(check.props, "httpsHealthCheck", "requestPath"),
            check.props.get("requestPath"),
        )
        if HEALTH_PATH in paths:
            return True
    return False


def _forward_arns(action: Any) -> list[Any]:
    if not isinstance(action, dict) or action.get("type") != "forward":
        return []
    arns = [action.get("targetGroupArn")] if action.get("targetGroupArn") is not None else []
    groups = get_path(action, "forward", "targetGroups")
    if isinstance(groups, list):
        arns += [g.get("arn") for g in groups if isinstance(g, dict)]
    return arns


def _reaches_serving(holder: Resource, actions: Any, stack: StackIndex) -> bool:
    """Whether the listener or rule forwards to a serving target group: the ARNs it names, else (not
    known before deploy) the target groups it depends on."""
    if not isinstance(actions, list):
        return False
    arns = [a for action in actions for a in _forward_arns(action)]
    if not arns:
        return False
    groups = [stack.find(a, TARGET_GROUPS) for a in arns if isinstance(a, str) and a is not UNKNOWN]
    groups += stack.dependencies(holder, TARGET_GROUPS)
    return any(g is not None and _serving_target_group(g) for g in groups)


def _listener_rule(rule: Resource, stack: StackIndex) -> Outcome:
    if not _reaches_serving(rule, rule.props.get("actions"), stack):
        return not_applicable(f"applies to {APPLIES_TO}")
    found = Findings()
    conditions = rule.props.get("conditions")
    if conditions is UNKNOWN:
        found.not_known("conditions")
        return found.outcome()
    patterns = [
        get_path(c, "pathPattern", "values")
        for c in conditions or []
        if isinstance(c, dict) and "pathPattern" in c
    ]
    if not patterns:
        found.violation(
            f"{rule.label} forwards every path to a serving engine (no path-pattern condition): "
            f"/invocations, /tokenize and /metrics reach it without the API key; {_FIX}."
        )
        return found.outcome()
    for i, values in enumerate(patterns):
        if values is UNKNOWN or (isinstance(values, list) and UNKNOWN in values):
            found.not_known(f"conditions[{i}].pathPattern.values")
            continue
        outside = (
            [v for v in values or [] if not alb_pattern_in_api(v)] if isinstance(values, list) else [values]
        )
        if outside or not values:
            found.violation(
                f"{rule.label} forwards the path patterns {outside or values!r} to a serving engine, "
                f"outside the API its key guards; {_FIX}."
            )
    return found.outcome()


def _listener(listener: Resource, stack: StackIndex) -> Outcome:
    if not _reaches_serving(listener, listener.props.get("defaultActions"), stack):
        return not_applicable(f"applies to {APPLIES_TO}")
    return Outcome(
        violations=(
            f"{listener.label}'s default action forwards every path to a serving engine; make the default "
            f"a fixed-response 404 and forward from rules with a path condition: {_FIX}.",
        )
    )


def _aborted(action: Any) -> bool:
    abort = get_path(action, "faultInjectionPolicy", "abort")
    return isinstance(abort, dict) and abort.get("percentage") == 100 and abort.get("httpStatus") == 404


def _url_map(url_map: Resource, stack: StackIndex) -> Outcome:
    serving = [s for s in stack.dependencies(url_map, BACKEND_SERVICES) if _serving_backend(s, stack)]
    if not serving:
        return not_applicable(f"applies to {APPLIES_TO}")
    found = Findings()
    props = url_map.props
    if not props.get("defaultUrlRedirect") and not _aborted(props.get("defaultRouteAction")):
        found.violation(
            f"{url_map.label}'s default sends an unmatched path to a backend; abort it with 404 "
            f"(defaultRouteAction.faultInjectionPolicy.abort) or redirect it; {_FIX}."
        )
    matchers = props.get("pathMatchers")
    for i, matcher in enumerate(matchers if isinstance(matchers, list) else []):
        if not isinstance(matcher, dict):
            continue
        where = f"pathMatchers[{i}] {matcher.get('name')!r}"
        if not matcher.get("defaultUrlRedirect") and not _aborted(matcher.get("defaultRouteAction")):
            found.violation(
                f"{url_map.label} {where}: its default sends an unmatched path to a backend; {_FIX}."
            )
        for j, rule in enumerate(matcher.get("routeRules") or []):
            matches = rule.get("matchRules") if isinstance(rule, dict) else None
            if matches is UNKNOWN:
                found.not_known(f"pathMatchers[{i}].routeRules[{j}].matchRules")
            elif not matches or not all(url_match_in_api(m) for m in matches):
                found.violation(
                    f"{url_map.label} {where} routeRules[{j}] matches {matches!r}, outside the API the "
                    f"engine's key guards; {_FIX}."
                )
        for j, rule in enumerate(matcher.get("pathRules") or []):
            paths = rule.get("paths") if isinstance(rule, dict) else None
            if isinstance(paths, list) and all(url_path_in_api(p) for p in paths):
                continue
            found.violation(
                f"{url_map.label} {where} pathRules[{j}] routes {paths!r}, outside the API the engine's "
                f"key guards; {_FIX}."
            )
    return found.outcome()


def check(resource: Resource, config: Mapping[str, Any], stack: StackIndex | None = None) -> Outcome:
    """One listener, listener rule or URL map, with the stack (its target groups, backend services and
    health checks) at hand; alone, it is judged with no other resource known."""
    stack = stack if stack is not None else StackIndex([resource])
    if resource.type in LISTENER_RULES:
        outcome = _listener_rule(resource, stack)
    elif resource.type in LISTENERS:
        outcome = _listener(resource, stack)
    elif resource.type in URL_MAPS:
        outcome = _url_map(resource, stack)
    else:
        return not_applicable(f"applies to {APPLIES_TO}")
    if resource.name in config["allowedNames"] and outcome.violations:
        return Outcome()
    return outcome


def judge(resources: Sequence[Resource], config: Mapping[str, Any]) -> Iterator[tuple[Resource, Outcome]]:
    stack = StackIndex(resources)
    for resource in resources:
        if resource.type in LISTENER_RULES | LISTENERS | URL_MAPS:
            yield resource, check(resource, config, stack)


POLICY = judged_stack_policy(**rule_metadata(__name__), judge=judge, applies_to=APPLIES_TO)
