"""Hourly and monthly cost of a set of resources, priced from the catalog.

The policies (the spend budget) and the offline plan both price through here.

Capacity reservations are billed whether or not anything runs in them, so a
reservation is priced in full and the instances that run inside it are priced
at zero (up to the reservation's count; any beyond it pay their own way).
Launch and instance templates describe machines without running any and are
not priced. Everything else that bills by the hour whether used or not
(volumes, file shares, NAT, load balancers, endpoints, addresses) is priced by
`pricing.resources`; what bills by traffic or bytes stored is listed with its
unit prices by `pricing.usage`, and priced when a usage file gives quantities.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from inference_infra.components.catalog import (
    CatalogError,
    Cloud,
    Price,
    PriceModel,
    find_instance_type,
    gcp_n1_gpu_price,
    hourly_price,
)
from inference_infra.components.errors import InputError, close_matches
from inference_infra.components.pricing.elastic import (
    HOURS_AT_SIZE,
    HourlyRange,
    is_elastic,
    pool_hours,
    price_range,
)
from inference_infra.components.pricing.groups import price_dearest
from inference_infra.components.pricing.karpenter import karpenter_types, node_pool_range
from inference_infra.components.pricing.machines import COMPUTE, price_machine_use
from inference_infra.components.pricing.resources import price_fixed
from inference_infra.components.pricing.sagemaker import price_variants
from inference_infra.components.pricing.usage import USAGE, apply_usage, usage_lines
from inference_infra.components.resources import (
    AcceleratorUse,
    Purchase,
    accelerator_use,
    machine_use,
    template_index,
)
from inference_infra.components.resources.links import Linked
from inference_infra.components.resources.props import get_path
from inference_infra.components.resources.schedules import schedule_index
from inference_infra.components.units import HOURS_PER_MONTH


class Priceable(Linked, Protocol):
    """What the pricer reads of a resource (a CapturedResource, or a policy pack's view of one): what
    every reader of a stack reads (`Linked`), and its name for the cost items."""

    @property
    def name(self) -> str: ...


RegionOf = Callable[[Priceable, Cloud], str | None]


ACCELERATOR = "accelerator"
SUBNET = "aws:ec2/subnet:Subnet"


@dataclass(frozen=True)
class CostItem:
    urn: str
    hourly_usd: float
    basis: str
    category: str = ACCELERATOR  # accelerator, storage, network, usage
    range: HourlyRange | None = None  # an elastic pool: hourly_usd is range.maximum

    @property
    def hourly_min(self) -> float:
        return self.range.minimum if self.range is not None else self.hourly_usd

    @property
    def hourly_expected(self) -> float:
        return self.range.expected if self.range is not None else self.hourly_usd

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "urn": self.urn,
            "hourly_usd": round(self.hourly_usd, 4),
            "basis": self.basis,
            "category": self.category,
        }
        if self.range is not None:
            out.update(
                hourly_min=round(self.range.minimum, 4),
                hourly_expected=round(self.range.expected, 4),
                hourly_max=round(self.range.maximum, 4),
                min_size=self.range.min_size,
                max_size=self.range.max_size,
                expected_size=round(self.range.expected_size, 3),
                expected_basis=self.range.expected_basis,
            )
        return out


@dataclass
class CostReport:
    items: list[CostItem] = field(default_factory=list)
    unpriced: list[tuple[str, str]] = field(default_factory=list)  # (urn, why)
    usage_based: list[Any] = field(default_factory=list)  # pricing.usage.UsageLine
    unpriced_accelerators: list[tuple[str, str]] = field(
        default_factory=list
    )  # the accelerators among unpriced
    unsized: list[tuple[str, str]] = field(default_factory=list)  # volumes sized by an image (urn, why)

    @property
    def hourly_usd(self) -> float:
        return round(float(sum(i.hourly_usd for i in self.items)), 4)

    @property
    def hourly_min(self) -> float:
        """Every elastic pool at its minimum (the rest at its price)."""
        return round(float(sum(i.hourly_min for i in self.items)), 4)

    @property
    def hourly_expected(self) -> float:
        """Every elastic pool as expected (usage file, schedule, or desired capacity)."""
        return round(float(sum(i.hourly_expected for i in self.items)), 4)

    @property
    def hourly_max(self) -> float:
        """Every elastic pool at its maximum: the same as hourly_usd."""
        return self.hourly_usd

    @property
    def elastic(self) -> list[CostItem]:
        return [i for i in self.items if i.range is not None]

    @property
    def accelerators_hourly_usd(self) -> float:
        return round(float(sum(i.hourly_usd for i in self.items if i.category == ACCELERATOR)), 4)

    @property
    def other_hourly_usd(self) -> float:
        return round(self.hourly_usd - self.accelerators_hourly_usd, 4)

    def by_urn(self) -> dict[str, list[CostItem]]:
        out: dict[str, list[CostItem]] = {}
        for i in self.items:
            out.setdefault(i.urn, []).append(i)
        return out

    @property
    def monthly_usd(self) -> float:
        return round(float(self.hourly_usd * HOURS_PER_MONTH), 2)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "hourly_usd": self.hourly_usd,
            "monthly_usd": self.monthly_usd,
            "accelerators_hourly_usd": self.accelerators_hourly_usd,
            "other_hourly_usd": self.other_hourly_usd,
            "hourly_min": self.hourly_min,
            "hourly_expected": self.hourly_expected,
            "hourly_max": self.hourly_max,
            "monthly_expected_usd": round(self.hourly_expected * HOURS_PER_MONTH, 2),
            "items": [i.as_json() for i in self.items],
            "usage_based": [u.as_json() for u in self.usage_based],
        }
        if self.unpriced:
            out["unpriced"] = [{"urn": u, "reason": r} for u, r in self.unpriced]
        if self.unsized:
            out["unsized"] = [{"urn": u, "reason": r} for u, r in self.unsized]
        return out


def default_region(cloud: Cloud, config: Mapping[str, str]) -> str | None:
    """The region a stack's provider config sets for a cloud (`aws:region`, `gcp:region` or zone)."""
    key = "aws:region" if cloud is Cloud.AWS else "gcp:region"
    if cloud is Cloud.GCP and not config.get(key) and config.get("gcp:zone"):
        return config["gcp:zone"].rsplit("-", 1)[0]
    return config.get(key)


def _model(purchase: Purchase) -> PriceModel:
    return PriceModel.SPOT if purchase is Purchase.SPOT else PriceModel.ON_DEMAND


_PURCHASE_NOTE = {
    Purchase.RESERVED: "; reserved capacity, billed whether used or not",
    Purchase.CAPACITY_BLOCK: "; Capacity Block, estimated at the on-demand rate",
}


# Accelerator-optimized GCE families: their GPUs are part of the machine type.
_GCP_BUNDLED = ("a2-", "a3-", "a4-", "a4x-", "g2-", "g4-")


def price_use(use: AcceleratorUse, region: str | None, zone: str | None = None) -> tuple[float, str]:
    """Hourly USD and basis for one accelerator use. Raises CatalogError for unknown types.

    Spot is priced at the use's zone (`zone`, an AWS zone id the stack states, else the zone the
    resource names) when the spot snapshot has that zone's figure, else at the region's highest.

    A machine type with bundled GPUs (a2, a3, g2, every EC2 type) is priced as a
    whole, whatever `guestAccelerators` repeats; an N1 VM is priced as the VM
    plus its attached GPUs (GCP allows one GPU type per VM). A group that may
    launch several types is priced at the dearest (`pricing.groups`).
    """
    if len(use.all_types) > 1:  # a group that may launch several types: priced at the dearest
        return price_dearest(use, region, price_use)
    model = _model(use.purchase)
    zone = zone or use.zone
    note = _PURCHASE_NOTE.get(use.purchase, "") + use.scaling
    item = find_instance_type(use.machine_type, use.cloud)
    if use.machine_type.startswith("ml.") and use.cloud is Cloud.AWS:  # SageMaker bills its own rate
        from inference_infra.components.catalog.sagemaker import sagemaker_price

        if (ml := sagemaker_price(use.machine_type)) is None:
            raise CatalogError(f"SageMaker instance type {use.machine_type!r} has no recorded price")
        where = "" if region in (None, "us-east-1") else f"; us-east-1 rate (no {region} rate recorded)"
        basis = f"{use.count} x {use.machine_type} SageMaker on-demand ${ml.hourly_usd:g}/h{where}"
        return ml.hourly_usd * use.count, basis + use.scaling
    if item is not None and use.spot_share is not None and 0 < use.spot_share < 1 and use.count > 0:
        # A mixed group or fleet: part on spot (its instances distribution), the rest on demand.
        spot_n = round(use.count * use.spot_share, 2)
        on_demand = hourly_price(item, region=region, model=PriceModel.ON_DEMAND, count=1)
        spot = hourly_price(item, region=region, model=PriceModel.SPOT, count=1, zone=zone)
        hourly = (use.count - spot_n) * on_demand.hourly_usd + spot_n * spot.hourly_usd
        basis = (
            f"{use.count} x {use.machine_type}, mixed by its instances distribution: "
            f"{use.count - spot_n:g} on-demand at ${on_demand.hourly_usd:.4g}/h + {spot_n:g} at the "
            f"{spot.basis.removeprefix(use.machine_type + ' ')}"
        )
        price = Price(hourly, basis)
    elif item is not None:
        price = hourly_price(item, region=region, model=model, count=use.count, zone=zone)
    elif (
        use.cloud is Cloud.GCP
        and len(use.guest_accelerators) == 1
        and not use.machine_type.startswith(_GCP_BUNDLED)  # GPUs come with the machine, not N1
    ):
        accelerator_type, gpus = use.guest_accelerators[0]
        one = gcp_n1_gpu_price(use.machine_type, accelerator_type, gpus=gpus, region=region, model=model)
        times = f"{use.count} x " if use.count != 1 else ""
        price = Price(one.hourly_usd * use.count, times + one.basis)
    else:
        raise CatalogError(f"{use.cloud.value} machine type {use.machine_type!r} is not in the catalog")
    return price.hourly_usd, price.basis + note


def stated_zone_ids(resources: Sequence[Priceable]) -> dict[str, str]:
    """Subnet id -> AWS zone id, for the subnets the stack makes by zone id (`availabilityZoneId`).

    A zone name in the oldest regions is a different zone in each account; a zone id is the same
    everywhere, so an instance in such a subnet is priced at that zone's spot figure.
    """
    found: dict[str, str] = {}
    for r in resources:
        zone_id = r.props.get("availabilityZoneId") if r.type == SUBNET else None
        if isinstance(zone_id, str) and zone_id and r.id:
            found[r.id] = zone_id
    return found


def price_resources(resources: Sequence[Priceable], default_region: RegionOf) -> CostReport:
    """Price custom resources; default_region gives the region of one whose zone is not set."""
    report = CostReport()
    templates = template_index(resources)
    schedules_of = schedule_index(resources)
    zone_ids = stated_zone_ids(resources)
    # (resource, use, is an accelerator): accelerators as the policies see them (accelerator_use),
    # every other machine (bastions, system node groups, default pools) from the CPU machine table.
    uses: list[tuple[Priceable, AcceleratorUse, bool]] = []
    for r in resources:
        accelerator = accelerator_use(r.type, r.props, templates)
        use = accelerator or machine_use(r.type, r.props, templates)
        if use is not None and not use.template:
            uses.append((r, use, accelerator is not None))

    # Slots per reservation, by every name it may be referred to with (id, name).
    slots: dict[str, list] = {}
    for r, use, _ in uses:
        if use.reservation:
            counter = [use.count, r.name]
            for ref in {r.id, r.name, r.props.get("name")} - {None}:
                slots[str(ref)] = counter

    for r, use, is_accelerator in uses:
        category = ACCELERATOR if is_accelerator else COMPUTE
        counter = slots.get(use.reservation_ref or "") if not use.reservation else None
        if counter is not None and counter[0] >= use.count:
            counter[0] -= use.count
            report.items.append(
                CostItem(r.urn, 0.0, f"runs in reservation {counter[1]} (priced there)", category)
            )
            continue
        region = use.region or default_region(r, use.cloud)
        span: HourlyRange | None = None
        try:
            if is_accelerator and is_elastic(r.type, use):
                # An elastic pool: priced at its maximum, with its minimum and expected cost beside.
                reserved = _group_reserved_slots(r, slots)
                span = price_range(use, region, price_use, schedules_of(r), reserved=reserved)
                beyond = max(span.max_size - reserved, 0)
                top = replace(use.at_count(beyond), min_count=None, max_count=None)
                head = price_use(top, region)[1] if beyond else "all in capacity reservations"
                hourly, basis = span.maximum, f"{head}; {span.describe()}"
            elif use.variants:  # a SageMaker endpoint configuration: each variant on its own
                hourly, basis, unpriced = price_variants(use, region, price_use)
                report.unpriced.extend((r.urn, why) for why in unpriced)
            elif is_accelerator:
                hourly, basis = price_use(use, region, zone_ids.get(str(r.props.get("subnetId"))))
            else:
                hourly, basis = price_machine_use(use, region)
        except CatalogError as e:
            report.unpriced.append((r.urn, str(e)))
            if is_accelerator:
                report.unpriced_accelerators.append((r.urn, str(e)))
            continue
        report.items.append(CostItem(r.urn, hourly, basis, category, span))

    for r in karpenter_types(resources):  # Karpenter pools: 0 nodes up to their limits (pricing.karpenter)
        priced = node_pool_range(r.props, r.type, default_region(r, Cloud.AWS), price_use)
        if priced is not None:
            span, basis = priced
            report.items.append(CostItem(r.urn, span.maximum, basis, ACCELERATOR, span))

    charges, unpriced, report.unsized = price_fixed(resources, default_region, templates)
    report.items.extend(CostItem(r.urn, c.hourly_usd, c.basis, c.category) for r, c in charges)
    report.unpriced.extend(unpriced)
    report.usage_based.extend(usage_lines(resources))
    return report


def _group_reserved_slots(resource: Priceable, slots: dict[str, list]) -> int:
    """Slots of the stack's capacity reservations an Auto Scaling group targets (its own
    capacityReservationSpecification), taken from those reservations so nothing else counts them."""
    ids = get_path(
        resource.props,
        "capacityReservationSpecification",
        "capacityReservationTarget",
        "capacityReservationIds",
    )
    taken = 0
    for ref in ids if isinstance(ids, list) else []:
        counter = slots.get(str(ref))
        if counter is not None and counter[0] > 0:
            taken += counter[0]
            counter[0] = 0
    return taken


def apply_usage_file(report: CostReport, usage: Mapping[str, Any], where: str = "usage file") -> None:
    """Prices the usage-based lines the usage file gives quantities for (items of category `usage`),
    and an elastic pool's expected cost from the hours at each size it gives (`hours_at_size`)."""
    usage = _apply_pool_hours(report, usage, where)
    report.usage_based = apply_usage(report.usage_based, usage, where)
    monthly: dict[str, list[str]] = {}
    totals: dict[str, float] = {}
    for line in report.usage_based:
        if line.quantity is None:
            continue
        ref = line.urn or line.name
        totals[ref] = totals.get(ref, 0.0) + (line.monthly_usd or 0.0)
        monthly.setdefault(ref, []).append(f"{line.quantity:g} {line.usage_key} x ${line.usd_per_unit:.6g}")
    for ref, usd in totals.items():
        basis = "usage file: " + " + ".join(monthly[ref]) + f" = ${usd:,.2f}/month"
        report.items.append(CostItem(ref, usd / HOURS_PER_MONTH, basis, USAGE))


def _apply_pool_hours(report: CostReport, usage: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Takes the `hours_at_size` entries out of usage (applied to the elastic pools they name) and
    returns the rest. InputError naming the pool, size or value the plan cannot take."""
    rest: dict[str, Any] = {}
    pools = {i.urn: i for i in report.items if i.range is not None}
    by_name: dict[str, list[str]] = {}
    for urn in pools:
        by_name.setdefault(urn.rsplit("::", 1)[-1], []).append(urn)
        by_name.setdefault(urn, []).append(urn)
    for name, quantities in usage.items():
        if not isinstance(quantities, Mapping) or HOURS_AT_SIZE not in quantities:
            rest[name] = quantities
            continue
        others = {k: v for k, v in quantities.items() if k != HOURS_AT_SIZE}
        if others:
            rest[name] = others
        urns = by_name.get(str(name))
        if not urns:
            hits = close_matches(str(name), sorted(n for n in by_name if "::" not in n))
            hint = (
                f"close matches: {', '.join(hits)}"
                if hits
                else "elastic pools: " + (", ".join(sorted(n for n in by_name if "::" not in n)) or "none")
            )
            raise InputError(
                f"{where}: {name}.{HOURS_AT_SIZE}: {name!r} is not an elastic pool of the plan; {hint}."
            )
        for urn in urns:
            item = pools[urn]
            span = item.range
            assert span is not None
            hours = pool_hours(quantities[HOURS_AT_SIZE], span.min_size, span.max_size, f"{where}: {name}")
            index = report.items.index(item)
            report.items[index] = replace(item, range=span.with_hours(hours, where))
    return rest
