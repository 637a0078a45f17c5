"""GCP components: GPU fleets, TPU VMs and queued resources, Filestore cache, VPC, image mirrors, endpoint,
the idle watchdog.

Names are imported on first use, so importing one loads only its module. `Capacity` and
`TpuScheduling` are the previous release's names of `components.fleet.CapacityMode` (they warn, and
are not in `__all__`).
"""

from __future__ import annotations

from typing import Any

from inference_infra.components._lazy import lazy_exports

_EXPORTS = {
    "GpuFleet": "gpu_fleet",
    "GpuFleetArgs": "gpu_fleet_args",
    "GpuReservation": "gpu_fleet_args",
    "GcsWeights": "node_args",
    "GcpNodeArgs": "node_args",
    "TpuVm": "tpu_vm",
    "TpuVmArgs": "tpu_vm_args",
    "TpuDataDisk": "tpu_vm_args",
    "FilestoreModelCache": "filestore_model_cache",
    "FilestoreModelCacheArgs": "filestore_model_cache",
    "FilestoreTier": "filestore_tiers",
    "GcpInferenceEndpoint": "endpoint",
    "GcpInferenceEndpointArgs": "endpoint_args",
    "PrometheusDiscoveryAccount": "prometheus_discovery",
    "PrometheusDiscoveryAccountArgs": "prometheus_discovery",
    "GcpPoolBackend": "endpoint_args",
    "PrivateNetwork": "network",
    "PrivateNetworkArgs": "network",
    "GcsModelPublishers": "model_bucket",
    "GcsModelPublishersArgs": "model_bucket_args",
    "ArtifactMirrors": "mirrors",
    "ArtifactMirrorsArgs": "mirrors",
    "IdleGpuWatchdog": "idle_watchdog",
    "IdleGpuWatchdogArgs": "idle_watchdog_args",
}

# The previous release's names (each module's __getattr__ warns and names the new one).
_DEPRECATED = {"Capacity": "gpu_fleet", "TpuScheduling": "tpu_vm"}

_exported, __all__ = lazy_exports(__name__, {**_EXPORTS, **_DEPRECATED})
__all__ = [name for name in __all__ if name not in _DEPRECATED]


def __getattr__(name: str) -> Any:
    """Each name from its submodule (an old name warns, naming the new one)."""
    return _exported(name)
