"""How long a node takes from boot to serving, and the health-check settings that follow from it.

    estimate = cold_start(weights_gib=131.0, source=WeightSource.S3, instance_type="p5.48xlarge", ...)
    estimate.seconds, estimate.note()

Boot to serving = node boot + weights GiB over the source's bandwidth + engine
load (weights from local disk into accelerator memory, then the engine's own
warm-up: CUDA graph capture, Neuron graph load, XLA compilation). Every figure
used is printed in the note; the table rows carry their source and date.

It is a range, not one number: `stages()` gives each stage (machine boot, image
pull, weights download, engine load, compile and graph capture) as fastest /
typical / slowest, and `range_seconds()` their sums. `seconds` is the typical
sum. The load balancer's health-check grace is the slowest sum rounded up to a
whole minute (a machine still starting inside the range is not replaced), and
`simulate` replays the same stages (`--cold-start fastest|typical|slowest`), so
the plan and the replay read the same numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from inference_infra.components.planner import GIB, Precision, model_spec
from inference_infra.components.planner.memory import weights_bytes
from inference_infra.components.serving.engines import EngineFamily

GIB_PER_GBIT = 1 / 8.589934592  # 1 Gbit/s = 0.1164 GiB/s


class WeightSource(StrEnum):
    S3 = "s3"  # object store at the instance's network bandwidth
    GCS = "gcs"
    EFS = "efs"
    FILESTORE = "filestore"
    LOCAL_NVME = "nvme"  # already on the node (a restart)


@dataclass(frozen=True)
class Figure:
    value: float
    source: str
    as_of: date


_AS_OF = date(2026, 11, 22)
# Network bandwidth of the instance types the reference stacks run (Gbit/s, "up to" figures taken as is).
NETWORK_GBPS: dict[str, Figure] = {
    name: Figure(gbps, source, _AS_OF)
    for name, gbps, source in (
        ("p5.48xlarge", 3200, "https://aws.amazon.com/ec2/instance-types/p5/"),
        ("p4d.24xlarge", 400, "https://aws.amazon.com/ec2/instance-types/p4/"),
        ("g5.xlarge", 10, "https://aws.amazon.com/ec2/instance-types/g5/"),
        ("g5.2xlarge", 10, "https://aws.amazon.com/ec2/instance-types/g5/"),
        ("g5.4xlarge", 25, "https://aws.amazon.com/ec2/instance-types/g5/"),
        ("g5.12xlarge", 40, "https://aws.amazon.com/ec2/instance-types/g5/"),
        ("g5.48xlarge", 100, "https://aws.amazon.com/ec2/instance-types/g5/"),
        ("g6.xlarge", 10, "https://aws.amazon.com/ec2/instance-types/g6/"),
        ("g6e.xlarge", 20, "https://aws.amazon.com/ec2/instance-types/g6e/"),
        ("inf2.xlarge", 15, "https://aws.amazon.com/ec2/instance-types/inf2/"),
        ("inf2.8xlarge", 25, "https://aws.amazon.com/ec2/instance-types/inf2/"),
        ("inf2.24xlarge", 50, "https://aws.amazon.com/ec2/instance-types/inf2/"),
        ("inf2.48xlarge", 100, "https://aws.amazon.com/ec2/instance-types/inf2/"),
        ("trn1.32xlarge", 800, "https://aws.amazon.com/ec2/instance-types/trn1/"),
        (
            "a3-highgpu-8g",
            200,
            "https://cloud.google.com/compute/docs/gpus#a3-series (VM NIC, not GPUDirect)",
        ),
        ("g2-standard-8", 16, "https://cloud.google.com/compute/docs/gpus#l4-gpus"),
        ("g2-standard-4", 10, "https://cloud.google.com/compute/docs/gpus#l4-gpus"),
    )
}
DEFAULT_NETWORK = Figure(10, "assumed when the instance type is not in NETWORK_GBPS: a 10 Gbit/s NIC", _AS_OF)
# Throughput one client gets from the shared file systems (GiB/s).
SHARED_READ_GIB_S: dict[WeightSource, Figure] = {
    WeightSource.EFS: Figure(
        1.5,
        "https://docs.aws.amazon.com/efs/latest/ug/performance.html (per-client read limit, 1,500 MiB/s)",
        _AS_OF,
    ),
    WeightSource.FILESTORE: Figure(
        1.2, "https://cloud.google.com/filestore/docs/performance (zonal 2.5 TiB, ~1,200 MiB/s read)", _AS_OF
    ),
}
NVME_READ_GIB_S = Figure(
    2.0, "one instance-store NVMe disk's sequential read, conservative (AWS/GCP docs)", _AS_OF
)
# Object-store downloads rarely fill a NIC from one node: s5cmd / gcloud storage reach ~60% of it.
OBJECT_STORE_EFFICIENCY = 0.6
OBJECT_STORE_CAP = Figure(
    100,
    "https://docs.aws.amazon.com/AmazonS3/latest/userguide/optimizing-performance.html"
    " (up to 100 Gb/s between one EC2 instance and S3 in a region; taken for Cloud Storage too)",
    _AS_OF,
)
NODE_BOOT = Figure(
    120, "AMI / image boot, cloud-init, docker and image pull of a cached layer set (measured order)", _AS_OF
)
_RANGE_AS_OF = date(2026, 12, 2)
# NODE_BOOT split into its two stages, each as (fastest, typical, slowest) seconds; the typical ones
# sum to NODE_BOOT. Our estimates (2026-12-02), not measurements: a machine boots to cloud-init in
# under a minute on both clouds; the engine image (vLLM's CUDA image is several GiB compressed) is
# already on the disk image (fastest), a cached layer set topped up (typical) or pulled whole through
# the registry at ~50 MiB/s of decompression (slowest).
MACHINE_BOOT_RANGE = Figure(60, "machine start to cloud-init: 40..90 s (our estimate)", _RANGE_AS_OF)
MACHINE_BOOT_SPAN = (40.0, 90.0)
IMAGE_PULL_RANGE = Figure(
    NODE_BOOT.value - MACHINE_BOOT_RANGE.value,
    "engine image: cached on the disk image 0 s, topped up 60 s, pulled whole 240 s (our estimate)",
    _RANGE_AS_OF,
)
IMAGE_PULL_SPAN = (0.0, 240.0)
# An object-store download reaches 30%..90% of the NIC from one node (typical: OBJECT_STORE_EFFICIENCY);
# a shared file system or a local disk 0.5x..1.5x its typical rate; the engine's warm-up from a warm
# compile cache (a third) to a cold one (twice the typical).
FETCH_EFFICIENCY_SPAN = (0.9, 0.3)
SHARED_RATE_SPAN = (1.5, 0.5)
LOAD_RATE_SPAN = (2.0, 0.5)
WARMUP_SPAN = (1 / 3, 2.0)
ENGINE_WARMUP_SECONDS: dict[EngineFamily, Figure] = {
    EngineFamily.NVIDIA_VLLM: Figure(
        90, "vLLM: torch.compile + CUDA graph capture, order of a minute", _AS_OF
    ),
    EngineFamily.NEURON_VLLM: Figure(300, "vLLM on Neuron: loading precompiled NEFFs, minutes", _AS_OF),
    EngineFamily.TPU_VLLM: Figure(
        600, "vLLM on TPU: XLA compilation of the bucketed graphs, ~10 minutes", _AS_OF
    ),
}


@dataclass(frozen=True)
class Stage:
    """One stage of a cold start: fastest, typical and slowest seconds, and where they come from."""

    name: str
    fastest: float
    typical: float
    slowest: float
    figure: Figure


def _span(typical: float, span: tuple[float, float]) -> tuple[float, float, float]:
    return span[0], typical, span[1]


@dataclass(frozen=True)
class ColdStart:
    instance_type: str
    source: WeightSource
    weights_gib: float
    fetch_gib_s: float
    fetch_basis: str
    family: EngineFamily

    @property
    def boot_seconds(self) -> float:
        return NODE_BOOT.value

    @property
    def fetch_seconds(self) -> float:
        return self.weights_gib / self.fetch_gib_s

    @property
    def load_seconds(self) -> float:
        # From the node's cache into accelerator memory, then the engine's warm-up.
        return self.weights_gib / NVME_READ_GIB_S.value + ENGINE_WARMUP_SECONDS[self.family].value

    @property
    def seconds(self) -> float:
        return self.boot_seconds + self.fetch_seconds + self.load_seconds

    def stages(self) -> tuple[Stage, ...]:
        """Each stage of a cold start as (fastest, typical, slowest) seconds, with its basis."""
        fetch = self.fetch_seconds
        if self.source in (WeightSource.S3, WeightSource.GCS):
            fast, slow = (OBJECT_STORE_EFFICIENCY / e for e in FETCH_EFFICIENCY_SPAN)
            fetch_basis = f"{self.fetch_basis}; 30%..90% of the NIC"
        else:
            fast, slow = (1 / r for r in SHARED_RATE_SPAN)
            fetch_basis = f"{self.fetch_basis}; 0.5x..1.5x the rate"
        nvme = self.weights_gib / NVME_READ_GIB_S.value
        warmup = ENGINE_WARMUP_SECONDS[self.family]
        return (
            Stage("machine boot", *_span(MACHINE_BOOT_RANGE.value, MACHINE_BOOT_SPAN), MACHINE_BOOT_RANGE),
            Stage("image pull", *_span(IMAGE_PULL_RANGE.value, IMAGE_PULL_SPAN), IMAGE_PULL_RANGE),
            Stage(
                "weights download",
                fetch * fast,
                fetch,
                fetch * slow,
                Figure(fetch, fetch_basis, _RANGE_AS_OF),
            ),
            Stage(
                "engine load",
                nvme / LOAD_RATE_SPAN[0],
                nvme,
                nvme / LOAD_RATE_SPAN[1],
                Figure(nvme, f"{NVME_READ_GIB_S.source}; 0.5x..2x the rate", NVME_READ_GIB_S.as_of),
            ),
            Stage(
                "compile and graph capture",
                warmup.value * WARMUP_SPAN[0],
                warmup.value,
                warmup.value * WARMUP_SPAN[1],
                warmup,
            ),
        )

    def range_seconds(self) -> tuple[float, float]:
        """(fastest, slowest) boot to serving: the stages' sums."""
        stages = self.stages()
        return sum(s.fastest for s in stages), sum(s.slowest for s in stages)

    def warm_stages(self, *, boot_seconds: float, read_gib_s: float) -> tuple[Stage, ...]:
        """A stopped warm-pool machine back in service, as (fastest, typical, slowest) stages: its
        restart (`boot_seconds` typical), the weights read back twice from its own disk at `read_gib_s`
        (verified, then loaded), the engine's warm-up. The typical sum is the fleet plan's warm start
        (fleet.elastic.plan_scaling passes its WARM_BOOT_SECONDS and WARM_CACHE_READ_GIB_S)."""
        read = 2 * self.weights_gib / read_gib_s
        warmup = ENGINE_WARMUP_SECONDS[self.family]
        restart = Figure(
            boot_seconds, "a stopped machine started again: 0.5x..2x (our estimate)", _RANGE_AS_OF
        )
        disk = Figure(read, f"weights read twice at {read_gib_s:.2f} GiB/s: 0.5x..2x the rate", _RANGE_AS_OF)
        return (
            Stage("warm restart", boot_seconds / 2, boot_seconds, boot_seconds * 2, restart),
            Stage("weights from disk", read / 2, read, read * 2, disk),
            Stage(
                "compile and graph capture",
                warmup.value * WARMUP_SPAN[0],
                warmup.value,
                warmup.value * WARMUP_SPAN[1],
                warmup,
            ),
        )

    def warm_range_seconds(self, *, boot_seconds: float, read_gib_s: float) -> tuple[float, float]:
        """(fastest, slowest) warm start: the warm stages' sums."""
        stages = self.warm_stages(boot_seconds=boot_seconds, read_gib_s=read_gib_s)
        return sum(s.fastest for s in stages), sum(s.slowest for s in stages)

    def grace_seconds(self) -> int:
        """Health-check grace: the slowest cold start of the range, in whole minutes."""
        return int(math.ceil(self.range_seconds()[1] / 60 - 1e-9) * 60)

    def slow_start_seconds(self) -> int:
        """ALB slow start (30..900 s): ramp a fresh target over its first minutes of serving."""
        return max(30, min(900, int(ENGINE_WARMUP_SECONDS[self.family].value)))

    def note(self, subject: str = "") -> str:
        """One line for `plan`; `subject` (e.g. "AWS GpuFleet 'llama-8b'") names the fleet."""
        warmup = ENGINE_WARMUP_SECONDS[self.family].value
        fetch = (
            f"{self.weights_gib:.1f} GiB from {self.source.value} at {self.fetch_gib_s:.2f} GiB/s"
            f" ({self.fetch_basis}) = {self.fetch_seconds:.0f} s"
        )
        load = (
            f"load {self.weights_gib:.1f} GiB at {NVME_READ_GIB_S.value:g} GiB/s and {warmup:.0f} s"
            f" {self.family.value} warm-up = {self.load_seconds:.0f} s"
        )
        of = f" of {subject}" if subject else ""
        fastest, slowest = self.range_seconds()
        return (
            f"cold start{of} ~{self.seconds / 60:.1f} min ({fastest / 60:.1f}..{slowest / 60:.1f}):"
            f" boot {self.boot_seconds:.0f} s + {fetch} + {load};"
            f" health-check grace {self.grace_seconds()} s, slow start {self.slow_start_seconds()} s"
        )


