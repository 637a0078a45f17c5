"""Per-GPU hourly prices from the accelerator catalog, for the cost recording rules.

dcgm-exporter reports one series per GPU, so the price that matters is an
instance's on-demand price divided by its GPU count. Only NVIDIA instance
types are listed: they are what dcgm-exporter can see. Spot and reserved
capacity costs less than this list price; the dashboards say "on-demand".
"""

from __future__ import annotations

from dataclasses import dataclass

from inference_infra.components.catalog import AcceleratorFamily, Cloud, hourly_price, instance_types


@dataclass(frozen=True)
class GpuPrice:
    cloud: Cloud
    instance_type: str
    accelerator: str  # catalog key, e.g. "h100-80gb"
    usd_per_gpu_hour: float
    basis: str  # where the figure comes from, e.g. "p5.48xlarge on-demand us-east-1, / 8 GPUs"


def gpu_prices(*, aws_region: str | None = None, gcp_region: str | None = None) -> list[GpuPrice]:
    """One price per NVIDIA instance type in the catalog, in catalog order.

    A region the catalog has no price for falls back to the type's reference
    region; the basis says so.
    """
    regions = {Cloud.AWS: aws_region, Cloud.GCP: gcp_region}
    out = []
    for item in instance_types(family=AcceleratorFamily.NVIDIA_GPU):
        price = hourly_price(item, region=regions[item.cloud])
        per_gpu = price.hourly_usd / item.accelerator_count
        out.append(
            GpuPrice(
                cloud=item.cloud,
                instance_type=item.name,
                accelerator=item.accelerator,
                usd_per_gpu_hour=round(per_gpu, 4),
                basis=f"{price.basis}, / {item.accelerator_count} GPUs",
            )
        )
    return out
