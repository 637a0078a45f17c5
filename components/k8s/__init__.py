"""Kubernetes components: GPU observability (dcgm-exporter, Prometheus, Grafana).

Names are imported on first use.
"""

from __future__ import annotations

from inference_infra.components._lazy import lazy_exports

_EXPORTS = {
    "GpuObservability": "gpu_observability",
    "GpuObservabilityArgs": "observability_args",
    "AlertReceiver": "observability_args",
}

__getattr__, __all__ = lazy_exports(__name__, _EXPORTS)
