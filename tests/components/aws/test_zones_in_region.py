"""AWS zones and regions checked in the components before anything is registered (issue #35 item
4): a zone its region lacks, subnets in another region than aws:region, an unknown aws:region."""

from __future__ import annotations

import pytest

from inference_infra.components.aws import GpuFleet, GpuFleetArgs, InferentiaFleet, InferentiaFleetArgs
from inference_infra.components.aws.network import PrivateNetwork, PrivateNetworkArgs, SubnetRef
from inference_infra.components.errors import InputError


def test_zones_fleet_rejects_a_zone_its_region_lacks_with_did_you_mean(plan_of, fleet_args):
    bad = [SubnetRef(id="subnet-0a", availability_zone="us-east-1z")]
    with pytest.raises(
        InputError,
        match=r"subnets\[0\].availability_zone 'us-east-1z' is not a zone of us-east-1 "
        r"\(did you mean 'us-east-1f'",
    ):
        GpuFleet("serving", fleet_args(GpuFleetArgs, subnets=bad))
    assert [r.type for r in plan_of().resources if r.custom] == []  # nothing registered


@pytest.mark.stack_config({"aws:region": "eu-west-1"})
def test_zones_fleet_rejects_subnets_outside_the_providers_region(plan_of, fleet_args):
    with pytest.raises(InputError) as caught:
        GpuFleet("serving", fleet_args(GpuFleetArgs))  # subnets in us-east-1a and us-east-1b
    message = str(caught.value)
    assert "2 problems" in message
    assert "subnets[0].availability_zone 'us-east-1a' is outside the provider's region 'eu-west-1'" in message
    assert "eu-west-1a, eu-west-1b, eu-west-1c" in message
    assert [r.type for r in plan_of().resources if r.custom] == []


@pytest.mark.stack_config({"aws:region": "us-east-9"})
def test_zones_fleet_rejects_an_unknown_provider_region(plan_of, fleet_args):
    with pytest.raises(
        InputError,
        match=r"aws:region \(the aws provider's region\) 'us-east-9' is an unknown region "
        r"\(did you mean 'us-east-2'",
    ):
        InferentiaFleet("neuron", fleet_args(InferentiaFleetArgs, instance_type="inf2.xlarge"))


@pytest.mark.stack_config({"aws:region": "us-west-2"})
def test_zones_fleet_in_the_providers_region_plans(plan_of, fleet_args):
    subnets = [SubnetRef(id="subnet-0a", availability_zone="us-west-2a")]
    GpuFleet("serving", fleet_args(GpuFleetArgs, subnets=subnets))
    assert plan_of().of_type("aws:ec2/launchTemplate:LaunchTemplate")


def test_zones_fleet_with_an_explicit_provider_is_not_judged_by_aws_region(plan_of, fleet_args):
    import pulumi
    import pulumi_aws as aws

    provider = aws.Provider("eu", region="eu-west-1")
    subnets = [SubnetRef(id="subnet-0a", availability_zone="eu-west-1a")]
    GpuFleet("serving", fleet_args(GpuFleetArgs, subnets=subnets), pulumi.ResourceOptions(provider=provider))
    assert plan_of().of_type("aws:ec2/launchTemplate:LaunchTemplate")


@pytest.mark.stack_config({"aws:region": "eu-west-1"})
def test_zones_private_network_rejects_zones_outside_the_providers_region(plan_of):
    with pytest.raises(
        InputError, match=r"availability_zones\[0\] 'us-east-1a' is outside the provider's region 'eu-west-1'"
    ):
        PrivateNetwork("vpc", PrivateNetworkArgs(availability_zones=["us-east-1a"]))


def test_zones_private_network_rejects_a_zone_its_region_lacks(plan_of):
    with pytest.raises(InputError, match=r"availability_zones\[1\] 'us-east-1z' is not a zone of us-east-1"):
        PrivateNetwork("vpc", PrivateNetworkArgs(availability_zones=["us-east-1a", "us-east-1z"]))
