"""AWS components: GPU and Inferentia2 fleets, model caches, network, idle watchdog.

Names are imported on first use, so `from inference_infra.components.aws import GpuFleet`
loads only that component's module (and pulumi_aws).
"""

from __future__ import annotations

from inference_infra.components._lazy import lazy_exports

_EXPORTS = {
    "GpuFleet": "gpu_fleet",
    "GpuFleetArgs": "gpu_fleet",
    "InferentiaFleet": "inferentia_fleet",
    "InferentiaFleetArgs": "inferentia_fleet",
    "EfsModelCache": "efs_model_cache",
    "EfsModelCacheArgs": "efs_model_cache",
    "ModelStore": "model_store",
    "ModelStoreArgs": "model_store",
    "PrivateNetwork": "network",
    "PrivateNetworkArgs": "network",
    "PrivateEndpoints": "private_endpoints",
    "PrivateEndpointsArgs": "private_endpoints",
    "EndpointsOnlyEgress": "private_endpoints",
    "S3Gateway": "private_endpoints",
    "IdleGpuWatchdog": "idle_watchdog",
    "IdleGpuWatchdogArgs": "idle_watchdog",
    "InferenceEndpoint": "endpoint",
    "InferenceEndpointArgs": "endpoint",
    "PrometheusDiscoveryRole": "prometheus_discovery",
    "PrometheusDiscoveryRoleArgs": "prometheus_discovery",
    # the fleets' argument types
    "SubnetRef": "network",
    "ModelSource": "fleet_args",
    "EfsAttachment": "fleet_args",
    "Capacity": "capacity",
    "NewCapacityReservation": "capacity",
    "ExistingCapacityReservation": "capacity",
    "CapacityBlock": "capacity",
}

__getattr__, __all__ = lazy_exports(__name__, _EXPORTS)
