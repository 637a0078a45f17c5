"""A Kubernetes serving pool's inputs and the checks that need no plan (pure: no provider SDK).

`KubernetesServingPoolArgs` takes the VM fleets' vocabulary (components.fleet: `model`, the counts per
capacity mode, `serving_port`, `elastic`; weights as `S3Weights` / `GcsWeights`) and adds what a
cluster needs: where the cluster is and how its pods get a cloud identity (`KubernetesCluster`), the
gateway that routes to the pool, the Prometheus that scrapes it, the API key's secret. The counts are
machines (nodes), as on the VM fleets; each machine runs one pod per engine the planner put on it.

`serving_pool_problems` is every check of these inputs that needs no machine; the profile
(pool_profile.py) runs it inside the one fleet skeleton (components/fleet/plan.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import pulumi

from inference_infra.components.arguments import arg
from inference_infra.components.aws.fleet_args import S3Weights
from inference_infra.components.catalog import AcceleratorFamily, Cloud
from inference_infra.components.errors import Problem
from inference_infra.components.fleet import CapacityArgs, ElasticArgs, ServedModel
from inference_infra.components.gcp.node_args import GcsWeights
from inference_infra.components.images import PINNED_REFERENCE
from inference_infra.components.k8s.pool_nodes import PoolEksNodeGroups, PoolGkeNodePools, PoolKarpenterNodes
from inference_infra.components.models.manifest import is_pinned_digest
from inference_infra.components.monitoring.serving import Latency
from inference_infra.components.serving.engines import FIRST_ENGINE_PORT

__all__ = [
    "CanaryBackend",
    "GatewayRef",
    "GcsWeights",
    "KubernetesCluster",
    "KubernetesServingPoolArgs",
    "ModelCache",
    "ModelCacheKind",
    "PoolTarget",
    "PrometheusRef",
    "S3Weights",
    "serving_pool_problems",
]

_DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")  # RFC 1123 label (namespaces, Services)
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# arn:aws:iam::<account>:oidc-provider/<issuer host and path> (IAM's ARN format for OIDC providers).
_OIDC_PROVIDER_ARN = re.compile(
    r"^arn:(?P<partition>aws[a-z-]*):iam::(?P<account>\d{12}):oidc-provider/(?P<issuer>[a-z0-9.-]+(/[A-Za-z0-9]+)*)$"
)
# GKE's workload pool: <project>.svc.id.goog (the only pool GKE offers a cluster).
_WORKLOAD_POOL = re.compile(r"^(?P<project>[a-z][a-z0-9-]{4,28}[a-z0-9])\.svc\.id\.goog$")
_KMS_KEY_ARN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[A-Za-z0-9-]+$")
_SECRETS_MANAGER_ARN = re.compile(
    r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]{1,512}$"
)
# projects/P/secrets/NAME/versions/V, as GCP's Secret Manager CSI provider takes a resource name.
_SECRET_VERSION = re.compile(
    r"^projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/secrets/[A-Za-z0-9_-]{1,255}/versions/(latest|[1-9][0-9]{0,9})$"
)
# An EFS file system (fs-<hex>, optionally with an access point), as its CSI driver takes it.
_EFS_ID = re.compile(r"^fs-[0-9a-f]{8,40}(::fsap-[0-9a-f]{8,40})?$")
# Filestore's CSI driver (filestore.csi.storage.gke.io) takes a pre-existing share as the volume handle
# modeInstance/<location>/<instance>/<share> with the instance's IP (GKE docs, "Access pre-existing
# Filestore instances with the Filestore CSI driver", read 2026-12-02).
_FILESTORE = re.compile(r"^modeInstance/[a-z0-9-]{1,63}/[a-z]([-a-z0-9]{0,61}[a-z0-9])?/[A-Za-z0-9_]{1,64}$")
_IPV4 = re.compile(r"^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$")
_PATH_WORD = re.compile(r"^[A-Za-z0-9._-]+$")
MAX_POOL_NAME = 40  # leaves room for the suffixes of its objects' names within 63 characters
MAX_ROUTE_WEIGHT = 1_000_000  # Gateway API: HTTPBackendRef.weight 0..1000000


class PoolTarget(StrEnum):
    """The fleet pipeline's Kubernetes targets (FleetPlan.target)."""

    EKS_GPU = "k8s-eks-gpu"
    EKS_INFERENTIA = "k8s-eks-inferentia"
    GKE_GPU = "k8s-gke-gpu"
    GKE_TPU = "k8s-gke-tpu"

    @property
    def cloud(self) -> Cloud:
        return Cloud.AWS if self.value.startswith("k8s-eks") else Cloud.GCP

    @property
    def family(self) -> AcceleratorFamily:
        return {
            PoolTarget.EKS_GPU: AcceleratorFamily.NVIDIA_GPU,
            PoolTarget.EKS_INFERENTIA: AcceleratorFamily.AWS_NEURON,
            PoolTarget.GKE_GPU: AcceleratorFamily.NVIDIA_GPU,
            PoolTarget.GKE_TPU: AcceleratorFamily.GOOGLE_TPU,
        }[self]


