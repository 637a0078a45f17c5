"""Spot node capacity over several instance types: which types may stand in for the planner's pick (pure).

A spot group of one instance type draws on one spot capacity pool per zone: when EC2 reclaims that
type, every node goes at once, and a scale-out finds none. AWS's spot guidance is to diversify over
types of the same shape (EKS user guide, managed-node-groups "Managed node group capacity types":
"specify multiple instance types" with the same vCPU and memory; the CreateNodegroup reference
recommends several `instanceTypes` with SPOT; read 2026-12-02). EKS then launches them through the
Auto Scaling group's spot allocation strategy (price-capacity-optimized for node groups created since
2023, capacity-optimized before: same page).

A type may stand in for the pick only when the pick's pods run on it unchanged (`spot_equivalence`):

- the **same CPU architecture** (`cpu_architecture`): a node group boots one AMI type, x86_64 or arm64,
  on every type it launches, and the engine's image is built for the pick's;
- the **same accelerator device** (catalog key) and the **same count per node**: the engine's flags
  were planned for the pick (tensor parallelism = the count, the memory ceiling a fraction of the
  device memory, the weight and KV-cache formats the device supports), so the same device in the same
  number runs the same flags with the same accelerator memory and the same throughput, and the
  latency class holds;
- **at least the pick's vCPUs and memory**: each engine pod requests a share of the pick's vCPUs and
  memory (`pool_manifests.engine_requests`), so a smaller machine would leave the pod pending;
- **at most SPOT_SIZE_FACTOR times the pick's vCPUs and memory**: a larger host costs more per hour
  for the same accelerators;
- **sold as spot** (the catalog's spot discount is above 0, not a Capacity Block only type) and, where
  the catalog's spot snapshot covers the region, **offered as spot there** at **no more than the pick's
  on-demand price** in that region (its dearest zone's spot price): EC2's price-capacity-optimized
  strategy may launch any of the types, and a larger host's spot price can pass the pick's on-demand
  one (g6.8xlarge up to $1.1655/h in us-west-2 against an on-demand g6.2xlarge's $0.9776/h: spot
  snapshot of 2026-11-25, on-demand table of the catalog).

The default list is the pick plus up to SPOT_DEFAULT_TYPES - 1 of these, smallest first (the cheapest
hosts); a user's own list is held to the same rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from inference_infra.components.catalog import Cloud, InstanceType, find_instance_type, instance_types
from inference_infra.components.catalog.spot import SPOT_SNAPSHOT, spot_row

__all__ = [
    "EKS_MAX_INSTANCE_TYPES",
    "SPOT_DEFAULT_TYPES",
    "SPOT_SIZE_FACTOR",
    "cpu_architecture",
    "spot_alternatives",
    "spot_equivalence",
]

# The EKS CreateNodegroup reference: "you can specify 0-20 instance types for instanceTypes" (read
# 2026-12-02): a user's own list is held to it.
EKS_MAX_INSTANCE_TYPES = 20
# The pick and at most four alternatives by default: enough pools to ride out one type's reclaim, few
# enough that the price range stays narrow.
SPOT_DEFAULT_TYPES = 5
# An alternative's vCPUs and memory are at most this many times the pick's.
SPOT_SIZE_FACTOR = 4


# EC2's type names: a "g" right after the generation digit is an AWS Graviton (arm64) processor
# (g5g, c7gn, m6gd); "i" Intel and "a" AMD are x86_64 (Amazon EC2 Instance Types guide, "Instance type
# naming conventions", read 2026-12-02). The node group's AMI type is x86_64 (EKS_AMI_TYPES), so an
# arm64 stand-in could not boot it.
_GRAVITON = re.compile(r"[a-z]+\d+g[a-z]*")


def cpu_architecture(instance_type: str) -> str:
    """'arm64' for a Graviton type (g5g.xlarge), else 'x86_64', read from the type's name."""
    return "arm64" if _GRAVITON.fullmatch(instance_type.split(".", 1)[0]) else "x86_64"


