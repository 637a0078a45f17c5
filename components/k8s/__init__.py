"""Kubernetes components: GPU observability (dcgm-exporter, Prometheus, Grafana) and vLLM serving pools.

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
}

__getattr__, __all__ = lazy_exports(__name__, _EXPORTS)
