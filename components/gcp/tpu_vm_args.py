"""TpuVm's arguments (pure: no provider SDK).

Apart from `tpu_vm.py` (which plans and makes the slice) so that the stack config reads them without
loading the provider SDK.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inference_infra.components.arguments import Renamed, arg, renamed_inputs
from inference_infra.components.fleet import COUNT_INPUTS, mode_of
from inference_infra.components.gcp.node_args import GcpNodeArgs


@dataclass(frozen=True, kw_only=True)
class TpuDataDisk:
    """A persistent disk attached to the slice."""

    size_gib: int = arg(
        doc="Disk size (at least 10, at most 65,536: a persistent disk's 64 TiB).", ge=10, le=65536
    )
    disk_type: str | None = arg(None, "Default: the generation's first supported type.")
    read_only: bool = arg(False, "Attach read-only (required on multi-host slices, which share it).")


def _from_scheduling(value: Any, kwargs: Any) -> dict[str, Any]:
    """The old `scheduling=TpuScheduling.X` is one slice of mode X."""
    return {COUNT_INPUTS[mode_of(value)]: 1}


@renamed_inputs(
    Renamed("scheduling", "on_demand, spot, preemptible or reserved (=1: one slice)", _from_scheduling)
)
@dataclass(frozen=True, kw_only=True)
class TpuVmArgs(GcpNodeArgs):
    """One Cloud TPU slice (see tpu_vm.py). No count at all: one on-demand slice."""

    accelerator_type: str | None = arg(
        None,
        "Slice name, e.g. v5litepod-8 (or give generation and topology). Omit both and set model to let "
        "the capacity planner choose a single-host slice; with both, the planner checks that the model fits.",
    )
    generation: str | None = arg(None, "With topology: v5e, v5p, v6e or v4.")
    topology: str | None = arg(None, "With generation: chips per dimension, e.g. 2x4 (v5e) or 2x2x1 (v5p).")
    runtime_version: str | None = arg(None, "TPU software version. Default: the generation's base image.")
    queued: bool = arg(
        False,
        "Request the slice through a queued resource, which waits for capacity (on-demand only; see "
        "components/gcp/README.md for what a queued slice cannot carry).",
    )
    accept_default_service_account: str | None = arg(
        None,
        "queued only: why the slice may run as the Compute Engine default service account (the queued "
        "resource cannot name the slice's own account). Required with queued.",
    )
    data_disks: Sequence[TpuDataDisk] = arg(
        (), "Persistent disks to attach (read-only on multi-host slices)."
    )
