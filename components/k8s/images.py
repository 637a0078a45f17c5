"""Every image GpuObservability runs in the cluster, pinned by digest (the pins and their sources
are in components/images.py, with every other image the library runs).

The charts default to tags, so the component passes each image's tag *and* digest through the
chart's own digest value (see observability_values.py). The tag stays for readers; the digest is
what the kubelet pulls. No public digest of AWS's neuron-monitor image was found, so it has no
default: `GpuObservabilityArgs.neuron_monitor_image` must be given, pinned by digest, to run it.
"""

from __future__ import annotations

from inference_infra.components.images import (
    ALERTMANAGER,
    CLUSTER_IMAGES,
    CONFIG_RELOADER,
    DCGM_EXPORTER,
    DIGEST,
    GRAFANA,
    K8S_SIDECAR,
    KUBE_STATE_METRICS,
    KUBE_WEBHOOK_CERTGEN,
    NODE_EXPORTER,
    PINNED_REFERENCE,
    PROMETHEUS,
    PROMETHEUS_OPERATOR,
    THANOS,
    PinnedImage,
)

__all__ = [
    "ALERTMANAGER",
    "CLUSTER_IMAGES",
    "CONFIG_RELOADER",
    "DCGM_EXPORTER",
    "DIGEST",
    "GRAFANA",
    "K8S_SIDECAR",
    "KUBE_STATE_METRICS",
    "KUBE_WEBHOOK_CERTGEN",
    "NODE_EXPORTER",
    "PINNED_REFERENCE",
    "PROMETHEUS",
    "PROMETHEUS_OPERATOR",
    "THANOS",
    "PinnedImage",
]
