"""GCP components: GPU fleets, TPU VMs and queued resources, Filestore cache, VPC, image mirrors, endpoint.

Names are imported on first use, so importing one loads only its module. `Capacity` and
`TpuScheduling` are the previous release's names of `components.fleet.CapacityMode` (they warn).
"""

from __future__ import annotations

from inference_infra.components._lazy import lazy_exports

_EXPORTS = {
    "GpuFleet": "gpu_fleet",
    "GpuFleetArgs": "gpu_fleet",
    "GpuReservation": "gpu_fleet",
    "Capacity": "gpu_fleet",  # deprecated: CapacityMode
    "GcsWeights": "fleet_common",
    "GcpNodeArgs": "fleet_common",
    "TpuVm": "tpu_vm",
    "TpuVmArgs": "tpu_vm",
    "TpuDataDisk": "tpu_vm",
    "TpuScheduling": "tpu_vm",  # deprecated: CapacityMode
    "FilestoreModelCache": "filestore_model_cache",
    "FilestoreModelCacheArgs": "filestore_model_cache",
    "FilestoreTier": "filestore_tiers",
    "GcpInferenceEndpoint": "endpoint",
    "GcpInferenceEndpointArgs": "endpoint",
    "PrometheusDiscoveryAccount": "prometheus_discovery",
    "PrometheusDiscoveryAccountArgs": "prometheus_discovery",
    "GcpPoolBackend": "endpoint",
    "PrivateNetwork": "network",
    "PrivateNetworkArgs": "network",
    "GcsModelPublishers": "model_bucket",
    "GcsModelPublishersArgs": "model_bucket_args",
    "ArtifactMirrors": "mirrors",
    "ArtifactMirrorsArgs": "mirrors",
}

__getattr__, __all__ = lazy_exports(__name__, _EXPORTS)