@dataclass(frozen=True, kw_only=True)
class KubernetesCluster:
    """The cluster a pool serves on and how its pods get a cloud identity."""

    cloud: Cloud = arg(doc="aws (EKS) or gcp (GKE).")
    namespace: str = arg("inference", "The namespace the pool's objects live in (created elsewhere).")
    kubeconfig: pulumi.Input[str] | None = arg(
        None,
        "A kubeconfig (keep it secret, e.g. an Output of the cluster's); default: the provider in opts, or "
        "the ambient kubeconfig.",
        stack=False,
    )
    kube_context: str | None = arg(None, "kubeconfig context to deploy to (default: the current one).")
    oidc_provider_arn: str | None = arg(
        None,
        "EKS: the cluster's IAM OIDC provider ARN (arn:aws:iam::<account>:oidc-provider/oidc.eks...). The "
        "pool's IAM role trusts it for this pool's service account only (IRSA).",
    )
    workload_pool: str | None = arg(None, "GKE: the cluster's Workload Identity pool, <project>.svc.id.goog.")
    region: str | None = arg(
        None, "The cluster's region, where the planner prices machines; default: the provider's."
    )

    @property
    def gcp_project(self) -> str | None:
        match = _WORKLOAD_POOL.fullmatch(self.workload_pool or "")
        return match["project"] if match else None

    @property
    def oidc_issuer(self) -> str | None:
        """The OIDC issuer without https:// (the IAM condition keys' prefix)."""
        match = _OIDC_PROVIDER_ARN.fullmatch(self.oidc_provider_arn or "")
        return match["issuer"] if match else None

    @property
    def aws_partition(self) -> str:
        match = _OIDC_PROVIDER_ARN.fullmatch(self.oidc_provider_arn or "")
        return match["partition"] if match else "aws"


@dataclass(frozen=True, kw_only=True)
class GatewayRef:
    """The Gateway API `Gateway` that routes to the pool (installed and run elsewhere)."""

    name: str = arg(doc="The Gateway's name.")
    namespace: str = arg(doc="The Gateway's namespace: only its pods may call the pool's API port.")
    pod_labels: Mapping[str, str] = arg(
        factory=dict,
        doc="Labels of the gateway's data-plane pods; empty: every pod of its namespace may call the API.",
    )
    hostnames: Sequence[str] = arg((), "Host names the route answers; empty: the Gateway's listeners'.")


@dataclass(frozen=True, kw_only=True)
class PrometheusRef:
    """The Prometheus that scrapes the pool and feeds its scaler (GpuObservability's)."""

    namespace: str = arg("monitoring", "GpuObservability's namespace (only its Prometheus scrapes the pool).")
    release: str = arg(
        doc="GpuObservability's kube-prometheus-stack release (GpuObservability.kps_release_name): its "
        "Prometheus selects monitors labelled release=<it> and serves on <it>-prometheus:9090."
    )

    @property
    def url(self) -> str:
        return f"http://{self.release}-prometheus.{self.namespace}.svc:9090"


@dataclass(frozen=True, kw_only=True)
class CanaryBackend:
    """Another pool's Service the route sends a share of the traffic to (a canary between pools)."""

    service: str = arg(doc="The other pool's Service (KubernetesServingPool.service_name), same namespace.")
    weight: int = arg(doc="Its weight against the pool's own route_weight.", ge=0, le=MAX_ROUTE_WEIGHT)
    port: int = arg(FIRST_ENGINE_PORT, "Its API port.", ge=1, le=65535)


class ModelCacheKind(StrEnum):
    EFS = "efs"  # Amazon EFS CSI driver (efs.csi.aws.com)
    FILESTORE = "filestore"  # an NFS volume of a Filestore share (GKE's Filestore CSI driver provisions it)


