"""PrivateNetwork's (GCP) arguments and their validation (pure: no provider SDK).

Apart from `network.py` so that the stack config reads them without loading the provider SDK.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import ip_address, ip_network

from inference_infra.components.arguments import arg
from inference_infra.components.errors import Problem
from inference_infra.components.gcp.names import is_region, name_problems

EGRESS_MODES = ("internet", "named-hosts", "endpoints-only")


# The Google API virtual IPs (IPv4) reached through Private Google Access, from "Configure Private Google
# Access", Domain options (cloud.google.com/vpc/docs/configure-private-google-access#domain-options) and
# "Private Google Access with VPC Service Controls" (restricted range), read 2026-11-24.
GOOGLE_API_RANGES = {
    "private.googleapis.com": "199.36.153.8/30",  # most Google APIs, VPC-SC supported or not
    "restricted.googleapis.com": "199.36.153.4/30",  # only APIs VPC Service Controls supports
}


# egress "named-hosts": what the boot still downloads from the internet once images come from Artifact
# Registry (pkg.dev) and Google's APIs through Private Google Access, read 2026-12-02 in startup.py (the
# Ops Agent's repository and keys; `apt-get update` before installing nfs-common or mdadm reads every apt
# source of the image). Both node images are Ubuntu: the GPU fleets' Deep Learning VM family
# (common-cu129-ubuntu-2204-nvidia-580, components/serving/host_images.py) and the TPU runtime images;
# Google's Ubuntu images take their archive from <region>.gce.archive.ubuntu.com and security updates from
# security.ubuntu.com, and the Deep Learning VM images list NVIDIA's CUDA repository and Google's package
# repository as apt sources too. These are the images' apt sources as Google publishes them, not read from
# a booted image here: check yours (`apt-get indextargets`, /etc/apt/sources.list.d/) and pass
# `allowed_hosts` when they differ.
PACKAGE_HOSTS: dict[str, str] = {
    "packages.cloud.google.com": "the Ops Agent's apt repository and signing keys (startup.py)",
    "security.ubuntu.com": "Ubuntu's security updates (GPU and TPU images)",
    "developer.download.nvidia.com": "NVIDIA's CUDA apt repository, an apt source of the Deep Learning VM",
}
# Cloud NGFW: at most 100 destination FQDNs per rule (pulumi-gcp 10.2.0, NetworkFirewallPolicyRule
# match.dest_fqdns); a name is a domain name, no wildcard ("FQDN objects overview", read 2026-12-02).
MAX_ALLOWED_HOSTS = 100
_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_HOST_NAME = re.compile(rf"{_LABEL}(\.{_LABEL})*\.[a-z][a-z0-9-]*[a-z0-9]")
# Names Private Google Access answers (the private zones of egress named-hosts and endpoints-only), and
# names that are never the internet.
_PRIVATE_SUFFIXES = ("googleapis.com", "pkg.dev", "internal", "localhost", "local")


def boot_hosts(region: str) -> tuple[str, ...]:
    """The internet hosts a node's boot may download from under egress named-hosts, in `region`: the
    package hosts and the region's Ubuntu archive mirror."""
    return (*PACKAGE_HOSTS, f"{region}.gce.archive.ubuntu.com")


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
        f"Where nodes may connect out to: internet (HTTPS and HTTP to anywhere through Cloud NAT), "
        f"named-hosts (Google's APIs through Private Google Access, HTTPS and HTTP through Cloud NAT to the "
        f"allowed_hosts only, by a Cloud NGFW FQDN rule; every image then needs an Artifact Registry "
        f"mirror), or endpoints-only (Google's APIs and the subnet, nothing else; needs nat false). One of "
        f"{', '.join(EGRESS_MODES)}.",
    )
    google_api_domain: str = arg(
        "private.googleapis.com",
        "With named-hosts or endpoints-only: the Google API range nodes reach, private.googleapis.com (all "
        "APIs) or restricted.googleapis.com (VPC Service Controls-supported APIs only).",
    )
    allowed_hosts: Sequence[str] | None = arg(
        None,
        "With egress named-hosts: the host names nodes may reach on ports 443 and 80 (at most 100, no "
        "wildcard). Default: the package hosts the boot downloads from (network_args.boot_hosts).",
    )
    internal_egress_ranges: Sequence[str] = arg(
        (),
        "With egress endpoints-only or named-hosts: more private ranges nodes may reach besides the subnet "
        "(a Filestore instance's reserved range, VPN peers).",
    )

    def hosts(self) -> tuple[str, ...]:
        """The host names egress named-hosts allows."""
        return tuple(self.allowed_hosts) if self.allowed_hosts is not None else boot_hosts(self.region)


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
    if args.internal_egress_ranges and args.egress == "internet":
        problems.append(
            Problem(
                "internal_egress_ranges",
                list(args.internal_egress_ranges),
                "only apply with egress 'endpoints-only' or 'named-hosts' (under internet every range is "
                "reachable)",
            )
        )
    problems += _host_problems(args)
    if args.egress == "named-hosts" and not args.nat:
        problems.append(
            Problem(
                "nat",
                False,
                "is the way egress 'named-hosts' reaches its allowed hosts (nodes have no external IP); set "
                "nat=True, or use egress 'endpoints-only' for no internet at all",
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


def _host_problems(args: PrivateNetworkArgs) -> list[Problem]:
    if args.allowed_hosts is None:
        return []
    hosts = args.allowed_hosts
    if args.egress != "named-hosts":
        return [
            Problem(
                "allowed_hosts",
                list(hosts),
                f"only apply with egress 'named-hosts' (egress is {args.egress!r})",
            )
        ]
    problems = []
    if not hosts:
        problems.append(
            Problem(
                "allowed_hosts",
                [],
                "must name at least one host; for no internet at all use egress 'endpoints-only'",
            )
        )
    if len(hosts) > MAX_ALLOWED_HOSTS:
        problems.append(
            Problem(
                "allowed_hosts",
                f"{len(hosts)} hosts",
                f"must name at most {MAX_ALLOWED_HOSTS} (Cloud NGFW's limit of destination FQDNs per rule)",
            )
        )
    seen: set[str] = set()
    for i, host in enumerate(hosts):
        where = f"allowed_hosts[{i}]"
        problem = host_problem(host)
        if problem is not None:
            problems.append(Problem(where, host, problem))
        elif host in seen:
            problems.append(Problem(where, host, "is listed twice"))
        seen.add(host if isinstance(host, str) else "")
    return problems


def host_problem(host: object) -> str | None:
    """Why `host` cannot be an allowed host name of egress named-hosts, or None when it can."""
    if not isinstance(host, str) or "*" in host:
        return (
            "must be one host name such as 'deb.debian.org': no wildcard (Cloud NGFW resolves each name "
            "it is given, never a pattern)"
        )
    try:
        ip_address(host)
    except ValueError:
        pass
    else:
        return "must be a host name, not an address (the rule allows names; addresses need a CIDR rule)"
    if len(host) > 253 or not _HOST_NAME.fullmatch(host):
        return (
            "must be a lowercase DNS host name of two labels or more (letters, digits and '-', labels of "
            "1 to 63 characters, 253 at most, no trailing dot, space or port)"
        )
    if any(host == suffix or host.endswith(f".{suffix}") for suffix in _PRIVATE_SUFFIXES):
        return (
            "is answered inside the network (googleapis.com and pkg.dev through Private Google Access, "
            "internal names by Cloud DNS): it needs no internet rule"
        )
    return None
