"""The accelerator catalog: devices, instance types and prices, with sources.

Pure lookups, no Pulumi. An unknown name raises CatalogError (an InputError)
that lists close matches.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache

from inference_infra.components.catalog.accelerators import ACCELERATORS
from inference_infra.components.catalog.aws import AWS_INSTANCE_TYPES
from inference_infra.components.catalog.gcp import (
    GCP_GUEST_ACCELERATORS,
    GCP_INSTANCE_TYPES,
    GCP_N1_MACHINES,
    GuestAcceleratorPrice,
    N1MachinePrice,
)
from inference_infra.components.catalog.spot import SNAPSHOT_DATE as SPOT_SNAPSHOT_DATE
from inference_infra.components.catalog.spot import SpotRow, spot_row
from inference_infra.components.catalog.types import (
    Accelerator,
    AcceleratorFamily,
    Cloud,
    InstanceType,
    Price,
    PriceModel,
)
from inference_infra.components.catalog.zones import aws_zone_id
from inference_infra.components.errors import InputError, close_matches

__all__ = [
    "Accelerator",
    "AcceleratorFamily",
    "CatalogError",
    "Cloud",
    "InstanceType",
    "Price",
    "PriceModel",
    "accelerator",
    "accelerators",
    "find_instance_type",
    "gcp_guest_accelerator",
    "gcp_n1_gpu_price",
    "gcp_n1_machine",
    "hourly_price",
    "instance_type",
    "instance_types",
]


class CatalogError(InputError, KeyError):
    """A name the catalog does not know."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def _unknown(kind: str, name: str, known: Iterable[str]) -> CatalogError:
    known = sorted(known)
    hits = close_matches(name, known, limit=4)
    hint = f"close matches: {', '.join(hits)}" if hits else f"known: {_summary(known)}"
    return CatalogError(f"unknown {kind} {name!r}; {hint}.")


def _summary(names: list[str], limit: int = 12) -> str:
    shown = ", ".join(names[:limit])
    return shown + (
        f", ... ({len(names)} in all; `inference-infra catalog` lists them)" if len(names) > limit else ""
    )


@cache
def _accelerators() -> dict[str, Accelerator]:
    return {a.key: a for a in ACCELERATORS}


@cache
def _instances() -> dict[tuple[Cloud, str], InstanceType]:
    return {(i.cloud, i.name): i for i in (*AWS_INSTANCE_TYPES, *GCP_INSTANCE_TYPES)}


def accelerators(family: AcceleratorFamily | None = None) -> list[Accelerator]:
    return [a for a in ACCELERATORS if family is None or a.family == family]


def accelerator(key: str) -> Accelerator:
    try:
        return _accelerators()[key]
    except KeyError:
        raise _unknown("accelerator", key, _accelerators()) from None


def instance_types(
    cloud: Cloud | str | None = None, family: AcceleratorFamily | None = None
) -> list[InstanceType]:
    return [
        i
        for i in (*AWS_INSTANCE_TYPES, *GCP_INSTANCE_TYPES)
        if (cloud is None or i.cloud == cloud)
        and (family is None or accelerator(i.accelerator).family == family)
    ]


def find_instance_type(name: str, cloud: Cloud | str | None = None) -> InstanceType | None:
    """The catalog entry for name, or None when it is not an accelerator type we know."""
    clouds = [Cloud(cloud)] if cloud is not None else list(Cloud)
    for c in clouds:
        if (hit := _instances().get((c, name))) is not None:
            return hit
    return None


def instance_type(name: str, cloud: Cloud | str | None = None) -> InstanceType:
    """The catalog entry for name; CatalogError with close matches when unknown."""
    if (hit := find_instance_type(name, cloud)) is not None:
        return hit
    known = [n for (c, n) in _instances() if cloud is None or c == cloud]
    where = f"{Cloud(cloud).value} " if cloud is not None else ""
    raise _unknown(f"{where}accelerator instance type", name, known)


def gcp_guest_accelerator(accelerator_type: str) -> GuestAcceleratorPrice:
    """Price entry of a GPU attached to an N1 VM (`guest_accelerator`)."""
    table = {g.accelerator_type: g for g in GCP_GUEST_ACCELERATORS}
    try:
        return table[accelerator_type]
    except KeyError:
        raise _unknown("GCP guest accelerator type", accelerator_type, table) from None


def gcp_n1_machine(machine_type: str) -> N1MachinePrice:
    table = {m.name: m for m in GCP_N1_MACHINES}
    try:
        return table[machine_type]
    except KeyError:
        raise _unknown("GCP N1 machine type", machine_type, table) from None


def _regional(hourly_usd: Mapping[str, float], region: str | None) -> tuple[str, float]:
    """(where, on-demand USD) for region, falling back to the reference (first) region."""
    if region is not None and region in hourly_usd:
        return region, hourly_usd[region]
    reference = next(iter(hourly_usd))
    where = reference if region is None else f"{reference} (reference; no {region} price in the catalog)"
    return where, hourly_usd[reference]