@dataclass(frozen=True, kw_only=True)
class ModelCache:
    """Weights already on a shared file system, mounted read-only and verified before the engine starts."""

    kind: ModelCacheKind = arg(doc="efs or filestore.")
    volume: str = arg(
        doc="EFS: the file system id (fs-..., optionally ::fsap-... for an access point); Filestore: the "
        "CSI volume handle modeInstance/<location>/<instance>/<share>."
    )
    address: str | None = arg(None, "Filestore only: the instance's IP address.")
    folder: str = arg(doc="The model folder inside the volume (holds inference-manifest.json).")
    manifest_sha256: str = arg(
        doc="The folder's pinned manifest SHA-256 (`inference-infra models manifest`)."
    )


@dataclass(frozen=True, kw_only=True)
class KubernetesServingPoolArgs(CapacityArgs):
    """A vLLM pool on an EKS or GKE cluster, planned like a VM fleet (components/fleet/plan.py).

    The counts (`reserved`, `spot`, `on_demand`, or `count`) are machines, each running one pod per
    engine the planner placed on it; with `elastic` they are the peak. A replica over several hosts
    (`hosts_per_replica`, planned or given) makes them replicas: each is that many machines.
    """

    cluster: KubernetesCluster = arg(doc="The cluster, its namespace and its workload identity.", stack=False)
    model: ServedModel | None = arg(
        None, "The model and its traffic: the planner picks the machine (or checks the one given)."
    )
    accelerator: AcceleratorFamily = arg(
        AcceleratorFamily.NVIDIA_GPU, "nvidia-gpu, aws-neuron (EKS) or google-tpu (GKE)."
    )
    machine: str | None = arg(
        None, "The node's instance/machine type or TPU slice; default: the capacity planner's pick."
    )
    weights: S3Weights | GcsWeights | ModelCache | None = arg(
        None,
        "Where the weights are: S3Weights (EKS) or GcsWeights (GKE), fetched by an init container with the "
        "pool's workload identity and verified against the pinned manifest; or a read-only ModelCache.",
        stack=False,
    )
    hosts_per_replica: int | None = arg(
        None,
        "NVIDIA GPU pools: machines one replica spans, as a LeaderWorkerSet group (tensor parallel over "
        "each host's GPUs, pipeline parallel across the hosts), at most 4; with it the counts are replicas "
        "and each is this many nodes. Default: 1, or the fewest hosts that hold the model when no single "
        "machine does. TPU and Neuron pools serve on one host.",
        ge=1,
    )
    serving_port: int = arg(FIRST_ENGINE_PORT, "The engine's port in the pod.", ge=1, le=65535)
    latency: Latency | None = arg(None, "interactive or batch: the serving alerts' budget for this pool.")
    elastic: ElasticArgs | None = arg(
        None,
        "Follow the load with a KEDA ScaledObject on the engines' running + waiting requests: the counts "
        "become the peak; min_size 0 (scale to zero) only outside production.",
    )
    image: str | None = arg(
        None, "The engine image by digest (registry/repo@sha256:...); default: the VM fleets' pin."
    )
    api_key_secret: str | None = arg(
        None,
        "The API key's secret: a Secrets Manager secret ARN (EKS) or projects/P/secrets/N/versions/V (GKE), "
        "mounted as a file by the Secrets Store CSI driver. Required.",
    )
    api_key_kms_key: str | None = arg(
        None,
        "EKS: the KMS key ARN encrypting the API key's secret when it is not Secrets Manager's AWS managed "
        "key: the pool's role may decrypt with it through Secrets Manager only.",
        stack=False,
    )
    gateway: GatewayRef | None = arg(None, "The Gateway that routes /v1/ and /health to the pool.")
    route_weight: int = arg(100, "This pool's weight in its route.", ge=0, le=MAX_ROUTE_WEIGHT)
    canaries: Sequence[CanaryBackend] = arg(
        (), "Other pools' Services sharing the route, each with a weight."
    )
    prometheus: PrometheusRef | None = arg(
        None, "GpuObservability's Prometheus: scrapes the pool (PodMonitor) and feeds KEDA."
    )
    environment: str | None = arg(
        None,
        "The environment (prod..., dev...): production pools never scale to zero and preempt others; "
        "default: the stack's registered Environment cost tag.",
    )
    labels: Mapping[str, str] = arg(factory=dict, doc="More labels on every object of the pool.")
    priority: int | None = arg(
        None,
        "The pool's PriorityClass value; default: 100000 in production, 1000 elsewhere.",
        ge=-1_000_000_000,
        le=1_000_000_000,
    )
    nodes: PoolEksNodeGroups | PoolKarpenterNodes | PoolGkeNodePools | None = arg(
        None,
        "The pool's own node capacity, made from its plan (the machine, the counts per capacity mode, the "
        "elastic floor): PoolEksNodeGroups or PoolKarpenterNodes on EKS, PoolGkeNodePools on GKE; None: "
        "the cluster already has nodes labelled and tainted for the pool (scheduling.py).",
        stack=False,
    )

    @property
    def engines(self) -> None:
        """The previous release's engines input of the VM fleets: a Kubernetes pool always plans them."""
        return None

    @property
    def target(self) -> PoolTarget:
        if self.cluster.cloud is Cloud.AWS:
            return (
                PoolTarget.EKS_INFERENTIA
                if self.accelerator is AcceleratorFamily.AWS_NEURON
                else PoolTarget.EKS_GPU
            )
        return PoolTarget.GKE_TPU if self.accelerator is AcceleratorFamily.GOOGLE_TPU else PoolTarget.GKE_GPU


