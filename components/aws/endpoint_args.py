"""InferenceEndpoint's arguments and their validation (pure: no provider SDK).

Apart from `endpoint.py` (which makes the load balancer) so that the stack config reads them without
loading the provider SDK.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi

from inference_infra.components.arguments import Renamed, arg, renamed_inputs
from inference_infra.components.endpoints.routing import EndpointPool, Route, validate_routes
from inference_infra.components.errors import Problem
from inference_infra.components.serving import HEALTH_PATH

HEALTH_INTERVAL_SECONDS = 30
# Elastic Load Balancing's account per region for access-log delivery (regions opened before August 2022);
# newer regions use the log-delivery service principal, which the bucket policy also names.
# Source: https://docs.aws.amazon.com/elasticloadbalancing/latest/application/enable-access-logging.html
ELB_LOG_ACCOUNTS = {
    "us-east-1": "127311923021",
    "us-east-2": "033677994240",
    "us-west-1": "027434742980",
    "us-west-2": "797873946194",
    "eu-west-1": "156460612806",
    "eu-central-1": "054676820928",
    "ap-northeast-1": "582318560864",
    "ap-southeast-1": "114774131450",
}
ELB_LOG_ACCOUNTS_AS_OF = "2026-11-22"


@renamed_inputs(Renamed("idle_timeout_seconds", "request_timeout_seconds"))
@dataclass(frozen=True, kw_only=True)
class InferenceEndpointArgs:
    """An internal ALB in front of fleets: `pools` from `fleet.endpoint_pool()`, `routes` by model."""

    vpc_id: pulumi.Input[str] = arg(doc="The VPC of the load balancer and its pools.", stack=False)
    subnet_ids: Sequence[pulumi.Input[str]] = arg(
        doc="Private subnets in two zones at least (an ALB spans zones).", stack=False
    )
    pools: Sequence[EndpointPool] = arg(
        doc="The fleets behind the endpoint, each from fleet.endpoint_pool(); each answers the X-Model-Pool "
        "header.",
        stack=False,
    )
    routes: Sequence[Route] = arg(
        (), "Requests whose Host names a model go to its pools, split by weight (canary)."
    )
    client_cidr_blocks: Sequence[str] = arg((), "Callers' ranges (private ranges only, unless public).")
    client_security_group_ids: Sequence[pulumi.Input[str]] = arg((), "Callers' security groups.")
    internet_facing: bool = arg(False, "An internet-facing load balancer (needs public).")
    public: bool = arg(False, "Allow an internet-facing scheme and public client ranges (policy-checked).")
    certificate_arn: str | None = arg(
        None, "HTTPS on 443 with this ACM certificate; default: HTTP on 80 inside the VPC."
    )
    ssl_policy: str = arg("ELBSecurityPolicy-TLS13-1-2-2021-06", "The HTTPS listener's TLS policy.")
    request_timeout_seconds: int = arg(
        900,
        "How long a request may stay idle (the ALB's idle timeout): long enough for streamed generations.",
        ge=1,
        le=4000,
    )
    access_logs_bucket: pulumi.Input[str] | None = arg(
        None, "An existing bucket for access logs; default: a bucket made for this endpoint."
    )
    region: str | None = arg(
        None,
        "The region, for the access-log bucket's policy (ELB's log account); default: the aws provider's "
        "configured region.",
    )
    tags: Mapping[str, str] = arg(factory=dict, doc="More tags on the endpoint's resources.")

    @property
    def listener_port(self) -> int:
        return 443 if self.certificate_arn else 80


def log_delivery_principals(region: str) -> list[dict[str, str]]:
    """Who delivers a region's ALB access logs: the log-delivery service, and ELB's account if it has one."""
    principals = [{"Service": "logdelivery.elasticloadbalancing.amazonaws.com"}]
    if region in ELB_LOG_ACCOUNTS:
        principals.append({"AWS": f"arn:aws:iam::{ELB_LOG_ACCOUNTS[region]}:root"})
    return principals


def health_check(pool: EndpointPool) -> dict[str, object]:
    """The engine's /health, marked unhealthy only after failing for the pool's load window."""
    unhealthy = max(2, min(10, math.ceil(pool.unhealthy_after_seconds / HEALTH_INTERVAL_SECONDS)))
    return {
        "enabled": True,
        "path": HEALTH_PATH,
        "port": "traffic-port",
        "protocol": "HTTP",
        "matcher": "200",
        "interval": HEALTH_INTERVAL_SECONDS,
        "timeout": 10,
        "healthy_threshold": 2,
        "unhealthy_threshold": unhealthy,
    }


MAX_FORWARD_TARGET_GROUPS = 5  # an ALB forward action's target groups
MAX_TARGET_GROUP_WEIGHT = 999


def target_group_count(pool: EndpointPool) -> int:
    """An elastic pool has a target group per engine port; a fixed pool one for all its ports."""
    return len(pool.ports) if pool.group_name is not None else 1


def _forward_problems(args: InferenceEndpointArgs) -> list[Problem]:
    """A route forwards to at most 5 target groups, each weighted 0..999 (elastic pools count per port)."""
    pools = {p.name: p for p in args.pools}
    problems = []
    for i, route in enumerate(args.routes):
        counts = [target_group_count(pools[w.pool]) for w in route.pools if w.pool in pools]
        if len(counts) != len(route.pools):
            continue  # an unknown pool: validate_routes names it
        if sum(counts) > MAX_FORWARD_TARGET_GROUPS:
            problems.append(
                Problem(
                    f"routes[{i}].pools",
                    [w.pool for w in route.pools],
                    f"need {sum(counts)} target groups (an elastic pool has one per engine port); an ALB "
                    f"route forwards to at most {MAX_FORWARD_TARGET_GROUPS}",
                )
            )
            continue
        scale = math.lcm(*counts) if counts else 1
        heaviest = max((w.weight * scale // k for w, k in zip(route.pools, counts, strict=True)), default=0)
        if heaviest > MAX_TARGET_GROUP_WEIGHT:
            problems.append(
                Problem(
                    f"routes[{i}].pools",
                    [w.pool for w in route.pools],
                    f"give a target group the weight {heaviest} once shared over the pools' engine ports; "
                    f"an ALB takes at most {MAX_TARGET_GROUP_WEIGHT}",
                )
            )
    return problems


def validate_endpoint(args: InferenceEndpointArgs) -> list[Problem]:
    problems = validate_routes(args.pools, args.routes)
    if len(args.subnet_ids) < 2:
        problems.append(
            Problem("subnet_ids", len(args.subnet_ids), "must list 2 or more subnets (an ALB spans zones)")
        )
    if args.internet_facing and not args.public:
        problems.append(
            Problem(
                "internet_facing",
                True,
                "needs public: true; endpoints in front of accelerators are internal by default",
            )
        )
    if not 1 <= args.request_timeout_seconds <= 4000:
        problems.append(Problem("request_timeout_seconds", args.request_timeout_seconds, "must be 1..4000"))
    if args.certificate_arn is not None and not args.certificate_arn.startswith("arn:aws"):
        problems.append(Problem("certificate_arn", args.certificate_arn, "must be an ACM certificate ARN"))
    for i, cidr in enumerate(args.client_cidr_blocks):
        try:
            network = ipaddress.ip_network(cidr)
        except ValueError:
            problems.append(
                Problem(f"client_cidr_blocks[{i}]", cidr, "is not a CIDR block like '10.0.0.0/16'")
            )
            continue
        if not network.is_private and not args.public:
            problems.append(
                Problem(
                    f"client_cidr_blocks[{i}]", cidr, "is not a private range; allowed only with public: true"
                )
            )
    problems += _forward_problems(args)
    for pool in args.pools:
        if pool.group_name is not None and pool.instance_ids:
            problems.append(
                Problem(
                    f"pools[{pool.name}].instance_ids",
                    len(pool.instance_ids),
                    "must be empty for an elastic pool (group_name set): its group registers its machines",
                )
            )
        elif pool.group_name is None and not pool.instance_ids:
            problems.append(Problem(f"pools[{pool.name}].instance_ids", [], "must list the pool's instances"))
        delay = pool.deregistration_delay_seconds
        if delay is not None and not 0 <= delay <= 3600:
            problems.append(
                Problem(f"pools[{pool.name}].deregistration_delay_seconds", delay, "must be 0..3600 (ALB)")
            )
        if pool.security_group_id is None:
            problems.append(Problem(f"pools[{pool.name}].security_group_id", None, "is required"))
        if not 30 <= pool.slow_start_seconds <= 900:
            problems.append(
                Problem(f"pools[{pool.name}].slow_start_seconds", pool.slow_start_seconds, "must be 30..900")
            )
    return problems
