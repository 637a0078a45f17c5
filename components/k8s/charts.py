"""Helm charts GpuObservability installs, pinned, with where each pin was read (the images it runs
are pinned in components/images.py).

A chart left unpinned upgrades itself on the next `pulumi up` with whatever the
repository serves that day; every pin here is an exact version.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from inference_infra.components.images import NEURON_MONITOR as NEURON_MONITOR

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
