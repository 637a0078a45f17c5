"""What an endpoint routes, independent of the cloud, and its validation (pure).

An endpoint fronts pools (fleets that run engines). A `Route` sends one
model's requests, chosen by the Host header, to one or more pools with
weights that sum to 100 (a canary: 95/5). Every pool is also reachable
directly with the `X-Model-Pool: <pool>` header, which wins over the host.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pulumi

from inference_infra.components.arguments import arg
from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.serving.engines import HEALTH_PATH

POOL_HEADER = "X-Model-Pool"

# What a load balancer forwards to an engine: the OpenAI API under /v1/ (the one prefix vLLM's API key
# guards at every pinned engine: 0.9.1 guards /v1 alone; 0.28 and the 0.29 TPU build add /v2,
# /inference and /cohere, which the library does not serve) and the health path. vLLM mounts more on
# the same port without the key (POST /invocations runs the chat and completion handlers; /tokenize,
# /detokenize, /pooling, /score, /metrics, ...: vllm-project/vllm issue #58144, and vLLM's security
# guide, docs/usage/security.md since PR #29922), so every other path is answered 404 by the load
# balancer and never reaches an engine. Matching is case-sensitive on both clouds (ALB path patterns;
# URL-map prefixMatch without ignoreCase), and the engine decodes the path before its own check, so a
# path that matches /v1/ here is one the key guards there. Checked 2026-12-02 in the vllm 0.28.0 wheel
# (PyPI): vllm/entrypoints/serve/utils/server_utils.py GUARDED_PREFIX = ("/v1", "/v2", "/inference",
# "/cohere") and a prefix test on the decoded path; api_server.py reads --api-key, else VLLM_API_KEY;
# cli_args.py's own help says /invocations stays unauthenticated.
GUARDED_API_PREFIX = "/v1/"
ALB_PATH_PATTERNS = (f"{GUARDED_API_PREFIX}*", HEALTH_PATH)
_HOST = re.compile(r"^[a-z0-9*?]([a-z0-9.*?-]{0,126}[a-z0-9*?])?$")


DEFAULT_SLOW_START_SECONDS = 90  # a pool whose cold start is not estimated


class _Engines(Protocol):
    """What a pool reads of a fleet's engines (components.serving.EngineConfig)."""

    served_model_name: str

    @property
    def ports(self) -> list[int]: ...


class _ColdStart(Protocol):
    """What a pool reads of a fleet's cold start (components.serving.ColdStart)."""

    def slow_start_seconds(self) -> int: ...


@dataclass(frozen=True, kw_only=True)
class PoolBackend:
    """Where a pool's nodes are, in the form its cloud's endpoint reads (GCP: `GcpPoolBackend`).

    A fleet's `endpoint_pool()` fills it in, so an endpoint needs nothing else from the fleet.
    """


@dataclass(frozen=True, kw_only=True)
class EndpointPool:
    """A fleet behind the endpoint: its model, its nodes and the engine ports on each.

    A fleet builds it: `fleet.endpoint_pool()` (AWS GpuFleet and InferentiaFleet) gives the model,
    ports, one target per instance, the security group and the slow start from its cold start.
    """

    name: str
    model: str  # the engines' --served-model-name
    ports: Sequence[int]  # one per engine on a node
    instance_ids: Sequence[pulumi.Input[str]] = ()  # AWS: one target per instance and port
    security_group_id: pulumi.Input[str] | None = None  # AWS: admits the ports from the LB only
    slow_start_seconds: int = DEFAULT_SLOW_START_SECONDS  # from the cold-start estimate
    unhealthy_after_seconds: int = DEFAULT_SLOW_START_SECONDS  # failing health checks this long: unhealthy
    backend: PoolBackend | None = None  # GCP: the nodes (instances or TPU addresses), zone, service account
    # AWS elastic pools: the Auto Scaling group the endpoint attaches to its target groups (one per
    # engine port) instead of instance targets, and the drain its target groups give a leaving machine.
    group_name: pulumi.Input[str] | None = None
    deregistration_delay_seconds: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.instance_ids, pulumi.Output):
            # One Output of the whole list (fleet.instance_ids) cannot become one target per instance.
            raise_if_invalid(
                f"EndpointPool {self.name!r}",
                [
                    Problem(
                        "instance_ids",
                        "Output[list[str]]",
                        "is one Output of the whole list (e.g. fleet.instance_ids); an endpoint needs one "
                        "target per instance: use fleet.endpoint_pool() (the pool's ids, engine ports, "
                        "security group and slow start), or pass a list with one id per instance",
                    )
                ],
            )

    @classmethod
    def from_engines(
        cls,
        name: str,
        engines: _Engines,
        cold_start: _ColdStart | None = None,
        **wiring: Any,
    ) -> EndpointPool:
        """A fleet's pool from what its nodes run: the engines' model and ports, and the slow start (and
        how long failing health checks mark a target unhealthy) from the cold start; `wiring` is the
        cloud's part (AWS: `instance_ids`, `security_group_id`)."""
        slow = cold_start.slow_start_seconds() if cold_start is not None else DEFAULT_SLOW_START_SECONDS
        return cls(
            name=name,
            model=engines.served_model_name,
            ports=list(engines.ports),
            slow_start_seconds=slow,
            unhealthy_after_seconds=slow,
            **wiring,
        )


@dataclass(frozen=True)
class PoolWeight:
    pool: str = arg(doc="A pool of the endpoint (the fleet's name).")
    weight: int = arg(100, "Its share of the route's requests; a route's weights sum to 100.", ge=0, le=100)


