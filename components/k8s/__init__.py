"""Kubernetes components: GPU observability (dcgm-exporter, Prometheus, Grafana), vLLM serving pools
and their accelerator nodes (EKS node groups, Karpenter, GKE node pools, device plugins).

Names are imported on first use.
"""

from __future__ import annotations

from inference_infra.components._lazy import lazy_exports

_EXPORTS = {
    "GpuObservability": "gpu_observability",
    "GpuObservabilityArgs": "observability_args",
    "AlertReceiver": "observability_args",
    "KubernetesServingPool": "serving_pool",
    "KubernetesServingPoolArgs": "serving_pool_args",
    "KubernetesCluster": "serving_pool_args",
    "GatewayRef": "serving_pool_args",
    "PrometheusRef": "serving_pool_args",
    "CanaryBackend": "serving_pool_args",
    "ModelCache": "serving_pool_args",
    "ModelCacheKind": "serving_pool_args",
    "EksNodeGroups": "node_capacity",
    "EksNodeGroupsArgs": "node_capacity_args",
    "EksReservation": "node_capacity_args",
    "NodeSubnet": "node_capacity_args",
    "KarpenterNodes": "node_capacity",
    "KarpenterNodesArgs": "node_capacity_args",
    "GkeNodePool": "node_capacity",
    "GkeNodePoolArgs": "node_capacity_args",
    "PoolEksNodeGroups": "pool_nodes",
    "PoolKarpenterNodes": "pool_nodes",
    "PoolGkeNodePools": "pool_nodes",
    "DevicePlugins": "device_plugins",
    "DevicePluginsArgs": "device_plugins",
}

__getattr__, __all__ = lazy_exports(__name__, _EXPORTS)
