"""GCP machine types, TPU slices, N1 + guest GPUs. PLACEHOLDER, replaced by the researched one."""

from dataclasses import dataclass
from datetime import date

from components.catalog.types import Cloud, InstanceType


@dataclass(frozen=True, kw_only=True)
class GuestAcceleratorPrice:
    accelerator_type: str  # GCE accelerator type name, e.g. "nvidia-tesla-t4"
    accelerator: str  # catalog Accelerator.key
    hourly_usd: dict[str, float]  # region -> on-demand USD per GPU-hour
    spot_discount: float
    source: str
    as_of: date


@dataclass(frozen=True, kw_only=True)
class N1MachinePrice:
    name: str
    vcpus: int
    memory_gib: float
    hourly_usd: dict[str, float]
    spot_discount: float
    source: str
    as_of: date


GCP_INSTANCE_TYPES: tuple[InstanceType, ...] = (
    InstanceType(
        cloud=Cloud.GCP,
        name="a3-highgpu-8g",
        accelerator="h100-80gb",
        accelerator_count=8,
        vcpus=208,
        memory_gib=1872,
        local_nvme_gib=6000,
        local_nvme_disks=16,
        hourly_usd={"us-central1": 88.25},
        spot_discount=0.6,
        committed_discount=0.37,
        source="placeholder",
        as_of=date(2026, 11, 21),
    ),
)
GCP_GUEST_ACCELERATORS: tuple[GuestAcceleratorPrice, ...] = ()
GCP_N1_MACHINES: tuple[N1MachinePrice, ...] = ()
