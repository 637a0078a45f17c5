"""PrivateNetwork: private subnets per zone, no public IPs, S3 gateway endpoint, optional NAT."""

from __future__ import annotations

import pytest

from inference_infra.components.aws import PrivateNetwork, PrivateNetworkArgs
from inference_infra.components.errors import InputError

ZONES = ["us-east-1a", "us-east-1b"]


def test_private_network_has_a_private_subnet_per_zone(plan_of):
    network = PrivateNetwork("net", PrivateNetworkArgs(availability_zones=ZONES))
    capture = plan_of(network)
    private = [s for s in capture.of_type("aws:ec2/subnet:Subnet") if s.props["tags"]["Tier"] == "private"]
    assert sorted(s.props["availabilityZone"] for s in private) == ZONES
    assert sorted(s.props["cidrBlock"] for s in private) == ["10.64.0.0/20", "10.64.16.0/20"]
    assert all(s.props["mapPublicIpOnLaunch"] is False for s in capture.of_type("aws:ec2/subnet:Subnet"))
    assert [s.availability_zone for s in network.subnets] == ZONES


def test_private_network_routes_s3_through_a_gateway_endpoint(plan_of):
    capture = plan_of(PrivateNetwork("net", PrivateNetworkArgs(availability_zones=ZONES)))
    endpoint = capture.one("aws:ec2/vpcEndpoint:VpcEndpoint").props
    assert endpoint["vpcEndpointType"] == "Gateway"
    assert endpoint["routeTableIds"] == [capture.one("aws:ec2/routeTable:RouteTable", "net-private").id]


def test_private_network_egress_goes_through_one_nat_gateway(plan_of):
    capture = plan_of(PrivateNetwork("net", PrivateNetworkArgs(availability_zones=ZONES)))
    nat = capture.one("aws:ec2/natGateway:NatGateway")
    default = capture.one("aws:ec2/route:Route", "net-private-default").props
    assert default["natGatewayId"] == nat.id
    default_sg = capture.one("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup").props
    assert "ingress" not in default_sg
    assert "egress" not in default_sg


def test_private_network_without_nat_is_isolated(plan_of):
    capture = plan_of(PrivateNetwork("net", PrivateNetworkArgs(availability_zones=ZONES, nat_gateway=False)))
    assert capture.of_type("aws:ec2/internetGateway:InternetGateway") == []
    assert capture.of_type("aws:ec2/natGateway:NatGateway") == []


def test_private_network_rejects_bad_zones_and_cidr():
    args = PrivateNetworkArgs(
        availability_zones=["us-east-1a", "eu-west-1b", "nowhere"], cidr_block="8.8.0.0/16"
    )
    with pytest.raises(InputError) as raised:
        PrivateNetwork("net", args)
    message = str(raised.value)
    assert "availability_zones[2] 'nowhere' is not an availability zone name" in message
    assert "must all be in one region" in message
    assert "cidr_block '8.8.0.0/16' must be a private IPv4 /16 to /24" in message
