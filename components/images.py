"""Container images: every image the library runs, pinned by digest with where the digest was read,
and how an image reference is read (its registry, its mirror). Cloud-neutral and pure.

A tag can be moved to other bytes at any time; a digest cannot. So every image a node or a
cluster runs is pinned here by digest, and each pin names the public source its digest was read
from and when (`source`, `as_of`). `index` says whether the source recorded the multi-platform
index digest (runs on amd64 and arm64 nodes) or did not say (then it may be the linux/amd64
manifest: check before running it on Graviton or Axion nodes, e.g. with `crane digest <reference>`).

Who runs what: the serving engines (`components.serving.engines`), the host exporters every
accelerator VM runs (`components.monitoring.host_exporters`), and the cluster monitoring stack
(`components.k8s.images`, the Helm values of `GpuObservability`). The AWS and GCP image mirrors
(`components.aws.mirrors`, `components.gcp.mirrors`) rewrite these references with `mirrored`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

DOCKER_HUB = "docker.io"
# A SHA-256 digest in lowercase hex: written here once for the library (the node's verifier,
# components/models/verify_weights.py, runs alone on the node and keeps its own copy).
SHA256_HEX = "[0-9a-f]{64}"
# \Z, not $: `$` also matches before a trailing newline, which would carry into a unit or script.
DIGEST = re.compile(rf"^sha256:{SHA256_HEX}\Z")
# registry/repository[:tag]@sha256:<64 hex>
PINNED_REFERENCE = re.compile(rf"^[a-z0-9.-]+(:\d+)?/[a-z0-9._/-]+(:[\w.-]+)?@sha256:{SHA256_HEX}\Z")
_PINNED = re.compile(rf"@sha256:{SHA256_HEX}\Z")


def is_pinned(reference: str) -> bool:
    """Whether an image reference names its digest (`...@sha256:<64 hex>`)."""
    return _PINNED.search(reference) is not None


def split_reference(image: str) -> tuple[str, str]:
    """(registry host, rest) of an image reference, as docker reads it: no host means Docker Hub."""
    first, _, rest = image.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first, rest
    # Docker Hub's official images live under library/.
    return DOCKER_HUB, image if "/" in image.split("@")[0].split(":")[0] else f"library/{image}"


def mirrored(image: str, image_mirrors: Mapping[str, str]) -> str:
    """The reference the node pulls: the mirror's when its registry is mapped, else the image itself.

    `image_mirrors` maps an upstream registry host to the repository prefix that mirrors it
    (an ECR pull-through cache or an Artifact Registry remote repository): the same digest under
    another registry, so the bytes are the ones pinned upstream.
    """
    host, rest = split_reference(image)
    mirror = image_mirrors.get(host)
    return f"{mirror.rstrip('/')}/{rest}" if mirror else image


@dataclass(frozen=True, kw_only=True)
class PinnedImage:
    registry: str
    repository: str
    tag: str  # the tag the digest was published under (for people; the digest is what runs)
    digest: str  # sha256:<64 hex>
    index: bool | None  # True: multi-platform index digest; None: the source does not say
    source: str
    as_of: date

    @property
    def reference(self) -> str:
        """'registry/repository:tag@sha256:<hex>': the tag for readers, the digest for the puller."""
        return f"{self.registry}/{self.repository}:{self.tag}@{self.digest}"

    @property
    def name(self) -> str:
        """The image as `docker pull` names it, without tag or digest: Docker Hub's host left out."""
        if self.registry == DOCKER_HUB:
            return self.repository.removeprefix("library/")
        return f"{self.registry}/{self.repository}"

    @property
    def by_digest(self) -> str:
        """'name@sha256:<hex>': the digest alone, as the serving engines name their image."""
        return f"{self.name}@{self.digest}"

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


@dataclass(frozen=True, kw_only=True)
class TaggedImage:
    """An image known by tag only: no public digest was found, so the library runs no default of it."""

    reference: str  # repository:tag
    source: str
    as_of: date


# --- serving engines (components.serving.engines: one per accelerator family) -----------------

VLLM_OPENAI = PinnedImage(
    registry=DOCKER_HUB,
    repository="vllm/vllm-openai",
    tag="v0.28.0",
    digest="sha256:61fc8a896b0a4fbbbdc063bc4b0dbc25ce98e02b5050c24aeb7830ac02039b14",
    index=None,
    source="public inventory of AI runtime dependencies listing 'vLLM v0.28.0' with this digest "
    "(GitHub code search: 'vllm-openai@sha256:61fc8a'); the same digest is recorded as vLLM 0.28.0 "
    "in several public serving repositories",
    as_of=date(2026, 8, 26),
)
# AWS Deep Learning Container for vLLM with the Neuron backend (Inferentia2, Trainium).
VLLM_NEURON = PinnedImage(
    registry="public.ecr.aws",
    repository="neuron/pytorch-inference-vllm-neuronx",
    tag="0.9.1-neuronx-py310-sdk2.25.0-ubuntu22.04",
    digest="sha256:01f0f7b1e2cf256019a80c16712e79a5f254b04a3a77dbf8ac196de4ee380928",
    index=None,
    source="AWS Deep Learning Container for vLLM on Neuron; digest from a public `kubectl describe pod` "
    "record of that tag (GitHub code search: 'pytorch-inference-vllm-neuronx@sha256:01f0f7b1')",
    as_of=date(2026, 9, 14),
)
# vLLM's TPU build, a nightly: vLLM 0.29.1rc1.dev468+g0b7f11a1e.
VLLM_TPU = PinnedImage(
    registry=DOCKER_HUB,
    repository="vllm/vllm-tpu",
    tag="nightly",
    digest="sha256:19a1a0526476f902eb83e1057f3d8938f35b457dd7716a30e9ab4f7bee90d507",
    index=None,
    source="public TPU serving pre-registration pinning this digest as vLLM 0.29.1rc1.dev468+g0b7f11a1e "
    "(GitHub code search: 'vllm/vllm-tpu@sha256:19a1a052')",
    as_of=date(2026, 9, 25),
)

