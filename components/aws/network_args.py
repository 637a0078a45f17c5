"""Where the fleets run, as plain inputs: subnet references and the private network's arguments (pure).

Apart from `network.py` (which makes the resources) so that fleets' arguments and the stack config
read them without loading the provider SDK.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi

from inference_infra.components.arguments import arg
from inference_infra.components.aws.idle_watchdog_args import LOG_RETENTION_DAYS
from inference_infra.components.catalog.zones import aws_zone_problems
from inference_infra.components.errors import Problem

ZONE_RE = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d+[a-z]$")


@dataclass(frozen=True, kw_only=True)
class SubnetRef:
    """A subnet and its availability zone (stated, so zones can be validated before deploy)."""

    id: pulumi.Input[str] = arg(doc="The subnet's id (subnet-...).")
    availability_zone: str = arg(doc="The subnet's availability zone, e.g. us-east-1a.")


def validate_zone(name: str, zone: str) -> list[Problem]:
    """A zone's form, then its region and name against the catalog's lists (unknown region, a zone
    its region does not have), each with a did-you-mean."""
    if not isinstance(zone, str) or not ZONE_RE.fullmatch(zone):
        return [Problem(name, zone, "is not an availability zone name (like 'us-east-1a')")]
    return aws_zone_problems(name, zone)


@dataclass(frozen=True, kw_only=True)
class PrivateNetworkArgs:
    """A minimal private VPC: one private subnet per zone, no public IPs."""

    availability_zones: Sequence[str] = arg(
        doc="One private subnet per zone, e.g. [us-west-2a, us-west-2b] (1 to 6 zones of one region)."
    )
    cidr_block: str = arg("10.64.0.0/16", "The VPC's private IPv4 range, /16 to /24.")
    nat_gateway: bool = arg(
        True, "One NAT gateway for package and image downloads; false leaves the subnets isolated."
    )
    s3_gateway_endpoint: bool = arg(
        True, "An S3 gateway endpoint on the private route table: weight downloads skip the NAT."
    )
    flow_logs: bool | None = arg(
        None,
        "VPC flow logs (all traffic) to a CloudWatch Logs group. Default: on when the registered cost tags' "
        "Environment is production (a name starting with prod or prd), off elsewhere.",
    )
    flow_log_retention_days: int = arg(
        365, "Days the flow log group keeps records (a CloudWatch Logs retention period).", ge=1, le=3653
    )


def validate_private_network(args: PrivateNetworkArgs) -> list[Problem]:
    problems: list[Problem] = []
    zones = list(args.availability_zones)
    if not 1 <= len(zones) <= 6:
        problems.append(
            Problem("availability_zones", zones, "must name 1 to 6 zones (2 or more for resilience)")
        )
    for i, zone in enumerate(zones):
        problems += validate_zone(f"availability_zones[{i}]", zone)
    if len(set(zones)) != len(zones):
        problems.append(Problem("availability_zones", zones, "must not repeat a zone"))
    if len({z[:-1] for z in zones if isinstance(z, str)}) > 1:
        problems.append(Problem("availability_zones", zones, "must all be in one region"))
    if args.flow_log_retention_days not in LOG_RETENTION_DAYS:
        problems.append(
            Problem(
                "flow_log_retention_days",
                args.flow_log_retention_days,
                f"must be one of CloudWatch Logs' values: {', '.join(map(str, sorted(LOG_RETENTION_DAYS)))}",
            )
        )
    try:
        network = ipaddress.ip_network(args.cidr_block)
    except ValueError:
        problems.append(Problem("cidr_block", args.cidr_block, "is not an IPv4 network like '10.64.0.0/16'"))
    else:
        if network.version != 4 or not network.is_private or not 16 <= network.prefixlen <= 24:
            problems.append(Problem("cidr_block", args.cidr_block, "must be a private IPv4 /16 to /24"))
    return problems
