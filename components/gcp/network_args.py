"""PrivateNetwork's (GCP) arguments and their validation (pure: no provider SDK).

Apart from `network.py` so that the stack config reads them without loading the provider SDK.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import ip_network

from inference_infra.components.arguments import arg
from inference_infra.components.errors import Problem
from inference_infra.components.gcp.names import is_region, name_problems

EGRESS_MODES = ("internet", "endpoints-only")


# The Google API virtual IPs (IPv4) reached through Private Google Access, from "Configure Private Google
# Access", Domain options (cloud.google.com/vpc/docs/configure-private-google-access#domain-options) and
# "Private Google Access with VPC Service Controls" (restricted range), read 2026-11-24.
GOOGLE_API_RANGES = {
    "private.googleapis.com": "199.36.153.8/30",  # most Google APIs, VPC-SC supported or not
    "restricted.googleapis.com": "199.36.153.4/30",  # only APIs VPC Service Controls supports
}


@dataclass(frozen=True, kw_only=True)
class PrivateNetworkArgs:
    """A VPC for accelerator nodes without external IPs: one subnet, Cloud NAT, SSH through IAP."""

    region: str = arg(doc="The subnet's region.")
    cidr: str = arg("10.40.0.0/20", "The subnet's private IPv4 range (/8 to /29).")
    nat: bool = arg(True, "Cloud NAT for outbound package downloads (nodes have no external IP).")
    iap_ssh: bool = arg(True, "Allow SSH from Identity-Aware Proxy's range (OS Login decides who gets in).")
    project: str | None = arg(None, "The project; default: the provider's.")
    egress: str = arg(
        "internet",
        f"Where nodes may connect out to: internet, or endpoints-only (Google's APIs through Private Google "
        f"Access and the subnet, nothing else; needs nat false). One of {', '.join(EGRESS_MODES)}.",
    )
    google_api_domain: str = arg(
        "private.googleapis.com",
        "With endpoints-only: the Google API range nodes reach, private.googleapis.com (all APIs) or "
        "restricted.googleapis.com (VPC Service Controls-supported APIs only).",
    )
    internal_egress_ranges: Sequence[str] = arg(
        (),
        "With egress endpoints-only: more private ranges nodes may reach besides the subnet (a Filestore "
        "instance's reserved range, VPN peers).",
    )


def validate_private_network(name: str, args: PrivateNetworkArgs) -> list[Problem]:
    problems = name_problems("name", name)
    if not is_region(args.region):
        problems.append(Problem("region", args.region, "must be a region such as 'us-central1'"))
    try:
        block = ip_network(args.cidr, strict=True)
    except ValueError:
        problems.append(Problem("cidr", args.cidr, "must be a CIDR block such as '10.40.0.0/20'"))
    else:
        if not block.is_private or block.version != 4:
            problems.append(Problem("cidr", args.cidr, "must be a private IPv4 range (RFC 1918)"))
        elif not 8 <= block.prefixlen <= 29:
            problems.append(Problem("cidr", args.cidr, "must be between /8 and /29"))
    return problems + _egress_problems(args)


def _egress_problems(args: PrivateNetworkArgs) -> list[Problem]:
    problems: list[Problem] = []
    if args.egress not in EGRESS_MODES:
        problems.append(Problem("egress", args.egress, f"must be one of {', '.join(EGRESS_MODES)}"))
    if args.google_api_domain not in GOOGLE_API_RANGES:
        problems.append(
            Problem(
                "google_api_domain", args.google_api_domain, f"must be one of {', '.join(GOOGLE_API_RANGES)}"
            )
        )
    for i, cidr in enumerate(args.internal_egress_ranges):
        try:
            block = ip_network(cidr, strict=True)
        except ValueError:
            problems.append(
                Problem(f"internal_egress_ranges[{i}]", cidr, "must be a CIDR block such as '10.8.0.0/29'")
            )
            continue
        if block.version != 4 or not block.is_private:
            problems.append(
                Problem(f"internal_egress_ranges[{i}]", cidr, "must be a private IPv4 range (RFC 1918)")
            )
    if args.internal_egress_ranges and args.egress != "endpoints-only":
        problems.append(
            Problem(
                "internal_egress_ranges",
                list(args.internal_egress_ranges),
                "only apply with egress 'endpoints-only' (otherwise every range is reachable)",
            )
        )
    if args.egress == "endpoints-only" and args.nat:
        problems.append(
            Problem(
                "nat",
                True,
                "is a way out that egress 'endpoints-only' closes (its firewall denies the traffic Cloud NAT "
                "would carry); set nat=False",
            )
        )
    return problems
