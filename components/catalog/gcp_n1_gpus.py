"""How many GPUs an N1 VM may carry, and how large the VM may be for that count.

GPUs attach to N1 VMs (`guest_accelerator`) only in certain counts, and each
count caps the VM's vCPUs and memory. Compute Engine rejects other shapes at
create time; this table lets a stack reject them at plan time. Only GPU types
the price catalog knows are listed (a fleet of an unpriced type could not be
costed anyway); add a row when the catalog gains one.

Pure data and lookups; no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

_SOURCE = "https://cloud.google.com/compute/docs/gpus#n1-gpus"


@dataclass(frozen=True, kw_only=True)
class N1GpuShape:
    """The largest N1 VM (vCPUs, memory) allowed with a given number of this GPU."""

    max_vcpus: int
    max_memory_gb: int


@dataclass(frozen=True, kw_only=True)
class N1GpuLimits:
    accelerator_type: str  # GCE accelerator type, e.g. "nvidia-tesla-t4"
    shapes: Mapping[int, N1GpuShape]  # GPUs per VM -> limits
    source: str
    as_of: date

    @property
    def counts(self) -> tuple[int, ...]:
        return tuple(sorted(self.shapes))


N1_GPU_LIMITS: tuple[N1GpuLimits, ...] = (
    N1GpuLimits(
        accelerator_type="nvidia-tesla-t4",
        shapes={
            1: N1GpuShape(max_vcpus=48, max_memory_gb=312),
            2: N1GpuShape(max_vcpus=48, max_memory_gb=312),
            4: N1GpuShape(max_vcpus=96, max_memory_gb=624),
        },
        source=_SOURCE,
        as_of=date(2026, 11, 21),
    ),
)


def n1_gpu_limits(accelerator_type: str) -> N1GpuLimits | None:
    return next((row for row in N1_GPU_LIMITS if row.accelerator_type == accelerator_type), None)
