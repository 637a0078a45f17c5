"""What a resource runs: the record every reader returns, and the small helpers the readers share.

`AcceleratorUse` is the accelerator capacity (or, from `machine_use`, any machines) one resource
runs, describes or reserves: which catalog type, how many, how it is bought. The readers by cloud
(`aws`, `gcp`, `gke`) build it from a resource's engine-shaped props; pricing prices it and the
policies judge it, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from inference_infra.components.catalog import Cloud, find_instance_type


class Purchase(StrEnum):
    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVED = "reserved"  # capacity reservation / specific reservation (billed at on-demand rates)
    CAPACITY_BLOCK = "capacity-block"


@dataclass(frozen=True)
class Variant:
    """One variant of a SageMaker endpoint configuration: its instances, or None when serverless
    (billed per use: compute time by memory size, and data processed)."""

    name: str
    use: AcceleratorUse | None


@dataclass(frozen=True)
class AcceleratorUse:
    """Accelerator capacity a resource runs, describes or reserves."""

    cloud: Cloud
    machine_type: str  # EC2 instance type, GCE machine type, or TPU slice type
    count: int  # machines (instances, VMs, slices)
    purchase: Purchase
    zone: str | None = None
    guest_accelerators: tuple[tuple[str, int], ...] = ()  # GCP N1 + attached GPUs
    reservation_ref: str | None = None  # id/name of the reservation the machine consumes
    template: bool = False  # describes machines (launch template) rather than running one
    reservation: bool = False  # reserved capacity, billed whether used or not
    min_count: int | None = None  # a scaling group's bounds (count is its desired size)
    max_count: int | None = None
    spot_share: float | None = None  # a mixed group: the share of machines above base on spot
    region_hint: str | None = None  # a regional group's region (no zone)
    # Every type a group may launch (node group instanceTypes, mixed-instances or fleet overrides,
    # Batch types), machine_type first; priced at the dearest (pricing.groups), judged by policy as all.
    alternatives: tuple[str, ...] = ()
    # A Batch compute environment counts vCPUs, not machines: (desired, min, max) vCPUs, from which
    # each type's machine count is derived (count, min_count and max_count are machine_type's).
    vcpus: tuple[int, int, int] | None = None
    # A mixed Auto Scaling group's instances distribution: (on-demand base capacity, on-demand
    # percentage above base), so its spot share can be worked out at any size (elastic pricing).
    mixed: tuple[int, int] | None = None
    # A SageMaker endpoint configuration: every production (and shadow) variant, each priced on its
    # own; machine_type and count are the first accelerator variant's, alternatives every one's type.
    variants: tuple[Variant, ...] = ()

    def at_count(self, count: int) -> AcceleratorUse:
        """The same use running `count` machines (a mixed group's spot share recomputed for it)."""
        share = self.spot_share
        if self.mixed is not None:
            base, on_demand_pct = self.mixed
            share = max(count - base, 0) * (100 - on_demand_pct) / 100 / count if count else 0.0
        return replace(self, count=count, spot_share=share)

    @property
    def all_types(self) -> tuple[str, ...]:
        return (self.machine_type, *(t for t in self.alternatives if t != self.machine_type))

    def as_type(self, name: str) -> AcceleratorUse:
        """The same use launching only `name` (one of all_types); a Batch environment's machine
        counts are its vCPUs over that type's vCPUs, rounded up."""
        if self.vcpus is None:
            return replace(self, machine_type=name, alternatives=())
        item = find_instance_type(name, self.cloud)
        if item is None:
            raise ValueError(f"Batch type {name!r} is not in the catalog")
        desired, low, high = (-(-v // item.vcpus) for v in self.vcpus)
        return replace(self, machine_type=name, alternatives=(), count=desired, min_count=low, max_count=high)

    @property
    def scaling(self) -> str:
        """'; desired 2 (min 1, max 4)' for a scaling group, else ''."""
        if self.min_count is None and self.max_count is None:
            return ""
        return f"; desired {self.count} (min {self.min_count}, max {self.max_count})"

    @property
    def region(self) -> str | None:
        return region_of_zone(self.zone) if self.zone else self.region_hint

    @property
    def in_catalog(self) -> bool:
        return find_instance_type(self.machine_type.removeprefix("ml."), self.cloud) is not None


TemplateLookup = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]
# Which machine types a reader accepts: (type name, cloud) -> bool.
Known = Callable[[str, Cloud], bool]

Reader = Callable[[Mapping[str, Any], TemplateLookup | None, Known], "AcceleratorUse | None"]

# The same record describes any machine a resource runs (machine_use), accelerator or not.
MachineUse = AcceleratorUse


def region_of_zone(zone: str) -> str:
    """'us-east-1a' -> 'us-east-1'; 'us-central1-a' -> 'us-central1'."""
    if zone[-1:].isalpha() and zone[-2:-1].isdigit():  # AWS availability zone
        return zone[:-1]
    head, _, tail = zone.rpartition("-")
    return head if head and len(tail) == 1 else zone


def last_segment(value: Any) -> str | None:
    """'projects/p/zones/us-central1-a' -> 'us-central1-a'; None for anything but a non-empty string."""
    return value.rsplit("/", 1)[-1] if isinstance(value, str) and value else None


def as_int(value: Any, default: int) -> int:
    """A number as an int (a bool is not a number here), else default."""
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default
