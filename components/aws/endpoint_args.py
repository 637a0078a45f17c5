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
from inference_infra.components.errors import InputError, Problem, did_you_mean
from inference_infra.components.serving import HEALTH_PATH
from inference_infra.components.tagging import aws_tag_problems, in_production

HEALTH_INTERVAL_SECONDS = 30
# Elastic Load Balancing's account per region for access-log delivery (regions opened before August 2022).
# Source: terraform-provider-aws, internal/service/elb/service_account_data_source.go (commit
# 01f431114674c27cf790fafb67ac274bf8f765e1), which cites
# https://docs.aws.amazon.com/elasticloadbalancing/latest/application/enable-access-logging.html
ELB_LOG_ACCOUNTS = {
    "af-south-1": "098369216593",
    "ap-east-1": "754344448648",
    "ap-northeast-1": "582318560864",
    "ap-northeast-2": "600734575887",
    "ap-northeast-3": "383597477331",
    "ap-south-1": "718504428378",
    "ap-southeast-1": "114774131450",
    "ap-southeast-2": "783225319266",
    "ap-southeast-3": "589379963580",
    "ca-central-1": "985666609251",
    "cn-north-1": "638102146993",
    "cn-northwest-1": "037604701340",
    "eu-central-1": "054676820928",
    "eu-north-1": "897822967062",
    "eu-south-1": "635631232127",
    "eu-west-1": "156460612806",
    "eu-west-2": "652711504416",
    "eu-west-3": "009996457667",
    "me-south-1": "076674570225",
    "sa-east-1": "507241528517",
    "us-east-1": "127311923021",
    "us-east-2": "033677994240",
    "us-gov-east-1": "190560391635",
    "us-gov-west-1": "048591011584",
    "us-west-1": "027434742980",
    "us-west-2": "797873946194",
}
# Regions opened in August 2022 or later have no ELB account: the log-delivery service principal
# writes their logs (same AWS page). The list is the commercial partition's regions in botocore
# 1.44.8's data/endpoints.json that the table above lacks; tests/components/aws/test_endpoint_regions.py
# fails when the installed botocore knows a region neither list has.
ELB_SERVICE_PRINCIPAL_REGIONS = frozenset(
    {
        "ap-east-2",
        "ap-south-2",
        "ap-southeast-4",
        "ap-southeast-5",
        "ap-southeast-6",
        "ap-southeast-7",
        "ca-west-1",
        "eu-central-2",
        "eu-south-2",
        "il-central-1",
        "me-central-1",
        "mx-central-1",
    }
)
ELB_LOG_ACCOUNTS_AS_OF = "2026-11-26"
LOG_DELIVERY_SERVICE = "logdelivery.elasticloadbalancing.amazonaws.com"
PRODUCTION_LOG_RETENTION_DAYS = 365


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
    deletion_protection: bool | None = arg(
        None,
        "Deletion protection on the load balancer. Default: on when the registered cost tags' Environment "
        "is production (a name starting with prod or prd), off elsewhere.",
    )
    access_log_retention_days: int | None = arg(
        None,
        "Days the access-log bucket made here keeps logs (an expiration rule). Default: 365 in production, "
        "kept until deleted elsewhere.",
        ge=1,
        le=3650,
    )
    scoped_log_delivery: bool | None = arg(
        None,
        "The access-log bucket made here admits log delivery for this account only (aws:SourceAccount, and "
        "the AWSLogs/<account id>/ path). Default: on in production.",
    )

    @property
    def listener_port(self) -> int:
        return 443 if self.certificate_arn else 80

    def hardened(self) -> tuple[bool, int | None, bool]:
        """(deletion protection, retention days or None, scoped delivery): each given value, else the
        production default of the registered cost tags."""
        production = in_production()
        return (
            production if self.deletion_protection is None else self.deletion_protection,
            (PRODUCTION_LOG_RETENTION_DAYS if production else None)
            if self.access_log_retention_days is None
            else self.access_log_retention_days,
            production if self.scoped_log_delivery is None else self.scoped_log_delivery,
        )


def log_delivery_principals(region: str, name: str = "region") -> list[dict[str, str]]:
    """Who delivers a region's ALB access logs: the log-delivery service, and ELB's account if it has one.

    Raises InputError for a region in neither table (its log delivery is not known here), naming the
    region as `name` (the input or config key it came from).
    """
    if (problem := log_region_problem(name, region)) is not None:
        raise InputError(f"InferenceEndpoint access logs: {problem}.", [problem])
    principals = [{"Service": LOG_DELIVERY_SERVICE}]
    if region in ELB_LOG_ACCOUNTS:
        partition = "aws-cn" if region.startswith("cn-") else "aws-us-gov" if "-gov-" in region else "aws"
        principals.append({"AWS": f"arn:{partition}:iam::{ELB_LOG_ACCOUNTS[region]}:root"})
    return principals


def log_region_problem(name: str, region: str) -> Problem | None:
    """Why no access-log bucket policy can be written for a region, or None when its delivery is known."""
    if region in ELB_LOG_ACCOUNTS or region in ELB_SERVICE_PRINCIPAL_REGIONS:
        return None
    known = sorted(ELB_LOG_ACCOUNTS.keys() | ELB_SERVICE_PRINCIPAL_REGIONS)
    return Problem(
        name,
        region,
        f"has no known ELB access-log delivery (an ELB account, or the {LOG_DELIVERY_SERVICE} principal; "
        f"table as of {ELB_LOG_ACCOUNTS_AS_OF}){did_you_mean(str(region), known)}; known regions: "
        f"{', '.join(known)}. Give the endpoint an access_logs_bucket whose policy admits that region's log "
        "delivery, or a known region",
    )


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
    # request_timeout_seconds and access_log_retention_days: their arg(ge=..., le=...) bounds are checked
    # before this runs, by check_types in InferenceEndpoint and by the typed stack config (which carries
    # the same bounds) in infra/endpoints_stack.py.
    made_here = args.access_logs_bucket is None  # the region only decides the policy of a bucket made here
    if made_here and args.region is not None and (problem := log_region_problem("region", args.region)):
        problems.append(problem)
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
    problems += aws_tag_problems("tags", args.tags)
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
