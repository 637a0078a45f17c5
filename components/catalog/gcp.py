"""GCP accelerator machine types, TPU slices, and N1 VMs with attachable GPUs.

The rows live in ``data/`` and are kept by hand: shapes, discounts and notes in
``instance_types.csv``, on-demand prices per region in ``prices.csv``, N1 VMs and
their guest GPUs in ``gcp_n1.csv``. They are not rebuilt from SkyPilot's GCP
catalog, whose accelerator rows disagree with Google's price pages (the catalog
README gives the figures); its spot figures are used (``spot.py``).

Prices are Google Cloud **on-demand list prices in USD per hour**, at the date
in each row's ``as_of``. ``us-central1`` is the reference region for GPU machine
types (first key); a TPU generation's reference is the first region in its row
(``TPU_REFERENCE_REGION``), because v4 is sold only in us-central2 and v5p is
sold first in us-east5.

- A2 / A3 prices include the bundled local SSD (A2 Ultra, A3). GCP bills
  vCPUs, memory, GPUs and local SSD per unit, so the shapes of one series
  scale exactly: where only one size was read, the others are that size
  times the ratio of sizes, and the row says "derived" in ``notes``.
- G2, N1 and the N1-attachable T4 are taken from the Compute Engine price
  pages; they were checked for internal consistency (each G2 price is the
  sum of one L4 rate plus per-vCPU and per-GB rates), not against a dated
  snapshot, so their ``as_of`` is the day they were read.
- TPU slice price = chips x per-chip-hour rate, the way GCP bills TPUs (the
  rows hold the products; the tests check them against the per-chip rates).

``spot_discount`` is a conservative typical Spot VM discount (Spot prices move
up to once a month and differ by region); ``committed_discount`` is the 1-year
committed-use discount, read where the price source lists it and otherwise
assumed (said so in the row's notes).

``local_nvme_gib`` is the bundled local SSD in GiB (375 GiB per disk) and
``local_nvme_disks`` the number of disks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date

from inference_infra.components.catalog.instances import load_instance_types
from inference_infra.components.catalog.tables import by_region, day, joined, rows
from inference_infra.components.catalog.types import Cloud, InstanceType


@dataclass(frozen=True, kw_only=True)
class GuestAcceleratorPrice:
    """A GPU attached to an N1 VM through ``guest_accelerator``, priced per GPU-hour."""

    accelerator_type: str  # GCE accelerator type name, e.g. "nvidia-tesla-t4"
    accelerator: str  # catalog Accelerator.key
    hourly_usd: Mapping[str, float]  # region -> on-demand USD per GPU-hour; first is the reference
    spot_discount: float
    committed_discount: float = 0.0
    source: str
    as_of: date
    notes: str = field(default="", compare=False)


@dataclass(frozen=True, kw_only=True)
class N1MachinePrice:
    """An N1 machine type (no GPU of its own), priced per VM-hour."""

    name: str
    vcpus: int
    memory_gib: float
    hourly_usd: Mapping[str, float]  # region -> on-demand USD per hour; first is the reference
    spot_discount: float
    committed_discount: float = 0.0
    source: str
    as_of: date


GCP_INSTANCE_TYPES: tuple[InstanceType, ...] = load_instance_types(Cloud.GCP)
GCP_INSTANCE_TYPES_GPU: tuple[InstanceType, ...] = tuple(i for i in GCP_INSTANCE_TYPES if not i.tpu_topology)
GCP_TPU_SLICES: tuple[InstanceType, ...] = tuple(i for i in GCP_INSTANCE_TYPES if i.tpu_topology)

# A TPU generation's reference region (the first region of its slices' price rows): v4 is sold only
# in us-central2 and v5p first in us-east5.
TPU_REFERENCE_REGION = {
    "tpu-v4": "us-central2",
    "tpu-v5e": "us-central1",
    "tpu-v5p": "us-east5",
    "tpu-v6e": "us-central1",
}


def _n1(kind: str) -> dict[str, list[Mapping[str, str]]]:
    out: dict[str, list[Mapping[str, str]]] = {}
    for row in rows("gcp_n1.csv"):
        if row["kind"] == kind:
            out.setdefault(row["name"], []).append(row)
    return out


GCP_GUEST_ACCELERATORS: tuple[GuestAcceleratorPrice, ...] = tuple(
    GuestAcceleratorPrice(
        accelerator_type=name,
        accelerator=first["accelerator"],
        hourly_usd=by_region(regions),
        spot_discount=float(first["spot_discount"]),
        committed_discount=float(first["committed_discount"]),
        source=joined(r["source"] for r in regions),
        as_of=day(first["as_of"]),
        notes=first["notes"],
    )
    for name, regions in _n1("guest").items()
    for first in regions[:1]
)

GCP_N1_MACHINES: tuple[N1MachinePrice, ...] = tuple(
    N1MachinePrice(
        name=name,
        vcpus=int(first["vcpus"]),
        memory_gib=float(first["memory_gib"]),
        hourly_usd=by_region(regions),
        spot_discount=float(first["spot_discount"]),
        committed_discount=float(first["committed_discount"]),
        source=joined(r["source"] for r in regions),
        as_of=day(first["as_of"]),
    )
    for name, regions in _n1("machine").items()
    for first in regions[:1]
)
