"""KubernetesServingPool under Pulumi's mock runtime: every object it registers, as the engine receives it.

- the pool is planned by the one fleet skeleton (components/fleet/plan.py) as target k8s-eks-gpu /
  k8s-gke-tpu, and exposes that plan as `.plan`;
- the engine: vLLM by digest with the planner's flags (the VM units' renderer), accelerator requests =
  limits, a memory-backed /dev/shm sized like the VM's --shm-size, not privileged, non-root, read-only
  root, no capabilities, RuntimeDefault seccomp, no service account token, probes from the cold start,
  topology spread, the scheduling contract's node selector and tolerations, a PDB and a PriorityClass;
- the weights: fetch and the shared verifier against the pinned digest before the engine, which mounts
  them read-only; IRSA / Workload Identity limited to this pool's service account and its model folder;
- the API key: a Secrets Store CSI volume, exported from the file by the VM units' entrypoint.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.fleet import plan as fleet_plan
from inference_infra.components.fleet.plan import FleetPlan, FleetProfile
from inference_infra.components.k8s.pool_manifests import SHM_SIZE_LIMIT, startup_seconds
from inference_infra.components.k8s.pool_profile import KubernetesPoolProfile, plan_pool
from inference_infra.components.k8s.scheduling import node_selector, tolerations
from inference_infra.components.k8s.serving_pool import KubernetesServingPool
from inference_infra.components.k8s.serving_pool_args import ModelCache, ModelCacheKind
from inference_infra.components.serving.flags import engine_args
from inference_infra.components.serving.units import API_KEY_SCRIPT, SHM_SIZE
from tests.components.k8s.pool_cases import (
    AWS_SECRET,
    EKS,
    EKS_ELASTIC,
    GCP_SECRET,
    GKE_TPU,
    ISSUER,
    OIDC,
    PIN,
)

DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def _pod(capture, name="llama"):
    return capture.one(DEPLOYMENT, f"{name}-engine").props["spec"]["template"]


def _container(pod, name):
    return next(c for c in pod["spec"]["containers"] + pod["spec"]["initContainers"] if c["name"] == name)


def test_serving_pool_is_planned_by_the_one_fleet_skeleton(monkeypatch):
    seen = []
    skeleton = fleet_plan.plan_fleet

    def counting(name, args, profile):
        seen.append(profile.name)
        return skeleton(name, args, profile)

    monkeypatch.setattr(fleet_plan, "plan_fleet", counting)
    eks, tpu = plan_pool("llama", EKS), plan_pool("tpu", GKE_TPU)
    assert seen == ["k8s-eks-gpu", "k8s-gke-tpu"]
    assert type(eks) is FleetPlan
    assert type(tpu) is FleetPlan
    assert eks.problems == ()
    assert tpu.problems == ()
    assert eks.planned
    assert eks.machine is not None
    assert tpu.machine.startswith("v5litepod") or tpu.machine.startswith("v6e")
    assert isinstance(KubernetesPoolProfile(EKS.target, fleet_plan.WeightSource.S3), FleetProfile)


def test_serving_pool_exposes_the_plan_it_rendered(plan_of):
    pool = KubernetesServingPool("llama", EKS)
    capture = plan_of()
    assert pool.plan == plan_pool("llama", EKS)
    engine = _container(_pod(capture), "engine")
    assert engine["args"] == engine_args(pool.plan.engines, 0, "/models/model")
    assert pool.plan.target == "k8s-eks-gpu"


def test_serving_pool_registers_each_object_once(plan_of):
    KubernetesServingPool("llama", EKS_ELASTIC)
    types = sorted(r.type for r in plan_of().custom)
    assert types == sorted(
        [
            "aws:iam/role:Role",
            "aws:iam/rolePolicy:RolePolicy",
            "kubernetes:core/v1:ServiceAccount",
            "kubernetes:core/v1:ConfigMap",
            "kubernetes:secrets-store.csi.x-k8s.io/v1:SecretProviderClass",
            "kubernetes:scheduling.k8s.io/v1:PriorityClass",
            DEPLOYMENT,
            "kubernetes:policy/v1:PodDisruptionBudget",
            "kubernetes:core/v1:Service",
            "kubernetes:networking.k8s.io/v1:NetworkPolicy",
            "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute",
            "kubernetes:keda.sh/v1alpha1:ScaledObject",
            "kubernetes:monitoring.coreos.com/v1:PodMonitor",
        ]
    )


def test_serving_pool_twice_in_a_stack_does_not_collide(plan_of):
    KubernetesServingPool("llama", EKS)
    KubernetesServingPool("llama-canary", EKS)
    capture = plan_of()
    assert len(capture.of_type(DEPLOYMENT)) == 2
    names = {
        r.props["metadata"]["name"] for r in capture.of_type("kubernetes:scheduling.k8s.io/v1:PriorityClass")
    }
    assert len(names) == 2


def test_serving_pool_engine_runs_the_pinned_image_with_accelerators_as_its_parallelism(plan_of):
    pool = KubernetesServingPool("llama", EKS)
    engine = _container(_pod(plan_of()), "engine")
    assert "@sha256:" in engine["image"]
    tp = str(pool.plan.engines.tensor_parallel)
    assert _devices(engine) == {"requests": {"nvidia.com/gpu": tp}, "limits": {"nvidia.com/gpu": tp}}


def test_serving_pool_tpu_pods_request_their_chips(plan_of):
    pool = KubernetesServingPool("tpu", GKE_TPU)
    capture = plan_of()
    engine = _container(_pod(capture, "tpu"), "engine")
    tp = str(pool.plan.engines.tensor_parallel)
    assert engine["resources"]["limits"] == {"google.com/tpu": tp}
    assert _devices(engine)["requests"] == {"google.com/tpu": tp}
    # one pod per engine the planner put on a machine
    spec = capture.one(DEPLOYMENT, "tpu-engine").props["spec"]
    assert spec["replicas"] == pool.plan.counts.total * pool.plan.engines.engines


def test_serving_pool_pod_lands_only_on_its_own_nodes(plan_of):
    KubernetesServingPool("llama", EKS)
    pod = _pod(plan_of())["spec"]
    from inference_infra.components.catalog import AcceleratorFamily

    assert pod["nodeSelector"] == node_selector("llama", AcceleratorFamily.NVIDIA_GPU)
    assert pod["tolerations"] == tolerations("llama", AcceleratorFamily.NVIDIA_GPU)
    keys = {c["topologyKey"] for c in pod["topologySpreadConstraints"]}
    assert keys == {"topology.kubernetes.io/zone", "kubernetes.io/hostname"}


def test_serving_pool_pod_is_hardened(plan_of):
    KubernetesServingPool("llama", EKS)
    pod = _pod(plan_of())["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert (pod["hostNetwork"], pod["hostPID"], pod["hostIPC"]) == (False, False, False)
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    for container in pod["containers"] + pod["initContainers"]:
        security = container["securityContext"]
        assert security["privileged"] is False, container["name"]
        assert security["allowPrivilegeEscalation"] is False
        assert security["readOnlyRootFilesystem"] is True
        assert security["runAsNonRoot"] is True
        assert security["capabilities"] == {"drop": ["ALL"]}
        assert "@sha256:" in container["image"]


def test_serving_pool_dev_shm_is_memory_backed_and_sized_like_the_vm(plan_of):
    KubernetesServingPool("llama", EKS)
    pod = _pod(plan_of())["spec"]
    shm = next(v for v in pod["volumes"] if v["name"] == "dshm")
    assert shm["emptyDir"] == {"medium": "Memory", "sizeLimit": SHM_SIZE_LIMIT}
    assert SHM_SIZE == "10g"
    assert SHM_SIZE_LIMIT == "10Gi"
    engine = _container(_pod(plan_of()), "engine")
    assert {"name": "dshm", "mountPath": "/dev/shm"} in engine["volumeMounts"]


def test_serving_pool_probes_follow_the_cold_start(plan_of):
    pool = KubernetesServingPool("tpu", GKE_TPU)
    engine = _container(_pod(plan_of(), "tpu"), "engine")
    startup = engine["startupProbe"]
    budget = startup["periodSeconds"] * startup["failureThreshold"]
    assert budget == startup_seconds(pool.plan.cold_start)
    # at least the slowest engine load and warm-up of the plan's cold start
    stages = {s.name: s.slowest for s in pool.plan.cold_start.stages()}
    assert budget >= stages["engine load"] + stages["compile and graph capture"]
    assert engine["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert engine["livenessProbe"]["httpGet"]["path"] == "/health"


@pytest.mark.parametrize("case", ["inferentia", "efs-cache"])
def test_startup_probe_covers_every_stage_the_engine_container_runs(plan_of, case):
    # Inferentia compiles on the node inside the engine (NEURON_COMPILED_ARTIFACTS): its slowest compile
    # (40 min) ran past a budget of load + warm-up alone, so the kubelet killed every engine mid-compile
    # and the pod never served. From an EFS/Filestore cache the engine itself reads the weights off the
    # share. Either way the startup probe's budget holds the stage.
    cache = ModelCache(
        kind=ModelCacheKind.EFS, volume="fs-0123456789abcdef0", folder="m", manifest_sha256=PIN
    )
    args = {
        "inferentia": replace(EKS, accelerator=AcceleratorFamily.AWS_NEURON),
        "efs-cache": replace(EKS, weights=cache),
    }[case]
    pool = KubernetesServingPool("llama", args)
    engine = _container(_pod(plan_of()), "engine")
    startup = engine["startupProbe"]
    budget = startup["periodSeconds"] * startup["failureThreshold"]
    stages = {s.name: s.slowest for s in pool.plan.cold_start.stages()}
    in_engine = {
        "inferentia": ("engine load", "compile and graph capture", "Neuron compile on the node"),
        "efs-cache": ("weights download", "engine load", "compile and graph capture"),
    }[case]
    assert budget >= sum(stages[name] for name in in_engine), (budget, stages)
    assert budget < sum(stages.values())  # the node's boot and the image pull are not the engine's


def test_serving_pool_verifies_the_pinned_weights_before_the_engine(plan_of):
    KubernetesServingPool("llama", EKS)
    pod = _pod(plan_of())
    fetch, verify = pod["spec"]["initContainers"]
    assert fetch["command"][:2] == ["python3", "/opt/inference-infra/pool_fetch_weights.py"]
    assert fetch["command"][fetch["command"].index("--source") + 1] == "s3://acme-models/llama-3.1-8b"
    assert verify["command"][:2] == ["python3", "/opt/inference-infra/verify_weights.py"]
    assert verify["command"][verify["command"].index("--expect-sha256") + 1] == PIN
    engine = _container(pod, "engine")
    assert {"name": "models", "mountPath": "/models", "readOnly": True} in engine["volumeMounts"]


def test_serving_pool_ships_the_shared_verifier_unchanged(plan_of):
    from importlib import resources

    KubernetesServingPool("llama", EKS)
    data = plan_of().one("kubernetes:core/v1:ConfigMap").props["data"]
    shared = resources.files("inference_infra.components.models").joinpath("verify_weights.py").read_text()
    assert data["verify_weights.py"] == shared
    assert set(data) == {"verify_weights.py", "pool_fetch_weights.py", "metrics_proxy.py"}


def test_serving_pool_with_a_cache_mounts_it_read_only_and_verifies_it(plan_of):
    cache = ModelCache(
        kind=ModelCacheKind.EFS, volume="fs-0123456789abcdef0", folder="llama-3.1-8b", manifest_sha256=PIN
    )
    KubernetesServingPool("llama", replace(EKS, weights=cache))
    capture = plan_of()
    pod = _pod(capture)
    (verify,) = pod["spec"]["initContainers"]
    assert "--marker" not in verify["command"]  # nothing is written on a read-only cache
    assert verify["command"][verify["command"].index("--dir") + 1] == "/models/llama-3.1-8b"
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == "models")
    assert volume["persistentVolumeClaim"]["readOnly"] is True
    pv = capture.one("kubernetes:core/v1:PersistentVolume").props["spec"]
    assert pv["csi"] == {
        "driver": "efs.csi.aws.com",
        "volumeHandle": "fs-0123456789abcdef0",
        "readOnly": True,
    }
    assert pv["accessModes"] == ["ReadOnlyMany"]


def test_serving_pool_irsa_trusts_only_this_pools_service_account(plan_of):
    KubernetesServingPool("llama", EKS)
    capture = plan_of()
    trust = json.loads(capture.one("aws:iam/role:Role").props["assumeRolePolicy"])
    (statement,) = trust["Statement"]
    assert statement["Principal"] == {"Federated": OIDC}
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert statement["Condition"]["StringEquals"] == {
        f"{ISSUER}:sub": "system:serviceaccount:inference:llama-serving",
        f"{ISSUER}:aud": "sts.amazonaws.com",
    }
    policy = json.loads(capture.one("aws:iam/rolePolicy:RolePolicy").props["policy"])
    actions = {a for s in policy["Statement"] for a in s["Action"]}
    assert actions == {"s3:GetObject", "secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"}
    resources = {s["Resource"] for s in policy["Statement"]}
    assert resources == {"arn:aws:s3:::acme-models/llama-3.1-8b/*", AWS_SECRET}
    account = capture.one("kubernetes:core/v1:ServiceAccount").props
    assert account["automountServiceAccountToken"] is False
    assert "eks.amazonaws.com/role-arn" in account["metadata"]["annotations"]


def test_serving_pool_workload_identity_reads_only_its_folder_and_key(plan_of):
    KubernetesServingPool("tpu", GKE_TPU)
    capture = plan_of()
    binding = capture.one("gcp:serviceaccount/iAMMember:IAMMember").props
    assert binding["role"] == "roles/iam.workloadIdentityUser"
    assert binding["member"] == "serviceAccount:acme-inference.svc.id.goog[inference/tpu-serving]"
    reader = capture.one("gcp:storage/bucketIAMMember:BucketIAMMember").props
    assert reader["role"] == "roles/storage.objectViewer"
    assert 'objects/llama-3.1-8b/"' in reader["condition"]["expression"]
    secret = capture.one("gcp:secretmanager/secretIamMember:SecretIamMember").props
    assert secret["secretId"] == GCP_SECRET.split("/versions/")[0]
    assert secret["role"] == "roles/secretmanager.secretAccessor"
    annotations = capture.one("kubernetes:core/v1:ServiceAccount").props["metadata"]["annotations"]
    assert annotations["iam.gke.io/gcp-service-account"].endswith("@acme-inference.iam.gserviceaccount.com")


def test_serving_pool_reads_its_api_key_from_a_file_never_the_manifest(plan_of):
    KubernetesServingPool("llama", EKS)
    capture = plan_of()
    pod = _pod(capture)
    engine = _container(pod, "engine")
    assert engine["command"][:3] == ["/bin/sh", "-c", API_KEY_SCRIPT]
    assert all(e["name"] != "VLLM_API_KEY" for e in engine.get("env", []))
    assert {"name": "api-key", "mountPath": "/run/secrets", "readOnly": True} in engine["volumeMounts"]
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == "api-key")
    assert volume["csi"]["driver"] == "secrets-store.csi.k8s.io"
    spc = capture.one("kubernetes:secrets-store.csi.x-k8s.io/v1:SecretProviderClass").props["spec"]
    assert spc["provider"] == "aws"
    assert f'objectName: "{AWS_SECRET}"' in spc["parameters"]["objects"]
    assert 'objectAlias: "vllm-api-key"' in spc["parameters"]["objects"]
    assert "secretObjects" not in spc  # no Kubernetes Secret holds the key
    assert "Secret" not in {r.props.get("kind") for r in capture.custom}


def test_serving_pool_gke_key_is_a_secret_manager_file(plan_of):
    KubernetesServingPool("tpu", GKE_TPU)
    spc = plan_of().one("kubernetes:secrets-store.csi.x-k8s.io/v1:SecretProviderClass").props["spec"]
    assert spc["provider"] == "gcp"
    assert spc["parameters"]["secrets"] == f'- resourceName: "{GCP_SECRET}"\n  fileName: "vllm-api-key"\n'


def test_serving_pool_pdb_and_priority(plan_of):
    KubernetesServingPool("llama", EKS)
    capture = plan_of()
    pdb = capture.one("kubernetes:policy/v1:PodDisruptionBudget").props["spec"]
    assert pdb["maxUnavailable"] == 1
    priority = capture.one("kubernetes:scheduling.k8s.io/v1:PriorityClass").props
    assert priority["value"] == 100_000
    assert priority["preemptionPolicy"] == "PreemptLowerPriority"
    assert priority["globalDefault"] is False
    assert _pod(capture)["spec"]["priorityClassName"] == priority["metadata"]["name"]


def test_serving_pool_non_production_priority_never_preempts(plan_of):
    KubernetesServingPool("tpu", GKE_TPU)
    priority = plan_of().one("kubernetes:scheduling.k8s.io/v1:PriorityClass").props
    assert priority["value"] == 1_000
    assert priority["preemptionPolicy"] == "Never"


def test_serving_pool_service_is_internal_on_the_api_port(plan_of):
    KubernetesServingPool("llama", EKS)
    spec = plan_of().one("kubernetes:core/v1:Service").props["spec"]
    assert spec["type"] == "ClusterIP"
    assert [p["port"] for p in spec["ports"]] == [8000]


def test_serving_pool_network_policy_admits_only_the_gateway_and_prometheus(plan_of):
    KubernetesServingPool("llama", EKS)
    spec = plan_of().one("kubernetes:networking.k8s.io/v1:NetworkPolicy").props["spec"]
    assert spec["policyTypes"] == ["Ingress", "Egress"]
    api, metrics = spec["ingress"]
    assert api["ports"] == [{"protocol": "TCP", "port": 8000}]
    assert api["from"] == [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gateway"}},
            "podSelector": {"matchLabels": {"app": "envoy"}},
        }
    ]
    assert metrics["ports"] == [{"protocol": "TCP", "port": 9000}]
    assert metrics["from"][0]["namespaceSelector"] == {
        "matchLabels": {"kubernetes.io/metadata.name": "monitoring"}
    }
    ports = sorted((p["protocol"], p["port"]) for rule in spec["egress"] for p in rule["ports"])
    assert ports == [("TCP", 53), ("TCP", 443), ("UDP", 53)]
    https = next(r for r in spec["egress"] if r["ports"] == [{"protocol": "TCP", "port": 443}])
    assert https["to"] == [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["169.254.0.0/16"]}}]


def test_serving_pool_gke_egress_reaches_the_metadata_token_endpoint_only(plan_of):
    KubernetesServingPool("tpu", GKE_TPU)
    spec = plan_of().one("kubernetes:networking.k8s.io/v1:NetworkPolicy").props["spec"]
    blocks = {
        (rule["to"][0]["ipBlock"]["cidr"], rule["ports"][0]["port"])
        for rule in spec["egress"]
        if "ipBlock" in rule["to"][0]
    }
    assert blocks == {("0.0.0.0/0", 443), ("169.254.169.254/32", 80), ("169.254.169.252/32", 988)}


def test_serving_pool_gke_https_egress_reaches_no_private_address(plan_of):
    # Google APIs answer on public addresses (or Private Google Access's 199.36.153.4/30 and .8/30), so
    # on GKE the pod's 443 leaves out the private ranges: not the control plane's private endpoint, nor
    # Services, pods or internal load balancers of the VPC. EKS keeps them (S3/STS interface endpoints).
    import ipaddress

    KubernetesServingPool("tpu", GKE_TPU)
    spec = plan_of().one("kubernetes:networking.k8s.io/v1:NetworkPolicy").props["spec"]
    https = next(r for r in spec["egress"] if r["ports"] == [{"protocol": "TCP", "port": 443}])
    (block,) = [peer["ipBlock"] for peer in https["to"]]
    excluded = [ipaddress.ip_network(c) for c in block["except"]]

    def reachable(address: str) -> bool:
        return not any(ipaddress.ip_address(address) in net for net in excluded)

    for internal in ("10.128.0.2", "172.16.0.2", "192.168.1.10", "100.64.0.10", "169.254.169.254"):
        assert not reachable(internal), internal
    for google in ("142.250.72.208", "199.36.153.8", "199.36.153.4"):
        assert reachable(google), google


def test_serving_pool_with_a_cache_has_no_internet_egress(plan_of):
    cache = ModelCache(
        kind=ModelCacheKind.EFS, volume="fs-0123456789abcdef0", folder="m", manifest_sha256=PIN
    )
    KubernetesServingPool("llama", replace(EKS, weights=cache))
    spec = plan_of().one("kubernetes:networking.k8s.io/v1:NetworkPolicy").props["spec"]
    assert [p["port"] for rule in spec["egress"] for p in rule["ports"]] == [53, 53]


@pytest.mark.parametrize("args", [EKS, GKE_TPU], ids=["eks", "gke-tpu"])
def test_serving_pool_metrics_port_is_the_vm_metrics_proxy(args, plan_of):
    pool = KubernetesServingPool("p", args)
    metrics = _container(_pod(plan_of(), "p"), "metrics")
    port = pool.plan.engines.metrics_ports[0]
    assert metrics["command"] == [
        "python3",
        "/opt/inference-infra/metrics_proxy.py",
        "--listen",
        str(port),
        "--upstream",
        "8000",
    ]
    assert metrics["ports"] == [{"name": "metrics", "containerPort": port, "protocol": "TCP"}]


def test_serving_pool_plan_reads_its_machine_from_its_clouds_catalog():
    from inference_infra.components.catalog import Cloud

    assert plan_pool("tpu", GKE_TPU).item.cloud is Cloud.GCP
    assert plan_pool("llama", EKS).item.cloud is Cloud.AWS


def test_serving_pool_inferentia_pods_own_their_neuron_devices(plan_of):
    from inference_infra.components.catalog import AcceleratorFamily
    from inference_infra.components.images import VLLM_NEURON, VLLM_OPENAI

    pool = KubernetesServingPool("inf", replace(EKS, accelerator=AcceleratorFamily.AWS_NEURON))
    pod = _pod(plan_of(), "inf")
    engines = pool.plan.engines
    assert pool.plan.target == "k8s-eks-inferentia"
    engine = _container(pod, "engine")
    devices = str(engines.devices_per_node // engines.engines)  # the plugin counts devices, TP counts cores
    assert _devices(engine) == {
        "limits": {"aws.amazon.com/neuron": devices},
        "requests": {"aws.amazon.com/neuron": devices},
    }
    assert engine["command"][-3:] == ["python", "-m", "vllm.entrypoints.openai.api_server"]
    env = {e["name"]: e["value"] for e in engine["env"]}
    assert env["NEURON_COMPILED_ARTIFACTS"] == "/var/cache/neuron-compiled"  # writable, never the weights
    assert engine["image"] == VLLM_NEURON.by_digest
    # the S3 fetch needs boto3: the NVIDIA vLLM image; the verifier and the proxy run the engine's
    assert _container(pod, "fetch-weights")["image"] == VLLM_OPENAI.by_digest
    assert _container(pod, "verify-weights")["image"] == VLLM_NEURON.by_digest
    assert _container(pod, "metrics")["image"] == VLLM_NEURON.by_digest


def test_serving_pool_tpu_node_pulls_one_image(plan_of):
    KubernetesServingPool("tpu", GKE_TPU)
    pod = _pod(plan_of(), "tpu")["spec"]
    images = {c["image"] for c in pod["containers"] + pod["initContainers"]}
    assert len(images) == 1
    assert "vllm-tpu@sha256:" in images.pop()


def test_serving_pool_without_a_gateway_admits_nothing_to_its_api(plan_of):
    KubernetesServingPool("llama", replace(EKS, gateway=None))
    capture = plan_of()
    spec = capture.one("kubernetes:networking.k8s.io/v1:NetworkPolicy").props["spec"]
    assert [rule["ports"] for rule in spec["ingress"]] == [[{"protocol": "TCP", "port": 9000}]]
    assert capture.of_type("kubernetes:gateway.networking.k8s.io/v1:HTTPRoute") == []


def test_serving_pool_tells_the_monitoring_its_latency_class_and_batch(plan_of):
    from inference_infra.components.monitoring.serving import Latency

    pool = KubernetesServingPool("llama", replace(EKS, latency=Latency.BATCH))
    plan_of()
    assert pool.latency is Latency.BATCH
    assert pool.max_num_seqs == pool.plan.engines.max_num_seqs


def test_serving_pool_tpu_pod_sharing_a_host_gets_its_chip_bounds_as_the_vm_engines(plan_of):
    pool = KubernetesServingPool("tpu", GKE_TPU)
    engine = _container(_pod(plan_of(), "tpu"), "engine")
    env = {e["name"]: e["value"] for e in engine["env"]}
    assert pool.plan.engines.engines == 2  # two engines of two chips on a v5litepod-4 host
    assert env["TPU_CHIPS_PER_PROCESS_BOUNDS"] == "1,2,1"
    assert env["TPU_PROCESS_BOUNDS"] == "1,1,1"
    assert env["TPU_PROCESS_ADDRESSES"] == f"localhost:{env['TPU_PROCESS_PORT']}"


def test_serving_pool_hands_the_replay_what_a_vm_fleet_does(plan_of):
    from inference_infra.components.simulate.k8s_nodes import kubernetes_nodes_for
    from inference_infra.components.simulate.pool import pool_from_plan
    from inference_infra.components.simulate.trace import Trace

    pool = KubernetesServingPool("llama", EKS_ELASTIC)
    plan_of()
    assert pool.scaling_plan is pool.plan.scaling
    assert pool.serving is pool.plan.serving
    assert pool.instance_type == pool.plan.machine
    replayed = pool_from_plan(
        name="llama",
        plan=pool.scaling_plan,
        cold=pool.serving.cold_start,
        model=EKS_ELASTIC.model,
        machine=pool.instance_type,
        trace=Trace.of([(0.0, 512, 128)]),
    )
    nodes = kubernetes_nodes_for(replayed)
    assert 0 < nodes.pod_start_seconds < replayed.cold_start_seconds


def _devices(container):
    """The container's resources without its CPU and memory requests (test_serving_pool_objects.py
    checks those): the accelerator devices requested and limited."""
    resources = container["resources"]
    return {
        section: {k: v for k, v in resources[section].items() if k not in ("cpu", "memory")}
        for section in ("requests", "limits")
    }
