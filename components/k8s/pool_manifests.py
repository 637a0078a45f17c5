"""A Kubernetes serving pool's objects, rendered from its FleetPlan (pure: plain dicts, no SDK).

Every function takes the pool's name, its args and its plan, and returns the object's body as the API
server would receive it; serving_pool.py registers them. Nothing here plans: the machine, the engine
flags, the cold start and the scaling all come from the FleetPlan (components/fleet/plan.py).

Versions rendered, each with where it was read (2026-12-02); every object is checked in
tests/components/k8s/test_serving_pool_objects.py against the Kubernetes API's schemas
(kubernetes-validate) or the CRD vendored at the version named here (tests/k8s_schemas/SOURCES):

- LeaderWorkerSet `leaderworkerset.x-k8s.io/v1` (CRD of LWS v0.10.0) in place of the Deployment when a
  replica spans hosts (pool_lws.py says what a group adds and where each piece was read);
- core and built-in kinds (apps/v1 Deployment, policy/v1 PodDisruptionBudget, scheduling.k8s.io/v1
  PriorityClass, networking.k8s.io/v1 NetworkPolicy, v1 Service/ServiceAccount/ConfigMap/PV/PVC);
- Gateway API `gateway.networking.k8s.io/v1` HTTPRoute, standard channel (CRD of v1.6.1;
  apis/v1/httproute_types.go: PathPrefix matches path elements split by '/', a trailing '/' ignored,
  case-sensitive; Exact outranks any prefix; a rule with no backendRefs forwards nothing and the
  gateway answers it);
- KEDA `keda.sh/v1alpha1` ScaledObject (CRD of v2.20.2; prometheus trigger metadata serverAddress/
  query/threshold/activationThreshold, cron trigger timezone/start/end/desiredReplicas:
  keda.sh/docs/scalers/prometheus and .../cron);
- Prometheus Operator `monitoring.coreos.com/v1` PodMonitor (CRD of v0.93.0, the same v1 as
  kube-prometheus-stack 91.4.1's operator, components/k8s/charts.py; `attachMetadata.node`:
  pkg/apis/monitoring/v1/podmonitor_types.go, Prometheus >= 2.35, its service account listing and
  watching Nodes);
- Secrets Store CSI driver `secrets-store.csi.x-k8s.io/v1` SecretProviderClass (CRD of v1.6.0), with
  AWS's provider (ASCP: parameters objects/region/usePodIdentity, docs.aws.amazon.com/secretsmanager/
  latest/userguide/ascp-examples.html) or Google's (parameters secrets: resourceName/fileName).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from inference_infra.components.aws.fleet_args import S3Weights
from inference_infra.components.catalog import AcceleratorFamily, Cloud, find_instance_type
from inference_infra.components.endpoints.routing import GUARDED_API_PREFIX
from inference_infra.components.fleet.elastic import (
    K8S_SCALE_DOWN_PERCENT,
    K8S_SCALE_DOWN_PERCENT_PERIOD_SECONDS,
    K8S_SCALE_UP_PERCENT,
    K8S_SCALE_UP_PERCENT_PERIOD_SECONDS,
)
from inference_infra.components.fleet.plan import FleetPlan
from inference_infra.components.gcp.node_args import GcsWeights
from inference_infra.components.images import VLLM_OPENAI
from inference_infra.components.k8s import pool_lws as lws
from inference_infra.components.k8s.pool_profile import pods_per_machine, pool_is_production, priority_value
from inference_infra.components.k8s.scheduling import (
    ACCELERATOR_RESOURCES,
    POOL_LABEL,
    node_selector,
    tolerations,
)
from inference_infra.components.k8s.serving_pool_args import (
    KubernetesServingPoolArgs,
    ModelCache,
    ModelCacheKind,
)
from inference_infra.components.monitoring.serving import ENGINE_JOB
from inference_infra.components.serving.cold_start import ColdStart, WeightSource
from inference_infra.components.serving.engines import HEALTH_PATH, METRICS_PATH, EngineFamily, engine_image
from inference_infra.components.serving.flags import EngineConfig, engine_args
from inference_infra.components.serving.tpu_env import TPU_CHIP_BOUNDS
from inference_infra.components.serving.units import (
    API_KEY_SCRIPT,
    CONTAINER_API_KEY_FILE,
    CONTAINER_COMPILED_DIR,
    CONTAINER_MODEL_DIR,
    NEURON_SERVER_COMMAND,
    SHM_SIZE,
    TPU_FIRST_PROCESS_PORT,
)
from inference_infra.components.tagging import (
    AUTO_SHUTDOWN,
    COST_TAG_KEYS,
    gcp_label_key,
    registered_cost_tags,
)

MACHINE_LABEL = "inference-infra.dev/machine"  # the plan's machine: the cost rules join prices on it
APP_LABEL = "app.kubernetes.io/name"
ENGINE, METRICS, FETCH, VERIFY = "engine", "metrics", "fetch-weights", "verify-weights"
HTTP_PORT_NAME, METRICS_PORT_NAME = "http", "metrics"
SCRIPTS_DIR = "/opt/inference-infra"  # the ConfigMap of the verifier, the fetcher and the metrics proxy
VERIFIER, FETCHER, METRICS_PROXY = "verify_weights.py", "pool_fetch_weights.py", "metrics_proxy.py"
SECRETS_DIR = CONTAINER_API_KEY_FILE.rsplit("/", 1)[0]  # /run/secrets: the CSI volume, read-only
API_KEY_FILE_NAME = CONTAINER_API_KEY_FILE.rsplit("/", 1)[1]
MODEL_FOLDER = f"{CONTAINER_MODEL_DIR}/model"  # the fetched (or cached) model folder the engine serves
TMP_DIR = "/tmp"
# A non-root user for every container (uid and gid 65532). The vllm/vllm-openai image declares no USER
# (runs as root: vllm-project/vllm docker/Dockerfile, final stage vllm-openai sets only ENTRYPOINT), so
# the pod sets one; HOME, USER and the caches point into the writable /tmp emptyDir (torch's inductor
# names its cache after getpass.getuser(), which reads USER before the password database, where this
# uid is not).
RUN_AS_USER = 65532  # above 10000: no clash with a host user (checkov CKV_K8S_40)
# /dev/shm like the VM engines' `--shm-size` (units.py SHM_SIZE, Docker's "10g" = 10 GiB).
SHM_SIZE_LIMIT = SHM_SIZE.removesuffix("g") + "Gi"
TMP_SIZE_LIMIT = "20Gi"  # caches (torch compile, triton, flashinfer JIT) and, on Neuron, compiled graphs
PROBE_PERIOD_SECONDS = 10
MIN_STARTUP_SECONDS = 300
# The kube-dns Service's pods carry k8s-app=kube-dns on EKS (CoreDNS add-on) and GKE (kube-dns).
DNS_POD_LABELS = {"k8s-app": "kube-dns"}
# GKE Workload Identity: a NetworkPolicy must let pods reach the GKE metadata server, at
# 169.254.169.252:988 (GKE 1.21.0-gke.1000 and later) and, on GKE Dataplane V2, at 169.254.169.254:80
# (cloud.google.com/kubernetes-engine/docs/how-to/workload-identity, "network policy", read 2026-12-02).
GKE_METADATA = (("169.254.169.254/32", 80), ("169.254.169.252/32", 988))
LINK_LOCAL = "169.254.0.0/16"
# On GKE the pod's HTTPS reaches Google APIs (storage.googleapis.com for the weights) at Google's public
# addresses, or 199.36.153.4/30 and .8/30 through Private Google Access's restricted/private domains
# (cloud.google.com/vpc/docs/configure-private-google-access, read 2026-12-02): never a private
# address. So the private ranges (RFC 1918 and the shared 100.64.0.0/10, where GKE puts pods,
# Services, a private control plane and the VPC's other internal endpoints) are kept out of it: a
# compromised engine cannot reach the API server or any internal service on 443. (A Private Service
# Connect endpoint for Google APIs sits on an internal address: such a cluster cannot fetch from GCS
# through this policy; use a ModelCache there.) On EKS, S3 and STS interface endpoints are private
# addresses, so the exclusion is GKE's only.
PRIVATE_RANGES = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")
SCALER_POLLING_SECONDS = 15  # KEDA's default pollingInterval (seconds)


# --- names and labels --------------------------------------------------------------------------


def selector_labels(name: str) -> dict[str, str]:
    return {APP_LABEL: "inference-infra-serving", POOL_LABEL: name}


def cost_labels() -> dict[str, str]:
    """The stack's cost tags as Kubernetes labels (cost-center, environment, owner, auto-shutdown)."""
    tags = registered_cost_tags()
    if tags is None:
        return {}
    values = {**dict(zip(COST_TAG_KEYS, (tags.cost_center, tags.environment, tags.owner), strict=True))}
    values[AUTO_SHUTDOWN] = "true" if tags.auto_shutdown else "false"
    return {gcp_label_key(k): _label_value(v) for k, v in values.items()}


