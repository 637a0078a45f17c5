"""A serving pool's own node capacity, from its plan (pure: no provider SDK).

A `KubernetesServingPool` takes `nodes=` one of the specs below (or None: the cluster already has
nodes labelled and tainted for the pool by `scheduling.py`). A spec holds only where the nodes go
(cluster, subnets, security groups, roles, reservations); what they are comes from the pool's plan:

- the machine: the planner's pick (or the one given) is the EKS node group's and Karpenter's
  `instance_type`, or the GKE node pool's `machine_type`; a planned TPU slice (`v5litepod-4`) becomes
  GKE's machine type and topology (`ct5lp-hightpu-4t`, `2x2`) by the catalog;
- the counts per capacity mode, times the plan's hosts per replica (a replica spanning hosts is a
  LeaderWorkerSet group of that many nodes): on EKS each mode is a managed node group of that capacity type
  (`on_demand`, `spot`, `reserved`), on Karpenter the NodePool's capacity types with a limit of the
  pool's peak, on GKE one node pool per mode (spot or not, a reservation for `reserved`);
- with `elastic`, the groups scale between the plan's floor (working hours' minimum, or the
  off-hours size) and their peak; without, they are fixed at the counts.

`pool_node_args` turns a spec and a plan into the node components' Args; the Args' own checks
(node_capacity_args.py) then run before anything is registered, keyed under `nodes.`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from inference_infra.components.arguments import arg
from inference_infra.components.catalog import Cloud, find_instance_type
from inference_infra.components.errors import Problem
from inference_infra.components.fleet import CapacityMode
from inference_infra.components.k8s.node_capacity_args import (
    DEFAULT_AMI_ALIAS,
    MAX_NODES,
    ConsolidationPolicy,
    EksNodeGroupsArgs,
    EksReservation,
    GkeNodePoolArgs,
    GpuDriverVersion,
    KarpenterNodesArgs,
    NodeSubnet,
    validate_eks_node_groups,
    validate_gke_node_pool,
    validate_karpenter_nodes,
)

__all__ = [
    "PoolEksNodeGroups",
    "PoolGkeNodePools",
    "PoolKarpenterNodes",
    "gke_tpu_machine",
    "pool_node_args",
    "pool_node_problems",
]


@dataclass(frozen=True, kw_only=True)
class PoolEksNodeGroups:
    """The pool's nodes as EKS managed node groups, one per capacity mode of its counts."""

    cluster_name: pulumi.Input[str] = arg(doc="The EKS cluster's name.", stack=False)
    subnets: Sequence[NodeSubnet] = arg(doc="The cluster's private subnets the nodes launch in.", stack=False)
    security_group_ids: Sequence[pulumi.Input[str]] = arg(
        doc="The nodes' security groups (at least the cluster security group).", stack=False
    )
    reservation: EksReservation | None = arg(None, "The capacity reservation of the pool's `reserved` nodes.")
    spot_instance_types: Sequence[str] | None = arg(
        None,
        "The spot group's other types beside the pick, each running the pick's pods unchanged; default: up "
        "to 4 from the catalog (EksNodeGroupsArgs); [] for the pick alone.",
    )
    node_role_arn: pulumi.Input[str] | None = arg(
        None, "The nodes' IAM role; default: one is created (EksNodeGroupsArgs).", stack=False
    )
    cni_policy: bool = arg(True, "With a created role: attach AmazonEKS_CNI_Policy.")
    root_volume_gib: int = arg(200, "The root volume (gp3, encrypted).", ge=20, le=16_384)
    kms_key_arn: pulumi.Input[str] | None = arg(None, "Customer KMS key for the root volume.")


@dataclass(frozen=True, kw_only=True)
class PoolKarpenterNodes:
    """The pool's nodes from a Karpenter NodePool (the cluster runs Karpenter 1.14)."""

    node_role: str = arg(doc="The nodes' IAM role name.")
    subnet_tags: Mapping[str, str] = arg(doc="Tags selecting the cluster's private subnets.")
    security_group_tags: Mapping[str, str] = arg(doc="Tags selecting the nodes' security groups.")
    alternative_instance_types: Sequence[str] | None = arg(
        None,
        "Other types Karpenter may launch, each running the pick's pods unchanged; default: a spot-only "
        "pool's catalog stand-ins (KarpenterNodesArgs); [] for the pick alone.",
    )
    capacity_reservation_ids: Sequence[str] = arg((), "Capacity reservations (cr-...) for `reserved` nodes.")
    ami_alias: str = arg(DEFAULT_AMI_ALIAS, "EC2NodeClass AMI alias, pinned.")
    consolidation_policy: ConsolidationPolicy = arg(ConsolidationPolicy.WHEN_EMPTY, "When a node goes.")
    consolidate_after: str = arg("10m", "How long a node stays empty before it goes.")
    root_volume_gib: int = arg(200, "The root volume (gp3, encrypted).", ge=20, le=16_384)


