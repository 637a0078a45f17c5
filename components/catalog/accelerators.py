"""Accelerator devices. PLACEHOLDER: a seed-sized table, replaced by the researched one."""

from datetime import date

from components.catalog.types import Accelerator, AcceleratorFamily

_SEED = "shared/seeds/004 (AI Infrastructure Overview, GPU specification table)"

ACCELERATORS: tuple[Accelerator, ...] = (
    Accelerator(
        key="a10g",
        name="NVIDIA A10G 24GB",
        family=AcceleratorFamily.NVIDIA_GPU,
        memory_gib=24,
        memory_bandwidth_gb_s=600,
        fp16_tflops=125,
        fp8_tflops=None,
        int8_tops=250,
        source=_SEED,
        as_of=date(2026, 11, 21),
    ),
    Accelerator(
        key="h100-80gb",
        name="NVIDIA H100 SXM 80GB",
        family=AcceleratorFamily.NVIDIA_GPU,
        memory_gib=80,
        memory_bandwidth_gb_s=3350,
        fp16_tflops=989,
        fp8_tflops=1979,
        int8_tops=1979,
        gcp_accelerator_type="nvidia-h100-80gb",
        source=_SEED,
        as_of=date(2026, 11, 21),
    ),
)
