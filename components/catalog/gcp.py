"""GCP accelerator machine types, TPU slices, and N1 VMs with attachable GPUs.

Shapes, discounts and notes are kept by hand in ``instance_types.csv``; on-demand prices per
region are rebuilt by ``make catalog`` into ``generated/gcp_prices.csv`` from pinned, committed
copies (``build.py``): GPU machines from Cyclenerd's ``pricing.yml`` (Google's Cloud Billing
Catalog), TPU slices from SkyPilot's GCP catalog, whose TPU figures are Google's per-chip rates.
What they do not price (a3-megagpu-8g in us-central1) is kept by hand in ``prices.csv``. N1 VMs and
their guest GPUs are kept by hand in ``gcp_n1.csv``. SkyPilot's GCP GPU rows disagree with Google's
price pages (the catalog README gives the figures), so only its spot figures are used for GPU
machines (``spot.py``).

Prices are Google Cloud **on-demand list prices in USD per hour**, at the date
in each row's ``as_of``. ``us-central1`` is the reference region for GPU machine
types (first key); a TPU generation's reference is the first region in its row
(``TPU_REFERENCE_REGION``), because v4 is sold only in us-central2 and v5p is
sold first in us-east5.

- A GPU machine's price is what Google bills: vCPUs and memory at the series'
  rates, the GPUs, and the bundled local SSD (A2 Ultra, A3); the price row's
  ``notes`` splits off the local SSD.
- TPU slice price = chips x per-chip-hour rate, the way GCP bills TPUs (the
  rows hold the products; the build and the tests check them against the rates).

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

from inference_infra.components.catalog.build import REFERENCE_REGION
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

# A TPU generation's reference region (the first region of its slices' price rows, which the build
# writes first): v4 is sold only in us-central2 and v5p first in us-east5.
TPU_REFERENCE_REGION = {k: v for k, v in REFERENCE_REGION.items() if k.startswith("tpu-")}


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
