"""The node capacity of a Kubernetes serving pool: its arguments and their validation (pure).

Three ways to give a pool its accelerator nodes, each its own Args:

- `EksNodeGroupsArgs`: EKS managed node groups, one per capacity mode (on-demand, spot, reserved),
  each with its own launch template;
- `KarpenterNodesArgs`: a Karpenter `NodePool` + `EC2NodeClass` where the cluster runs Karpenter;
- `GkeNodePoolArgs`: a GKE node pool of GPU or TPU machines.

Every node carries the pool's labels and taints (`scheduling.node_labels` / `node_taints`), so only
the pool's pods land there. Apart from `node_capacity.py` so that the stack config and the policy
pack read them without loading a provider SDK.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import pulumi

from inference_infra.components.arguments import arg
from inference_infra.components.catalog import (
    AcceleratorFamily,
    Cloud,
    InstanceType,
    accelerator,
    find_instance_type,
    instance_types,
)
from inference_infra.components.catalog.zones import aws_region_problems
from inference_infra.components.errors import Problem, did_you_mean
from inference_infra.components.fleet import CapacityMode
from inference_infra.components.k8s.node_capacity_spot import (
    EKS_MAX_INSTANCE_TYPES,
    spot_equivalence,
    spot_types,
)
from inference_infra.components.tagging import aws_tag_problems

# A pool's name is a label value and part of resource names: a DNS-1123 label.
POOL_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
MAX_NODES = 1_000  # per node group / node pool: a guard against a mistyped count

# ---------------------------------------------------------------------------------------------------
# EKS managed node groups
# ---------------------------------------------------------------------------------------------------

# The EKS API's enums (botocore 1.44.8 data/eks/2017-11-01/service-2.json: AMITypes, CapacityTypes,
# TaintEffect), the same values pulumi-aws 7's NodeGroup passes through unchanged.
EKS_AMI_TYPES: Mapping[AcceleratorFamily, str] = {
    AcceleratorFamily.NVIDIA_GPU: "AL2023_x86_64_NVIDIA",
    AcceleratorFamily.AWS_NEURON: "AL2023_x86_64_NEURON",
}
EKS_CAPACITY_TYPES = ("ON_DEMAND", "SPOT", "CAPACITY_BLOCK")
EKS_TAINT_EFFECTS: Mapping[str, str] = {
    "NoSchedule": "NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
}
EKS_MODES = (CapacityMode.ON_DEMAND, CapacityMode.SPOT, CapacityMode.RESERVED)

_RESERVATION_ID = re.compile(r"^cr-[0-9a-f]{8}([0-9a-f]{9})?$")
_RESERVATION_ARN = re.compile(r"^arn:aws[a-z-]*:ec2:[a-z0-9-]+:\d{12}:capacity-reservation/(cr-[0-9a-f]+)$")
_RESOURCE_GROUP_ARN = re.compile(r"^arn:aws[a-z-]*:resource-groups:[a-z0-9-]+:\d{12}:group/[\w.-]+$")
_ZONE = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$")
_KMS_KEY = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)/[\w/+=,.@-]+$")
_ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+$")


@dataclass(frozen=True, kw_only=True)
class NodeSubnet:
    """A subnet the nodes may launch in, with its zone (stated, so it can be checked before deploy)."""

    id: pulumi.Input[str] = arg(doc="The subnet's id (subnet-...).")
    availability_zone: str = arg(doc="The subnet's availability zone, e.g. us-east-1a.")
    public: bool = arg(
        False, "True when the subnet routes to an internet gateway: refused, accelerator nodes are private."
    )


@dataclass(frozen=True, kw_only=True)
class EksReservation:
    """Reserved capacity for the pool's `reserved` nodes: an On-Demand Capacity Reservation (or a
    resource group of them) or an EC2 Capacity Block for ML."""

    target: str = arg(
        doc="The reservation: its id (cr-...), its ARN (arn:aws:ec2:<region>:<account>:capacity-reservation/"
        "cr-...), or a capacity reservation resource group's ARN (not with capacity_block)."
    )
    availability_zone: str = arg(doc="The reservation's zone: the reserved node group uses only its subnets.")
    capacity_block: bool = arg(
        False,
        "A Capacity Block for ML (capacity type CAPACITY_BLOCK, market type capacity-block) rather than an "
        "On-Demand Capacity Reservation.",
    )
    drained: bool = arg(
        False,
        "Capacity Block only: render the block's node group at desired size 0. EKS upgrades a Capacity "
        "Block node group only at desired size 0 (EKS user guide, capacity-blocks-mng): set it, `pulumi up` "
        "(the nodes drain), then change the template or AMI and `pulumi up`, then unset it and `pulumi up`.",
    )


@dataclass(frozen=True, kw_only=True)
class EksNodeGroupsArgs:
    """EKS managed node groups for one serving pool: one per capacity mode with nodes."""

    cluster_name: pulumi.Input[str] = arg(doc="The EKS cluster's name.", stack=False)
    pool: str = arg(doc="The serving pool's name (a DNS label): its nodes' labels and taints carry it.")
    instance_type: str = arg(doc="The node's EC2 type: the capacity planner's pick (an accelerator type).")
    spot_instance_types: Sequence[str] | None = arg(
        None,
        "The spot group's other instance types beside instance_type, each able to run the pick's pods "
        "unchanged (the same accelerator device and count per node, 1-4x its vCPUs and memory, sold as "
        "spot). Default: up to 4 such types from the catalog, offered as spot in `region`; [] keeps the "
        "spot group on the pick alone. On-demand and reserved groups always run the pick alone.",
    )
    region: str | None = arg(
        None,
        "The cluster's region (default: that of the subnets' zones): spot_instance_types keep to types "
        "the catalog's spot snapshot offers there (no filter in a region the snapshot does not cover).",
    )
    on_demand: int = arg(0, "On-demand nodes (the on-demand group's desired size).", ge=0, le=MAX_NODES)
    spot: int = arg(0, "Spot nodes (the spot group's desired size).", ge=0, le=MAX_NODES)
    reserved: int = arg(
        0,
        "Nodes on the reservation (the reserved group's desired size); needs reservation.",
        ge=0,
        le=MAX_NODES,
    )
    min_nodes: int | None = arg(
        None,
        "Each group's minimum size; default: its desired size (0 lets it scale to zero). Not a Capacity "
        "Block group's: its minimum is always 0 (EKS upgrades it only at desired size 0).",
        ge=0,
        le=MAX_NODES,
    )
    max_nodes: int | None = arg(
        None,
        "Each group's maximum size; default: its desired size (a fixed group). Not a Capacity Block "
        "group's: its maximum is the block's nodes.",
        ge=1,
        le=MAX_NODES,
    )
    reservation: EksReservation | None = arg(
        None, "The capacity reservation or Capacity Block of `reserved`."
    )
    subnets: Sequence[NodeSubnet] = arg(doc="The cluster's private subnets the nodes launch in.", stack=False)
    security_group_ids: Sequence[pulumi.Input[str]] = arg(
        doc="The nodes' security groups: the cluster security group (an eks.Cluster's "
        "vpc_config.cluster_security_group_id) and any of your own. The launch template's network "
        "interface names them, as EKS requires once a template sets one (it sets one to refuse a "
        "public IP).",
        stack=False,
    )
    node_role_arn: pulumi.Input[str] | None = arg(
        None,
        "The nodes' IAM role; default: one is created with AmazonEKSWorkerNodePolicy and "
        "AmazonEC2ContainerRegistryPullOnly (and AmazonEKS_CNI_Policy, see cni_policy).",
        stack=False,
    )
    cni_policy: bool = arg(
        True,
        "With a created role: attach AmazonEKS_CNI_Policy to it (off when the VPC CNI has its own role "
        "through IRSA or Pod Identity, as EKS recommends).",
    )
    root_volume_gib: int = arg(
        200, "The root volume (gp3, encrypted): images and the model cache.", ge=20, le=16_384
    )
    kms_key_arn: pulumi.Input[str] | None = arg(
        None, "Customer KMS key for the root volume; default: the account's aws/ebs key."
    )


def _aws_type(
    name: str, field: str, families: Sequence[AcceleratorFamily]
) -> tuple[InstanceType | None, list[Problem]]:
    found = find_instance_type(name, Cloud.AWS) if isinstance(name, str) else None
    if found is None:
        known = [t.name for t in instance_types(Cloud.AWS)]
        return None, [
            Problem(
                field,
                name,
                f"is not an accelerator instance type of the catalog{did_you_mean(str(name), known)}",
            )
        ]
    family = accelerator(found.accelerator).family
    if family not in families:
        allowed = ", ".join(f.value for f in families)
        return None, [
            Problem(field, name, f"has {family.value} accelerators; this node capacity takes {allowed}")
        ]
    return found, []


def name_problems(name: str, most: int, why: str) -> list[Problem]:
    """The component's own name, which its children's names (and the cloud's auto-names) start with."""
    if not isinstance(name, str) or not re.fullmatch(r"^[a-z][-a-z0-9]*$", name) or len(name) > most:
        return [
            Problem("name", name, f"must be 1-{most} of a-z, 0-9 and '-', starting with a letter ({why})")
        ]
    return []


def pool_problems(pool: str) -> list[Problem]:
    if not isinstance(pool, str) or not POOL_NAME.fullmatch(pool):
        return [
            Problem(
                "pool",
                pool,
                "must be a DNS label: 1-63 of a-z, 0-9 and '-', starting and ending alphanumeric",
            )
        ]
    return []


def reservation_target(reservation: EksReservation) -> dict[str, str]:
    """The launch template's capacityReservationTarget for the reservation."""
    if _RESOURCE_GROUP_ARN.fullmatch(reservation.target):
        return {"capacityReservationResourceGroupArn": reservation.target}
    arn = _RESERVATION_ARN.fullmatch(reservation.target)
    return {"capacityReservationId": arn.group(1) if arn else reservation.target}


def eks_groups(args: EksNodeGroupsArgs) -> list[tuple[CapacityMode, int]]:
    """The node groups to create: (mode, desired size) for each mode with nodes, in EKS_MODES order."""
    counts = {
        CapacityMode.ON_DEMAND: args.on_demand,
        CapacityMode.SPOT: args.spot,
        CapacityMode.RESERVED: args.reserved,
    }
    return [(mode, counts[mode]) for mode in EKS_MODES if counts[mode] > 0]


def eks_capacity_type(mode: CapacityMode, reservation: EksReservation | None) -> str:
    if mode is CapacityMode.SPOT:
        return "SPOT"
    if mode is CapacityMode.RESERVED and reservation is not None and reservation.capacity_block:
        return "CAPACITY_BLOCK"
    return "ON_DEMAND"  # on-demand, and an On-Demand Capacity Reservation's nodes


def scaling(desired: int, min_nodes: int | None, max_nodes: int | None) -> tuple[int, int, int]:
    """(min, desired, max) of one group."""
    return (desired if min_nodes is None else min_nodes, desired, desired if max_nodes is None else max_nodes)


def capacity_block_scaling(desired: int, reservation: EksReservation) -> tuple[int, int, int]:
    """(min, desired, max) of a Capacity Block group: min 0, desired the block's nodes (0 when drained),
    max the block's nodes. EKS upgrades such a group only at desired size 0 and scales it to 0 itself
    forty minutes before the block ends (EKS user guide, capacity-blocks-mng, read 2026-12-02), and a
    desired size below the minimum is refused, so the minimum is 0 whatever the pool's floor; the block
    is paid for up front, so the group runs all of it while it lasts."""
    return 0, 0 if reservation.drained else desired, desired


def group_instance_types(args: EksNodeGroupsArgs, mode: CapacityMode) -> list[str]:
    """The instance types of one group: a spot group's pick and its stand-ins, any other group's pick."""
    if mode is CapacityMode.SPOT:
        return spot_types(args.instance_type, args.spot_instance_types, eks_region(args))
    return [args.instance_type]


def eks_region(args: EksNodeGroupsArgs) -> str | None:
    """The node groups' region: `region`, else that of the subnets' zones."""
    return args.region if args.region is not None else subnets_region(args.subnets)


def validate_eks_node_groups(args: EksNodeGroupsArgs) -> list[Problem]:
    problems = pool_problems(args.pool)
    _, found = _aws_type(args.instance_type, "instance_type", list(EKS_AMI_TYPES))
    problems += found
    groups = eks_groups(args)
    if not groups and all(n >= 0 for n in (args.on_demand, args.spot, args.reserved)):
        problems.append(Problem("on_demand + spot + reserved", 0, "must be at least 1: a pool needs a node"))
    for mode, desired in groups:
        reservation = args.reservation if mode is CapacityMode.RESERVED else None
        if reservation is not None and reservation.capacity_block:
            continue  # its bounds are the block's own (capacity_block_scaling)
        low, _, high = scaling(desired, args.min_nodes, args.max_nodes)
        if not low <= desired <= high:
            problems.append(
                Problem(
                    "min_nodes/max_nodes",
                    (args.min_nodes, args.max_nodes),
                    f"must bound the {mode.value} group's desired size {desired} (min <= desired <= max)",
                )
            )
    problems += _subnet_problems(args.subnets)
    if not args.security_group_ids:
        problems.append(
            Problem("security_group_ids", [], "must name at least the cluster security group (sg-...)")
        )
    for i, group in enumerate(args.security_group_ids):
        if isinstance(group, str) and not re.fullmatch(r"^sg-[0-9a-f]{8}([0-9a-f]{9})?$", group):
            problems.append(
                Problem(f"security_group_ids[{i}]", group, "must be a security group id (sg-...)")
            )
    problems += _reservation_problems(args)
    problems += _spot_type_problems(args)
    odcr = args.reserved > 0 and args.reservation is not None and not args.reservation.capacity_block
    problems += capacity_block_only_problems(
        args.instance_type,
        [field for field, n in (("on_demand", args.on_demand), ("spot", args.spot)) if n > 0]
        + (["reserved (an On-Demand Capacity Reservation's)"] if odcr else []),
    )
    if isinstance(args.kms_key_arn, str) and not _KMS_KEY.fullmatch(args.kms_key_arn):
        problems.append(
            Problem("kms_key_arn", args.kms_key_arn, "must be a KMS key or alias ARN (arn:aws:kms:...)")
        )
    if isinstance(args.node_role_arn, str) and not _ROLE_ARN.fullmatch(args.node_role_arn):
        problems.append(
            Problem(
                "node_role_arn",
                args.node_role_arn,
                "must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)",
            )
        )
    return problems


def equivalent_type_problems(
    pick_name: str,
    names: Sequence[str],
    field: str,
    region: str | None,
    *,
    spot: bool = True,
    on_demand: bool = False,
) -> list[Problem]:
    """Each of `names` must run the pick's pods unchanged (node_capacity_spot.spot_equivalence)."""
    pick = find_instance_type(pick_name, Cloud.AWS) if isinstance(pick_name, str) else None
    if isinstance(names, str) or not isinstance(names, Sequence):
        return [Problem(field, names, "must be a list of EC2 instance types")]
    problems: list[Problem] = []
    for i, name in enumerate(names):
        alt, found = _aws_type(name, f"{field}[{i}]", list(EKS_AMI_TYPES))
        problems += found
        if pick is None or alt is None:
            continue
        why = spot_equivalence(pick, alt, region, spot=spot, on_demand=on_demand)
        if why is not None:
            fits = [t for t in spot_types(pick.name, None, region) if t != pick.name]
            sold = "".join(
                [
                    ", sold as spot" if spot else "",
                    ", sold on-demand (not Capacity Blocks only)" if on_demand else "",
                ]
            )
            problems.append(
                Problem(
                    f"{field}[{i}]",
                    name,
                    f"{why}; allowed: types with {pick.accelerator_count} x {pick.accelerator}, 1-4x the "
                    f"pick's vCPUs and memory{sold} (the catalog's spot stand-ins: "
                    f"{', '.join(fits) or 'none'})",
                )
            )
    return problems


def capacity_block_only_problems(instance_type: str, buying: Sequence[str]) -> list[Problem]:
    """A type EC2 sells through Capacity Blocks only (the catalog's capacity_blocks_only: p5e.48xlarge)
    cannot fill an on-demand or spot group: `buying` names the inputs that buy it that way."""
    item = find_instance_type(instance_type, Cloud.AWS) if isinstance(instance_type, str) else None
    if item is None or not item.capacity_blocks_only or not buying:
        return []
    return [
        Problem(
            "instance_type",
            instance_type,
            f"is sold through EC2 Capacity Blocks only, so {' and '.join(buying)} nodes of it cannot be "
            "filled: run it as reserved nodes in a Capacity Block",
        )
    ]


def _region_problems(region: str | None) -> list[Problem]:
    if region is None:
        return []
    if not isinstance(region, str):
        return [Problem("region", region, "must be an AWS region name like us-east-1")]
    return aws_region_problems("region", region)


def subnets_region(subnets: Sequence[NodeSubnet]) -> str | None:
    """The region of the subnets' zones ('us-east-1a' -> 'us-east-1') when they agree on one."""
    regions = {
        s.availability_zone[:-1]
        for s in subnets
        if isinstance(s.availability_zone, str) and _ZONE.fullmatch(s.availability_zone)
    }
    return regions.pop() if len(regions) == 1 else None


def _spot_type_problems(args: EksNodeGroupsArgs) -> list[Problem]:
    given = args.spot_instance_types
    problems: list[Problem] = []
    problems += _region_problems(args.region)
    zones_region = subnets_region(args.subnets)
    if isinstance(args.region, str) and zones_region is not None and args.region != zones_region:
        problems.append(
            Problem(
                "region",
                args.region,
                f"must be the region of the subnets' zones ({zones_region}): the spot stand-ins are held "
                "to what is offered there",
            )
        )
    if given is None:
        return problems
    problems += equivalent_type_problems(args.instance_type, given, "spot_instance_types", eks_region(args))
    if isinstance(given, Sequence) and not isinstance(given, str):
        if len(set([args.instance_type, *given])) > EKS_MAX_INSTANCE_TYPES:
            problems.append(
                Problem(
                    "spot_instance_types",
                    list(given),
                    f"with instance_type names more than the {EKS_MAX_INSTANCE_TYPES} instance types an EKS "
                    "node group takes",
                )
            )
        if given and args.spot == 0:
            problems.append(
                Problem(
                    "spot_instance_types",
                    list(given),
                    "is given but spot is 0: the list is the spot group's; set spot or leave it out",
                )
            )
    return problems


def _subnet_problems(subnets: Sequence[NodeSubnet]) -> list[Problem]:
    problems: list[Problem] = []
    if not subnets:
        problems.append(Problem("subnets", [], "must list at least one private subnet of the cluster"))
    for i, subnet in enumerate(subnets):
        if subnet.public:
            problems.append(
                Problem(
                    f"subnets[{i}].public",
                    True,
                    "is refused: accelerator nodes launch in private subnets only (no public IP, no route "
                    "from the internet); give the cluster's private subnets",
                )
            )
        if not isinstance(subnet.availability_zone, str) or not _ZONE.fullmatch(subnet.availability_zone):
            problems.append(
                Problem(
                    f"subnets[{i}].availability_zone",
                    subnet.availability_zone,
                    "must be a zone name like 'us-east-1a'",
                )
            )
    return problems


def _reservation_problems(args: EksNodeGroupsArgs) -> list[Problem]:
    r = args.reservation
    if args.reserved > 0 and r is None:
        return [
            Problem("reserved", args.reserved, "needs reservation (a capacity reservation or Capacity Block)")
        ]
    if r is None:
        return []
    problems: list[Problem] = []
    if args.reserved == 0:
        problems.append(
            Problem("reservation", r.target, "is given but reserved is 0: set reserved to the nodes it holds")
        )
    if r.drained and not r.capacity_block:
        problems.append(
            Problem(
                "reservation.drained",
                True,
                "is for a Capacity Block (capacity_block: true), whose node group EKS upgrades only at "
                "desired size 0; an On-Demand Capacity Reservation's group upgrades in place",
            )
        )
    by_id, by_arn = _RESERVATION_ID.fullmatch(r.target), _RESERVATION_ARN.fullmatch(r.target)
    by_group = _RESOURCE_GROUP_ARN.fullmatch(r.target)
    if not (by_id or by_arn or by_group):
        problems.append(
            Problem(
                "reservation.target",
                r.target,
                "must be a capacity reservation id (cr-...), its ARN, or a capacity reservation "
                "resource group ARN",
            )
        )
    elif r.capacity_block and by_group:
        problems.append(
            Problem(
                "reservation.target",
                r.target,
                "must name the Capacity Block itself (cr-... or its ARN), not a group",
            )
        )
    arn_region = (by_arn or by_group).group(0).split(":")[3] if (by_arn or by_group) else None
    if arn_region is not None and subnets_region(args.subnets) not in (None, arn_region):
        problems.append(
            Problem(
                "reservation.target",
                r.target,
                f"is in {arn_region}, not in the subnets' region {subnets_region(args.subnets)}: a "
                "reservation serves instances of its own region only",
            )
        )
    zones = sorted({s.availability_zone for s in args.subnets})
    if r.availability_zone not in zones:
        problems.append(
            Problem(
                "reservation.availability_zone",
                r.availability_zone,
                f"has no subnet among the pool's (zones {', '.join(zones) or 'none'}): reserved nodes "
                "launch in the "
                "reservation's zone",
            )
        )
    if r.capacity_block:
        family = args.instance_type.split(".", 1)[0] if isinstance(args.instance_type, str) else ""
        from inference_infra.components.aws.capacity import CAPACITY_BLOCK_FAMILIES

        if family not in CAPACITY_BLOCK_FAMILIES:
            allowed = ", ".join(sorted(CAPACITY_BLOCK_FAMILIES))
            problems.append(
                Problem(
                    "instance_type",
                    args.instance_type,
                    f"is not sold as a Capacity Block (families {allowed})",
                )
            )
    return problems


# ---------------------------------------------------------------------------------------------------
# Karpenter
# ---------------------------------------------------------------------------------------------------

# Karpenter v1.14.1 (github.com/aws/karpenter-provider-aws, tag v1.14.1, pkg/apis/crds/, read 2026-12-02).
KARPENTER_VERSION = "1.14.1"
# karpenter.sh/capacity-type values (sigs.k8s.io/karpenter v1 labels: on-demand, spot, reserved);
# `reserved` needs the reservedCapacity feature gate, beta and on by default at v1.14.1
# (charts/karpenter/values.yaml settings.featureGates.reservedCapacity: true).
KARPENTER_CAPACITY_TYPES: Mapping[CapacityMode, str] = {
    CapacityMode.ON_DEMAND: "on-demand",
    CapacityMode.SPOT: "spot",
    CapacityMode.RESERVED: "reserved",
}
# The newest AL2023 EKS AMI release in github.com/awslabs/amazon-eks-ami's tags (read 2026-12-02);
# Karpenter picks the NVIDIA or Neuron variant of that release from the instance type.
DEFAULT_AMI_ALIAS = "al2023@v20260724"
_DURATION = re.compile(r"^([0-9]+(s|m|h))+$")  # the CRD's pattern for consolidateAfter/expireAfter
_ALIAS = re.compile(r"^(al2023|bottlerocket)@v[0-9][0-9.]*$")


class ConsolidationPolicy(StrEnum):
    """NodePool spec.disruption.consolidationPolicy (CRD enum at v1.14.1; Balanced left out: it weighs
    savings against disruption, which a serving pool's owner should choose explicitly)."""

    WHEN_EMPTY = "WhenEmpty"
    WHEN_EMPTY_OR_UNDERUTILIZED = "WhenEmptyOrUnderutilized"


@dataclass(frozen=True, kw_only=True)
class KarpenterNodesArgs:
    """A Karpenter NodePool and EC2NodeClass for one serving pool (EKS with Karpenter v1)."""

    pool: str = arg(doc="The serving pool's name (a DNS label): its nodes' labels and taints carry it.")
    instance_type: str = arg(doc="The capacity planner's pick (an accelerator EC2 type).")
    alternative_instance_types: Sequence[str] | None = arg(
        None,
        "Other types Karpenter may launch besides the pick, each able to run the pick's pods unchanged (the "
        "same accelerator device and count per node, 1-4x its vCPUs and memory; sold as spot when the pool "
        "buys spot). Default: for a spot-only pool, up to 4 such types from the catalog offered as spot in "
        "`region`; otherwise none (the pick alone). [] keeps the pick alone.",
    )
    capacity_types: Sequence[CapacityMode] = arg(
        (CapacityMode.ON_DEMAND,), "How nodes are bought: on-demand, spot, reserved (capacity reservations)."
    )
    region: str | None = arg(
        None, "The cluster's region: the default alternatives keep to types offered as spot there."
    )
    max_nodes: int = arg(
        doc="The most nodes of the pick the pool may run: its accelerator limit.", ge=1, le=MAX_NODES
    )
    node_role: str = arg(doc="The IAM role name of the nodes (Karpenter creates their instance profile).")
    subnet_tags: Mapping[str, str] = arg(doc="Tags selecting the cluster's private subnets.")
    security_group_tags: Mapping[str, str] = arg(doc="Tags selecting the nodes' security groups.")
    capacity_reservation_ids: Sequence[str] = arg((), "Capacity reservations (cr-...) for `reserved` nodes.")
    ami_alias: str = arg(DEFAULT_AMI_ALIAS, "EC2NodeClass AMI alias, pinned (family@version; never @latest).")
    consolidation_policy: ConsolidationPolicy = arg(
        ConsolidationPolicy.WHEN_EMPTY,
        "WhenEmpty: remove a node once no pool pod runs on it; WhenEmptyOrUnderutilized also moves pods off.",
    )
    consolidate_after: str = arg("10m", "How long a node stays empty (or underused) before it goes.")
    expire_after: str = arg("720h", "Nodes are replaced after this long (patched AMIs); 'Never' keeps them.")
    root_volume_gib: int = arg(200, "The root volume (gp3, encrypted).", ge=20, le=16_384)
    kms_key_id: str | None = arg(None, "Customer KMS key for the root volume; default: aws/ebs.")


def karpenter_alternatives(args: KarpenterNodesArgs) -> list[str]:
    """The alternatives given, or by default the catalog's spot stand-ins of a spot-only pool."""
    if args.alternative_instance_types is not None:
        return list(args.alternative_instance_types)
    if list(args.capacity_types) == [CapacityMode.SPOT]:
        return spot_types(args.instance_type, None, args.region)[1:]
    return []


def karpenter_types(args: KarpenterNodesArgs) -> list[InstanceType]:
    """The pick and its alternatives, as catalog rows (only the known ones)."""
    names = [args.instance_type, *karpenter_alternatives(args)]
    return [t for n in dict.fromkeys(names) if (t := find_instance_type(n, Cloud.AWS)) is not None]


def karpenter_limit(args: KarpenterNodesArgs) -> int:
    """The NodePool's accelerator limit: max_nodes of the pick's accelerators."""
    pick = find_instance_type(args.instance_type, Cloud.AWS)
    return args.max_nodes * (pick.accelerator_count if pick is not None else 1)


def validate_karpenter_nodes(args: KarpenterNodesArgs) -> list[Problem]:
    problems = pool_problems(args.pool)
    _, found = _aws_type(args.instance_type, "instance_type", list(EKS_AMI_TYPES))
    problems += found
    problems += _region_problems(args.region)
    problems += capacity_block_only_problems(
        args.instance_type,
        [
            f"capacity_types {mode.value}"
            for mode in (CapacityMode.ON_DEMAND, CapacityMode.SPOT)
            if mode in list(args.capacity_types)
        ],
    )
    if args.alternative_instance_types is not None:
        problems += equivalent_type_problems(
            args.instance_type,
            args.alternative_instance_types,
            "alternative_instance_types",
            args.region,
            spot=CapacityMode.SPOT in list(args.capacity_types),
            on_demand=CapacityMode.ON_DEMAND in list(args.capacity_types),
        )
    modes = list(args.capacity_types)
    if not modes or len(set(modes)) != len(modes):
        problems.append(
            Problem("capacity_types", [str(m) for m in modes], "must list on-demand/spot/reserved once each")
        )
    for i, mode in enumerate(modes):
        if mode not in KARPENTER_CAPACITY_TYPES:
            problems.append(
                Problem(
                    f"capacity_types[{i}]",
                    str(mode),
                    "is not offered on EKS; use on-demand, spot or reserved",
                )
            )
    if CapacityMode.RESERVED in modes and not args.capacity_reservation_ids:
        problems.append(
            Problem("capacity_reservation_ids", [], "must name a reservation (cr-...) with reserved")
        )
    for i, cr in enumerate(args.capacity_reservation_ids):
        if not isinstance(cr, str) or not re.fullmatch(r"^cr-[0-9a-z]+$", cr):  # the CRD's pattern
            problems.append(
                Problem(f"capacity_reservation_ids[{i}]", cr, "must be a capacity reservation id (cr-...)")
            )
    if args.capacity_reservation_ids and CapacityMode.RESERVED not in modes:
        problems.append(
            Problem(
                "capacity_reservation_ids",
                list(args.capacity_reservation_ids),
                "need reserved in capacity_types",
            )
        )
    if not isinstance(args.node_role, str) or not re.fullmatch(r"^[\w+=,.@-]{1,64}$", args.node_role):
        problems.append(
            Problem(
                "node_role", args.node_role, "must be an IAM role name (1-64 of letters, digits, +=,.@_-)"
            )
        )
    for field in ("subnet_tags", "security_group_tags"):
        tags = getattr(args, field)
        if not tags or any(not k or not v for k, v in dict(tags).items()):
            problems.append(
                Problem(field, dict(tags), "must name at least one tag, with no empty key or value")
            )
        elif any(v == "*" for v in dict(tags).values()):
            problems.append(
                Problem(
                    field,
                    dict(tags),
                    "must not use the '*' wildcard: it selects every subnet/group with the key",
                )
            )
        else:  # a key or value no EC2 resource can carry selects nothing, and no node ever launches
            problems += aws_tag_problems(field, dict(tags), selector=True)
    if not _ALIAS.fullmatch(str(args.ami_alias)):
        problems.append(
            Problem(
                "ami_alias",
                args.ami_alias,
                "must be al2023@v<release> or bottlerocket@v<version> (pinned, not @latest)",
            )
        )
    if not _DURATION.fullmatch(str(args.consolidate_after)):
        problems.append(
            Problem("consolidate_after", args.consolidate_after, "must be a duration like 10m or 1h30m")
        )
    if args.expire_after != "Never" and not _DURATION.fullmatch(str(args.expire_after)):
        problems.append(Problem("expire_after", args.expire_after, "must be a duration like 720h, or Never"))
    return problems


# ---------------------------------------------------------------------------------------------------
# GKE
# ---------------------------------------------------------------------------------------------------


# GKE's GPU driver versions (pulumi-gcp's NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfig
# gpu_driver_version: GPU_DRIVER_VERSION_UNSPECIFIED, INSTALLATION_DISABLED, DEFAULT, LATEST).
class GpuDriverVersion(StrEnum):
    DEFAULT = "DEFAULT"
    LATEST = "LATEST"


# GKE taint effects (pulumi-gcp NodePoolNodeConfigTaint.effect: NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE).
GKE_TAINT_EFFECTS = EKS_TAINT_EFFECTS
# chips per host of a GKE TPU machine type's family, and the chips a topology dimension string names
_TPU_MACHINE = re.compile(r"^(ct5lp-hightpu|ct5p-hightpu|ct6e-standard|ct4p-hightpu)-(\d+)t$")
_TOPOLOGY = re.compile(r"^\d+x\d+(x\d+)?$")
# GKE node service account roles. GKE's minimum for a node's own account is the Kubernetes Engine
# Default Node Service Account role (logs, metrics, metadata and autoscaling metrics writers, monitoring
# viewer: cloud.google.com/kubernetes-engine/docs/how-to/service-accounts, "Grant the minimum required
# role for GKE", read 2026-12-02); logWriter and metricWriter alone leave out what the node's agents and
# the autoscaler's metrics need. Plus image pulls from Artifact Registry.
GKE_NODE_ROLES = ("roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader")


@dataclass(frozen=True, kw_only=True)
class GkeNodePoolArgs:
    """A GKE node pool of GPU or TPU machines for one serving pool."""

    cluster: pulumi.Input[str] = arg(doc="The GKE cluster (its name or id).", stack=False)
    location: str = arg(doc="The cluster's location (a region or a zone).")
    pool: str = arg(doc="The serving pool's name (a DNS label): its nodes' labels and taints carry it.")
    machine_type: str = arg(
        doc="The planner's pick: a GPU machine type (a3-highgpu-8g, g2-standard-24, ...) or a TPU one "
        "(ct5lp-hightpu-4t, ct6e-standard-4t, ...)."
    )
    node_locations: Sequence[str] = arg((), "Zones of the nodes; default: the cluster's.")
    tpu_topology: str | None = arg(
        None,
        "TPU only: the slice's topology (2x4, 4x4, ...); more chips than one host makes a multi-host slice.",
    )
    spot: bool = arg(False, "Spot VMs (discounted, may be reclaimed).")
    min_nodes: int = arg(1, "Autoscaling minimum, whole pool (0 scales to zero).", ge=0, le=MAX_NODES)
    max_nodes: int = arg(1, "Autoscaling maximum, whole pool.", ge=1, le=MAX_NODES)
    reservation: str | None = arg(None, "Consume this Compute Engine reservation (its name); not with spot.")
    gpu_driver_version: GpuDriverVersion = arg(
        GpuDriverVersion.DEFAULT,
        "GPU pools: the driver GKE installs (DEFAULT for the GKE version, or LATEST).",
    )
    disk_size_gib: int = arg(200, "Boot disk (images and the model cache).", ge=50, le=65_536)
    boot_disk_kms_key: str | None = arg(None, "Cloud KMS key for the boot disk; default: Google-managed.")
    service_account_email: pulumi.Input[str] | None = arg(
        None,
        "The nodes' service account; default: one is created with GKE's default node role "
        "(roles/container.defaultNodeServiceAccount) and Artifact Registry reader.",
        stack=False,
    )
    project: str | None = arg(None, "The project; default: the provider's.")


@dataclass(frozen=True)
class GkeShape:
    """What a GKE node pool's machine is: GPUs (type, count) or a TPU slice (chips per host, hosts)."""

    family: AcceleratorFamily
    gpu_type: str | None = None
    gpu_count: int = 0
    tpu_topology: str | None = None
    hosts: int = 1


def gke_shape(args: GkeNodePoolArgs) -> GkeShape | None:
    """The machine's accelerators, or None when the machine type is not an accelerator type."""
    tpu = _TPU_MACHINE.fullmatch(args.machine_type or "")
    if tpu:
        chips = int(tpu.group(2))
        topology = args.tpu_topology
        total = (
            math.prod(int(d) for d in topology.split("x"))
            if topology and _TOPOLOGY.fullmatch(topology)
            else chips
        )
        return GkeShape(AcceleratorFamily.GOOGLE_TPU, tpu_topology=topology, hosts=max(1, total // chips))
    found = find_instance_type(args.machine_type, Cloud.GCP) if isinstance(args.machine_type, str) else None
    if found is None:
        return None
    acc = accelerator(found.accelerator)
    if acc.family is not AcceleratorFamily.NVIDIA_GPU or acc.gcp_accelerator_type is None:
        return None
    return GkeShape(
        AcceleratorFamily.NVIDIA_GPU, gpu_type=acc.gcp_accelerator_type, gpu_count=found.accelerator_count
    )


def _tpu_topologies(machine_type: str) -> list[str]:
    """The multi-host slice topologies the catalog lists for a GKE TPU machine type's generation."""
    from inference_infra.components.resources.gke import gke_tpu_slice

    one = gke_tpu_slice(machine_type)
    if one is None:
        return []
    prefix = one.rsplit("-", 1)[0] + "-"
    return [
        t.tpu_topology
        for t in instance_types(Cloud.GCP)
        if t.name.startswith(prefix) and t.hosts > 1 and t.tpu_topology is not None
    ]


def validate_gke_node_pool(args: GkeNodePoolArgs) -> list[Problem]:
    problems = pool_problems(args.pool)
    shape = gke_shape(args)
    if shape is None:
        known = [t.name for t in instance_types(Cloud.GCP)]
        problems.append(
            Problem(
                "machine_type",
                args.machine_type,
                "must be a GPU machine type of the catalog or a GKE TPU machine type (ct5lp-hightpu-<n>t, "
                "ct5p-hightpu-<n>t, ct6e-standard-<n>t, ct4p-hightpu-<n>t)"
                + did_you_mean(str(args.machine_type), known),
            )
        )
    if args.tpu_topology is not None:
        if shape is None or shape.family is not AcceleratorFamily.GOOGLE_TPU:
            problems.append(Problem("tpu_topology", args.tpu_topology, "is for TPU machine types only"))
        elif not _TOPOLOGY.fullmatch(args.tpu_topology):
            problems.append(
                Problem("tpu_topology", args.tpu_topology, "must be AxB or AxBxC (e.g. 2x4, 4x4x4)")
            )
        else:
            chips = int(_TPU_MACHINE.fullmatch(args.machine_type).group(2))  # type: ignore[union-attr]
            total = math.prod(int(d) for d in args.tpu_topology.split("x"))
            slices = _tpu_topologies(args.machine_type)
            if total > chips and args.tpu_topology not in slices:
                problems.append(
                    Problem(
                        "tpu_topology",
                        args.tpu_topology,
                        f"is not a multi-host slice of {args.machine_type}'s TPU generation in the catalog "
                        f"(allowed: {', '.join(slices) or 'none'})",
                    )
                )
            elif total % chips:
                problems.append(
                    Problem(
                        "tpu_topology",
                        args.tpu_topology,
                        f"has {total} chips, not a multiple of the machine's {chips}",
                    )
                )
    if args.min_nodes > args.max_nodes:
        problems.append(Problem("min_nodes", args.min_nodes, f"must be at most max_nodes ({args.max_nodes})"))
    # A multi-host slice is all its hosts or none: GKE scales it atomically.
    if (
        shape is not None
        and shape.hosts > 1
        and (args.max_nodes != shape.hosts or args.min_nodes not in (0, shape.hosts))
    ):
        problems.append(
            Problem(
                "min_nodes/max_nodes",
                (args.min_nodes, args.max_nodes),
                f"must be (0 or {shape.hosts}, {shape.hosts}) for a {args.tpu_topology} slice of "
                f"{shape.hosts} hosts: a multi-host slice runs whole or not at all",
            )
        )
    if args.reservation is not None:
        if args.spot:
            problems.append(
                Problem("reservation", args.reservation, "cannot be consumed by spot nodes; unset spot")
            )
        if not re.fullmatch(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$", args.reservation):
            problems.append(Problem("reservation", args.reservation, "must be a reservation name (RFC 1035)"))
    if not re.fullmatch(r"^[a-z]+-[a-z]+\d(-[a-z])?$", str(args.location)):
        problems.append(
            Problem("location", args.location, "must be a region (us-central1) or zone (us-central1-a)")
        )
    for i, zone in enumerate(args.node_locations):
        if not re.fullmatch(r"^[a-z]+-[a-z]+\d-[a-z]$", str(zone)):
            problems.append(Problem(f"node_locations[{i}]", zone, "must be a zone like us-central1-a"))
    if args.boot_disk_kms_key is not None and not re.fullmatch(
        r"^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$", args.boot_disk_kms_key
    ):
        problems.append(
            Problem(
                "boot_disk_kms_key",
                args.boot_disk_kms_key,
                "must be projects/<p>/locations/<l>/keyRings/<r>/cryptoKeys/<k>",
            )
        )
    return problems
