"""PrivateNetwork (GCP): a private subnet with NAT and IAP-only SSH."""

from __future__ import annotations

import pytest

from inference_infra.components.errors import InputError
from inference_infra.components.gcp.network import IAP_RANGE, PrivateNetwork, PrivateNetworkArgs


def test_private_network_subnet_reaches_google_apis_privately(plan_of):
    plan = plan_of(PrivateNetwork("core", PrivateNetworkArgs(region="us-central1", cidr="10.50.0.0/20")))
    assert plan.one("gcp:compute/network:Network").props["autoCreateSubnetworks"] is False
    subnet = plan.one("gcp:compute/subnetwork:Subnetwork")
    assert subnet.props["ipCidrRange"] == "10.50.0.0/20"
    assert subnet.props["region"] == "us-central1"
    assert subnet.props["privateIpGoogleAccess"] is True
    assert subnet.props["logConfig"]["metadata"] == "INCLUDE_ALL_METADATA"


def test_private_network_nat_gives_egress_without_public_ips(plan_of):
    plan = plan_of(PrivateNetwork("core", PrivateNetworkArgs(region="us-central1")))
    nat = plan.one("gcp:compute/routerNat:RouterNat")
    assert nat.props["natIpAllocateOption"] == "AUTO_ONLY"
    # The fleets' subnet only (its primary range), not every subnet and range of the network.
    assert nat.props["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS"
    subnet = plan.one("gcp:compute/subnetwork:Subnetwork")
    assert nat.props["subnetworks"] == [{"name": subnet.id, "sourceIpRangesToNats": ["PRIMARY_IP_RANGE"]}]


def test_private_network_opens_ssh_to_iap_only(plan_of):
    rules = plan_of(PrivateNetwork("core", PrivateNetworkArgs(region="us-central1"))).of_type(
        "gcp:compute/firewall:Firewall"
    )
    (rule,) = [r for r in rules if r.props["direction"] == "INGRESS"]
    assert rule.props["direction"] == "INGRESS"
    assert rule.props["sourceRanges"] == [IAP_RANGE]
    assert rule.props["allows"] == [{"protocol": "tcp", "ports": ["22"]}]


def test_private_network_without_nat_or_ssh_has_no_router_or_rule(plan_of):
    plan = plan_of(
        PrivateNetwork(
            "core", PrivateNetworkArgs(region="us-central1", nat=False, iap_ssh=False, egress="internet")
        )
    )
    assert plan.of_type("gcp:compute/routerNat:RouterNat") == []
    rules = plan.of_type("gcp:compute/firewall:Firewall")
    assert [r for r in rules if r.props["direction"] == "INGRESS"] == []


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"region": "us-central1-a"}, r"region 'us-central1-a' must be a region such as 'us-central1'"),
        ({"cidr": "8.8.8.0/24"}, r"cidr '8.8.8.0/24' must be a private IPv4 range"),
        ({"cidr": "10.0.0.0/30"}, r"cidr '10.0.0.0/30' must be between /8 and /29"),
        ({"cidr": "10.0.0.1/20"}, r"cidr '10.0.0.1/20' must be a CIDR block"),
    ],
)
def test_private_network_rejects_bad_input(plan_of, fields, message):
    with pytest.raises(InputError, match=message):
        PrivateNetwork("core", PrivateNetworkArgs(**{"region": "us-central1", **fields}))
    assert plan_of().of_type("gcp:compute/network:Network") == []


def _closed(**fields) -> PrivateNetwork:
    values = {"region": "us-central1", "cidr": "10.50.0.0/20", "nat": False, "egress": "endpoints-only"}
    return PrivateNetwork("core", PrivateNetworkArgs(**(values | fields)))


def test_private_network_endpoints_only_denies_all_egress_but_google_apis_and_the_subnet(plan_of):
    plan = plan_of(_closed(internal_egress_ranges=["10.8.0.0/29"]))
    rules = {r.name: r.props for r in plan.of_type("gcp:compute/firewall:Firewall")}
    deny = rules["core-deny-egress"]
    assert (deny["direction"], deny["priority"], deny["destinationRanges"]) == (
        "EGRESS",
        65534,
        ["0.0.0.0/0"],
    )
    assert deny["denies"] == [{"protocol": "all"}]
    assert "targetTags" not in deny  # every instance of the network, tagged or not (queued TPU nodes)
    apis = rules["core-google-apis"]
    assert (apis["direction"], apis["priority"]) == ("EGRESS", 1000)
    assert apis["destinationRanges"] == ["199.36.153.8/30"]
    assert apis["allows"] == [{"protocol": "tcp", "ports": ["443"]}]
    internal = rules["core-internal-egress"]
    assert internal["destinationRanges"] == ["10.50.0.0/20", "10.8.0.0/29"]
    assert internal["priority"] < deny["priority"]
    # No rule allows egress to anything public but Google's API range.
    allowed = {
        cidr
        for p in rules.values()
        if p["direction"] == "EGRESS" and "allows" in p
        for cidr in p["destinationRanges"]
    }
    assert allowed == {"199.36.153.8/30", "10.50.0.0/20", "10.8.0.0/29"}
    assert plan.of_type("gcp:compute/routerNat:RouterNat") == []
    assert plan.one("gcp:compute/subnetwork:Subnetwork").props["privateIpGoogleAccess"] is True