@dataclass(frozen=True, kw_only=True)
class Route:
    """Requests whose Host names the model go to these pools, split by weight (canary)."""

    pools: Sequence[PoolWeight] = arg(doc="Pools of one model, weights summing to 100.")
    model: str | None = arg(None, "The model the pools serve (checked when set).")
    host: str | None = arg(None, "Host pattern; default '<model with dashes>.*'.")
    sticky_seconds: int = arg(0, "Keep a client on one pool for this long (0: off).", ge=0, le=604800)
    extra: dict[str, str] = field(default_factory=dict)


def default_host(model: str) -> str:
    """`llama-3.1-8b` -> `llama-3-1-8b.*` (a DNS label per model, any domain)."""
    return f"{model.replace('.', '-')}.*"


def route_model(route: Route, pools: dict[str, EndpointPool]) -> str | None:
    models = {pools[p.pool].model for p in route.pools if p.pool in pools}
    return route.model or (next(iter(models)) if len(models) == 1 else None)


def validate_routes(
    pools: Sequence[EndpointPool], routes: Sequence[Route], key: str = "routes"
) -> list[Problem]:
    """Weights sum to 100, pools exist and serve the route's model, one model per route, hosts unique."""
    problems: list[Problem] = []
    by_name = {p.name: p for p in pools}
    names = [p.name for p in pools]
    for duplicate in sorted({n for n in names if names.count(n) > 1}):
        problems.append(Problem("pools", duplicate, "must name each pool once"))
    if not pools:
        problems.append(Problem("pools", [], "must list at least one pool (a fleet with a model)"))
    hosts: list[str] = []
    for i, route in enumerate(routes):
        where = f"{key}[{i}]"
        if not route.pools:
            problems.append(Problem(f"{where}.pools", [], "must list at least one pool"))
            continue
        weights = [p.weight for p in route.pools]
        # each weight's 0..100 (arg(ge=0, le=100)) is checked before this runs: by check_types in the
        # endpoints (AWS and GCP), by the typed stack config (the same bounds) in infra/endpoints_stack.py
        if sum(weights) != 100:
            problems.append(Problem(f"{where}.pools[].weight", weights, "must sum to 100 (e.g. 95 and 5)"))
        listed = [p.pool for p in route.pools]
        if len(set(listed)) != len(listed):
            problems.append(Problem(f"{where}.pools", listed, "must name each pool once"))
        for j, weight in enumerate(route.pools):
            pool = by_name.get(weight.pool)
            if pool is None:
                problems.append(
                    Problem(
                        f"{where}.pools[{j}].pool", weight.pool, f"is not a pool of this endpoint ({names})"
                    )
                )
            elif route.model is not None and pool.model != route.model:
                problems.append(
                    Problem(
                        f"{where}.pools[{j}].pool",
                        weight.pool,
                        f"serves {pool.model}, not the route's model {route.model}",
                    )
                )
        models = sorted({by_name[p].model for p in listed if p in by_name})
        if len(models) > 1:
            problems.append(
                Problem(
                    f"{where}.pools", listed, f"serve different models {models}; a route's pools share one"
                )
            )
        model = route_model(route, by_name)
        host = route.host or (default_host(model) if model else None)
        if host is not None:
            if not _HOST.fullmatch(host):
                problems.append(
                    Problem(f"{where}.host", host, "must be a host name pattern (a-z, 0-9, '.', '-', * ?)")
                )
            elif host in hosts:
                problems.append(Problem(f"{where}.host", host, "is already routed; one route per host"))
            hosts.append(host)
        if not 0 <= route.sticky_seconds <= 604800:
            problems.append(
                Problem(f"{where}.sticky_seconds", route.sticky_seconds, "must be 0..604800 (7 days)")
            )
    for pool in pools:
        if not pool.ports:
            problems.append(Problem(f"pools[{pool.name}].ports", [], "must list the engine ports"))
    return problems


def alb_pattern_in_api(pattern: object) -> bool:
    """Whether an ALB path pattern matches only paths the engine's key guards, or the health path:
    literal up to and including `/v1/` (a wildcard `*` or `?` before it could match `/invocations`)."""
    if not isinstance(pattern, str):
        return False
    return pattern == HEALTH_PATH or pattern.startswith(GUARDED_API_PREFIX)


def url_match_in_api(match: object) -> bool:
    """Whether a URL-map match rule (camelCase, as the engine receives it) matches only the guarded API
    or the health path: a case-sensitive prefix or path (or path template) under `/v1/`, or exactly
    `/health`. A regular expression, `ignoreCase`, or a rule with no path is not judged safe."""
    if not isinstance(match, dict) or match.get("ignoreCase") is True or "regexMatch" in match:
        return False
    prefix = match.get("prefixMatch")
    if prefix is not None:
        return isinstance(prefix, str) and prefix.startswith(GUARDED_API_PREFIX)
    for key in ("fullPathMatch", "pathTemplateMatch"):
        if (path := match.get(key)) is not None:
            return isinstance(path, str) and (path == HEALTH_PATH or path.startswith(GUARDED_API_PREFIX))
    return False


def url_path_in_api(path: object) -> bool:
    """A URL map's pathRules path (`/v1/*` style: `*` only at the end): under `/v1/` or exactly `/health`."""
    return isinstance(path, str) and (path == HEALTH_PATH or path.startswith(GUARDED_API_PREFIX))