@dataclass(frozen=True, kw_only=True)
class PoolGkeNodePools:
    """The pool's nodes as GKE node pools, one per capacity mode of its counts."""

    cluster: pulumi.Input[str] = arg(doc="The GKE cluster (its name or id).", stack=False)
    location: str = arg(doc="The cluster's location (a region or a zone).")
    node_locations: Sequence[str] = arg((), "Zones of the nodes; default: the cluster's.")
    reservation: str | None = arg(None, "The Compute Engine reservation of the pool's `reserved` nodes.")
    gpu_driver_version: GpuDriverVersion = arg(
        GpuDriverVersion.DEFAULT, "GPU pools: the driver GKE installs."
    )
    disk_size_gib: int = arg(200, "Boot disk.", ge=50, le=65_536)
    project: str | None = arg(None, "The project; default: the provider's.")


PoolNodes = PoolEksNodeGroups | PoolKarpenterNodes | PoolGkeNodePools


def gke_tpu_machine(tpu_slice: str) -> tuple[str, str | None] | None:
    """'v5litepod-4' -> ('ct5lp-hightpu-4t', '2x2'): GKE's machine type and topology of a one-host slice
    of the catalog; None for a slice that is not one host of a GKE TPU machine family."""
    # The inverse of the GKE reader's table (components/resources/gke.py: ct5lp-hightpu-4t runs
    # v5litepod-4; v5p and v4 name a slice by TensorCores, two a chip), so the node pool a pool makes
    # reads back as the slice it planned.
    from inference_infra.components.resources.gke import gke_tpu_slice, gke_tpu_units

    prefix, _, size = tpu_slice.rpartition("-")
    found = find_instance_type(tpu_slice, Cloud.GCP)
    if not size.isdigit() or found is None or found.hosts != 1:
        return None
    for family, (slice_prefix, units) in gke_tpu_units().items():
        machine = f"{family}-{int(size) // units}t"
        if slice_prefix == prefix and gke_tpu_slice(machine) == tpu_slice:
            return machine, found.tpu_topology
    return None


# Reserved first (billed anyway), then spot, then on-demand: the order a plan fills its counts in.
_MODES = (CapacityMode.RESERVED, CapacityMode.SPOT, CapacityMode.ON_DEMAND)


def _floor(plan: Any) -> int | None:
    """Nodes an elastic pool keeps: the fewer of its working hours' minimum and its off-hours size (in
    replicas), times the nodes of a replica."""
    scaling = plan.scaling
    if scaling is None:
        return None
    off_hours = scaling.schedule.off_hours_size if scaling.schedule is not None else scaling.min_size
    return min(scaling.min_size, off_hours) * _hosts(plan)


def _hosts(plan: Any) -> int:
    """Nodes one replica takes: its hosts (a LeaderWorkerSet group), else 1."""
    return int(getattr(plan, "hosts_per_replica", 1) or 1)


@dataclass(frozen=True)
class _NodeCounts:
    """The plan's counts per capacity mode in nodes: replicas times the nodes of one."""

    on_demand: int
    spot: int
    reserved: int

    @classmethod
    def of_plan(cls, plan: Any) -> _NodeCounts:
        counts, hosts = plan.counts, _hosts(plan)
        return cls(counts.on_demand * hosts, counts.spot * hosts, counts.reserved * hosts)

    @property
    def total(self) -> int:
        return self.on_demand + self.spot + self.reserved

    def of(self, mode: CapacityMode) -> int:
        return {CapacityMode.ON_DEMAND: self.on_demand, CapacityMode.SPOT: self.spot}.get(
            mode, self.reserved if mode is CapacityMode.RESERVED else 0
        )


def _short(name: str, suffix: str, most: int) -> str:
    """`<name>-<suffix>`, cut to `most` with a digest of the name so two long pools never collide."""
    full = f"{name}-{suffix}"
    if len(full) <= most:
        return full
    digest = hashlib.sha256(name.encode()).hexdigest()[:5]
    keep = most - len(suffix) - len(digest) - 2
    return f"{name[:keep].rstrip('-')}-{digest}-{suffix}"


