"""Every property the node capacity sends is one the pinned provider SDK declares (pulumi-aws 7.51.1,
pulumi-gcp 10.2.0 as installed: their Args classes' `pulumi.getter` names). A nested input is a plain
dict, which Pulumi would pass on whatever its keys, so a misspelt key would reach the provider silently:
each nested object the components render is held against its Args class here."""

from __future__ import annotations

from typing import Any

import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest

from inference_infra.components.k8s.node_capacity import EksNodeGroups, GkeNodePool
from inference_infra.components.k8s.node_capacity_args import (
    EksNodeGroupsArgs,
    EksReservation,
    GkeNodePoolArgs,
    NodeSubnet,
)


def _names(cls: type) -> set[str]:
    """The wire (camelCase) names of an Args class's properties."""
    return {getattr(v.fget, "_pulumi_name", k) for k, v in vars(cls).items() if isinstance(v, property)}


def _path(props: dict, *keys: Any) -> Any:
    for key in keys:
        props = props[key]
    return props


EKS_OBJECTS = [
    ("aws:ec2/launchTemplate:LaunchTemplate", (), aws.ec2.LaunchTemplateArgs),
    (
        "aws:ec2/launchTemplate:LaunchTemplate",
        ("metadataOptions",),
        aws.ec2.LaunchTemplateMetadataOptionsArgs,
    ),
    (
        "aws:ec2/launchTemplate:LaunchTemplate",
        ("blockDeviceMappings", 0),
        aws.ec2.LaunchTemplateBlockDeviceMappingArgs,
    ),
    (
        "aws:ec2/launchTemplate:LaunchTemplate",
        ("blockDeviceMappings", 0, "ebs"),
        aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs,
    ),
    (
        "aws:ec2/launchTemplate:LaunchTemplate",
        ("networkInterfaces", 0),
        aws.ec2.LaunchTemplateNetworkInterfaceArgs,
    ),
    (
        "aws:ec2/launchTemplate:LaunchTemplate",
        ("capacityReservationSpecification",),
        aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs,
    ),
    (
        "aws:ec2/launchTemplate:LaunchTemplate",
        ("capacityReservationSpecification", "capacityReservationTarget"),
        aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs,
    ),
    (
        "aws:ec2/launchTemplate:LaunchTemplate",
        ("instanceMarketOptions",),
        aws.ec2.LaunchTemplateInstanceMarketOptionsArgs,
    ),
    ("aws:eks/nodeGroup:NodeGroup", (), aws.eks.NodeGroupArgs),
    ("aws:eks/nodeGroup:NodeGroup", ("scalingConfig",), aws.eks.NodeGroupScalingConfigArgs),
    ("aws:eks/nodeGroup:NodeGroup", ("taints", 0), aws.eks.NodeGroupTaintArgs),
    ("aws:eks/nodeGroup:NodeGroup", ("launchTemplate",), aws.eks.NodeGroupLaunchTemplateArgs),
    ("aws:eks/nodeGroup:NodeGroup", ("updateConfig",), aws.eks.NodeGroupUpdateConfigArgs),
]
GKE_OBJECTS = [
    ((), gcp.container.NodePoolArgs),
    (("autoscaling",), gcp.container.NodePoolAutoscalingArgs),
    (("management",), gcp.container.NodePoolManagementArgs),
    (("placementPolicy",), gcp.container.NodePoolPlacementPolicyArgs),
    (("nodeConfig",), gcp.container.NodePoolNodeConfigArgs),
    (("nodeConfig", "guestAccelerators", 0), gcp.container.NodePoolNodeConfigGuestAcceleratorArgs),
    (
        ("nodeConfig", "guestAccelerators", 0, "gpuDriverInstallationConfig"),
        gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs,
    ),
    (("nodeConfig", "taints", 0), gcp.container.NodePoolNodeConfigTaintArgs),
    (("nodeConfig", "shieldedInstanceConfig"), gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs),
    (("nodeConfig", "workloadMetadataConfig"), gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs),
    (("nodeConfig", "reservationAffinity"), gcp.container.NodePoolNodeConfigReservationAffinityArgs),
]


@pytest.mark.parametrize(
    ("type_token", "path", "cls"), EKS_OBJECTS, ids=lambda v: getattr(v, "__name__", None)
)
def test_eks_node_groups_send_only_properties_pulumi_aws_declares(plan_of, type_token, path, cls):
    block = EksReservation(target="cr-0123456789abcdef0", availability_zone="us-east-1a", capacity_block=True)
    args = EksNodeGroupsArgs(
        cluster_name="c",
        pool="train",
        instance_type="p5.48xlarge",
        reserved=1,
        reservation=block,
        subnets=[NodeSubnet(id="subnet-0a", availability_zone="us-east-1a")],
        security_group_ids=["sg-0123456789abcdef0"],
        kms_key_arn="arn:aws:kms:us-east-1:123456789012:key/k",
    )
    props = plan_of(EksNodeGroups("n", args)).one(type_token).props
    sent = set(_path(props, *path))
    assert sent <= _names(cls), sent - _names(cls)


@pytest.mark.parametrize(("path", "cls"), GKE_OBJECTS, ids=lambda v: getattr(v, "__name__", None))
def test_gke_node_pools_send_only_properties_pulumi_gcp_declares(plan_of, path, cls):
    gpu = GkeNodePoolArgs(
        cluster="c",
        location="us-central1",
        pool="g",
        machine_type="g2-standard-8",
        reservation="l4",
        boot_disk_kms_key="projects/p/locations/us-central1/keyRings/r/cryptoKeys/k",
    )
    tpu = GkeNodePoolArgs(
        cluster="c",
        location="us-central1",
        pool="t",
        machine_type="ct5lp-hightpu-4t",
        tpu_topology="4x4",
        min_nodes=4,
        max_nodes=4,
    )
    capture = plan_of(GkeNodePool("g", gpu), GkeNodePool("t", tpu))
    for pool in capture.of_type("gcp:container/nodePool:NodePool"):
        try:
            value = _path(pool.props, *path)
        except (KeyError, IndexError):
            continue  # this pool does not set the object (TPU: no guest accelerators)
        assert set(value) <= _names(cls), set(value) - _names(cls)
