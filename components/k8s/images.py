"""Every image GpuObservability runs in the cluster, pinned by digest, with where each digest was read.

A tag can be moved to other bytes at any time; a digest cannot. The charts
default to tags, so the component passes each image's tag *and* digest through
the chart's own digest value (see observability_values.py). The tag stays for
readers; the digest is what the kubelet pulls.

`index` says whether the source recorded the multi-platform index digest (runs
on amd64 and arm64 nodes) or did not say (then it may be the linux/amd64
manifest: check before running these pods on Graviton nodes, e.g. with
`crane digest <reference>`).

No public digest of AWS's neuron-monitor image was found (searched 2026-11-24),
so it has no default here: `GpuObservabilityArgs.neuron_monitor_image` must be
given, pinned by digest, to run it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from inference_infra.components.monitoring.host_exporters import DCGM_EXPORTER_IMAGE, NODE_EXPORTER_IMAGE

DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
# registry/repository[:tag]@sha256:<64 hex>
PINNED_REFERENCE = re.compile(r"^[a-z0-9.-]+(:\d+)?/[a-z0-9._/-]+(:[\w.-]+)?@sha256:[0-9a-f]{64}$")

_READ = date(2026, 11, 24)
_HOMELAB = (
    "Stuhlmuller/homelab docs, 'Monitoring Image Inventory' (resolved against the public registries "
    "2026-08-30; records the multi-platform index digest and the linux/amd64 child separately)"
)
_BENCH_LOCK = (
    "a public Kubernetes scheduler benchmark's deployed-image lock (kube-scheduling-perf deployment "
    "doc, 2026-08; GitHub code search for the digest)"
)
_KIND_BOOTSTRAP = (
    "a public Kind CI bootstrap script that rewrites prometheus-operator's v0.94.0 release bundle to "
    "these digests (GitHub code search 'prometheus-operator@sha256:cf153f64')"
)


@dataclass(frozen=True, kw_only=True)
class PinnedImage:
    registry: str
    repository: str
    tag: str
    digest: str  # sha256:<64 hex>
    index: bool | None  # True: multi-platform index digest; None: the source does not say
    source: str
    as_of: date

    @property
    def reference(self) -> str:
        return f"{self.registry}/{self.repository}:{self.tag}@{self.digest}"

    @classmethod
    def of(cls, reference: str, *, index: bool | None, source: str, as_of: date) -> PinnedImage:
        """A pin from its full reference, 'registry/repository:tag@sha256:<hex>'."""
        name, digest = reference.split("@", 1)
        location, tag = name.rsplit(":", 1)
        registry, repository = location.split("/", 1)
        return cls(
            registry=registry,
            repository=repository,
            tag=tag,
            digest=digest,
            index=index,
            source=source,
            as_of=as_of,
        )

    @property
    def digest_hex(self) -> str:
        """The 64 hex digits, for the charts whose `sha` value is written after '@sha256:'."""
        return self.digest.removeprefix("sha256:")


PROMETHEUS = PinnedImage(
    registry="quay.io",
    repository="prometheus/prometheus",
    tag="v3.11.3-distroless",
    digest="sha256:cff72a3f49918f41c4b5c8a6174dd8433036bebf7878120da538b3720ba3fa0d",
    index=True,
    source=_HOMELAB,
    as_of=_READ,
)
ALERTMANAGER = PinnedImage(
    registry="quay.io",
    repository="prometheus/alertmanager",
    tag="v0.32.1",
    digest="sha256:51a825c2a40acc3e338fdd00d622e01ec090f72be2b3ea46be0839cd47a4d286",
    index=True,
    source=_HOMELAB,
    as_of=_READ,
)
# The operator and its config reloader at kube-prometheus-stack 91.4.1's appVersion (v0.94.0), so the
# operator matches the CRDs the chart installs.
PROMETHEUS_OPERATOR = PinnedImage(
    registry="quay.io",
    repository="prometheus-operator/prometheus-operator",
    tag="v0.94.0",
    digest="sha256:cf153f64d6c38113fceb2cda7642365ea887f71edd7888f054e43e54cf177e55",
    index=None,
    source=_KIND_BOOTSTRAP,
    as_of=_READ,
)
CONFIG_RELOADER = PinnedImage(
    registry="quay.io",
    repository="prometheus-operator/prometheus-config-reloader",
    tag="v0.94.0",
    digest="sha256:142a1f11df8dd165f00375b0b1826aecb9c9adeb05c39855893138d7c7575ff7",
    index=None,
    source=_KIND_BOOTSTRAP,
    as_of=_READ,
)
# Not run by this component (no Thanos sidecar or ruler), but the operator names it in its
# --thanos-default-base-image argument: pinned too, so no image reference goes out by tag.
THANOS = PinnedImage(
    registry="quay.io",
    repository="thanos/thanos",
    tag="v0.42.4",
    digest="sha256:b567818fe608067eb0f1d7c2c4fe361e7ad83c8a256234c97685f1d0bf670cc8",
    index=None,
    source="a public homelab's Terraform image list (randomcoww, renovate-managed "
    "`quay.io/thanos/thanos:v0.42.4@sha256:b567818f...`; GitHub code search)",
    as_of=_READ,
)
# The admission webhook's certificate Jobs (create and patch).
KUBE_WEBHOOK_CERTGEN = PinnedImage(
    registry="ghcr.io",
    repository="jkroepke/kube-webhook-certgen",
    tag="1.8.2",
    digest="sha256:e133b64c08377a107298ac3352504bd3cd21f13282bc2aac099a88a7888b3f54",
    index=True,
    source=_HOMELAB,
    as_of=_READ,
)
KUBE_STATE_METRICS = PinnedImage(
    registry="registry.k8s.io",
    repository="kube-state-metrics/kube-state-metrics",
    tag="v2.18.0",
    digest="sha256:1545919b72e3ae035454fc054131e8d0f14b42ef6fc5b2ad5c751cafa6b2130e",
    index=True,
    source=_HOMELAB,
    as_of=_READ,
)
GRAFANA = PinnedImage(
    registry="docker.io",
    repository="grafana/grafana",
    tag="13.1.1",
    digest="sha256:7cb8c64c4d57a57e734073f3cc94620adb24a0acb929bd80ba9f14017e3a975b",
    index=None,
    source=_BENCH_LOCK,
    as_of=_READ,
)
# Grafana's dashboard sidecar (loads the dashboard ConfigMaps).
K8S_SIDECAR = PinnedImage(
    registry="quay.io",
    repository="kiwigrid/k8s-sidecar",
    tag="2.10.0",
    digest="sha256:21b9fe7bb29d65caf2445ccbf96ff6eda5e589a92bd8f5188f957fe75b551d72",
    index=None,
    source=_BENCH_LOCK,
    as_of=_READ,
)
# The same pins as the VM hosts run: one reference each, in components/monitoring/host_exporters.py.
NODE_EXPORTER = PinnedImage.of(
    NODE_EXPORTER_IMAGE,
    index=True,
    source="the multi-arch index digest pinned by several public repositories (host_exporters.py)",
    as_of=date(2026, 11, 23),
)
DCGM_EXPORTER = PinnedImage.of(
    DCGM_EXPORTER_IMAGE,
    index=None,
    source="a public Dockerfile `FROM nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1-4.6.0-ubuntu22.04"
    "@sha256:b7a4...` (host_exporters.py; no public digest of the chart's own 4.8.x tags was found)",
    as_of=date(2026, 11, 23),
)

CLUSTER_IMAGES: tuple[PinnedImage, ...] = (
    PROMETHEUS,
    ALERTMANAGER,
    PROMETHEUS_OPERATOR,
    CONFIG_RELOADER,
    THANOS,
    KUBE_WEBHOOK_CERTGEN,
    KUBE_STATE_METRICS,
    GRAFANA,
    K8S_SIDECAR,
    NODE_EXPORTER,
    DCGM_EXPORTER,
)