def name_ok(value: object, max_length: int = 63) -> bool:
    return isinstance(value, str) and len(value) <= max_length and bool(_DNS_LABEL.fullmatch(value))


def _label_value_ok(value: object) -> bool:
    return (
        isinstance(value, str)
        and len(value) <= 63
        and bool(re.fullmatch(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$", value))
    )


def _label_key_ok(key: object) -> bool:
    if not isinstance(key, str) or not key:
        return False
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix)):
        return False
    return len(name) <= 63 and bool(re.fullmatch(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$", name))


def label_problems(key: str, labels: Mapping[str, str]) -> list[Problem]:
    """Kubernetes label keys (optional DNS prefix, a name of 63) and values (63, alphanumeric ends)."""
    problems = []
    for label, value in labels.items():
        if not _label_key_ok(label):
            problems.append(
                Problem(
                    f"{key}[{label!r}]", label, "must be a label key: [prefix/]name, name of 63 characters"
                )
            )
        elif not _label_value_ok(value):
            problems.append(
                Problem(
                    f"{key}[{label!r}]",
                    value,
                    "must be a label value: 63 characters of letters, digits, '-', '_' or '.', "
                    "alphanumeric at "
                    "both ends",
                )
            )
    return problems


def serving_pool_problems(name: str, args: KubernetesServingPoolArgs) -> list[Problem]:
    """The pool's own inputs that need no machine: names, the cluster and its identity, the weights'
    source, the image, the secret, the route, the monitoring."""
    problems = []
    if not name_ok(name, MAX_POOL_NAME):
        problems.append(
            Problem(
                "name",
                name,
                f"must be a DNS label of {MAX_POOL_NAME} characters or fewer (a-z, 0-9, '-', a letter "
                "first): it "
                "names the pool's Deployment, Service, service account and cloud identity",
            )
        )
    problems += _cluster_problems(args)
    problems += _weights_source_problems(args)
    if args.image is not None and not PINNED_REFERENCE.match(args.image):
        problems.append(
            Problem(
                "image",
                args.image,
                "must be pinned by digest: registry/repository[:tag]@sha256:<64 hex> (a tag can move)",
            )
        )
    problems += _secret_problems(args)
    problems += _route_problems(args)
    if args.prometheus is not None:
        if not name_ok(args.prometheus.namespace):
            problems.append(
                Problem("prometheus.namespace", args.prometheus.namespace, "must be a namespace name")
            )
        if not name_ok(args.prometheus.release, 53):
            problems.append(
                Problem(
                    "prometheus.release",
                    args.prometheus.release,
                    "must be a Helm release name (DNS label, 53)",
                )
            )
    if args.elastic is not None and args.prometheus is None:
        problems.append(
            Problem(
                "prometheus",
                None,
                "is required with elastic: KEDA reads the engines' running + waiting requests from it",
            )
        )
    problems += label_problems("labels", args.labels)
    return problems


def _cluster_problems(args: KubernetesServingPoolArgs) -> list[Problem]:
    cluster = args.cluster
    problems = []
    if cluster.cloud not in (Cloud.AWS, Cloud.GCP):
        problems.append(Problem("cluster.cloud", cluster.cloud, "must be aws (EKS) or gcp (GKE)"))
        return problems
    if not name_ok(cluster.namespace):
        problems.append(
            Problem(
                "cluster.namespace", cluster.namespace, "must be a namespace name (DNS label: a-z, 0-9, '-')"
            )
        )
    if cluster.kube_context is not None and not re.fullmatch(r"^[\w.:@/-]{1,253}$", cluster.kube_context):
        problems.append(
            Problem("cluster.kube_context", cluster.kube_context, "must be a kubeconfig context name")
        )
    needs_identity = isinstance(args.weights, (S3Weights, GcsWeights)) or args.api_key_secret is not None
    if cluster.cloud is Cloud.AWS:
        if cluster.workload_pool is not None:
            problems.append(
                Problem(
                    "cluster.workload_pool",
                    cluster.workload_pool,
                    "is GKE's; an EKS cluster uses oidc_provider_arn",
                )
            )
        if cluster.oidc_provider_arn is not None and cluster.oidc_issuer is None:
            problems.append(
                Problem(
                    "cluster.oidc_provider_arn",
                    cluster.oidc_provider_arn,
                    "must be an IAM OIDC provider ARN: arn:aws:iam::<account>:oidc-provider/<issuer>",
                )
            )
        elif cluster.oidc_provider_arn is None and needs_identity:
            problems.append(
                Problem(
                    "cluster.oidc_provider_arn",
                    None,
                    "is required: the pool reads its weights and API key with an IAM role that trusts the "
                    "cluster's OIDC provider for this pool's service account only (IRSA)",
                )
            )
        if args.accelerator is AcceleratorFamily.GOOGLE_TPU:
            problems.append(
                Problem("accelerator", args.accelerator.value, "is GKE's; on EKS: nvidia-gpu or aws-neuron")
            )
    else:
        if cluster.oidc_provider_arn is not None:
            problems.append(
                Problem(
                    "cluster.oidc_provider_arn",
                    cluster.oidc_provider_arn,
                    "is EKS's; a GKE cluster uses workload_pool",
                )
            )
        if cluster.workload_pool is not None and cluster.gcp_project is None:
            problems.append(
                Problem(
                    "cluster.workload_pool",
                    cluster.workload_pool,
                    "must be <project>.svc.id.goog (GKE's pool)",
                )
            )
        elif cluster.workload_pool is None and needs_identity:
            problems.append(
                Problem(
                    "cluster.workload_pool",
                    None,
                    "is required: the pool reads its weights and API key as a Google service account "
                    "bound to "
                    "this pool's Kubernetes service account (Workload Identity)",
                )
            )
        if args.accelerator is AcceleratorFamily.AWS_NEURON:
            problems.append(
                Problem("accelerator", args.accelerator.value, "is EKS's; on GKE: nvidia-gpu or google-tpu")
            )
    return problems


def _weights_source_problems(args: KubernetesServingPoolArgs) -> list[Problem]:
    weights, cloud = args.weights, args.cluster.cloud
    problems = []
    if isinstance(weights, S3Weights):
        if cloud is not Cloud.AWS:
            problems.append(Problem("weights", "S3Weights", "serve from S3 on EKS; on GKE give GcsWeights"))
        if not weights.prefetch:
            problems.append(
                Problem(
                    "weights.prefetch",
                    False,
                    "must be true: a pod serves only weights its init container fetched and verified",
                )
            )
    elif isinstance(weights, GcsWeights):
        if cloud is not Cloud.GCP:
            problems.append(
                Problem("weights", "GcsWeights", "serve from Cloud Storage on GKE; on EKS give S3Weights")
            )
        if len(weights.uris) != 1:
            problems.append(
                Problem(
                    "weights.uris",
                    list(weights.uris),
                    "must name exactly one gs:// model folder (the one served)",
                )
            )
    elif isinstance(weights, ModelCache):
        expected = ModelCacheKind.EFS if cloud is Cloud.AWS else ModelCacheKind.FILESTORE
        if weights.kind is not expected:
            problems.append(
                Problem("weights.kind", weights.kind.value, f"must be {expected.value} on this cluster")
            )
        pattern = _EFS_ID if weights.kind is ModelCacheKind.EFS else _FILESTORE
        if not pattern.fullmatch(weights.volume):
            allowed = (
                "fs-<hex>[::fsap-<hex>]"
                if weights.kind is ModelCacheKind.EFS
                else "modeInstance/<location>/<instance>/<share>"
            )
            problems.append(Problem("weights.volume", weights.volume, f"must be {allowed}"))
        if weights.kind is ModelCacheKind.FILESTORE and not _IPV4.fullmatch(weights.address or ""):
            problems.append(
                Problem("weights.address", weights.address, "must be the Filestore instance's IPv4 address")
            )
        if weights.kind is ModelCacheKind.EFS and weights.address is not None:
            problems.append(
                Problem("weights.address", weights.address, "is Filestore's; leave it unset for EFS")
            )
        parts = weights.folder.rstrip("/").split("/")
        if (
            weights.folder.startswith("/")
            or not weights.folder.strip("/")
            or any(not _PATH_WORD.fullmatch(p) or p in (".", "..") for p in parts)
        ):
            problems.append(
                Problem(
                    "weights.folder",
                    weights.folder,
                    "must be a relative folder of letters, digits, '.', '_' and '-' segments (no '..')",
                )
            )
        if not is_pinned_digest(weights.manifest_sha256):
            problems.append(
                Problem(
                    "weights.manifest_sha256",
                    weights.manifest_sha256,
                    "must be a SHA-256: 64 lower-case hex digits",
                )
            )
    return problems


def _secret_problems(args: KubernetesServingPoolArgs) -> list[Problem]:
    key = args.api_key_kms_key
    if key is not None and (args.cluster.cloud is not Cloud.AWS or not _KMS_KEY_ARN.fullmatch(str(key))):
        return [
            Problem(
                "api_key_kms_key",
                key,
                "must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>; an alias cannot be "
                "granted in IAM) and only on EKS",
            )
        ]
    secret = args.api_key_secret
    if secret is None:
        return [
            Problem(
                "api_key_secret",
                None,
                "is required: the engine answers only requests carrying its API key (a Secrets "
                "Manager ARN on "
                "EKS, projects/P/secrets/N/versions/V on GKE)",
            )
        ]
    if args.cluster.cloud is Cloud.AWS and not _SECRETS_MANAGER_ARN.fullmatch(secret):
        return [
            Problem(
                "api_key_secret",
                secret,
                "must be a Secrets Manager secret ARN "
                "(arn:aws:secretsmanager:<region>:<account>:secret:<name>)",
            )
        ]
    if args.cluster.cloud is Cloud.GCP and not _SECRET_VERSION.fullmatch(secret):
        return [
            Problem(
                "api_key_secret",
                secret,
                "must be a Secret Manager version: projects/<project>/secrets/<name>/versions/<n or latest>",
            )
        ]
    return []


def _route_problems(args: KubernetesServingPoolArgs) -> list[Problem]:
    problems = []
    gateway = args.gateway
    if gateway is not None:
        if not _DNS_SUBDOMAIN.fullmatch(gateway.name) or len(gateway.name) > 253:
            problems.append(Problem("gateway.name", gateway.name, "must be an object name (DNS subdomain)"))
        if not name_ok(gateway.namespace):
            problems.append(Problem("gateway.namespace", gateway.namespace, "must be a namespace name"))
        problems += label_problems("gateway.pod_labels", gateway.pod_labels)
        for i, host in enumerate(gateway.hostnames):
            # Gateway API Hostname: a DNS name, optionally with one leading '*.' label.
            bare = host[2:] if isinstance(host, str) and host.startswith("*.") else host
            if not isinstance(bare, str) or len(host) > 253 or not _DNS_SUBDOMAIN.fullmatch(bare):
                problems.append(
                    Problem(f"gateway.hostnames[{i}]", host, "must be a DNS name, optionally *.<name>")
                )
    elif args.canaries:
        problems.append(
            Problem("canaries", len(args.canaries), "need gateway: canaries share the pool's route")
        )
    for i, canary in enumerate(args.canaries):
        if not name_ok(canary.service):
            problems.append(
                Problem(f"canaries[{i}].service", canary.service, "must be a Service name (DNS label)")
            )
    if args.canaries and args.route_weight + sum(c.weight for c in args.canaries) == 0:
        problems.append(
            Problem("route_weight", 0, "and every canary's weight are 0: the route would send nothing")
        )
    return problems
