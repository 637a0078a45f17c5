"""PrivateNetwork (GCP): a VPC for accelerator nodes that have no external IPs.

One custom-mode VPC with one regional subnet (Private Google Access on, so
nodes reach Cloud Storage and the Google APIs without public IPs; VPC flow
logs on), a Cloud Router with Cloud NAT on that subnet only, an egress
firewall that denies by default, and one ingress rule: SSH from
Identity-Aware Proxy's range only, so administrators reach nodes through IAP
with OS Login. Everything else inbound stays denied (the VPC's implied rule);
fleets open their serving port to named ranges themselves.

Egress, by `egress` (the choice is explained in README.md, "Egress"):

- `named-hosts` (the reference stack's default in production): Google's APIs
  through Private Google Access (the API range, a route to it, private DNS
  zones for googleapis.com and pkg.dev),
  the subnet and private ranges, and HTTPS and HTTP through Cloud NAT to the
  host names in `allowed_hosts` only: a global network firewall policy, evaluated
  before the VPC's rules, whose one rule allows those names (Cloud NGFW FQDN
  objects); anything else falls through to the VPC rules and their deny.
- `internet` (the component's default): HTTPS and HTTP to anywhere through Cloud NAT.
- `endpoints-only`: no Cloud NAT; Google's APIs (as above) and the subnet
  (plus ranges you name, e.g. a Filestore instance's reserved range) only.
"""

from __future__ import annotations

from ipaddress import ip_network

import pulumi
import pulumi_gcp as gcp

from inference_infra.components.errors import raise_if_invalid
from inference_infra.components.gcp.network_args import (
    EGRESS_MODES,
    GOOGLE_API_RANGES,
    PrivateNetworkArgs,
    validate_private_network,
)
from inference_infra.components.validation import check_types

__all__ = [
    "ALLOW_EGRESS_PRIORITY",
    "DENY_EGRESS_PRIORITY",
    "EGRESS_MODES",
    "GOOGLE_API_RANGES",
    "IAP_RANGE",
    "PRIVATE_RANGES",
    "PrivateNetwork",
    "PrivateNetworkArgs",
    "google_api_addresses",
    "validate_private_network",
]

IAP_RANGE = "35.235.240.0/20"  # https://cloud.google.com/iap/docs/using-tcp-forwarding

