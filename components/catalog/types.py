"""The catalog's record types.

Every figure in a table carries the page(s) it came from (`source`, several
URLs joined by " ; ") and the date it is as of (`as_of`: the price list's date
when the source carries one, else the day it was read). Throughput figures are dense (no structured sparsity),
per device: one GPU, one Neuron chip or one TPU chip.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum


class Cloud(StrEnum):
    AWS = "aws"
    GCP = "gcp"


class AcceleratorFamily(StrEnum):
    NVIDIA_GPU = "nvidia-gpu"
    AWS_NEURON = "aws-neuron"
    GOOGLE_TPU = "google-tpu"


@dataclass(frozen=True, kw_only=True)
class Accelerator:
    """One accelerator device (a GPU, a Neuron chip, a TPU chip)."""

    key: str  # catalog key, e.g. "h100-80gb"
    name: str  # marketing name, e.g. "NVIDIA H100 SXM 80GB"
    family: AcceleratorFamily
    memory_gib: float  # device memory (HBM/GDDR) per device
    memory_bandwidth_gb_s: float  # GB/s per device
    fp16_tflops: float  # dense FP16/BF16 per device
    fp8_tflops: float | None  # dense FP8 per device; None when the device has no FP8
    int8_tops: float | None  # dense INT8 per device; None when not supported
    cores_per_device: int = 1  # NeuronCores per chip, TensorCores per TPU chip
    gcp_accelerator_type: str | None = None  # guest accelerator name on GCP
    source: str
    as_of: date


@dataclass(frozen=True, kw_only=True)
class InstanceType:
    """A machine you can rent: an EC2 instance type, a GCE machine type or a TPU slice."""

    cloud: Cloud
    name: str  # "p5.48xlarge", "a3-highgpu-8g", "v5litepod-8"
    accelerator: str  # Accelerator.key
    accelerator_count: int  # devices (GPUs, Neuron chips, TPU chips)
    vcpus: int
    memory_gib: float
    local_nvme_gib: float = 0.0  # instance store / local SSD, total
    local_nvme_disks: int = 0
    hourly_usd: Mapping[str, float]  # region -> on-demand USD per hour; first is the reference
    spot_discount: float  # typical fraction below on-demand for spot/preemptible
    committed_discount: float = 0.0  # typical 1-year reservation/commitment discount
    capacity_blocks_only: bool = False  # sold through EC2 Capacity Blocks only (no on-demand or spot)
    tpu_topology: str | None = None  # TPU slices only, e.g. "2x4"
    hosts: int = 1  # VMs in the slice (TPU), 1 for everything else
    source: str
    as_of: date
    notes: str = field(default="", compare=False)

    @property
    def reference_region(self) -> str:
        return next(iter(self.hourly_usd))

    @property
    def accelerator_memory_gib(self) -> float:
        from inference_infra.components.catalog import accelerator

        return accelerator(self.accelerator).memory_gib * self.accelerator_count


class PriceModel(StrEnum):
    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVED = "reserved"


@dataclass(frozen=True)
class Price:
    """An hourly price and the sentence that says where it came from."""

    hourly_usd: float
    basis: str
