"""GCP GpuFleet's arguments (pure: no provider SDK).

Apart from `gpu_fleet.py` (which plans and makes the VMs) so that the stack config reads them without
loading the provider SDK.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inference_infra.components.arguments import Renamed, arg, renamed_inputs
from inference_infra.components.fleet import CapacityMode, mode_of
from inference_infra.components.gcp.node_args import GcpNodeArgs
from inference_infra.components.serving.host_images import GCP_GPU_IMAGE

# A Deep Learning VM family whose NVIDIA driver runs the pinned vLLM's CUDA runtime (driver 580+ for
# CUDA 13); the sourced table and its test are in components/serving/host_images.py.
DEFAULT_IMAGE = GCP_GPU_IMAGE.name
MIN_BOOT_DISK_GIB = 50


@dataclass(frozen=True, kw_only=True)
class GpuReservation:
    """Reserved capacity for a fleet's reserved VMs. Unset fields take the fleet's values."""

    count: int | None = arg(None, "VMs reserved; default: the fleet's reserved VMs.", ge=1)
    zone: str | None = arg(None, "Default: the fleet's zone (a reservation is zonal).")
    machine_type: str | None = arg(None, "Default: the fleet's machine type.")
    existing_name: str | None = arg(
        None, "Consume this reservation (made elsewhere) instead of creating one."
    )


def _from_capacity(value: Any, kwargs: Any) -> dict[str, Any]:
    """The old `capacity=Capacity.X` (+ `count`, default 1) is `count` filled in `capacity_order=(X,)`."""
    mode = mode_of(value)
    count = kwargs.pop("count", None)
    moved: dict[str, Any] = {"count": 1 if count is None else count, "capacity_order": (mode,)}
    if mode is CapacityMode.RESERVED and kwargs.get("reservation") is None:
        kwargs.pop("reservation", None)
        moved["reservation"] = GpuReservation()  # the old default: the fleet makes its reservation
    return moved


@renamed_inputs(
    Renamed("capacity", "count and capacity_order (or spot, on_demand, reserved)", _from_capacity)
)
@dataclass(frozen=True, kw_only=True)
class GpuFleetArgs(GcpNodeArgs):
    """A fleet of Compute Engine GPU VMs (see gpu_fleet.py)."""

    machine_type: str | None = arg(
        None,
        "a3/a2/g2 machine type, or n1-* with acceleratorType. Omit it and set model to let the capacity "
        "planner choose; with both, the planner checks that the model fits.",
    )
    accelerator_type: str | None = arg(
        None, "N1 only: the GPU to attach (on a3/a2/g2 it may be given and must match the built-in one)."
    )
    accelerator_count: int | None = arg(None, "N1 only: GPUs per VM.", ge=1)
    reservation: GpuReservation | None = arg(
        None,
        "Reserved VMs only: the reservation they consume; GpuReservation() makes one for the fleet, "
        "GpuReservation(existing_name=...) names one made elsewhere.",
    )
    local_ssd_count: int = arg(0, "Local SSDs to add (types without bundled ones).", ge=0)
    image: str = arg(DEFAULT_IMAGE, "Boot image (a Deep Learning VM family by default).", stack=False)
    boot_disk_size_gib: int = arg(200, "Boot disk size.", ge=MIN_BOOT_DISK_GIB)
    boot_disk_type: str = arg("pd-balanced", "Boot disk type.")
    ops_agent: bool = arg(
        True,
        "Run the Ops Agent (GPU metrics to Cloud Monitoring). Without internet egress the image must carry "
        "it, or set this false: the engines' /metrics remain, GPU metrics in Cloud Monitoring do not.",
    )
