"""What a load balancer does with a request, read from the inputs the engine would receive (tests only).

`alb_forwards(listener, rules, request)`: an Application Load Balancer evaluates its rules by ascending
priority, a rule matching when every condition matches (host and header values case-insensitive,
path patterns case-sensitive; `*` any characters, `?` one), and otherwise takes the listener's default
action (ELB docs, "Listener rules for your Application Load Balancer", condition types).

`url_map_forwards(url_map, request)`: a URL map picks the path matcher of the host rule naming the
Host (an exact host before `*`), then the first route rule by priority whose match rules one matches
(prefixMatch / fullPathMatch, case-sensitive; headerMatches exactMatch), else the matcher's default;
a default whose route action aborts with fault injection answers that status itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Request:
    path: str
    host: str = "unknown.example"
    headers: Mapping[str, str] = field(default_factory=dict)


def _glob(pattern: str, value: str, *, ignore_case: bool) -> bool:
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value, re.IGNORECASE if ignore_case else 0) is not None


def _alb_condition(condition: Mapping[str, Any], request: Request) -> bool:
    if "hostHeader" in condition:
        return any(_glob(v, request.host, ignore_case=True) for v in condition["hostHeader"]["values"])
    if "httpHeader" in condition:
        name = condition["httpHeader"]["httpHeaderName"].lower()
        given = {k.lower(): v for k, v in request.headers.items()}.get(name)
        return given is not None and any(
            _glob(v, given, ignore_case=True) for v in condition["httpHeader"]["values"]
        )
    if "pathPattern" in condition:
        return any(_glob(v, request.path, ignore_case=False) for v in condition["pathPattern"]["values"])
    raise AssertionError(f"a condition these tests do not model: {condition}")


def alb_forwards(listener: Mapping[str, Any], rules: list[Mapping[str, Any]], request: Request) -> bool:
    """Whether the request is forwarded to a target group (else answered by the load balancer)."""
    for rule in sorted(rules, key=lambda r: r["priority"]):
        if all(_alb_condition(c, request) for c in rule["conditions"]):
            return any(a["type"] == "forward" for a in rule["actions"])
    return any(a["type"] == "forward" for a in listener["defaultActions"])


def _host_matches(pattern: str, host: str) -> bool:
    return (
        pattern == "*"
        or pattern.lower() == host.lower()
        or (pattern.startswith("*") and host.lower().endswith(pattern[1:].lower()))
    )


def _match_rule(match: Mapping[str, Any], request: Request) -> bool:
    if "prefixMatch" in match:
        ok = request.path.startswith(match["prefixMatch"])
    elif "fullPathMatch" in match:
        ok = request.path == match["fullPathMatch"]
    else:
        raise AssertionError(f"a match rule these tests do not model: {match}")
    headers = {k.lower(): v for k, v in request.headers.items()}
    for header in match.get("headerMatches", []):
        ok = ok and headers.get(header["headerName"].lower()) == header["exactMatch"]
    return ok


def _aborts(action: Any) -> bool:
    return bool(action) and action.get("faultInjectionPolicy", {}).get("abort", {}).get("percentage") == 100


def url_map_forwards(url_map: Mapping[str, Any], request: Request) -> bool:
    rules = url_map.get("hostRules", [])
    exact = [r for r in rules if any(h != "*" and _host_matches(h, request.host) for h in r["hosts"])]
    chosen = exact or [r for r in rules if "*" in r["hosts"]]
    if not chosen:
        return not _aborts(url_map.get("defaultRouteAction"))
    matcher = next(m for m in url_map["pathMatchers"] if m["name"] == chosen[0]["pathMatcher"])
    for rule in sorted(matcher.get("routeRules", []), key=lambda r: r["priority"]):
        if any(_match_rule(m, request) for m in rule["matchRules"]):
            return True
    return not _aborts(matcher.get("defaultRouteAction"))


# Paths an engine serves outside its key, and tricks on the guarded one (vllm-project/vllm issue
# #58144, vLLM's security guide): none may reach an engine unless it is under /v1/ or /health.
HOSTILE_PATHS = (
    "/invocations",
    "/tokenize",
    "/detokenize",
    "/metrics",
    "/pooling",
    "/score",
    "/rerank",
    "/classify",
    "/ping",
    "/load",
    "/version",
    "/docs",
    "/openapi.json",
    "/collective_rpc",
    "/sleep",
    "/v2/models",
    "/inference/v1/generate",
    "/cohere/v2/chat",
    "/",
    "",
    "/v1",
    "/V1/chat/completions",
    "//v1/chat/completions",
    "/healthz",
    "/health/../invocations",
    "/%76%31/chat/completions",
    "/invocations?x=/v1/chat",
)
API_PATHS = ("/v1/chat/completions", "/v1/completions", "/v1/models", "/health")


def engine_guards(path: str) -> bool:
    """What may reach an engine: a path under /v1/ (the key guards it at every pinned version: a
    `/v1/../x` path is still checked, and routes to nothing) or the health path."""
    return path.startswith("/v1/") or path == "/health"
