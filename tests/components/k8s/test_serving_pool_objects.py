"""Every object a pool renders, as whole manifests (`pool_manifests.pool_objects`), on every target:
the built-in kinds against the Kubernetes API's schemas (kubernetes-validate, strict), the custom
resources at the API versions the module pins."""

from __future__ import annotations

import copy
from dataclasses import replace

import kubernetes_validate
import pytest

from inference_infra.components.catalog import AcceleratorFamily
from inference_infra.components.k8s.pool_manifests import API_VERSIONS, pool_objects
from inference_infra.components.k8s.pool_profile import plan_pool
from inference_infra.components.k8s.serving_pool_args import ModelCache, ModelCacheKind
from tests.components.k8s.manifests import validate
from tests.components.k8s.pool_cases import EKS, EKS_ELASTIC, GKE_TPU, PIN

CUSTOM = {
    "HTTPRoute": "gateway.networking.k8s.io/v1",
    "ScaledObject": "keda.sh/v1alpha1",
    "PodMonitor": "monitoring.coreos.com/v1",
    "SecretProviderClass": "secrets-store.csi.x-k8s.io/v1",
}
CASES = {
    "eks-gpu": EKS,
    "eks-gpu-elastic": EKS_ELASTIC,
    "eks-inferentia": replace(EKS, accelerator=AcceleratorFamily.AWS_NEURON),
    "eks-efs-cache": replace(
        EKS,
        weights=ModelCache(
            kind=ModelCacheKind.EFS, volume="fs-0123456789abcdef0", folder="m", manifest_sha256=PIN
        ),
    ),
    "gke-tpu": GKE_TPU,
    "gke-gpu": replace(GKE_TPU, accelerator=AcceleratorFamily.NVIDIA_GPU),
    "gke-filestore-cache": replace(
        GKE_TPU,
        weights=ModelCache(
            kind=ModelCacheKind.FILESTORE,
            volume="modeInstance/us-west4-a/models/share1",
            address="10.0.0.2",
            folder="m",
            manifest_sha256=PIN,
        ),
    ),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def objects(request):
    args = CASES[request.param]
    plan = plan_pool("pool", args)
    assert plan.problems == ()
    return pool_objects("pool", args, plan, identity="identity-placeholder")


@pytest.mark.parametrize("version", ["1.30.0", "1.37.0"])
def test_pool_objects_of_built_in_kinds_match_the_kubernetes_schemas(objects, version):
    built_in = [o for o in objects if o["kind"] not in CUSTOM]
    assert {"Deployment", "Service", "NetworkPolicy", "PodDisruptionBudget", "PriorityClass"} <= {
        o["kind"] for o in built_in
    }
    for manifest in built_in:
        kubernetes_validate.validate(manifest, version, strict=True)


def test_pool_objects_match_their_schemas_and_pinned_crds(objects):
    """Built-in kinds by kubernetes-validate, custom resources by the vendored CRDs of KEDA, Gateway API,
    Prometheus Operator and Secrets Store CSI (tests/k8s_schemas/SOURCES), undeclared fields refused."""
    for manifest in objects:
        assert validate(manifest) == [], manifest["kind"]


def test_crd_validation_catches_a_misplaced_field(objects):
    for manifest in objects:
        if manifest["kind"] in CUSTOM:
            broken = copy.deepcopy(manifest)
            broken["spec"]["unknownField"] = 1
            assert validate(broken) != [], manifest["kind"]


def test_pool_objects_custom_resources_use_the_pinned_versions(objects):
    for manifest in objects:
        if manifest["kind"] in CUSTOM:
            assert manifest["apiVersion"] == CUSTOM[manifest["kind"]]
            assert set(manifest) == {"apiVersion", "kind", "metadata", "spec"}
    assert dict(API_VERSIONS).items() >= CUSTOM.items()


def test_filestore_cache_mounts_the_share_through_its_csi_driver():
    args = CASES["gke-filestore-cache"]
    objects = pool_objects("pool", args, plan_pool("pool", args))
    pv = next(o for o in objects if o["kind"] == "PersistentVolume")
    assert pv["spec"]["csi"] == {
        "driver": "filestore.csi.storage.gke.io",
        "volumeHandle": "modeInstance/us-west4-a/models/share1",
        "volumeAttributes": {"ip": "10.0.0.2", "volume": "share1"},
        "readOnly": True,
    }


@pytest.mark.parametrize("case", ["eks-gpu", "eks-inferentia", "gke-tpu", "gke-gpu"])
def test_engine_requests_its_share_of_the_nodes_cpu_and_memory(case):
    # With no memory request the engine container gets the node's highest OOM score (kubelet
    # pkg/kubelet/qos/policy.go: 1000 - 1000 x request / capacity) and is ranked first for eviction
    # (usage above request comes before priority): the pool's most expensive process, the first killed.
    from inference_infra.components.catalog import find_instance_type
    from inference_infra.components.k8s.pool_profile import pods_per_machine

    args = CASES[case]
    plan = plan_pool("pool", args)
    (deployment,) = [o for o in pool_objects("pool", args, plan, identity="x") if o["kind"] == "Deployment"]
    engine = deployment["spec"]["template"]["spec"]["containers"][0]
    machine = find_instance_type(plan.machine, args.cluster.cloud)
    pods = pods_per_machine(plan)
    requests, limits = engine["resources"]["requests"], engine["resources"]["limits"]
    assert requests["cpu"] == str(max(1, int(machine.vcpus / 2 / pods)))
    assert requests["memory"] == f"{max(1, int(machine.memory_gib / 2 / pods))}Gi"
    # every engine of the machine fits in what the node can give (half its size, all pods together)
    assert int(requests["memory"].removesuffix("Gi")) * pods <= machine.memory_gib / 2
    assert int(requests["cpu"]) * pods <= max(pods, machine.vcpus / 2)
    # no CPU or memory limit (a limit below the load's peak kills the engine mid-load); devices equal
    assert set(limits) == set(requests) - {"cpu", "memory"}
    assert all(requests[k] == v for k, v in limits.items())