# --- host exporters (components.monitoring.host_exporters: every accelerator VM, AWS and GCP) ---

# No public pin of 4.4.2-4.7.1 was found, so the host exporter runs the newest tag with one; its
# metrics are the same DCGM fields. The cluster's dcgm-exporter DaemonSet runs the same pin.
DCGM_EXPORTER = PinnedImage(
    registry="nvcr.io",
    repository="nvidia/k8s/dcgm-exporter",
    tag="4.4.1-4.6.0-ubuntu22.04",
    digest="sha256:b7a4241c608253aa829041cc3575ea57082491251a4a626bcdddc68eaf9a3101",
    index=None,
    source="a public Dockerfile `FROM nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1-4.6.0-ubuntu22.04"
    "@sha256:b7a4...3101` (no public digest of the chart's own 4.8.x tags was found)",
    as_of=date(2026, 11, 23),
)
NODE_EXPORTER = PinnedImage(
    registry="quay.io",
    repository="prometheus/node-exporter",
    tag="v1.8.2",
    digest="sha256:4032c6d5bfd752342c3e631c2f1de93ba6b86c41db6b167b9a35372c139e7706",
    index=True,
    source="the multi-arch index digest pinned by several public repositories "
    "(quay.io/prometheus/node-exporter and prom/node-exporter carry the same index)",
    as_of=date(2026, 11, 23),
)

# --- the cluster monitoring stack (components.k8s.images: what GpuObservability runs) ----------

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

# AWS's neuron-monitor container: runs neuron-monitor and serves its report in Prometheus format on
# --port (AWS's Kubernetes manifest uses 8000). No public digest was found (searched 2026-11-24),
# so GpuObservabilityArgs.neuron_monitor_image must be given, pinned by digest, to run it.
NEURON_MONITOR = TaggedImage(
    reference="public.ecr.aws/neuron/neuron-monitor:1.3.0",
    source="AWS Neuron docs, Kubernetes getting started: the neuron-monitor DaemonSet "
    "(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/containers/kubernetes-getting-started.html)",
    as_of=date(2026, 11, 21),
)

# --- device plugins (components.k8s.device_plugins: EKS nodes, whose AL2023 AMIs ship none) ---------

# The v0.20.0 multi-platform index: the same digest in three public records (an image-mirroring
# script naming it the index of the tag, a manifest pinning the tag by it, a `kubectl describe`
# Image ID), and the NVIDIA GPU Operator's bundle bump to v0.20.0@sha256:a61ba9fd... (2026).
NVIDIA_DEVICE_PLUGIN = PinnedImage(
    registry="nvcr.io",
    repository="nvidia/k8s-device-plugin",
    tag="v0.20.0",
    digest="sha256:a61ba9fd8efb82f3a79f877f7580e02c1e8e7593f62473644bc9c79e315c3312",
    index=True,
    source="GitHub code search 'k8s-device-plugin:v0.20.0@sha256' and 'a61ba9fd8efb82f3' (three public "
    "files agree; one names it the tag's index next to its amd64 manifest)",
    as_of=date(2026, 12, 2),
)
# No public digest of 2.31.0.0 was found (searched 2026-12-02), so DevicePluginsArgs.neuron_device_
# plugin_image must be given, pinned by digest, before the Neuron device plugin runs.
NEURON_DEVICE_PLUGIN = TaggedImage(
    reference="public.ecr.aws/neuron/neuron-device-plugin:2.31.0.0",
    source="aws-neuron/neuron-helm-charts 1.9.0 (commit b77a6f9), charts/neuron-helm-chart/values.yaml "
    "devicePlugin.image.tag",
    as_of=date(2026, 12, 2),
)

# Every image GpuObservability runs in the cluster (components.k8s.images); the node exporter and
# dcgm-exporter are the same pins as the VM hosts run.
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
# Every pin above: the engines, the cluster's images (the host exporters among them), the device plugin.
PINNED_IMAGES: tuple[PinnedImage, ...] = (
    VLLM_OPENAI,
    VLLM_NEURON,
    VLLM_TPU,
    *CLUSTER_IMAGES,
    NVIDIA_DEVICE_PLUGIN,
)
