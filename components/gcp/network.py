"""PrivateNetwork (GCP): a VPC for accelerator nodes that have no external IPs.

One custom-mode VPC with one regional subnet (Private Google Access on, so
nodes reach Cloud Storage and the Google APIs without public IPs; VPC flow
logs on), a Cloud Router with Cloud NAT for outbound package downloads
(Ops Agent, DCGM, pip), and one ingress rule: SSH from Identity-Aware Proxy's
range only, so administrators reach nodes through IAP with OS Login.
Everything else inbound stays denied (the VPC's implied rule); fleets open
their serving port to named ranges themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import ip_network

import pulumi
import pulumi_gcp as gcp

from inference_infra.components.errors import Problem, raise_if_invalid
from inference_infra.components.gcp.names import is_region, name_problems
from inference_infra.components.validation import check_types

IAP_RANGE = "35.235.240.0/20"  # https://cloud.google.com/iap/docs/using-tcp-forwarding


@dataclass(frozen=True, kw_only=True)
class PrivateNetworkArgs:
    region: str
    cidr: str = "10.40.0.0/20"
    nat: bool = True  # outbound internet through Cloud NAT (no external IPs on nodes)
    iap_ssh: bool = True  # allow SSH from IAP's range (OS Login decides who gets in)
    project: str | None = None


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
    return problems


class PrivateNetwork(pulumi.ComponentResource):
    """A VPC, subnet, NAT and IAP SSH rule for accelerator nodes without public IPs."""

    network: gcp.compute.Network
    subnetwork: gcp.compute.Subnetwork
    cidr: str
    region: str

    def __init__(
        self, name: str, args: PrivateNetworkArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        raise_if_invalid(
            f"PrivateNetwork {name!r}", check_types(args) or validate_private_network(name, args)
        )
        super().__init__("inference-infra:gcp:PrivateNetwork", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.cidr, self.region = args.cidr, args.region

        self.network = gcp.compute.Network(
            f"{name}-vpc",
            description=f"inference-infra {name}: accelerator nodes without external IPs",
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
            project=args.project,
            opts=child,
        )
        self.subnetwork = gcp.compute.Subnetwork(
            f"{name}-{args.region}",
            region=args.region,
            network=self.network.id,
            ip_cidr_range=args.cidr,
            private_ip_google_access=True,
            log_config=gcp.compute.SubnetworkLogConfigArgs(
                aggregation_interval="INTERVAL_5_SEC", flow_sampling=0.5, metadata="INCLUDE_ALL_METADATA"
            ),
            project=args.project,
            opts=child,
        )
        if args.nat:
            router = gcp.compute.Router(
                f"{name}-router",
                region=args.region,
                network=self.network.id,
                project=args.project,
                opts=child,
            )
            gcp.compute.RouterNat(
                f"{name}-nat",
                router=router.name,
                region=args.region,
                nat_ip_allocate_option="AUTO_ONLY",
                source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
                log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY"),
                project=args.project,
                opts=child,
            )
        if args.iap_ssh:
            gcp.compute.Firewall(
                f"{name}-iap-ssh",
                network=self.network.id,
                description="SSH through Identity-Aware Proxy only; OS Login decides who gets in",
                direction="INGRESS",
                source_ranges=[IAP_RANGE],
                allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=["22"])],
                log_config=gcp.compute.FirewallLogConfigArgs(metadata="INCLUDE_ALL_METADATA"),
                project=args.project,
                opts=child,
            )
        self.register_outputs(
            {
                "network_id": self.network.id,
                "network_name": self.network.name,
                "subnetwork_id": self.subnetwork.id,
                "cidr": args.cidr,
            }
        )