def pool_node_args(
    name: str, nodes: PoolNodes, plan: Any, region: str | None = None
) -> list[tuple[str, Any]]:
    """(component name, Args) of the node capacity a pool's plan asks for (empty without a machine);
    `region` is the cluster's (the spot stand-ins' availability)."""
    machine, counts = plan.machine, _NodeCounts.of_plan(plan)
    if machine is None:
        return []
    floor = _floor(plan)
    if isinstance(nodes, PoolEksNodeGroups):
        groups = [c for c in (counts.on_demand, counts.spot, counts.reserved) if c > 0]
        # One floor for every group (EksNodeGroupsArgs' bounds are shared): the plan's floor, at most the
        # smallest group's size, so each group still holds its desired size.
        low = None if floor is None or not groups else min(floor, min(groups))
        args = EksNodeGroupsArgs(
            cluster_name=nodes.cluster_name,
            pool=name,
            instance_type=machine,
            spot_instance_types=nodes.spot_instance_types,
            region=region,
            on_demand=counts.on_demand,
            spot=counts.spot,
            reserved=counts.reserved,
            min_nodes=low,
            reservation=nodes.reservation,
            subnets=nodes.subnets,
            security_group_ids=nodes.security_group_ids,
            node_role_arn=nodes.node_role_arn,
            cni_policy=nodes.cni_policy,
            root_volume_gib=nodes.root_volume_gib,
            kms_key_arn=nodes.kms_key_arn,
        )
        return [(f"{name}-nodes", args)]
    if isinstance(nodes, PoolKarpenterNodes):
        modes = [m for m in _MODES if counts.of(m)]
        args = KarpenterNodesArgs(
            pool=name,
            instance_type=machine,
            alternative_instance_types=nodes.alternative_instance_types,
            capacity_types=modes,
            region=region,
            max_nodes=max(1, min(counts.total, MAX_NODES)),
            node_role=nodes.node_role,
            subnet_tags=nodes.subnet_tags,
            security_group_tags=nodes.security_group_tags,
            capacity_reservation_ids=nodes.capacity_reservation_ids,
            ami_alias=nodes.ami_alias,
            consolidation_policy=nodes.consolidation_policy,
            consolidate_after=nodes.consolidate_after,
            root_volume_gib=nodes.root_volume_gib,
        )
        return [(f"{name}-nodes", args)]
    tpu = gke_tpu_machine(machine)
    machine_type, topology = tpu if tpu is not None else (machine, None)
    out = []
    for mode, suffix in zip(_MODES, ("rsv", "spot", "od"), strict=True):
        count = counts.of(mode)
        if count == 0:
            continue
        # The floor goes to the first mode's pool (reserved first: billed anyway, then spot, on-demand).
        low = count if floor is None else (min(floor, count) if not out else 0)
        args = GkeNodePoolArgs(
            cluster=nodes.cluster,
            location=nodes.location,
            pool=name,
            machine_type=machine_type,
            node_locations=nodes.node_locations,
            tpu_topology=topology,
            spot=mode is CapacityMode.SPOT,
            min_nodes=low,
            max_nodes=count,
            reservation=nodes.reservation if mode is CapacityMode.RESERVED else None,
            gpu_driver_version=nodes.gpu_driver_version,
            disk_size_gib=nodes.disk_size_gib,
            project=nodes.project,
        )
        out.append((_short(name, suffix, 27), args))
    return out


def pool_node_problems(
    name: str, nodes: PoolNodes | None, plan: Any, cloud: Cloud, region: str | None = None
) -> list[Problem]:
    """The node capacity's own checks on the Args the plan gives it, keyed `nodes.<input>`."""
    if nodes is None or plan.machine is None:
        return []
    on_aws = isinstance(nodes, (PoolEksNodeGroups, PoolKarpenterNodes))
    if on_aws != (cloud is Cloud.AWS):
        kind = type(nodes).__name__
        allowed = "PoolEksNodeGroups or PoolKarpenterNodes" if cloud is Cloud.AWS else "PoolGkeNodePools"
        return [Problem("nodes", kind, f"does not fit a {cloud.value} cluster: give {allowed}")]
    if isinstance(nodes, PoolGkeNodePools) and plan.counts.reserved and nodes.reservation is None:
        return [Problem("nodes.reservation", None, "is required for the pool's reserved nodes")]
    problems = []
    for _, args in pool_node_args(name, nodes, plan, region):
        check = {
            EksNodeGroupsArgs: validate_eks_node_groups,
            KarpenterNodesArgs: validate_karpenter_nodes,
            GkeNodePoolArgs: validate_gke_node_pool,
        }[type(args)]
        problems += [Problem(f"nodes.{p.input}", p.value, p.allowed) for p in check(args)]
    unique: dict[str, Problem] = {str(p): p for p in problems}  # the same check of each GKE pool once
    return list(unique.values())