def cold_start(
    *, weights_gib: float, source: WeightSource, instance_type: str, family: EngineFamily
) -> ColdStart:
    if source in (WeightSource.S3, WeightSource.GCS):
        nic = NETWORK_GBPS.get(instance_type, DEFAULT_NETWORK)
        gbps = min(nic.value, OBJECT_STORE_CAP.value)
        rate = gbps * GIB_PER_GBIT * OBJECT_STORE_EFFICIENCY
        capped = f", capped at {OBJECT_STORE_CAP.value:g}" if nic.value > OBJECT_STORE_CAP.value else ""
        assumed = " assumed" if instance_type not in NETWORK_GBPS else ""
        basis = f"{nic.value:g} Gbit/s{assumed} NIC{capped} x {OBJECT_STORE_EFFICIENCY:.0%}"
    elif source is WeightSource.LOCAL_NVME:
        rate, basis = NVME_READ_GIB_S.value, "local NVMe"
    else:
        figure = SHARED_READ_GIB_S[source]
        rate, basis = figure.value, f"{source.value} per-client read"
    return ColdStart(instance_type, source, weights_gib, rate, basis, family)


def weights_gib(model: str, precision: Precision | None = None) -> float:
    """The model's weights in GiB at its weight format (the planner's figure)."""
    return weights_bytes(model_spec(model), precision or Precision()) / GIB