def _spot_regions() -> frozenset[str]:
    """The AWS regions the catalog's spot snapshot covers (where it knows what is offered)."""
    return frozenset(r.region for r in SPOT_SNAPSHOT if r.cloud is Cloud.AWS)


def spot_equivalence(
    pick: InstanceType, alt: InstanceType, region: str | None, *, spot: bool = True, on_demand: bool = False
) -> str | None:
    """Why `alt` cannot stand in for `pick` (in a group that buys spot, when `spot`, and on-demand, when
    `on_demand`), or None when it can."""
    if alt.accelerator != pick.accelerator or alt.accelerator_count != pick.accelerator_count:
        return (
            f"has {alt.accelerator_count} x {alt.accelerator}; the pick {pick.name} has "
            f"{pick.accelerator_count} x {pick.accelerator}, and its engine flags (tensor parallelism, "
            "memory ceiling, formats) hold only on the same device in the same number"
        )
    if cpu_architecture(alt.name) != cpu_architecture(pick.name):
        arch, pick_arch = cpu_architecture(alt.name), cpu_architecture(pick.name)
        return (
            f"is an {arch} host; the pick {pick.name} is {pick_arch}, and the node group's AMI type and "
            "the engine's image are built for one architecture"
        )
    if alt.vcpus < pick.vcpus or alt.memory_gib < pick.memory_gib:
        return (
            f"has {alt.vcpus} vCPUs and {alt.memory_gib:g} GiB, fewer than the pick {pick.name}'s "
            f"{pick.vcpus} and {pick.memory_gib:g} GiB that the engine pods' requests are sized from"
        )
    if alt.vcpus > SPOT_SIZE_FACTOR * pick.vcpus or alt.memory_gib > SPOT_SIZE_FACTOR * pick.memory_gib:
        return (
            f"has {alt.vcpus} vCPUs and {alt.memory_gib:g} GiB, more than {SPOT_SIZE_FACTOR} times the "
            f"pick {pick.name}'s {pick.vcpus} and {pick.memory_gib:g} GiB (a dearer host for the same "
            "accelerators)"
        )
    if on_demand and alt.capacity_blocks_only:
        return (
            "is sold through EC2 Capacity Blocks only (the catalog's capacity_blocks_only), so an "
            "on-demand launch of it cannot be filled"
        )
    if not spot:
        return None
    if alt.capacity_blocks_only or alt.spot_discount <= 0:
        return "is not sold as spot (the catalog has no spot discount for it)"
    if region not in _spot_regions():
        return None
    row = spot_row(Cloud.AWS, alt.name, region)
    if row is None:
        return f"has no spot offer in {region} in the catalog's spot snapshot"
    ceiling = pick.hourly_usd.get(region) if region is not None else None
    if ceiling is not None and row.highest_usd > ceiling:
        return (
            f"costs up to ${row.highest_usd:.4f}/h as spot in {region} (its dearest zone, spot snapshot "
            f"{row.as_of}), more than an on-demand {pick.name} there (${ceiling:.4g}/h): the spot group "
            "would pay more than an on-demand node of the pick"
        )
    return None


def spot_alternatives(pick_name: str, region: str | None) -> list[str]:
    """The catalog's stand-ins for the pick in a spot group, smallest host first, at most
    SPOT_DEFAULT_TYPES - 1 (empty when the pick is not an AWS type of the catalog)."""
    pick = find_instance_type(pick_name, Cloud.AWS)
    if pick is None:
        return []
    fits = [
        t
        for t in instance_types(Cloud.AWS)
        if t.name != pick.name and spot_equivalence(pick, t, region) is None
    ]
    fits.sort(key=lambda t: (t.vcpus, t.memory_gib, t.name))
    return [t.name for t in fits[: SPOT_DEFAULT_TYPES - 1]]


def spot_types(pick_name: str, given: Sequence[str] | None, region: str | None) -> list[str]:
    """The spot group's instance types: the pick first, then the given alternatives (None: the
    catalog's), without repeats."""
    alternatives = spot_alternatives(pick_name, region) if given is None else list(given)
    return list(dict.fromkeys([pick_name, *alternatives]))