DENY_EGRESS_PRIORITY = 65534  # below every rule but the implied allow-egress (65535), which it overrides
ALLOW_EGRESS_PRIORITY = 1000
PRIVATE_RANGES = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")  # RFC 1918


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
            # named-hosts: the FQDN policy's allow is evaluated before the VPC rules' deny (the default
            # order, AFTER_CLASSIC_FIREWALL, would let the deny at 65534 end the evaluation first).
            network_firewall_policy_enforcement_order=(
                "BEFORE_CLASSIC_FIREWALL" if args.egress == "named-hosts" else None
            ),
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
                # The fleets' subnet only (its primary range): a subnet added to the network later, or a
                # secondary range, gets no way out unless it is named here.
                source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
                subnetworks=[
                    gcp.compute.RouterNatSubnetworkArgs(
                        name=self.subnetwork.id, source_ip_ranges_to_nats=["PRIMARY_IP_RANGE"]
                    )
                ],
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
        if args.egress == "endpoints-only":
            self._google_apis_only(name, args, child)
        elif args.egress == "named-hosts":
            self._google_apis_only(name, args, child, internal=PRIVATE_RANGES)
            self._named_hosts(name, args, child)
        else:
            self._web_egress_only(name, args, child)
        self.register_outputs(
            {
                "network_id": self.network.id,
                "network_name": self.network.name,
                "subnetwork_id": self.subnetwork.id,
                "cidr": args.cidr,
            }
        )

    def _web_egress_only(self, name: str, args: PrivateNetworkArgs, child: pulumi.ResourceOptions) -> None:
        """egress internet: deny by default, then HTTPS (Google APIs on their public or private ranges,
        the engine images, the Ops Agent's and NVIDIA's package repositories) and HTTP (the distribution's
        apt mirrors, whose packages are signed) through Cloud NAT, and the subnet itself. The metadata
        server (169.254.169.254: the token, DNS, NTP) is not subject to firewall rules."""
        self._deny_egress(name, args, child)
        gcp.compute.Firewall(
            f"{name}-web-egress",
            network=self.network.id,
            description="egress internet: HTTPS and HTTP only (APIs, images, package mirrors); nothing else",
            direction="EGRESS",
            priority=ALLOW_EGRESS_PRIORITY,
            destination_ranges=["0.0.0.0/0"],
            allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=["443", "80"])],
            project=args.project,
            opts=child,
        )
        # Private ranges stay open here: a Filestore cache's reserved range, TPU VMs, the load balancer's
        # proxy-only subnet and a VPN to the cluster that scrapes the fleets all live outside the subnet.
        self._internal_egress(name, args, child, PRIVATE_RANGES)

    def _deny_egress(self, name: str, args: PrivateNetworkArgs, child: pulumi.ResourceOptions) -> None:
        # Applies to every instance in the network (no target tags): queued TPU nodes carry no tags,
        # and this network holds the stack's accelerators only.
        gcp.compute.Firewall(
            f"{name}-deny-egress",
            network=self.network.id,
            description=f"egress {args.egress}: deny everything not allowed above",
            direction="EGRESS",
            priority=DENY_EGRESS_PRIORITY,
            destination_ranges=["0.0.0.0/0"],
            denies=[gcp.compute.FirewallDenyArgs(protocol="all")],
            log_config=gcp.compute.FirewallLogConfigArgs(metadata="INCLUDE_ALL_METADATA"),
            project=args.project,
            opts=child,
        )

    def _internal_egress(
        self, name: str, args: PrivateNetworkArgs, child: pulumi.ResourceOptions, ranges: tuple[str, ...] = ()
    ) -> None:
        destinations = list(dict.fromkeys([*(ranges or (args.cidr,)), *args.internal_egress_ranges]))
        gcp.compute.Firewall(
            f"{name}-internal-egress",
            network=self.network.id,
            description=f"egress {args.egress}: the subnet itself and private ranges",
            direction="EGRESS",
            priority=ALLOW_EGRESS_PRIORITY,
            destination_ranges=destinations,
            allows=[gcp.compute.FirewallAllowArgs(protocol="all")],
            project=args.project,
            opts=child,
        )

    def _named_hosts(self, name: str, args: PrivateNetworkArgs, child: pulumi.ResourceOptions) -> None:
        """HTTPS and HTTP to the allowed host names only: a network firewall policy on this network.

        Cloud NGFW resolves each name through the network's Cloud DNS and allows the addresses it gets
        (at most 32 IPv4 per name; "FQDN objects overview", read 2026-12-02). A rule with FQDNs is Cloud
        NGFW Standard, billed per GB it evaluates (README.md, "Egress")."""
        policy = gcp.compute.NetworkFirewallPolicy(
            f"{name}-egress-policy",
            description=f"inference-infra {name}: egress to named hosts only",
            project=args.project,
            opts=child,
        )
        gcp.compute.NetworkFirewallPolicyRule(
            f"{name}-named-hosts",
            firewall_policy=policy.name,
            rule_name=f"{name}-named-hosts",
            description="egress named-hosts: HTTPS and HTTP to these host names; the rest goes on to the "
            "VPC rules (deny by default)",
            direction="EGRESS",
            action="allow",
            priority=ALLOW_EGRESS_PRIORITY,
            enable_logging=True,
            match=gcp.compute.NetworkFirewallPolicyRuleMatchArgs(
                dest_fqdns=list(args.hosts()),
                layer4_configs=[
                    gcp.compute.NetworkFirewallPolicyRuleMatchLayer4ConfigArgs(
                        ip_protocol="tcp", ports=["443", "80"]
                    )
                ],
            ),
            project=args.project,
            opts=child,
        )
        gcp.compute.NetworkFirewallPolicyAssociation(
            f"{name}-egress-policy",
            name=f"{name}-egress-policy",
            attachment_target=self.network.id,
            firewall_policy=policy.id,
            project=args.project,
            opts=child,
        )

    def _google_apis_only(
        self,
        name: str,
        args: PrivateNetworkArgs,
        child: pulumi.ResourceOptions,
        internal: tuple[str, ...] = (),
    ) -> None:
        """Deny all egress but HTTPS to Google APIs and private ranges; DNS and a route to the API range."""
        vip = GOOGLE_API_RANGES[args.google_api_domain]
        self._deny_egress(name, args, child)
        gcp.compute.Firewall(
            f"{name}-google-apis",
            network=self.network.id,
            description=f"egress {args.egress}: HTTPS to Google APIs ({args.google_api_domain}, {vip})",
            direction="EGRESS",
            priority=ALLOW_EGRESS_PRIORITY,
            destination_ranges=[vip],
            allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=["443"])],
            project=args.project,
            opts=child,
        )
        self._internal_egress(name, args, child, internal)
        gcp.compute.Route(
            f"{name}-google-apis",
            network=self.network.id,
            description=f"{args.google_api_domain} through Google's network (Private Google Access)",
            dest_range=vip,
            next_hop_gateway="default-internet-gateway",
            priority=ALLOW_EGRESS_PRIORITY,
            project=args.project,
            opts=child,
        )
        # Private zone googleapis.com.: *.googleapis.com -> the chosen domain, whose A record is the range.
        domain = f"{args.google_api_domain}."
        googleapis = self._private_zone(f"{name}-googleapis", "googleapis.com.", name, args, child)
        self._records(f"{name}-googleapis", googleapis, domain, "*.googleapis.com.", args, child)
        # Private zone pkg.dev.: Artifact Registry (LOCATION-docker.pkg.dev, the image mirrors) on the same
        # range. Google's "Configure restricted access for GKE private clusters" (Artifact Registry docs,
        # read 2026-11-24): a private zone for the registry domain with an A record for pkg.dev. on the
        # VIP and a CNAME from *.pkg.dev. to it.
        pkg_dev = self._private_zone(f"{name}-pkg-dev", "pkg.dev.", name, args, child)
        self._records(f"{name}-pkg-dev", pkg_dev, "pkg.dev.", "*.pkg.dev.", args, child)

    def _private_zone(
        self, resource: str, dns_name: str, name: str, args: PrivateNetworkArgs, child: pulumi.ResourceOptions
    ) -> gcp.dns.ManagedZone:
        return gcp.dns.ManagedZone(
            resource,
            dns_name=dns_name,
            description=f"{dns_name.rstrip('.')} names to {args.google_api_domain}'s range inside {name}",
            visibility="private",
            private_visibility_config=gcp.dns.ManagedZonePrivateVisibilityConfigArgs(
                networks=[gcp.dns.ManagedZonePrivateVisibilityConfigNetworkArgs(network_url=self.network.id)]
            ),
            project=args.project,
            opts=child,
        )

    @staticmethod
    def _records(
        resource: str,
        zone: gcp.dns.ManagedZone,
        a_name: str,
        wildcard: str,
        args: PrivateNetworkArgs,
        child: pulumi.ResourceOptions,
    ) -> None:
        """`a_name` A the API range's four addresses; `wildcard` CNAME `a_name`."""
        gcp.dns.RecordSet(
            f"{resource}-a",
            managed_zone=zone.name,
            name=a_name,
            type="A",
            ttl=300,
            rrdatas=google_api_addresses(args.google_api_domain),
            project=args.project,
            opts=child,
        )
        gcp.dns.RecordSet(
            f"{resource}-cname",
            managed_zone=zone.name,
            name=wildcard,
            type="CNAME",
            ttl=300,
            rrdatas=[a_name],
            project=args.project,
            opts=child,
        )


def google_api_addresses(domain: str) -> list[str]:
    """The four addresses of a Google API /30 (the A record Google documents for the domain)."""
    return [str(address) for address in ip_network(GOOGLE_API_RANGES[domain])]
