"""CPU machine prices: EC2 general-purpose, compute and memory families, and GCE predefined machines.

The accelerator catalog prices machines with GPUs, Neuron chips or TPUs; this
table prices everything else a stack runs (bastions, system node groups, GKE
default pools, CPU Auto Scaling groups), so a plan's total is not silently
short. Prices are **on-demand list prices in USD per hour** (EC2: Linux, shared
tenancy), read on ``as_of`` from the snapshots named in ``source``.

The rows live in ``data/`` (kept by hand; not rebuilt by ``make catalog``, whose
SkyPilot copies hold the accelerator rows only): ``ec2_families.json`` and
``gce_machines.csv``.

EC2: one row per family. AWS prices the sizes of a family in proportion to
their size normalization factors (``large`` = 4, ``xlarge`` = 8, ...; the
table below is AWS's, from the Reserved Instances size-flexibility page), so a
row records the price of one size it was read for (``anchor``) and every other
size is that price times the ratio of factors. ``read`` lists the other sizes
read for the row: the tests check the scaling against each, and a read figure
is used as is where it exists (``t2.small`` is $0.023, not the $0.0232 the
scaling gives). us-east-1 and us-west-2 list the same rates for every family
here; other regions fall back to us-east-1, and the basis says so. ``metal``
sizes are not priced (their price is not always the largest size's).

GCE: one row per series with its per-vCPU and per-GiB rates by region; Google
bills predefined machine types as vCPUs plus memory, so a machine's price is
``vcpus x vCPU rate + GiB x GiB rate`` for the documented shapes. The rates
were derived from machine prices read in the snapshot (two shapes solve for
the two rates) and the tests check them against further machines read there.
Shared-core E2 machines (e2-micro, e2-small, e2-medium) are billed as a
fraction of a vCPU and carry their read prices as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import cache

from inference_infra.components.catalog.tables import day, document, rows
from inference_infra.components.catalog.types import Cloud

_READ = date(2026, 11, 24)  # day the GCE series' shapes and rate rows were chosen

# AWS size normalization factors (Reserved Instances size flexibility).
SIZE_FACTORS: Mapping[str, float] = {
    "nano": 0.25,
    "micro": 0.5,
    "small": 1,
    "medium": 2,
    "large": 4,
    "xlarge": 8,
    "2xlarge": 16,
    "3xlarge": 24,
    "4xlarge": 32,
    "6xlarge": 48,
    "8xlarge": 64,
    "9xlarge": 72,
    "10xlarge": 80,
    "12xlarge": 96,
    "16xlarge": 128,
    "18xlarge": 144,
    "24xlarge": 192,
    "32xlarge": 256,
    "48xlarge": 384,
}


@dataclass(frozen=True, kw_only=True)
class Ec2Family:
    """The on-demand price of one read size of an EC2 family; other sizes scale by their factors."""

    family: str
    sizes: tuple[str, ...]  # the sizes AWS sells (metal excluded)
    anchor: str  # the size whose price per region was read
    hourly_usd: Mapping[str, float]  # region -> anchor's USD per hour; the first is the reference
    read: Mapping[str, float] = field(default_factory=dict)  # other sizes read (reference region)
    source: str
    as_of: date

    @property
    def reference_region(self) -> str:
        return next(iter(self.hourly_usd))


# One family per row of data/ec2_families.json: the sizes AWS sells, the anchor size's price per
# region and the other sizes read, as SkyPilot's AWS catalog listed them (read 2026-11-24).
EC2_FAMILIES: tuple[Ec2Family, ...] = tuple(
    Ec2Family(
        family=f["family"],
        sizes=tuple(f["sizes"]),
        anchor=f["anchor"],
        hourly_usd=f["hourly_usd"],
        read=f["read"],
        source=f["source"],
        as_of=day(f["as_of"]),
    )
    for f in document("ec2_families.json")
)


@dataclass(frozen=True)
class MachinePrice:
    """The on-demand price of one CPU machine and where it came from."""

    cloud: Cloud
    name: str
    hourly_usd: float
    where: str  # the region, or "<reference> (reference; no <region> price in the catalog)"
    how: str  # "read" or how it was derived from the row
    source: str
    as_of: date


@cache
def _ec2_families() -> dict[str, Ec2Family]:
    return {f.family: f for f in EC2_FAMILIES}


def _regional(rates: Mapping[str, float], region: str | None) -> tuple[str, float]:
    if region is not None and region in rates:
        return region, rates[region]
    reference = next(iter(rates))
    where = reference if region is None else f"{reference} (reference; no {region} price in the catalog)"
    return where, rates[reference]


def ec2_price(instance_type: str, region: str | None = None) -> MachinePrice | None:
    """On-demand USD per hour of a CPU instance type, or None when the table has no row for it."""
    family_name, _, size = instance_type.partition(".")
    family = _ec2_families().get(family_name)
    if family is None or size not in family.sizes:
        return None
    where, anchor_usd = _regional(family.hourly_usd, region)
    scale = anchor_usd / family.hourly_usd[family.reference_region]
    if size == family.anchor:
        usd, how = anchor_usd, "read"
    elif size in family.read:
        usd, how = family.read[size] * scale, "read"
    else:
        factor, anchor_factor = SIZE_FACTORS[size], SIZE_FACTORS[family.anchor]
        usd = anchor_usd * factor / anchor_factor
        how = f"{family.family}.{family.anchor} x {factor:g}/{anchor_factor:g} (size factors)"
    return MachinePrice(Cloud.AWS, instance_type, round(usd, 6), where, how, family.source, family.as_of)


# --- GCE ----------------------------------------------------------------------------------------

_SKYPILOT_GCP = (
    "https://github.com/skypilot-org/skypilot-catalog/blob/006059e0f18acb1341e22a27751e9f80df6ba92f/"
    "catalogs/v8/gcp/vms.csv"
)
_GCE_PRICES = "https://cloud.google.com/compute/vm-instance-pricing"
_GCE_SHAPES = "https://cloud.google.com/compute/docs/general-purpose-machines"
# Shared-core E2 machines bill a fraction of a vCPU (0.25 / 0.5 / 1) while exposing 2; the snapshot
# lists them at 2 full vCPUs, so their vCPU fraction comes from here.
_E2_SHARED = "https://github.com/FootprintAI/telescope/pull/4"


def _gce_read() -> dict[str, tuple[float, float, dict[str, float]]]:
    out: dict[str, tuple[float, float, dict[str, float]]] = {}
    for row in rows("gce_machines.csv"):
        shape = out.setdefault(row["name"], (float(row["vcpus"]), float(row["memory_gib"]), {}))
        shape[2][row["region"]] = float(row["hourly_usd"])
    return out


# Machines read in the snapshot (data/gce_machines.csv: us-central1, us-east1, us-east4):
# machine -> (vCPUs, GiB, region -> USD/h).
GCE_READ: Mapping[str, tuple[float, float, Mapping[str, float]]] = _gce_read()


@dataclass(frozen=True, kw_only=True)
class GceSeries:
    """A GCE machine series: its predefined shapes and the rows its per-vCPU and per-GiB rates come from.

    ``rate_rows`` names two read machines with different memory per vCPU; the two rates are the
    solution of their prices (Google bills vCPUs and memory separately). A series whose read rows
    share one shape (n2d: highcpu only) has one row and prices that shape per vCPU only.
    """

    series: str
    shapes: Mapping[str, tuple[float, tuple[int, ...]]]  # shape -> (GiB per vCPU, vCPU counts sold)
    rate_rows: tuple[str, ...]
    shared_core: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # name -> (billed vCPU, GiB)
    memory_gib: Mapping[str, float] = field(default_factory=dict)  # machines off their shape's GiB per vCPU
    source: str
    as_of: date


_E2_COUNTS = (2, 4, 8, 16, 32)
_N1_COUNTS = (2, 4, 8, 16, 32, 64, 96)
_N2_COUNTS = (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)
_C3_COUNTS = (4, 8, 22, 44, 88, 176)


def _gce(series: str, shapes, rows: tuple[str, ...], **extra) -> GceSeries:
    sources = [_SKYPILOT_GCP, _GCE_PRICES, _GCE_SHAPES]
    if "shared_core" in extra:
        sources.append(_E2_SHARED)
    return GceSeries(
        series=series, shapes=shapes, rate_rows=rows, source=" ; ".join(sources), as_of=_READ, **extra
    )


GCE_SERIES: tuple[GceSeries, ...] = (
    _gce(
        "e2",
        {"standard": (4, _E2_COUNTS), "highmem": (8, _E2_COUNTS[:4]), "highcpu": (1, _E2_COUNTS)},
        ("e2-highcpu-8", "e2-highmem-16"),
        shared_core={"e2-micro": (0.25, 1), "e2-small": (0.5, 2), "e2-medium": (1, 4)},
    ),
    _gce(
        "n1",
        {"standard": (3.75, (1, *_N1_COUNTS)), "highmem": (6.5, _N1_COUNTS), "highcpu": (0.9, _N1_COUNTS)},
        ("n1-standard-16", "n1-highmem-96"),
    ),
    _gce(
        "n2",
        {"standard": (4, _N2_COUNTS), "highmem": (8, _N2_COUNTS), "highcpu": (1, _N2_COUNTS[:-1])},
        ("n2-highcpu-96", "n2-standard-96"),
        memory_gib={"n2-highmem-128": 864},  # not 8 GiB per vCPU (read in the snapshot)
    ),
    _gce("n2d", {"highcpu": (1, (*_N2_COUNTS, 224))}, ("n2d-highcpu-128",)),
    _gce(
        "c3",
        {"standard": (4, _C3_COUNTS), "highmem": (8, _C3_COUNTS), "highcpu": (2, _C3_COUNTS)},
        ("c3-standard-176", "c3-highmem-88"),
    ),
)


@dataclass(frozen=True)
class GceRates:
    """USD per vCPU-hour and per GiB-hour in one region; gib_usd is None where only one shape was read."""

    vcpu_usd: float
    gib_usd: float | None


@cache
def _gce_series() -> dict[str, GceSeries]:
    return {s.series: s for s in GCE_SERIES}


def gce_rates(series: str) -> dict[str, GceRates]:
    """Region -> rates of a series, solved from its rate rows (regions all of them were read in)."""
    rows = [GCE_READ[name] for name in _gce_series()[series].rate_rows]
    regions = [r for r in rows[0][2] if all(r in usd for _, _, usd in rows)]
    out: dict[str, GceRates] = {}
    for region in regions:
        if len(rows) == 1:  # one shape: a price per vCPU of that shape, memory included
            vcpus, _, usd = rows[0]
            out[region] = GceRates(usd[region] / vcpus, None)
            continue
        (v1, g1, usd1), (v2, g2, usd2) = rows
        det = v1 * g2 - v2 * g1
        vcpu = (usd1[region] * g2 - usd2[region] * g1) / det
        gib = (v1 * usd2[region] - v2 * usd1[region]) / det
        out[region] = GceRates(vcpu, gib)
    return out


def _gce_shape(machine_type: str) -> tuple[GceSeries, float, float] | None:
    """(series, vCPUs billed, GiB) of a predefined machine type, or None."""
    series = _gce_series().get(machine_type.split("-", 1)[0])
    if series is None:
        return None
    if machine_type in series.shared_core:
        return (series, *series.shared_core[machine_type])
    parts = machine_type.split("-")
    if len(parts) != 3 or parts[1] not in series.shapes or not parts[2].isdigit():
        return None
    gib_per_vcpu, counts = series.shapes[parts[1]]
    vcpus = int(parts[2])
    gib = series.memory_gib.get(machine_type, vcpus * gib_per_vcpu)
    return (series, vcpus, gib) if vcpus in counts else None


def gce_price(machine_type: str, region: str | None = None) -> MachinePrice | None:
    """On-demand USD per hour of a predefined GCE machine type, or None when the table cannot price it."""
    shape = _gce_shape(machine_type)
    if shape is None:
        return None
    series, vcpus, gib = shape
    rates = gce_rates(series.series)
    where, _ = _regional({r: 0.0 for r in rates}, region)
    rate = rates[region] if region in rates else rates[next(iter(rates))]
    if rate.gib_usd is None:
        # Only one shape read: the price per vCPU includes that shape's memory.
        gib_per_vcpu = series.shapes[next(iter(series.shapes))][0]
        if gib != vcpus * gib_per_vcpu:
            return None
        usd, how = vcpus * rate.vcpu_usd, f"{vcpus:g} vCPUs x ${rate.vcpu_usd:.6f}"
    else:
        usd = vcpus * rate.vcpu_usd + gib * rate.gib_usd
        how = f"{vcpus:g} vCPU x ${rate.vcpu_usd:.6f} + {gib:g} GiB x ${rate.gib_usd:.6f}"
    return MachinePrice(Cloud.GCP, machine_type, round(usd, 6), where, how, series.source, series.as_of)


def machine_price(cloud: Cloud | str, name: str, region: str | None = None) -> MachinePrice | None:
    """On-demand price of a CPU machine type (EC2 instance type or GCE machine type), or None."""
    if Cloud(cloud) is Cloud.AWS:
        return ec2_price(name, region)
    return gce_price(name, region)
