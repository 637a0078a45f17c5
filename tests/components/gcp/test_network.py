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
    assert nat.props["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES"


def test_private_network_opens_ssh_to_iap_only(plan_of):
    rule = plan_of(PrivateNetwork("core", PrivateNetworkArgs(region="us-central1"))).one(
        "gcp:compute/firewall:Firewall"
    )
    assert rule.props["direction"] == "INGRESS"
    assert rule.props["sourceRanges"] == [IAP_RANGE]
    assert rule.props["allows"] == [{"protocol": "tcp", "ports": ["22"]}]


def test_private_network_without_nat_or_ssh_has_no_router_or_rule(plan_of):
    plan = plan_of(PrivateNetwork("core", PrivateNetworkArgs(region="us-central1", nat=False, iap_ssh=False)))
    assert plan.of_type("gcp:compute/routerNat:RouterNat") == []
    assert plan.of_type("gcp:compute/firewall:Firewall") == []


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