def _label_value(value: str) -> str:
    # A label value is ASCII: [A-Za-z0-9] at both ends, '-', '_' and '.' between (apimachinery's
    # IsValidLabelValue); str.isalnum() alone keeps 'é', which the API server refuses.
    kept = "".join(c if (c.isascii() and c.isalnum()) or c in "-_." else "_" for c in value)[:63]
    return kept.strip("-_.") or "unset"


def pool_labels(name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> dict[str, str]:
    labels = {**cost_labels(), **dict(args.labels), **selector_labels(name)}
    if plan.machine is not None:
        labels[MACHINE_LABEL] = plan.machine
    return labels


def metadata(name: str, args: KubernetesServingPoolArgs, plan: FleetPlan, suffix: str = "") -> dict[str, Any]:
    return {
        "name": f"{name}{suffix}",
        "namespace": args.cluster.namespace,
        "labels": pool_labels(name, args, plan),
    }


def service_account_name(name: str) -> str:
    return f"{name}-serving"


def priority_class_name(name: str, args: KubernetesServingPoolArgs) -> str:
    """Cluster-scoped: the namespace in the name keeps two namespaces' pools apart."""
    return f"inference-{args.cluster.namespace}-{name}"[:253]


def secret_provider_class_name(name: str) -> str:
    return f"{name}-api-key"


def scripts_config_map_name(name: str) -> str:
    return f"{name}-scripts"


def cache_volume_name(name: str, args: KubernetesServingPoolArgs) -> str:
    return f"{args.cluster.namespace}-{name}-model-cache"[:253]


# --- the engine -----------------------------------------------------------------------------------


def engine_config(plan: FleetPlan) -> EngineConfig:
    if plan.engines is None:
        raise ValueError("the plan has no engines: nothing to render (its problems say why)")
    return plan.engines


def accelerators_per_pod(plan: FleetPlan) -> int:
    """The devices one pod (one engine) requests: its tensor parallelism on GPUs and TPUs; on Neuron,
    whose plugin counts devices (aws.amazon.com/neuron) while tensor parallelism counts NeuronCores,
    the node's devices shared evenly among its engines."""
    engines = engine_config(plan)
    if engines.family is EngineFamily.NEURON_VLLM:
        return max(1, engines.devices_per_node // max(engines.engines, 1))
    return engines.tensor_parallel


# The share of a node's vCPUs and memory the engine pods request together. Without a request the
# engine would be the node's first victim: the kubelet evicts pods whose memory use exceeds their
# request first (priority only ranks within that), and gives a container with no memory request the
# highest OOM score (oom_score_adj 1000 - 1000 x request / capacity: kubernetes.io/docs/concepts/
# scheduling-eviction/node-pressure-eviction and pkg/kubelet/qos/policy.go, read 2026-12-02). Half the
# machine leaves the node's reserve (GKE and EKS keep well under a quarter of these sizes) and the
# DaemonSets room; no limit, so loading the weights may take more.
ENGINE_REQUEST_SHARE = 0.5


def engine_requests(args: KubernetesServingPoolArgs, plan: FleetPlan) -> dict[str, str]:
    """Each engine pod's CPU and memory request: its share of ENGINE_REQUEST_SHARE of the machine."""
    machine = find_instance_type(plan.machine, args.cluster.cloud) if plan.machine else None
    if machine is None:
        return {}
    pods = pods_per_machine(plan)
    cpu = max(1, int(machine.vcpus * ENGINE_REQUEST_SHARE / pods))
    memory = max(1, int(machine.memory_gib * ENGINE_REQUEST_SHARE / pods))
    return {"cpu": str(cpu), "memory": f"{memory}Gi"}


def image_of(args: KubernetesServingPoolArgs, plan: FleetPlan) -> str:
    return args.image or engine_image(engine_config(plan).family).reference


def helper_image(args: KubernetesServingPoolArgs, plan: FleetPlan, *, boto3: bool = False) -> str:
    """The image of the fetch, the verifier and the metrics proxy: the engine's own (python3 and the
    standard library are in every engine image, so a node pulls one image), except the S3 fetch of a
    Neuron pool, which runs the NVIDIA vLLM image: boto3 is in it (vllm-project/vllm docker/Dockerfile,
    stage vllm-openai-base) and has not been checked in AWS's Neuron container."""
    if boto3 and engine_config(plan).family is not EngineFamily.NVIDIA_VLLM:
        return VLLM_OPENAI.by_digest
    return image_of(args, plan)


# The cold start's stages done before the engine container starts: the node, the image, and (from an
# object store) the init containers' download. Every other stage runs inside the engine under its
# startup probe: the load, the warm-up, a Neuron compile on the node (NEURON_COMPILED_ARTIFACTS), and,
# from an EFS/Filestore cache, the read of the weights off the share (the engine loads them there).
_BEFORE_ENGINE = ("machine boot", "image pull", "weights download")
_SHARED_CACHES = (WeightSource.EFS, WeightSource.FILESTORE)


def startup_seconds(cold_start: ColdStart | None) -> int:
    """How long the startup probe waits: the slowest of every cold-start stage that runs in the engine
    container, in whole minutes, at least MIN_STARTUP_SECONDS."""
    if cold_start is None:
        return MIN_STARTUP_SECONDS
    before = _BEFORE_ENGINE if cold_start.source not in _SHARED_CACHES else _BEFORE_ENGINE[:2]
    slowest = sum(s.slowest for s in cold_start.stages() if s.name not in before)
    return max(MIN_STARTUP_SECONDS, int(math.ceil(slowest / 60 - 1e-9) * 60))


def probes(plan: FleetPlan) -> dict[str, Any]:
    get = {"path": HEALTH_PATH, "port": HTTP_PORT_NAME}
    startup = startup_seconds(plan.cold_start)
    return {
        "startupProbe": {
            "httpGet": get,
            "periodSeconds": PROBE_PERIOD_SECONDS,
            "timeoutSeconds": 5,
            "failureThreshold": startup // PROBE_PERIOD_SECONDS,
        },
        "readinessProbe": {
            "httpGet": get,
            "periodSeconds": PROBE_PERIOD_SECONDS,
            "timeoutSeconds": 5,
            "failureThreshold": 3,
        },
        # A busy engine still answers /health at once; two minutes without an answer is a hung one.
        "livenessProbe": {"httpGet": get, "periodSeconds": 20, "timeoutSeconds": 10, "failureThreshold": 6},
    }


def container_security() -> dict[str, Any]:
    return {
        "privileged": False,
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "runAsUser": RUN_AS_USER,
        "runAsGroup": RUN_AS_USER,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _environment(engines: EngineConfig) -> list[dict[str, str]]:
    env = {
        "HF_HUB_OFFLINE": "1",  # never download: the verified folder only
        "VLLM_NO_USAGE_STATS": "1",  # no usage report (the pod has no egress for it anyway)
        "DO_NOT_TRACK": "1",
        "HOME": TMP_DIR,
        "USER": "vllm",
        "XDG_CACHE_HOME": f"{TMP_DIR}/.cache",
        "VLLM_CACHE_ROOT": f"{TMP_DIR}/vllm",
    }
    if engines.family is EngineFamily.NEURON_VLLM:
        env["NEURON_COMPILED_ARTIFACTS"] = CONTAINER_COMPILED_DIR  # writable, never the read-only weights
    if engines.family is EngineFamily.TPU_VLLM and engines.engines > 1:
        # A pod holds part of the host's chips: libtpu is told the process's own chip bounds, as the VM
        # units tell each engine (units.py engine_environment); the device plugin hands the pod its chips
        # (no TPU_VISIBLE_CHIPS), and the pod's own network namespace takes the first process port.
        bounds = TPU_CHIP_BOUNDS.get(engines.tensor_parallel, f"1,{engines.tensor_parallel},1")
        env["TPU_CHIPS_PER_PROCESS_BOUNDS"] = bounds
        env["TPU_PROCESS_BOUNDS"] = "1,1,1"
        env["TPU_PROCESS_PORT"] = str(TPU_FIRST_PROCESS_PORT)
        env["TPU_PROCESS_ADDRESSES"] = f"localhost:{TPU_FIRST_PROCESS_PORT}"
    return [{"name": k, "value": v} for k, v in env.items()]


def engine_container(
    name: str, args: KubernetesServingPoolArgs, plan: FleetPlan, role: str | None = None
) -> dict[str, Any]:
    """vLLM with the planner's flags (the VM units' renderer), its key exported from the mounted file.
    `role` LEADER or WORKER: a pod of a group over several hosts (pool_lws.py): the leader serves the
    API after its workers join; a worker runs the engine headless, with no key, port or probe."""
    engines = engine_config(plan)
    server = list(NEURON_SERVER_COMMAND) if engines.family is EngineFamily.NEURON_VLLM else ["vllm", "serve"]
    devices = {ACCELERATOR_RESOURCES[plan_family(plan)]: str(accelerators_per_pod(plan))}
    mounts = [
        {"name": "models", "mountPath": CONTAINER_MODEL_DIR, "readOnly": True},
        {"name": "dshm", "mountPath": "/dev/shm"},
        {"name": "tmp", "mountPath": TMP_DIR},
        {"name": "api-key", "mountPath": SECRETS_DIR, "readOnly": True},
    ]
    if engines.family is EngineFamily.NEURON_VLLM:
        mounts.append({"name": "tmp", "mountPath": CONTAINER_COMPILED_DIR, "subPath": "neuron-compiled"})
    container: dict[str, Any] = {
        "name": ENGINE,
        "image": image_of(args, plan),
        # The VM units' entrypoint: the key from the file into the server's environment, then the server.
        "command": ["/bin/sh", "-c", API_KEY_SCRIPT, "engine", *server],
        "args": engine_args(engines, 0, MODEL_FOLDER),
        "ports": [{"name": HTTP_PORT_NAME, "containerPort": args.serving_port, "protocol": "TCP"}],
        "env": _environment(engines),
        "resources": {"requests": {**engine_requests(args, plan), **devices}, "limits": dict(devices)},
        "volumeMounts": mounts,
        "securityContext": container_security(),
        **probes(plan),
    }
    if role is None:
        return container
    hosts, wait = engines.pipeline_parallel, lws.join_seconds(plan.cold_start)
    container["args"] += lws.multi_node_args(hosts, leader=role == LEADER, timeout_seconds=wait)
    if role == LEADER:
        container["command"] = ["/bin/sh", "-c", lws.LEADER_SCRIPT, "engine", *server]
        container["env"] += lws.group_environment(hosts, wait)
        # The startup probe also waits for the workers to join (the rendezvous' bound).
        startup = container["startupProbe"]
        startup["failureThreshold"] += wait // PROBE_PERIOD_SECONDS
        return container
    # A worker: the engine itself (no shell, no key: the API lives on the leader), headless.
    container["command"] = server
    container["volumeMounts"] = [m for m in mounts if m["name"] != "api-key"]
    for key in ("ports", "startupProbe", "readinessProbe", "livenessProbe"):
        del container[key]
    return container


def metrics_container(args: KubernetesServingPoolArgs, plan: FleetPlan) -> dict[str, Any]:
    """The VM nodes' metrics-only proxy (GET /metrics, nothing else) on the engine's port + 1000."""
    port = engine_config(plan).metrics_ports[0]
    return {
        "name": METRICS,
        "image": helper_image(args, plan),
        "command": [
            "python3",
            f"{SCRIPTS_DIR}/{METRICS_PROXY}",
            "--listen",
            str(port),
            "--upstream",
            str(args.serving_port),
        ],
        "ports": [{"name": METRICS_PORT_NAME, "containerPort": port, "protocol": "TCP"}],
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
        "volumeMounts": [{"name": "scripts", "mountPath": SCRIPTS_DIR, "readOnly": True}],
        "securityContext": container_security(),
        "readinessProbe": {"tcpSocket": {"port": METRICS_PORT_NAME}, "periodSeconds": 10},
        "livenessProbe": {
            "tcpSocket": {"port": METRICS_PORT_NAME},
            "periodSeconds": 30,
            "failureThreshold": 3,
        },
    }


def plan_family(plan: FleetPlan) -> AcceleratorFamily:
    return {
        EngineFamily.NVIDIA_VLLM: AcceleratorFamily.NVIDIA_GPU,
        EngineFamily.NEURON_VLLM: AcceleratorFamily.AWS_NEURON,
        EngineFamily.TPU_VLLM: AcceleratorFamily.GOOGLE_TPU,
    }[engine_config(plan).family]


# --- weights ----------------------------------------------------------------------------------------


def weights_source(args: KubernetesServingPoolArgs) -> str | None:
    """s3://bucket/prefix or gs://bucket/folder (None: a mounted cache). The S3 bucket may be an Output:
    serving_pool.py resolves it before rendering."""
    weights = args.weights
    if isinstance(weights, S3Weights):
        return f"s3://{weights.bucket_name}/{weights.prefix.strip('/')}"
    if isinstance(weights, GcsWeights):
        return weights.uris[0].rstrip("/")
    return None


def pinned_digest(args: KubernetesServingPoolArgs) -> str:
    weights = args.weights
    if isinstance(weights, S3Weights):
        return str(weights.manifest_sha256)
    if isinstance(weights, GcsWeights):
        return weights.pins()[weights.uris[0]]
    assert isinstance(weights, ModelCache)
    return weights.manifest_sha256


def aws_region(args: KubernetesServingPoolArgs) -> str:
    """The EKS cluster's region: `cluster.region`, else the OIDC issuer's host (oidc.eks.<region>.
    amazonaws.com), else the API key secret's ARN (validated: one of them is always there on EKS)."""
    if args.cluster.region:
        return args.cluster.region
    issuer = args.cluster.oidc_issuer or ""
    host = issuer.split("/", 1)[0].split(".")
    if len(host) > 2 and host[:2] == ["oidc", "eks"]:
        return host[2]
    return str(args.api_key_secret).split(":")[3]


def s3_fetch_environment(args: KubernetesServingPoolArgs) -> list[dict[str, str]]:
    """The S3 fetch's AWS settings, so boto3 never needs the instance metadata service (which IMDSv2's
    hop limit of 1 keeps from pods): botocore 1.44.8 takes the region from AWS_DEFAULT_REGION only
    (configprovider.py; AWS_REGION is the other SDKs'), and without one its STS client calls the
    global endpoint, which a cluster reaching AWS through regional VPC endpoints cannot reach.
    EKS's pod identity webhook adds the region and regional STS only when it runs with a region and
    regional STS configured, and keeps a container's own (aws/amazon-eks-pod-identity-webhook
    pkg/handler/handler.go, read 2026-12-02). Credentials stay IRSA's web identity token (the webhook's
    AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE); AWS_EC2_METADATA_DISABLED makes a missing token fail
    at once rather than reach for the node's role."""
    region = aws_region(args)
    return [
        {"name": "AWS_REGION", "value": region},
        {"name": "AWS_DEFAULT_REGION", "value": region},
        {"name": "AWS_STS_REGIONAL_ENDPOINTS", "value": "regional"},
        {"name": "AWS_EC2_METADATA_DISABLED", "value": "true"},
    ]


def init_containers(
    args: KubernetesServingPoolArgs, plan: FleetPlan, source: str | None
) -> list[dict[str, Any]]:
    """Fetch (from S3/GCS) into the models emptyDir, then the shared verifier against the pinned digest;
    with a cache, the verifier alone on the read-only mount. The engine starts only after both succeed."""
    digest = pinned_digest(args)
    base = {
        "image": helper_image(args, plan),
        "env": [{"name": "HOME", "value": TMP_DIR}],
        "securityContext": container_security(),
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "4Gi"}},
    }
    scripts = {"name": "scripts", "mountPath": SCRIPTS_DIR, "readOnly": True}
    tmp = {"name": "tmp", "mountPath": TMP_DIR}
    if isinstance(args.weights, ModelCache):
        folder = f"{CONTAINER_MODEL_DIR}/{args.weights.folder.strip('/')}"
        verify = [
            "python3",
            f"{SCRIPTS_DIR}/{VERIFIER}",
            "--dir",
            folder,
            "--manifest",
            f"{folder}/inference-manifest.json",
            "--expect-sha256",
            digest,
        ]
        if engine_config(plan).allows_code:
            verify.append("--allow-code")
        return [
            {
                **base,
                "name": VERIFY,
                "command": verify,
                "volumeMounts": [
                    {"name": "models", "mountPath": CONTAINER_MODEL_DIR, "readOnly": True},
                    scripts,
                    tmp,
                ],
            }
        ]
    fetch = [
        "python3",
        f"{SCRIPTS_DIR}/{FETCHER}",
        "--source",
        source or "",
        "--dest",
        MODEL_FOLDER,
        "--expect-sha256",
        digest,
    ]
    verify = [
        "python3",
        f"{SCRIPTS_DIR}/{VERIFIER}",
        "--dir",
        MODEL_FOLDER,
        "--manifest",
        f"{MODEL_FOLDER}/inference-manifest.json",
        "--expect-sha256",
        digest,
        "--marker",
    ]
    if engine_config(plan).allows_code:
        verify.append("--allow-code")
    models = {"name": "models", "mountPath": CONTAINER_MODEL_DIR}
    fetch_image = helper_image(args, plan, boto3=isinstance(args.weights, S3Weights))
    fetch_env = list(base["env"])
    if isinstance(args.weights, S3Weights):
        fetch_env += s3_fetch_environment(args)
    return [
        {
            **base,
            "image": fetch_image,
            "name": FETCH,
            "command": fetch,
            "env": fetch_env,
            "volumeMounts": [models, scripts, tmp],
        },
        {**base, "name": VERIFY, "command": verify, "volumeMounts": [models, scripts, tmp]},
    ]


def models_volume(name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> dict[str, Any]:
    if isinstance(args.weights, ModelCache):
        return {
            "name": "models",
            "persistentVolumeClaim": {"claimName": f"{name}-model-cache", "readOnly": True},
        }
    return {"name": "models", "emptyDir": {"sizeLimit": f"{models_gib(plan)}Gi"}}


def models_gib(plan: FleetPlan) -> int:
    """The weights plus a tenth and 2 GiB for the tokenizer, configs and the manifest (node ephemeral
    storage): the models emptyDir's size limit."""
    gib = plan.cold_start.weights_gib if plan.cold_start is not None else 0
    return math.ceil(gib * 1.1) + 2


# What a node's disk holds besides the pods' emptyDirs: the OS, the kubelet's and the container runtime's
# state and the engine image unpacked (vLLM's CUDA image is several GiB compressed, about three times
# that unpacked). Our estimate (2026-12-02), not a measurement.
NODE_DISK_RESERVE_GIB = 60


def node_disk_gib(args: KubernetesServingPoolArgs, plan: FleetPlan) -> int | None:
    """The node disk the pool's pods need at least: each pod's weights emptyDir (fetched: a ModelCache
    writes none), times the pods on a node, plus NODE_DISK_RESERVE_GIB. /tmp's emptyDir is a ceiling
    (compile caches), not counted. None without engines."""
    if plan.engines is None:
        return None
    weights = 0 if isinstance(args.weights, ModelCache) else models_gib(plan)
    return weights * pods_per_machine(plan) + NODE_DISK_RESERVE_GIB


def cache_volume(name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> dict[str, Any]:
    """The PersistentVolume of a read-only cache: EFS or Filestore through its CSI driver."""
    cache = args.weights
    assert isinstance(cache, ModelCache)
    if cache.kind is ModelCacheKind.EFS:
        csi: dict[str, Any] = {"driver": "efs.csi.aws.com", "volumeHandle": cache.volume, "readOnly": True}
    else:
        csi = {
            "driver": "filestore.csi.storage.gke.io",
            "volumeHandle": cache.volume,
            "volumeAttributes": {"ip": str(cache.address), "volume": cache.volume.rsplit("/", 1)[1]},
            "readOnly": True,
        }
    return {
        "metadata": {"name": cache_volume_name(name, args), "labels": pool_labels(name, args, plan)},
        "spec": {
            "capacity": {"storage": "1Ti"},  # NFS has no size; a PV must state one
            "accessModes": ["ReadOnlyMany"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "csi": csi,
            "claimRef": {"namespace": args.cluster.namespace, "name": f"{name}-model-cache"},
        },
    }


def cache_claim(name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> dict[str, Any]:
    return {
        "metadata": metadata(name, args, plan, "-model-cache"),
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "storageClassName": "",
            "volumeName": cache_volume_name(name, args),
            "resources": {"requests": {"storage": "1Ti"}},
        },
    }


# --- the pod and its workload ----------------------------------------------------------------------


LEADER, WORKER = "leader", "worker"  # the pods of a group over several hosts (pool_lws.py)


def pod_template(
    name: str, args: KubernetesServingPoolArgs, plan: FleetPlan, source: str | None, role: str | None = None
) -> dict[str, Any]:
    """The engine pod: one per engine (a Deployment's), or `role` LEADER/WORKER of a LeaderWorkerSet group:
    both fetch and verify the weights (each host loads its own stage from the same folder); the leader
    alone has the API key, the API port and the metrics proxy."""
    labels = pool_labels(name, args, plan)
    annotations = {}
    if args.cluster.cloud is Cloud.AWS:
        # EKS's pod identity webhook mounts the IRSA token into every container but these: only the
        # weight fetch needs the pool's role (the API key is mounted by the CSI driver on the node).
        annotations["eks.amazonaws.com/skip-containers"] = f"{ENGINE},{METRICS},{VERIFY}"
    family = plan_family(plan)
    scaling = plan.scaling
    grace = scaling.deregistration_delay_seconds if scaling is not None else 120
    spec: dict[str, Any] = {
        "serviceAccountName": service_account_name(name),
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "hostNetwork": False,
        "hostPID": False,
        "hostIPC": False,
        "priorityClassName": priority_class_name(name, args),
        "terminationGracePeriodSeconds": grace,
        "nodeSelector": node_selector(name, family),
        "tolerations": tolerations(name, family),
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": key,
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": selector_labels(name)},
            }
            for key in ("topology.kubernetes.io/zone", "kubernetes.io/hostname")
        ],
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": RUN_AS_USER,
            "runAsGroup": RUN_AS_USER,
            "fsGroup": RUN_AS_USER,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "initContainers": init_containers(args, plan, source),
        "containers": [engine_container(name, args, plan, role), metrics_container(args, plan)],
        "volumes": [
            models_volume(name, args, plan),
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": SHM_SIZE_LIMIT}},
            {"name": "tmp", "emptyDir": {"sizeLimit": TMP_SIZE_LIMIT}},
            {"name": "scripts", "configMap": {"name": scripts_config_map_name(name), "defaultMode": 0o444}},
            {
                "name": "api-key",
                "csi": {
                    "driver": "secrets-store.csi.k8s.io",
                    "readOnly": True,
                    "volumeAttributes": {"secretProviderClass": secret_provider_class_name(name)},
                },
            },
        ],
    }
    if role is not None:
        # A group keeps to one zone (pool_lws.group_zone_affinity); the pool's zone spread counts leaders
        # only, so it spreads groups, and does not push a worker away from its own leader.
        spec["affinity"] = lws.group_zone_affinity(name)
        leaders = {**selector_labels(name), **lws.leader_labels()}
        spec["topologySpreadConstraints"] = [
            {**c, "labelSelector": {"matchLabels": leaders}}
            for c in spec["topologySpreadConstraints"]
            if c["topologyKey"] == lws.ZONE_KEY and role == LEADER
        ] + [c for c in spec["topologySpreadConstraints"] if c["topologyKey"] != lws.ZONE_KEY]
    if role == WORKER:
        # No API, so no metrics proxy and no key: the secret is mounted where it is served only.
        spec["containers"] = spec["containers"][:1]
        spec["volumes"] = [v for v in spec["volumes"] if v["name"] != "api-key"]
    template: dict[str, Any] = {"metadata": {"labels": labels}, "spec": spec}
    if annotations:
        template["metadata"]["annotations"] = annotations
    return template


def replicas(plan: FleetPlan) -> int:
    """Pods at the plan's size: its machines (the elastic pool's desired) times the pods on each. A pool
    whose replica spans hosts: its groups (the counts are replicas, each of hosts_per_replica nodes)."""
    machines = plan.scaling.desired if plan.scaling is not None else plan.counts.total
    return machines * pods_per_machine(plan)


def is_group(plan: FleetPlan) -> bool:
    """A replica spans hosts: the pool renders a LeaderWorkerSet, not a Deployment."""
    return plan.hosts_per_replica > 1


def workload_kind(plan: FleetPlan) -> str:
    return "LeaderWorkerSet" if is_group(plan) else "Deployment"


def rollout_bounds(args: KubernetesServingPoolArgs) -> dict[str, int]:
    """How a rollout replaces the replicas (pods, or LeaderWorkerSet groups): one at a time, never below
    the size (a surge replica first), unless the pool's own nodes are fixed at its size. Those groups'
    maximum is their size (pool_nodes.py: EKS max_size, Karpenter's limit, GKE's max node count), so a
    surge replica would stay Pending, no old replica would go (maxUnavailable 0) and the rollout would
    never end (a Deployment: progressDeadlineSeconds; LWS v0.10.0 pkg/controllers/
    leaderworkerset_controller.go rollingUpdateParameters: replicas + maxSurge groups, and a partition
    that moves only as the surge group becomes ready). There, one replica at a time is taken down and
    replaced on the nodes it frees: the pool runs one replica short for a cold start (a one-replica
    pool is down for it), as a GCP VM group that cannot surge does. An elastic pool keeps the surge: below
    its peak its nodes have room; at its peak the rollout waits until the load lets KEDA drop a replica."""
    if args.nodes is not None and args.elastic is None:
        return {"maxUnavailable": 1, "maxSurge": 0}
    return {"maxUnavailable": 0, "maxSurge": 1}


def leader_worker_set(
    name: str, args: KubernetesServingPoolArgs, plan: FleetPlan, source: str | None
) -> dict[str, Any]:
    """One group per replica: `size` = the plan's hosts, a leader and hosts - 1 workers, each pod on its
    own node's GPUs; a pod's restart recreates its group (pool_lws.RESTART_POLICY); workers created with
    the leader (pool_lws.STARTUP_POLICY); replaced one group at a time (rollout_bounds)."""
    spec: dict[str, Any] = {
        "startupPolicy": lws.STARTUP_POLICY,
        "rolloutStrategy": {
            "type": "RollingUpdate",
            "rollingUpdateConfiguration": rollout_bounds(args),
        },
        "leaderWorkerTemplate": {
            "size": plan.hosts_per_replica,
            "restartPolicy": lws.RESTART_POLICY,
            "leaderTemplate": pod_template(name, args, plan, source, LEADER),
            "workerTemplate": pod_template(name, args, plan, source, WORKER),
        },
    }
    if args.elastic is None:
        spec["replicas"] = replicas(plan)  # elastic: KEDA's HPA owns the count (LWS's scale subresource)
    # Not the pool's name: LWS's headless Service takes the set's (pool_lws.SET_SUFFIX).
    return {"metadata": metadata(name, args, plan, lws.SET_SUFFIX), "spec": spec}


def workload(
    name: str, args: KubernetesServingPoolArgs, plan: FleetPlan, source: str | None
) -> dict[str, Any]:
    """The pool's Deployment, or its LeaderWorkerSet when a replica spans hosts."""
    if is_group(plan):
        return leader_worker_set(name, args, plan, source)
    return deployment(name, args, plan, source)


def serving_selector(name: str, plan: FleetPlan) -> dict[str, str]:
    """The pods that serve the API and its metrics: every pod, or a group's leaders."""
    return {**selector_labels(name), **(lws.leader_labels() if is_group(plan) else {})}


def deployment(
    name: str, args: KubernetesServingPoolArgs, plan: FleetPlan, source: str | None
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": selector_labels(name)},
        # A new pod serves only after its startup probe: replace one at a time (rollout_bounds).
        "strategy": {"type": "RollingUpdate", "rollingUpdate": rollout_bounds(args)},
        "template": pod_template(name, args, plan, source),
    }
    if args.elastic is None:
        spec["replicas"] = replicas(plan)  # elastic: KEDA's HPA owns the count
    return {"metadata": metadata(name, args, plan), "spec": spec}


def pod_disruption_budget(name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> dict[str, Any]:
    """A drain takes one pod at a time: each one gone costs a cold start."""
    return {
        "metadata": metadata(name, args, plan),
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": selector_labels(name)}},
    }


def priority_class(name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> dict[str, Any]:
    production = pool_is_production(args)
    return {
        "metadata": {"name": priority_class_name(name, args), "labels": pool_labels(name, args, plan)},
        "value": priority_value(args),
        "globalDefault": False,
        # Non-production pools wait for room rather than evict anything.
        "preemptionPolicy": "PreemptLowerPriority" if production else "Never",
        "description": f"inference-infra serving pool {args.cluster.namespace}/{name}",
    }


def service_account(
    name: str, args: KubernetesServingPoolArgs, plan: FleetPlan, identity: Any
) -> dict[str, Any]:
    """The pool's own service account: no API token, the cloud identity in its annotation."""
    meta = metadata(name, args, plan)
    meta["name"] = service_account_name(name)
    if identity is not None:
        key = (
            "eks.amazonaws.com/role-arn"
            if args.cluster.cloud is Cloud.AWS
            else "iam.gke.io/gcp-service-account"
        )
        meta["annotations"] = {key: identity}
    return {"metadata": meta, "automountServiceAccountToken": False}


def scripts_config_map(
    name: str, args: KubernetesServingPoolArgs, plan: FleetPlan, files: Mapping[str, str]
) -> dict[str, Any]:
    return {"metadata": metadata(name, args, plan, "-scripts"), "data": dict(files)}


# --- the API key --------------------------------------------------------------------------------------


def secret_provider_class(name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> dict[str, Any]:
    """The API key's secret as one file (API_KEY_FILE_NAME) of the CSI volume, fetched on the node by the
    provider with the pod's identity; no Kubernetes Secret is made (no secretObjects)."""
    secret = str(args.api_key_secret)
    if args.cluster.cloud is Cloud.AWS:
        region = secret.split(":")[3]
        parameters = {
            "region": region,
            "usePodIdentity": "false",  # IRSA: the pool's service account's role
            "objects": (
                f'- objectName: "{secret}"\n'
                '  objectType: "secretsmanager"\n'
                f'  objectAlias: "{API_KEY_FILE_NAME}"\n'
            ),
        }
        provider = "aws"
    else:
        parameters = {"secrets": f'- resourceName: "{secret}"\n  fileName: "{API_KEY_FILE_NAME}"\n'}
        provider = "gcp"
    return {
        "metadata": metadata(name, args, plan, "-api-key"),
        "spec": {"provider": provider, "parameters": parameters},
    }


# --- exposure ------------------------------------------------------------------------------------------


def service(name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> dict[str, Any]:
    """Internal only: a ClusterIP on the API port (the metrics port is Prometheus's, reached by pod)."""
    return {
        "metadata": metadata(name, args, plan),
        "spec": {
            "type": "ClusterIP",
            "selector": serving_selector(name, plan),
            "ports": [
                {
                    "name": HTTP_PORT_NAME,
                    "port": args.serving_port,
                    "targetPort": HTTP_PORT_NAME,
                    "protocol": "TCP",
                }
            ],
        },
    }


def http_route(name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> dict[str, Any]:
    """Only /v1/... and /health reach the engines, as on the VM load balancers (endpoints/routing.py).

    Gateway API matches PathPrefix element by element with a trailing '/' ignored, so PathPrefix /v1/
    is /v1 and /v1/...: never /v1x or /V1/. /v1 alone is the engine's 404 but outside what the load
    balancers forward, so an Exact /v1 rule (outranking any prefix) with no backend answers it at the
    gateway. Backends: this pool and its canaries, by weight."""
    gateway = args.gateway
    assert gateway is not None
    backends = [{"name": name, "port": args.serving_port, "weight": args.route_weight}]
    backends += [{"name": c.service, "port": c.port, "weight": c.weight} for c in args.canaries]
    spec: dict[str, Any] = {
        "parentRefs": [{"name": gateway.name, "namespace": gateway.namespace}],
        "rules": [
            {
                "matches": [
                    {"path": {"type": "PathPrefix", "value": GUARDED_API_PREFIX}},
                    {"path": {"type": "Exact", "value": HEALTH_PATH}},
                ],
                "backendRefs": backends,
            },
            {"matches": [{"path": {"type": "Exact", "value": GUARDED_API_PREFIX.rstrip("/")}}]},
        ],
    }
    if gateway.hostnames:
        spec["hostnames"] = list(gateway.hostnames)
    return {"metadata": metadata(name, args, plan), "spec": spec}


def network_policy(name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> dict[str, Any]:
    """Ingress: the API port from the gateway's pods, the metrics port from Prometheus. Egress: DNS,
    HTTPS to the model store (and, on GKE, the metadata server's token endpoint), nothing else."""
    engines = engine_config(plan)
    ingress = []
    if args.gateway is not None:  # without one, nothing reaches the API port
        gateway_peer: dict[str, Any] = {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": args.gateway.namespace}}
        }
        if args.gateway.pod_labels:
            gateway_peer["podSelector"] = {"matchLabels": dict(args.gateway.pod_labels)}
        ingress.append({"from": [gateway_peer], "ports": [{"protocol": "TCP", "port": args.serving_port}]})
    if args.prometheus is not None:
        prometheus = {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": args.prometheus.namespace}},
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}},
        }
        ingress.append(
            {"from": [prometheus], "ports": [{"protocol": "TCP", "port": engines.metrics_ports[0]}]}
        )
    dns = {
        "to": [
            {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                "podSelector": {"matchLabels": dict(DNS_POD_LABELS)},
            }
        ],
        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
    }
    egress = [dns]
    if is_group(plan):
        # A group's pods reach each other (the rendezvous, NCCL, vLLM's cross-node queue: pool_lws.py).
        peer, ports = lws.group_peer(name), lws.group_ports(args.cluster.cloud)
        ingress.append({"from": [peer], "ports": ports})
        egress.append({"to": [peer], "ports": ports})
    if not isinstance(args.weights, ModelCache):
        # The object store (and STS for IRSA) over HTTPS: their addresses are the cloud's public ranges.
        gke = args.cluster.cloud is Cloud.GCP
        excluded = [LINK_LOCAL, *(PRIVATE_RANGES if gke else ())]
        egress.append(
            {
                "to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": excluded}}],
                "ports": [{"protocol": "TCP", "port": 443}],
            }
        )
        if args.cluster.cloud is Cloud.GCP:
            for cidr, port in GKE_METADATA:
                egress.append(
                    {"to": [{"ipBlock": {"cidr": cidr}}], "ports": [{"protocol": "TCP", "port": port}]}
                )
    return {
        "metadata": metadata(name, args, plan),
        "spec": {
            "podSelector": {"matchLabels": selector_labels(name)},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": ingress,
            "egress": egress,
        },
    }


# --- scaling and scraping ---------------------------------------------------------------------------------


def load_query(name: str, args: KubernetesServingPoolArgs) -> str:
    """The pool's in-flight requests (running + waiting, every engine), as the VM scalers read them.

    Each series is clamped at 0 before the sum: vLLM's gauges are never negative, so a negative value
    is a forged series, and a sum it could pull down would hold a loaded pool at its minimum.
    GpuObservability's Prometheus enforces the namespace label (observability_values.
    namespace_enforcement): only monitors in this namespace, the stack's and the exporters' can write a
    series with `namespace` = this pool's namespace, so other namespaces' monitors cannot move it."""
    selector = f'job="{ENGINE_JOB}",namespace="{args.cluster.namespace}",pool="{name}"'
    return " + ".join(
        f"sum(clamp_min(vllm:{metric}{{{selector}}}, 0))"
        for metric in ("num_requests_running", "num_requests_waiting")
    )


def schedule_floor(args: KubernetesServingPoolArgs, min_size: int) -> int:
    """The machines the pool keeps outside its schedule's hours (its minimum without a schedule)."""
    schedule = args.elastic.schedule if args.elastic is not None else None
    return schedule.off_hours_size if schedule is not None else min_size


def scaled_object(name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> dict[str, Any]:
    """KEDA on the engines' own load, at ScalingPlan's target per pod; cooldowns from the plan."""
    scaling = plan.scaling
    assert scaling is not None
    assert args.prometheus is not None
    assert args.elastic is not None
    pods = pods_per_machine(plan)
    per_pod = scaling.target_in_flight / pods
    triggers: list[dict[str, Any]] = [
        {
            "type": "prometheus",
            "metricType": "AverageValue",
            "metadata": {
                "serverAddress": args.prometheus.url,
                "query": load_query(name, args),
                "threshold": f"{per_pod:.2f}",
                "activationThreshold": "0",
            },
        }
    ]
    min_replicas = min(scaling.min_size, schedule_floor(args, scaling.min_size)) * pods
    if min_replicas > 0:
        # KEDA reads an empty answer as 0 by default (ignoreNullValues true, pkg/scalers/
        # prometheus_scaler.go at v2.20.2): lost series would scale a loaded pool in. A pool that never
        # goes to zero always has series, so an empty answer is an error and the HPA holds its size.
        triggers[0]["metadata"]["ignoreNullValues"] = "false"
    schedule = args.elastic.schedule
    if schedule is not None:
        hours = f"* * {schedule.days}"
        triggers.append(
            {
                "type": "cron",
                "metadata": {
                    "timezone": schedule.time_zone,
                    "start": f"0 {schedule.start_hour} {hours}",
                    # end_hour 24 (midnight) ends at 23:59 the same day: 0 0 on the listed days would
                    # end Friday's window on Monday.
                    "end": f"0 {schedule.end_hour} {hours}" if schedule.end_hour < 24 else f"59 23 {hours}",
                    "desiredReplicas": str(scaling.min_size * pods),
                },
            }
        )
    scale_up_period = args.elastic.scale_out_cooldown_seconds or SCALER_POLLING_SECONDS
    return {
        "metadata": metadata(name, args, plan),
        "spec": {
            # A LeaderWorkerSet has the scale subresource (its CRD: specReplicasPath .spec.replicas,
            # labelSelectorPath .status.hpaPodSelector, the leaders): KEDA scales whole groups.
            "scaleTargetRef": (
                {"apiVersion": lws.LWS_API_VERSION, "kind": "LeaderWorkerSet", "name": lws.set_name(name)}
                if is_group(plan)
                else {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
            ),
            "pollingInterval": SCALER_POLLING_SECONDS,
            "cooldownPeriod": scaling.scale_in_cooldown_seconds,  # before the last replica goes (to zero)
            "minReplicaCount": min_replicas,
            "maxReplicaCount": scaling.max_size * pods,
            "advanced": {
                "horizontalPodAutoscalerConfig": {
                    "behavior": {
                        # A machine's worth of pods per scale-out cooldown or double the pods each
                        # sync, whichever adds more (fleet.elastic.K8S_SCALE_UP_PERCENT); one
                        # machine's pods a minute per scale-in, or with the deficit sizing up to
                        # K8S_SCALE_DOWN_PERCENT of the pods a minute, whichever lets more go.
                        "scaleUp": {
                            "stabilizationWindowSeconds": 0,
                            "selectPolicy": "Max",
                            "policies": [
                                {"type": "Pods", "value": pods, "periodSeconds": min(scale_up_period, 1800)},
                                {
                                    "type": "Percent",
                                    "value": K8S_SCALE_UP_PERCENT,
                                    "periodSeconds": K8S_SCALE_UP_PERCENT_PERIOD_SECONDS,
                                },
                            ],
                        },
                        "scaleDown": scale_down_behavior(scaling, pods),
                    }
                }
            },
            "triggers": triggers,
        },
    }


def scale_down_behavior(scaling: Any, pods: int) -> dict[str, Any]:
    """The HPA's scaleDown: the stabilisation window, one machine's pods a minute, and with the deficit
    sizing (ScalingPlan.scale_in_sizing) a Percent policy beside it, the larger change winning."""
    policies: list[dict[str, Any]] = [{"type": "Pods", "value": pods, "periodSeconds": 60}]
    behavior: dict[str, Any] = {"stabilizationWindowSeconds": scaling.scale_in_cooldown_seconds}
    if getattr(scaling, "scale_in_sizing", "share") == "deficit":
        policies.append(
            {
                "type": "Percent",
                "value": K8S_SCALE_DOWN_PERCENT,
                "periodSeconds": K8S_SCALE_DOWN_PERCENT_PERIOD_SECONDS,
            }
        )
        behavior["selectPolicy"] = "Max"
    behavior["policies"] = policies
    return behavior


def relabelings(name: str, args: KubernetesServingPoolArgs) -> list[dict[str, Any]]:
    """The labels the VM scrape jobs give engine targets (monitoring/scrape.py): job vllm, cloud,
    instance, node, instance_type, zone, lifecycle, pool and the cost labels."""

    def copy(
        source: str, target: str, regex: str | None = None, replacement: str | None = None
    ) -> dict[str, Any]:
        rule: dict[str, Any] = {"sourceLabels": [source], "targetLabel": target, "action": "replace"}
        if regex is not None:
            rule["regex"] = regex
        if replacement is not None:
            rule["replacement"] = replacement
        return rule

    def pod_label(key: str) -> str:
        return "__meta_kubernetes_pod_label_" + "".join(c if c.isalnum() else "_" for c in key)

    def node_label(key: str) -> str:
        return "__meta_kubernetes_node_label_" + "".join(c if c.isalnum() else "_" for c in key)

    rules = [
        {"targetLabel": "job", "replacement": ENGINE_JOB, "action": "replace"},
        {"targetLabel": "cloud", "replacement": args.cluster.cloud.value, "action": "replace"},
        copy("__meta_kubernetes_pod_name", "instance"),
        copy("__meta_kubernetes_pod_node_name", "node"),
        copy(pod_label(MACHINE_LABEL), "instance_type"),
        copy(node_label("topology.kubernetes.io/zone"), "zone"),
        # spot, as EC2 discovery labels a spot instance (absent otherwise): Karpenter, EKS and GKE labels.
        copy(node_label("karpenter.sh/capacity-type"), "lifecycle", regex="spot", replacement="spot"),
        copy(node_label("eks.amazonaws.com/capacityType"), "lifecycle", regex="SPOT", replacement="spot"),
        copy(node_label("cloud.google.com/gke-spot"), "lifecycle", regex="true", replacement="spot"),
        copy(pod_label(POOL_LABEL), "pool"),
    ]
    for key in (*COST_TAG_KEYS, AUTO_SHUTDOWN):
        label = gcp_label_key(key)
        rules.append(copy(pod_label(label), label.replace("-", "_")))
    return rules


def pod_monitor(name: str, args: KubernetesServingPoolArgs, plan: FleetPlan) -> dict[str, Any]:
    assert args.prometheus is not None
    meta = metadata(name, args, plan)
    meta["labels"] = {**meta["labels"], "release": args.prometheus.release}  # what its Prometheus selects
    return {
        "metadata": meta,
        "spec": {
            "selector": {"matchLabels": serving_selector(name, plan)},
            "namespaceSelector": {"matchNames": [args.cluster.namespace]},
            "attachMetadata": {"node": True},  # the node's zone and capacity type labels
            "podMetricsEndpoints": [
                {
                    "port": METRICS_PORT_NAME,
                    "path": METRICS_PATH,
                    "interval": "30s",
                    "relabelings": relabelings(name, args),
                }
            ],
        },
    }


def pool_objects(
    name: str, args: KubernetesServingPoolArgs, plan: FleetPlan, *, identity: str | None = None
) -> list[dict[str, Any]]:
    """Every Kubernetes object of the pool as a whole manifest (apiVersion, kind and body), in the order
    the component registers them, for schema checks and policy tests. `identity` stands for the role
    ARN or service account email the component wires in."""
    versions = dict(API_VERSIONS)
    bodies: list[tuple[str, dict[str, Any]]] = [
        ("ServiceAccount", service_account(name, args, plan, identity)),
        ("ConfigMap", scripts_config_map(name, args, plan, {})),
        ("SecretProviderClass", secret_provider_class(name, args, plan)),
        ("PriorityClass", priority_class(name, args, plan)),
    ]
    if isinstance(args.weights, ModelCache):
        bodies.append(("PersistentVolume", cache_volume(name, args, plan)))
        bodies.append(("PersistentVolumeClaim", cache_claim(name, args, plan)))
    bodies += [
        (workload_kind(plan), workload(name, args, plan, weights_source(args))),
        ("PodDisruptionBudget", pod_disruption_budget(name, args, plan)),
        ("Service", service(name, args, plan)),
        ("NetworkPolicy", network_policy(name, args, plan)),
    ]
    if args.gateway is not None:
        bodies.append(("HTTPRoute", http_route(name, args, plan)))
    if args.elastic is not None and plan.scaling is not None:
        bodies.append(("ScaledObject", scaled_object(name, args, plan)))
    if args.prometheus is not None:
        bodies.append(("PodMonitor", pod_monitor(name, args, plan)))
    return [{"apiVersion": versions[kind], "kind": kind, **body} for kind, body in bodies]


def api_versions() -> dict[str, str]:
    """Kind -> the apiVersion rendered (see the module docstring for where each was read)."""
    return dict(API_VERSIONS)


API_VERSIONS: Sequence[tuple[str, str]] = (
    ("Deployment", "apps/v1"),
    ("LeaderWorkerSet", lws.LWS_API_VERSION),
    ("PodDisruptionBudget", "policy/v1"),
    ("PriorityClass", "scheduling.k8s.io/v1"),
    ("NetworkPolicy", "networking.k8s.io/v1"),
    ("Service", "v1"),
    ("ServiceAccount", "v1"),
    ("ConfigMap", "v1"),
    ("PersistentVolume", "v1"),
    ("PersistentVolumeClaim", "v1"),
    ("HTTPRoute", "gateway.networking.k8s.io/v1"),
    ("ScaledObject", "keda.sh/v1alpha1"),
    ("PodMonitor", "monitoring.coreos.com/v1"),
    ("SecretProviderClass", "secrets-store.csi.x-k8s.io/v1"),
)
