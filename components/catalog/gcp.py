"""GCP accelerator machine types, TPU slices, and N1 VMs with attachable GPUs.

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
- TPU slice price = chips x per-chip-hour rate, the way GCP bills TPUs.

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

from inference_infra.components.catalog.types import Cloud, InstanceType

_READ = date(2026, 11, 21)  # day a figure was read when its source carries no date
_CYCLENERD_2025 = date(2025, 3, 6)  # pricing.yml "generated: Thu Mar 6 2025"
_CYCLENERD_2026 = date(2026, 2, 12)  # pricing.yml "generated: Thu Feb 12 2026"

_VM_PRICES = "https://cloud.google.com/compute/vm-instance-pricing"
_GPU_PRICES = "https://cloud.google.com/compute/gpus-pricing"
_CYCLENERD = "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/master/pricing.yml"
_SKYPILOT = "https://github.com/skypilot-org/skypilot-catalog/blob/master/catalogs/v8/gcp/vms.csv"
_ACCEL_MACHINES = "https://cloud.google.com/compute/docs/accelerator-optimized-machines"
_GPU_MACHINES = "https://cloud.google.com/compute/docs/gpus"
_TPU_PRICES = "https://cloud.google.com/tpu/pricing"
_GPUHUNT_TPU = "https://github.com/dstackai/gpuhunt/blob/main/src/gpuhunt/resources/tpu_pricing.json"

_LOCAL_SSD_GIB = 375  # one GCP local SSD disk


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


def _gce(
    name: str,
    accelerator: str,
    count: int,
    vcpus: int,
    memory_gib: float,
    ssd_disks: int,
    hourly_usd: dict[str, float],
    *,
    spot: float,
    committed: float,
    source: str,
    as_of: date,
    notes: str = "",
) -> InstanceType:
    return InstanceType(
        cloud=Cloud.GCP,
        name=name,
        accelerator=accelerator,
        accelerator_count=count,
        vcpus=vcpus,
        memory_gib=memory_gib,
        local_nvme_gib=float(ssd_disks * _LOCAL_SSD_GIB),
        local_nvme_disks=ssd_disks,
        hourly_usd=hourly_usd,
        spot_discount=spot,
        committed_discount=committed,
        source=source,
        as_of=as_of,
        notes=notes,
    )


def _scaled(base: Mapping[str, float], factor: float) -> dict[str, float]:
    return {region: round(usd * factor, 6) for region, usd in base.items()}


# --- G2: NVIDIA L4. No bundled local SSD (it can be added and is billed apart). ---
_G2_SOURCE = f"{_GPU_PRICES} ; {_VM_PRICES} ; {_GPU_MACHINES}"
_G2 = (
    # name, GPUs, vCPUs, GB, us-central1 USD/h
    ("g2-standard-4", 1, 4, 16, 0.70683228),
    ("g2-standard-8", 1, 8, 32, 0.85362732),
    ("g2-standard-12", 1, 12, 48, 1.00042236),
    ("g2-standard-16", 1, 16, 64, 1.1472174),
    ("g2-standard-32", 1, 32, 128, 1.73439756),
    ("g2-standard-24", 2, 24, 96, 2.00084472),
    ("g2-standard-48", 4, 48, 192, 4.00168944),
    ("g2-standard-96", 8, 96, 384, 8.00337888),
)

# --- A2 High: NVIDIA A100 40GB. Read: 1g and 2g (Cyclenerd, 2025-03-06); 1y CUD 37%, Spot ~65%. ---
_A2_HIGH_1G = {"us-central1": 3.673385, "us-east1": 3.673385}
_A2_HIGH_SOURCE = f"{_CYCLENERD} ; {_GPU_PRICES} ; {_ACCEL_MACHINES}"

# --- A2 Ultra: NVIDIA A100 80GB, 375 GiB local SSD per GPU. Read: 8g (Cyclenerd, 2026-02-12). ---
_A2_ULTRA_8G = {"us-central1": 40.5503831, "us-east4": 45.6618598}
_A2_ULTRA_SOURCE = _A2_HIGH_SOURCE

# --- A3 High: NVIDIA H100 80GB, 2 local SSD disks per GPU. Read: 1g (Cyclenerd, 2026-02-12). ---
_A3_HIGH_1G = {"us-central1": 11.06125, "us-east4": 11.06947}
_A3_SOURCE = _A2_HIGH_SOURCE
_A3_SMALL = "a3-highgpu-1g/2g/4g are offered as Spot or Flex-start VMs only; on-demand-equivalent list price."


def _a2_high(name: str, gpus: int, vcpus: int, memory: int, read: bool) -> InstanceType:
    return _gce(
        name,
        "a100-40gb",
        gpus,
        vcpus,
        memory,
        0,
        _scaled(_A2_HIGH_1G, gpus),
        spot=0.6,
        committed=0.37,
        source=_A2_HIGH_SOURCE,
        as_of=_CYCLENERD_2025,
        notes="" if read else "derived: a2-highgpu-1g x GPUs",
    )


def _a2_ultra(name: str, gpus: int, vcpus: int, memory: int) -> InstanceType:
    return _gce(
        name,
        "a100-80gb",
        gpus,
        vcpus,
        memory,
        gpus,
        _scaled(_A2_ULTRA_8G, gpus / 8),
        spot=0.55,
        committed=0.3,
        source=_A2_ULTRA_SOURCE,
        as_of=_CYCLENERD_2026,
        notes=("" if gpus == 8 else "derived: a2-ultragpu-8g x GPUs/8. ")
        + "1y CUD assumed (not listed by the price source).",
    )


def _a3_high(name: str, gpus: int, vcpus: int, memory: int) -> InstanceType:
    return _gce(
        name,
        "h100-80gb",
        gpus,
        vcpus,
        memory,
        2 * gpus,
        _scaled(_A3_HIGH_1G, gpus),
        spot=0.55,
        committed=0.3,
        source=_A3_SOURCE,
        as_of=_CYCLENERD_2026,
        notes=("" if gpus == 1 else "derived: a3-highgpu-1g x GPUs. ") + (_A3_SMALL if gpus < 8 else ""),
    )


GCP_INSTANCE_TYPES_GPU: tuple[InstanceType, ...] = (
    *(
        _gce(
            name,
            "l4",
            gpus,
            vcpus,
            memory,
            0,
            {"us-central1": usd},
            spot=0.6,
            committed=0.3,
            source=_G2_SOURCE,
            as_of=_READ,
            notes="1y CUD assumed (GPU CUDs are 37% for most GPUs; rounded down).",
        )
        for name, gpus, vcpus, memory, usd in _G2
    ),
    _a2_high("a2-highgpu-1g", 1, 12, 85, read=True),
    _a2_high("a2-highgpu-2g", 2, 24, 170, read=True),
    _a2_high("a2-highgpu-4g", 4, 48, 340, read=False),
    _a2_high("a2-highgpu-8g", 8, 96, 680, read=False),
    _gce(
        "a2-megagpu-16g",
        "a100-40gb",
        16,
        96,
        1360,
        0,
        {"us-central1": 55.73946},
        spot=0.6,
        committed=0.37,
        source=f"{_SKYPILOT} ; {_CYCLENERD} ; {_GPU_PRICES}",
        as_of=_READ,
        notes="derived: host 8.79698 (SkyPilot catalog) + 16 x A100 40GB 2.933905 "
        "(a2-highgpu-1g minus its host); matches the 55.74 on GCP's page.",
    ),
    _a2_ultra("a2-ultragpu-1g", 1, 12, 170),
    _a2_ultra("a2-ultragpu-2g", 2, 24, 340),
    _a2_ultra("a2-ultragpu-4g", 4, 48, 680),
    _a2_ultra("a2-ultragpu-8g", 8, 96, 1360),
    _a3_high("a3-highgpu-1g", 1, 26, 234),
    _a3_high("a3-highgpu-2g", 2, 52, 468),
    _a3_high("a3-highgpu-4g", 4, 104, 936),
    _a3_high("a3-highgpu-8g", 8, 208, 1872),
    _gce(
        "a3-megagpu-8g",
        "h100-mega-80gb",
        8,
        208,
        1872,
        16,
        {"us-central1": 92.87},
        spot=0.55,
        committed=0.3,
        source=f"{_SKYPILOT} ; {_CYCLENERD} ; {_ACCEL_MACHINES}",
        as_of=_READ,
        notes="derived, low confidence: 8 x H100 Mega 82.75421 + A3 host 9.46006 (SkyPilot catalog) "
        "+ 6000 GiB local SSD at the A3 rate 0.6575. The SkyPilot H100 rows disagree between "
        "regions; no single published a3-megagpu-8g total was found.",
    ),
)


# --- TPU slices -------------------------------------------------------------------------------

TPU_REFERENCE_REGION = {
    "tpu-v4": "us-central2",
    "tpu-v5e": "us-central1",
    "tpu-v5p": "us-east5",
    "tpu-v6e": "us-central1",
}


@dataclass(frozen=True)
class _TpuGeneration:
    accelerator: str
    per_chip_usd: Mapping[str, float]  # region -> USD per chip-hour; first is the reference
    spot: float
    committed: float
    source: str
    as_of: date
    notes: str = ""


_V5E = _TpuGeneration(
    "tpu-v5e",
    {"us-central1": 1.2, "us-east5": 1.2},
    spot=0.5,  # Spot $0.60 per chip-hour
    committed=0.3,  # 1y $0.84
    source=f"{_TPU_PRICES} ; {_GPUHUNT_TPU} ; https://cloud.google.com/tpu/docs/v5e",
    as_of=_READ,
)
_V6E = _TpuGeneration(
    "tpu-v6e",
    {"us-central1": 2.7, "us-east5": 2.7},
    spot=0.5,  # Spot $1.215 in us-east5, lower in us-central1
    committed=0.3,
    source=f"{_TPU_PRICES} ; {_SKYPILOT} ; https://cloud.google.com/tpu/docs/v6e",
    as_of=_READ,
    notes="1y CUD assumed (30%, as v5e and v5p); not listed by the price source.",
)
_V5P = _TpuGeneration(
    "tpu-v5p",
    {"us-east5": 4.2, "us-central1": 4.2},
    spot=0.5,  # Spot $2.10
    committed=0.3,  # 1y $2.94
    source=f"{_TPU_PRICES} ; {_GPUHUNT_TPU} ; {_SKYPILOT} ; https://cloud.google.com/tpu/docs/v5p",
    as_of=_READ,
)
_V4 = _TpuGeneration(
    "tpu-v4",
    {"us-central2": 3.22},
    spot=0.5,  # Spot $0.966 (70% off) per the source; kept conservative
    committed=0.37,  # 1y $2.0286
    source=f"{_TPU_PRICES} ; {_GPUHUNT_TPU} ; https://cloud.google.com/tpu/docs/v4",
    as_of=_READ,
)


def _slice(
    gen: _TpuGeneration, name: str, chips: int, topology: str, hosts: int, host_vcpus: int, host_gib: float
) -> InstanceType:
    return InstanceType(
        cloud=Cloud.GCP,
        name=name,
        accelerator=gen.accelerator,
        accelerator_count=chips,
        vcpus=hosts * host_vcpus,
        memory_gib=hosts * host_gib,
        hourly_usd=_scaled(gen.per_chip_usd, chips),
        spot_discount=gen.spot,
        committed_discount=gen.committed,
        tpu_topology=topology,
        hosts=hosts,
        source=gen.source,
        as_of=gen.as_of,
        notes=gen.notes,
    )


# v5e (v5litepod-N, N = chips): 1-, 4- and 8-chip single-host VMs (ct5lp-hightpu-1t/4t/8t);
# multi-host slices are built from 4-chip hosts (112 vCPU, 192 GB).
_V5E_SLICES = (
    _slice(_V5E, "v5litepod-1", 1, "1x1", 1, 24, 48),
    _slice(_V5E, "v5litepod-4", 4, "2x2", 1, 112, 192),
    _slice(_V5E, "v5litepod-8", 8, "2x4", 1, 224, 384),
    _slice(_V5E, "v5litepod-16", 16, "4x4", 4, 112, 192),
    _slice(_V5E, "v5litepod-32", 32, "4x8", 8, 112, 192),
    _slice(_V5E, "v5litepod-64", 64, "8x8", 16, 112, 192),
    _slice(_V5E, "v5litepod-128", 128, "8x16", 32, 112, 192),
    _slice(_V5E, "v5litepod-256", 256, "16x16", 64, 112, 192),
)

# v6e (v6e-N, N = chips): single-host 1/4/8-chip VMs (ct6e-standard-1t/4t/8t);
# multi-host slices are built from 4-chip hosts (180 vCPU, 720 GB).
_V6E_SLICES = (
    _slice(_V6E, "v6e-1", 1, "1x1", 1, 44, 176),
    _slice(_V6E, "v6e-4", 4, "2x2", 1, 180, 720),
    _slice(_V6E, "v6e-8", 8, "2x4", 1, 180, 1440),
    _slice(_V6E, "v6e-16", 16, "4x4", 4, 180, 720),
    _slice(_V6E, "v6e-32", 32, "4x8", 8, 180, 720),
    _slice(_V6E, "v6e-64", 64, "8x8", 16, 180, 720),
    _slice(_V6E, "v6e-128", 128, "8x16", 32, 180, 720),
    _slice(_V6E, "v6e-256", 256, "16x16", 64, 180, 720),
)

# v5p-N and v4-N count TensorCores (2 per chip): v5p-8 is 4 chips on one host.
# Every host carries 4 chips (v5p: 208 vCPU, 448 GB; v4: 240 vCPU, 407 GB).
_V5P_SLICES = (
    _slice(_V5P, "v5p-8", 4, "2x2x1", 1, 208, 448),
    _slice(_V5P, "v5p-16", 8, "2x2x2", 2, 208, 448),
    _slice(_V5P, "v5p-32", 16, "2x2x4", 4, 208, 448),
    _slice(_V5P, "v5p-64", 32, "2x4x4", 8, 208, 448),
    _slice(_V5P, "v5p-128", 64, "4x4x4", 16, 208, 448),
)
_V4_SLICES = (
    _slice(_V4, "v4-8", 4, "2x2x1", 1, 240, 407),
    _slice(_V4, "v4-16", 8, "2x2x2", 2, 240, 407),
    _slice(_V4, "v4-32", 16, "2x2x4", 4, 240, 407),
)

GCP_TPU_SLICES: tuple[InstanceType, ...] = (*_V5E_SLICES, *_V6E_SLICES, *_V5P_SLICES, *_V4_SLICES)

GCP_INSTANCE_TYPES: tuple[InstanceType, ...] = (*GCP_INSTANCE_TYPES_GPU, *GCP_TPU_SLICES)


# --- N1 + guest GPUs ----------------------------------------------------------------------------

_N1_SOURCE = f"{_VM_PRICES}#n1_machine_types"

GCP_GUEST_ACCELERATORS: tuple[GuestAcceleratorPrice, ...] = (
    GuestAcceleratorPrice(
        accelerator_type="nvidia-tesla-t4",
        accelerator="t4",
        hourly_usd={"us-central1": 0.35, "us-east1": 0.35},
        spot_discount=0.6,
        committed_discount=0.37,
        source=_GPU_PRICES,
        as_of=_READ,
    ),
)

GCP_N1_MACHINES: tuple[N1MachinePrice, ...] = tuple(
    N1MachinePrice(
        name=f"n1-standard-{vcpus}",
        vcpus=vcpus,
        memory_gib=3.75 * vcpus,
        hourly_usd={"us-central1": usd, "us-east1": usd},
        spot_discount=0.6,
        committed_discount=0.37,
        source=_N1_SOURCE,
        as_of=_READ,
    )
    for vcpus, usd in ((4, 0.189999), (8, 0.379998), (16, 0.759996), (32, 1.519992))
)