# -- Kubernetes: a pod on a node already up, or a node started for it ---------------------------
# A Kubernetes pool's new replica is a pod. When a node of the pool has room (its last pod left less
# than the node autoscaler's scale-down delay ago, or it holds fewer pods than it fits), the pod
# starts there: its image (kept by the kubelet from the node's last pod, or pulled), the weights
# download and the engine load. When none has room the pod waits for the node autoscaler to notice it
# and for a new node to become schedulable, then starts with its image pulled.
_K8S_AS_OF = date(2026, 12, 2)


class NodeAutoscaler(StrEnum):
    CLUSTER_AUTOSCALER = "cluster-autoscaler"  # EKS managed node groups, GKE node pools
    KARPENTER = "karpenter"


_CA_FAQ = "github.com/kubernetes/autoscaler cluster-autoscaler/FAQ.md at tag cluster-autoscaler-1.36.1"
# Pending pod to the node autoscaler's launch request, (fastest, typical, slowest) seconds.
NODE_AUTOSCALER_REACTION: dict[NodeAutoscaler, tuple[Figure, tuple[float, float]]] = {
    NodeAutoscaler.CLUSTER_AUTOSCALER: (
        Figure(
            20,
            f"{_CA_FAQ}: unschedulable pods checked every 10 s (--scan-interval), scale-up 'less than 30 "
            "seconds in most cases'",
            _K8S_AS_OF,
        ),
        (10.0, 30.0),
    ),
    NodeAutoscaler.KARPENTER: (
        Figure(
            5,
            "karpenter.sh settings (aws/karpenter-provider-aws v1.14.1 website/content/en/docs/reference/"
            "settings.md): pending pods batched for BATCH_IDLE_DURATION 1 s, at most BATCH_MAX_DURATION 10 s",
            _K8S_AS_OF,
        ),
        (1.0, 10.0),
    ),
}
# Launch request to a node pods can be scheduled on (machine boot, kubelet join, network, device plugin).
NODE_PROVISION = Figure(
    210,
    f"{_CA_FAQ}: 'on GCE it usually takes 3 to 4 minutes from CA request to when pods can be scheduled "
    "on newly created nodes' (taken for EKS too: no AWS figure found)",
    _K8S_AS_OF,
)
NODE_PROVISION_SPAN = (180.0, 240.0)
# How long an empty node stays before the node autoscaler removes it (it is billed meanwhile).
NODE_SCALE_DOWN_AFTER: dict[NodeAutoscaler, Figure] = {
    NodeAutoscaler.CLUSTER_AUTOSCALER: Figure(
        600, f"{_CA_FAQ}: --scale-down-unneeded-time defaults to 10m0s", _K8S_AS_OF
    ),
    NodeAutoscaler.KARPENTER: Figure(
        0,
        "karpenter.sh_nodepools CRD of aws/karpenter-provider-aws v1.14.1: disruption.consolidateAfter "
        "defaults to 0s (set it on the NodePool to keep empty nodes longer)",
        _K8S_AS_OF,
    ),
}


