"""Offline answers for the AWS fleets, caches and model store (merged into mocks.py at import).

Shaped like the provider's answers: a launch template has a `latestVersion`,
an EFS file system an `elasticfilesystem` ARN and DNS name, a Capacity Block
offering an id, zone and upfront fee. (Buckets are named in mocks.py.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pulumi.runtime.mocks import MockResourceArgs

from inference_infra.components.offline_plan.mocks import ACCOUNT_ID, MockContext, digest


def _launch_template(args: MockResourceArgs, _: MockContext, __: str) -> dict[str, Any]:
    return {"latestVersion": 1, "defaultVersion": 1}


def _efs_file_system(args: MockResourceArgs, ctx: MockContext, seed: str) -> dict[str, Any]:
    ident = f"fs-{seed}"
    return {
        "arn": f"arn:aws:elasticfilesystem:{ctx.aws_region}:{ACCOUNT_ID}:file-system/{ident}",
        "dnsName": f"{ident}.efs.{ctx.aws_region}.amazonaws.com",
    }


def _efs_access_point(args: MockResourceArgs, ctx: MockContext, seed: str) -> dict[str, Any]:
    return {"arn": f"arn:aws:elasticfilesystem:{ctx.aws_region}:{ACCOUNT_ID}:access-point/fsap-{seed}"}


def _capacity_reservation(args: MockResourceArgs, ctx: MockContext, seed: str) -> dict[str, Any]:
    return {"arn": f"arn:aws:ec2:{ctx.aws_region}:{ACCOUNT_ID}:capacity-reservation/cr-{seed}"}


def _capacity_block_offering(args: Mapping[str, Any], ctx: MockContext) -> dict[str, Any]:
    key = json.dumps(args, sort_keys=True, default=str)
    count = int(args.get("instanceCount") or 1)
    hours = int(args.get("capacityDurationHours") or 24)
    return {
        "capacityBlockOfferingId": f"cb-{digest(key)}",
        "availabilityZone": f"{ctx.aws_region}a",
        "capacityDurationHours": hours,
        "currencyCode": "USD",
        "instanceCount": count,
        "instanceType": args.get("instanceType"),
        "startDateRange": args.get("startDateRange"),
        "endDateRange": args.get("endDateRange"),
        "tenancy": "default",
        "upfrontFee": f"{count * hours * 31.464:.2f}",  # illustrative, not a quoted price
        "id": ctx.aws_region,
    }


def _eks_node_group(args: MockResourceArgs, ctx: MockContext, seed: str) -> dict[str, Any]:
    """EKS names a node group from its prefix (or the resource's name) and reports its Auto Scaling
    group: the shape of DescribeNodegroup's nodegroupArn and resources.autoScalingGroups."""
    given = args.inputs.get("nodeGroupName")
    prefix = args.inputs.get("nodeGroupNamePrefix")
    name = (
        given
        if isinstance(given, str)
        else f"{prefix if isinstance(prefix, str) else args.name + '-'}{seed[:8]}"
    )
    cluster = args.inputs.get("clusterName") if isinstance(args.inputs.get("clusterName"), str) else "cluster"
    h = digest(args.typ, args.name, "nodegroup", length=32)
    uuid = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return {
        "nodeGroupName": name,
        "arn": f"arn:aws:eks:{ctx.aws_region}:{ACCOUNT_ID}:nodegroup/{cluster}/{name}/{uuid}",
        "status": "ACTIVE",
        "resources": [
            {"autoscalingGroups": [{"name": f"eks-{name}-{uuid}"}], "remoteAccessSecurityGroupId": ""}
        ],
    }


def _vpc_endpoint(args: MockResourceArgs, _: MockContext, seed: str) -> dict[str, Any]:
    """A gateway endpoint has the service's managed prefix list (security groups name it)."""
    if (args.inputs.get("vpcEndpointType") or "Gateway") == "Gateway":
        return {"prefixListId": f"pl-{seed[:8]}"}
    return {}


RESOURCE_HOOKS = {
    "aws:ec2/launchTemplate:LaunchTemplate": _launch_template,
    "aws:eks/nodeGroup:NodeGroup": _eks_node_group,
    "aws:ec2/vpcEndpoint:VpcEndpoint": _vpc_endpoint,
    "aws:efs/fileSystem:FileSystem": _efs_file_system,
    "aws:efs/accessPoint:AccessPoint": _efs_access_point,
    "aws:ec2/capacityReservation:CapacityReservation": _capacity_reservation,
}

INVOKE_HOOKS = {
    "aws:ec2/getCapacityBlockOffering:getCapacityBlockOffering": _capacity_block_offering,
}