def _discounted(on_demand: float, model: PriceModel, spot: float, committed: float) -> tuple[float, str]:
    if model is PriceModel.SPOT:
        return on_demand * (1 - spot), f"spot ~{spot:.0%} below on-demand"
    if model is PriceModel.RESERVED:
        return on_demand * (1 - committed), f"reserved ~{committed:.0%} below on-demand"
    return on_demand, "on-demand"


def _spot(
    cloud: Cloud, name: str, region: str, on_demand: float, zone: str | None = None
) -> tuple[float, str]:
    """Spot USD per hour from the dated snapshot; on-demand, saying so, when it has no data.

    With the machine's zone known, the zone's own figure where the snapshot records it (AWS rows by
    zone id; GCP prices spot per region, so its one figure is every zone's); else the region's
    highest, and the basis says why the zone's own figure was not used.
    """
    row = spot_row(cloud, name, region)
    when = SPOT_SNAPSHOT_DATE.isoformat()
    if row is None:
        return on_demand, f"spot (no {when} snapshot data for {name} in {region}; priced at on-demand)"
    snapshot = f"snapshot {row.as_of.isoformat()}"
    if zone is not None and len(row.zone_usd) == 1 and cloud is Cloud.GCP:
        return row.highest_usd, f"spot ${row.highest_usd:g}/h (zone {zone}: one price per region; {snapshot})"
    zones = len(row.zone_usd)
    spread = f"highest of {zones} zones, " if zones > 1 else ""
    if zone is not None:
        usd, why = _zone_spot(row, zone)
        if usd is not None:
            return usd, f"spot ${usd:g}/h (zone {why}; {snapshot})"
        spread = f"{spread.removesuffix(', ') or 'its one zone'}; {why}; "
    return row.highest_usd, f"spot ${row.highest_usd:g}/h ({spread}{snapshot})"


def _zone_spot(row: SpotRow, zone: str) -> tuple[float | None, str]:
    """(the zone's own spot figure, or None; the zone as the basis names it, or why there is no figure)."""
    zone_id, why = aws_zone_id(zone)
    if zone_id is None:
        return None, why
    named = zone if zone == zone_id else f"{zone} = {zone_id}"
    if not row.zones:
        return None, f"figures not recorded by zone ({named})"
    usd = row.zone_usd_of(zone_id)
    if usd is None:
        return None, f"no figure for {named}"
    return usd, named


def hourly_price(
    item: InstanceType,
    *,
    region: str | None = None,
    model: PriceModel = PriceModel.ON_DEMAND,
    count: int = 1,
    zone: str | None = None,
) -> Price:
    """Hourly USD for count machines of one type, and the basis of the figure.

    A region the table has no price for falls back to the reference region and
    says so in the basis; spot comes from the dated spot snapshot (on-demand,
    saying so, for a type or region it has no data for), at the machines' `zone`
    when it is known and the snapshot has that zone's figure, else at the
    region's highest zone; reserved applies the table's typical commitment discount.
    """
    where, on_demand = _regional(item.hourly_usd, region)
    if model is PriceModel.SPOT:
        rate, how = _spot(item.cloud, item.name, region or item.reference_region, on_demand, zone)
    else:
        rate, how = _discounted(on_demand, model, item.spot_discount, item.committed_discount)
    times = f"{count} x " if count != 1 else ""
    return Price(round(rate * count, 6), f"{times}{item.name} {how} {where}")


def gcp_n1_gpu_price(
    machine_type: str,
    accelerator_type: str,
    *,
    gpus: int = 1,
    region: str | None = None,
    model: PriceModel = PriceModel.ON_DEMAND,
) -> Price:
    """Hourly USD of one N1 VM with gpus attached GPUs (GCP bills the two separately)."""
    machine = gcp_n1_machine(machine_type)
    guest = gcp_guest_accelerator(accelerator_type)
    vm_where, vm_usd = _regional(machine.hourly_usd, region)
    gpu_where, gpu_usd = _regional(guest.hourly_usd, region)
    if model is PriceModel.SPOT:  # the VM and its GPUs each from the dated snapshot, when it has them
        vm_rate, how = _spot(Cloud.GCP, machine_type, region or vm_where, vm_usd)
        gpu_rate, gpu_how = _spot(Cloud.GCP, accelerator_type, region or gpu_where, gpu_usd)
        how = f"{how}; GPU {gpu_how}"
    else:
        vm_rate, how = _discounted(vm_usd, model, machine.spot_discount, machine.committed_discount)
        gpu_rate, _ = _discounted(gpu_usd, model, guest.spot_discount, guest.committed_discount)
    where = vm_where if vm_where == gpu_where else f"{vm_where} / {gpu_where}"
    basis = f"{machine_type} + {gpus} x {accelerator_type} {how} {where}"
    return Price(round(vm_rate + gpus * gpu_rate, 6), basis)