def test_private_network_endpoints_only_resolves_googleapis_to_the_private_range(plan_of):
    plan = plan_of(_closed())
    zone = plan.one("gcp:dns/managedZone:ManagedZone", "core-googleapis").props
    assert (zone["dnsName"], zone["visibility"]) == ("googleapis.com.", "private")
    network = plan.one("gcp:compute/network:Network")
    assert zone["privateVisibilityConfig"]["networks"] == [{"networkUrl": network.id}]
    records = {r.props["name"]: r.props for r in plan.of_type("gcp:dns/recordSet:RecordSet")}
    assert records["private.googleapis.com."]["type"] == "A"
    assert records["private.googleapis.com."]["rrdatas"] == [f"199.36.153.{i}" for i in range(8, 12)]
    assert records["*.googleapis.com."]["ttl"] == 300
    assert (records["*.googleapis.com."]["type"], records["*.googleapis.com."]["rrdatas"]) == (
        "CNAME",
        ["private.googleapis.com."],
    )
    route = plan.one("gcp:compute/route:Route").props
    assert (route["destRange"], route["nextHopGateway"]) == ("199.36.153.8/30", "default-internet-gateway")


@pytest.mark.parametrize(
    ("domain", "addresses"),
    [("private.googleapis.com", range(8, 12)), ("restricted.googleapis.com", range(4, 8))],
)
def test_private_network_endpoints_only_resolves_pkg_dev_to_the_api_range(plan_of, domain, addresses):
    plan = plan_of(_closed(google_api_domain=domain))
    network = plan.one("gcp:compute/network:Network")
    zone = plan.one("gcp:dns/managedZone:ManagedZone", "core-pkg-dev")
    assert (zone.props["dnsName"], zone.props["visibility"]) == ("pkg.dev.", "private")
    assert zone.props["privateVisibilityConfig"]["networks"] == [{"networkUrl": network.id}]
    records = {r.props["name"]: r.props for r in plan.of_type("gcp:dns/recordSet:RecordSet")}
    assert (records["pkg.dev."]["type"], records["pkg.dev."]["rrdatas"]) == (
        "A",
        [f"199.36.153.{i}" for i in addresses],
    )
    assert (records["*.pkg.dev."]["type"], records["*.pkg.dev."]["rrdatas"]) == ("CNAME", ["pkg.dev."])


def test_private_network_internet_egress_makes_no_private_zones(plan_of):
    plan = plan_of(PrivateNetwork("core", PrivateNetworkArgs(region="us-central1", egress="internet")))
    assert plan.of_type("gcp:dns/managedZone:ManagedZone") == []


def test_private_network_endpoints_only_can_use_the_restricted_range(plan_of):
    plan = plan_of(_closed(google_api_domain="restricted.googleapis.com"))
    apis = next(r for r in plan.of_type("gcp:compute/firewall:Firewall") if r.name == "core-google-apis")
    assert apis.props["destinationRanges"] == ["199.36.153.4/30"]
    records = {r.props["name"]: r.props for r in plan.of_type("gcp:dns/recordSet:RecordSet")}
    assert records["restricted.googleapis.com."]["rrdatas"] == [f"199.36.153.{i}" for i in range(4, 8)]


def test_private_network_internet_egress_denies_by_default_but_the_web_and_private_ranges(plan_of):
    plan = plan_of(PrivateNetwork("core", PrivateNetworkArgs(region="us-central1", egress="internet")))
    egress = {
        r.name: r.props
        for r in plan.of_type("gcp:compute/firewall:Firewall")
        if r.props["direction"] == "EGRESS"
    }
    assert set(egress) == {"core-deny-egress", "core-web-egress", "core-internal-egress"}
    deny = egress["core-deny-egress"]
    assert (deny["priority"], deny["denies"], deny["destinationRanges"]) == (
        65534,
        [{"protocol": "all"}],
        ["0.0.0.0/0"],
    )
    web = egress["core-web-egress"]
    assert web["allows"] == [{"protocol": "tcp", "ports": ["443", "80"]}]
    assert web["priority"] < deny["priority"]
    internal = egress["core-internal-egress"]
    assert internal["destinationRanges"] == ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]
    assert plan.of_type("gcp:dns/managedZone:ManagedZone") == []


@pytest.mark.parametrize(("port", "open_"), [("22", False), ("25", False), ("53", False), ("443", True)])
def test_private_network_internet_egress_rejects_other_ports_to_the_internet(plan_of, port, open_):
    plan = plan_of(PrivateNetwork("core", PrivateNetworkArgs(region="us-central1", egress="internet")))
    allowed = [
        p
        for r in plan.of_type("gcp:compute/firewall:Firewall")
        if r.props["direction"] == "EGRESS" and r.props["destinationRanges"] == ["0.0.0.0/0"]
        for a in r.props.get("allows", [])
        for p in a.get("ports", [])
    ]
    assert (port in allowed) is open_


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"nat": True}, r"nat True is a way out that egress 'endpoints-only' closes"),
        ({"egress": "none"}, r"egress 'none' must be one of internet, named-hosts, endpoints-only"),
        ({"google_api_domain": "googleapis.com"}, r"google_api_domain 'googleapis.com' must be one of"),
        (
            {"internal_egress_ranges": ["8.8.8.0/24"]},
            r"internal_egress_ranges\[0\] '8.8.8.0/24' must be a private",
        ),
        (
            {"egress": "internet", "internal_egress_ranges": ["10.8.0.0/29"]},
            r"internal_egress_ranges \['10.8.0.0/29'\] only apply with egress 'endpoints-only' or "
            r"'named-hosts'",
        ),
    ],
)
def test_private_network_rejects_bad_egress_input(plan_of, fields, message):
    with pytest.raises(InputError, match=message):
        _closed(**fields)
    assert plan_of().of_type("gcp:compute/network:Network") == []