def pod_stages(estimate: ColdStart, *, image_cached: bool) -> tuple[Stage, ...]:
    """A pod starting on a node already up: its image (0 s when the node keeps it), the weights
    download, the engine load and warm-up, as (fastest, typical, slowest) stages."""
    _machine_boot, pull, *rest = estimate.stages()  # a pod starts on a node that is up
    if image_cached:
        pull = Stage(
            "image pull", 0.0, 0.0, 0.0, Figure(0, "image kept on the node by the kubelet", _K8S_AS_OF)
        )
    return (pull, *rest)


def node_stages(estimate: ColdStart, autoscaler: NodeAutoscaler) -> tuple[Stage, ...]:
    """A pod that needs a new node: the autoscaler's reaction, the node's provisioning, then the pod
    starting on it with its image pulled."""
    reaction, span = NODE_AUTOSCALER_REACTION[autoscaler]
    return (
        Stage("node autoscaler", span[0], reaction.value, span[1], reaction),
        Stage(
            "node provisioning",
            NODE_PROVISION_SPAN[0],
            NODE_PROVISION.value,
            NODE_PROVISION_SPAN[1],
            NODE_PROVISION,
        ),
        *pod_stages(estimate, image_cached=False),
    )


def stage_seconds(stages: tuple[Stage, ...], which: str = "typical") -> float:
    """The sum of the stages at one end of their range (fastest | typical | slowest)."""
    return sum(getattr(s, which) for s in stages)
