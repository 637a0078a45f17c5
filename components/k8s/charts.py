"""Helm charts and images GpuObservability installs, pinned, with where each pin was read.

A chart left unpinned upgrades itself on the next `pulumi up` with whatever the
repository serves that day; every pin here is an exact version.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

_READ = date(2026, 11, 21)


@dataclass(frozen=True, kw_only=True)
class HelmChart:
    name: str
    version: str  # exact chart version
    repo: str  # Helm repository URL
    app_version: str
    source: str
    as_of: date


KUBE_PROMETHEUS_STACK = HelmChart(
    name="kube-prometheus-stack",
    version="91.4.1",
    repo="https://prometheus-community.github.io/helm-charts",
    app_version="prometheus-operator v0.91+ with Prometheus, Alertmanager, Grafana 13, kube-state-metrics",
    source="https://github.com/prometheus-community/helm-charts/releases/tag/kube-prometheus-stack-91.4.1",
    as_of=_READ,
)

DCGM_EXPORTER = HelmChart(
    name="dcgm-exporter",
    version="4.8.3",
    repo="https://nvidia.github.io/dcgm-exporter/helm-charts",
    app_version="4.6.0-4.8.3 (DCGM 4.6.0, exporter 4.8.3)",
    source="https://github.com/NVIDIA/dcgm-exporter/pull/712 (publishes chart 4.8.3 from tag 4.6.0-4.8.3)",
    as_of=_READ,
)


@dataclass(frozen=True, kw_only=True)
class Image:
    reference: str  # repository:tag
    source: str
    as_of: date


# AWS's neuron-monitor container: runs neuron-monitor and serves its report in
# Prometheus format on --port (AWS's Kubernetes manifest uses 8000).
NEURON_MONITOR = Image(
    reference="public.ecr.aws/neuron/neuron-monitor:1.3.0",
    source="AWS Neuron docs, Kubernetes getting started: the neuron-monitor DaemonSet "
    "(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/containers/kubernetes-getting-started.html)",
    as_of=_READ,
)
