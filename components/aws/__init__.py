"""AWS components: GPU and Inferentia2 fleets, their endpoint, model caches, network, image mirrors, idle
watchdog.

Names are imported on first use, so `from inference_infra.components.aws import GpuFleet`
loads only that component's module (and pulumi_aws).
"""

from __future__ import annotations

import importlib
from typing import Any

from inference_infra.components._lazy import lazy_exports
from inference_infra.components.arguments import deprecated

_EXPORTS = {
    "GpuFleet": "gpu_fleet",
    "GpuFleetArgs": "fleet_args",
    "InferentiaFleet": "inferentia_fleet",
    "InferentiaFleetArgs": "fleet_args",
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
    "PullThroughCache": "pull_through",
    "PullThroughCacheArgs": "pull_through_args",
    "IdleGpuWatchdog": "idle_watchdog",
    "IdleGpuWatchdogArgs": "idle_watchdog",
    "SpotDrain": "spot_drain",
    "SpotDrainArgs": "spot_drain_args",
    "OffHours": "off_hours",
    "OffHoursArgs": "off_hours_args",
    "InferenceEndpoint": "endpoint",
    "InferenceEndpointArgs": "endpoint_args",
    "PrometheusDiscoveryRole": "prometheus_discovery",
    "PrometheusDiscoveryRoleArgs": "prometheus_discovery",
    # the fleets' argument types
    "SubnetRef": "network_args",
    "S3Weights": "fleet_args",
    "EfsAttachment": "fleet_args",
    "CapacityMode": "capacity",
    "NewCapacityReservation": "capacity",
    "ExistingCapacityReservation": "capacity",
    "CapacityBlock": "capacity",
}

# The previous release's names -> (the new name, its module); not in __all__.
_DEPRECATED = {"ModelSource": ("S3Weights", "fleet_args"), "Capacity": ("CapacityMode", "capacity")}

_exported, __all__ = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    """Each name from its submodule; an old name with a DeprecationWarning that names the new one."""
    if name in _DEPRECATED:
        new, module = _DEPRECATED[name]
        deprecated(f"{name} is deprecated since 0.2.0 and goes in the next release; use {new}")
        return getattr(importlib.import_module(f"{__name__}.{module}"), new)
    return _exported(name)
