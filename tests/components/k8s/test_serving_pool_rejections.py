"""KubernetesServingPool refuses bad input before it registers anything, naming the input and the value."""

from __future__ import annotations

from dataclasses import replace

import pytest

from inference_infra.components.aws.fleet_args import S3Weights
from inference_infra.components.catalog import AcceleratorFamily, Cloud
from inference_infra.components.errors import InputError
from inference_infra.components.fleet import ElasticArgs, ServedModel
from inference_infra.components.k8s.serving_pool import KubernetesServingPool, validate_serving_pool
from inference_infra.components.k8s.serving_pool_args import (
    CanaryBackend,
    GatewayRef,
    KubernetesCluster,
    ModelCache,
    ModelCacheKind,
)
from tests.components.k8s.pool_cases import EKS, EKS_ELASTIC, GKE_TPU, OIDC, PIN


def _inputs(name, args):
    return {p.input for p in validate_serving_pool(name, args)}


def test_serving_pool_rejects_before_registering_anything(plan_of):
    with pytest.raises(
        InputError, match=r"KubernetesServingPool 'Bad_Name': name 'Bad_Name' must be a DNS label"
    ):
        KubernetesServingPool("Bad_Name", EKS)
    assert [r for r in plan_of().custom] == []


@pytest.mark.parametrize("name", ["Bad_Name", "llama;rm -rf", "../etc", "-llama", "a" * 41, ""])
def test_serving_pool_rejects_hostile_names(name):
    assert "name" in _inputs(name, EKS)


@pytest.mark.parametrize("port", [22, 80, 9100, 9400, 64600])
def test_serving_pool_rejects_reserved_and_privileged_ports(port):
    problems = validate_serving_pool("llama", replace(EKS, serving_port=port))
    assert [p.input for p in problems] == ["serving_port"]
    assert "1024..65535" in problems[0].allowed


@pytest.mark.parametrize(
    "image",
    [
        "vllm/vllm-openai:v0.28.0",
        "vllm/vllm-openai@sha256:short",
        "vllm/vllm-openai:latest; curl evil",
        "docker.io/vllm/vllm-openai@sha256:" + "g" * 64,
    ],
)
def test_serving_pool_rejects_an_image_without_a_digest(image):
    problems = validate_serving_pool("llama", replace(EKS, image=image))
    assert [(p.input, p.value) for p in problems] == [("image", image)]
    assert "pinned by digest" in problems[0].allowed


def test_serving_pool_takes_an_image_by_digest():
    image = "registry.example.com/vllm/vllm-openai:v0.28.0@sha256:" + "b" * 64
    assert validate_serving_pool("llama", replace(EKS, image=image)) == []


def test_serving_pool_rejects_code_loading_engine_flags_without_a_reason():
    model = ServedModel(
        name="llama-3.1-8b", context_tokens=8192, concurrency=16, engine_args=["--trust-remote-code"]
    )
    assert any("engine_args" in p for p in _inputs("llama", replace(EKS, model=model)))


@pytest.mark.parametrize("prefix", ["../etc", "models/../../x", "a b", "x*"])
def test_serving_pool_rejects_hostile_weight_prefixes(prefix):
    weights = S3Weights(bucket_name="acme-models", prefix=prefix, manifest_sha256=PIN)
    assert "weights.prefix" in _inputs("llama", replace(EKS, weights=weights))


@pytest.mark.parametrize("folder", ["../etc", "/abs/olute", "a/../../b", "", "a b"])
def test_serving_pool_rejects_hostile_cache_folders(folder):
    cache = ModelCache(
        kind=ModelCacheKind.EFS, volume="fs-0123456789abcdef0", folder=folder, manifest_sha256=PIN
    )
    assert "weights.folder" in _inputs("llama", replace(EKS, weights=cache))


def test_serving_pool_rejects_unpinned_weights():
    weights = S3Weights(bucket_name="acme-models", prefix="llama-3.1-8b")
    problems = validate_serving_pool("llama", replace(EKS, weights=weights))
    assert [p.input for p in problems] == ["weights.manifest_sha256"]
    assert "inference-infra models manifest" in problems[0].allowed


def test_serving_pool_rejects_weights_from_the_other_cloud():
    s3 = S3Weights(bucket_name="acme-models", prefix="llama", manifest_sha256=PIN)
    assert "weights" in _inputs("tpu", replace(GKE_TPU, weights=s3))


def test_serving_pool_rejects_a_pod_that_would_not_verify_weights():
    assert "weights" in _inputs("llama", replace(EKS, weights=None))
    unfetched = S3Weights(bucket_name="acme-models", prefix="llama", manifest_sha256=PIN, prefetch=False)
    assert "weights.prefetch" in _inputs("llama", replace(EKS, weights=unfetched))


@pytest.mark.parametrize(
    ("secret", "cloud_args"),
    [
        (None, EKS),
        ("/inference-infra/llama/api-key", EKS),  # SSM: the CSI volume reads Secrets Manager here
        ("arn:aws:secretsmanager:us-east-1:123456789012:secret:x\nY", EKS),
        ("tpu-api-key", GKE_TPU),
        ("projects/acme-inference/secrets/k/versions/0", GKE_TPU),
    ],
)
def test_serving_pool_rejects_a_missing_or_malformed_api_key_secret(secret, cloud_args):
    assert "api_key_secret" in _inputs("p", replace(cloud_args, api_key_secret=secret))


def test_serving_pool_rejects_an_identity_it_cannot_scope():
    no_oidc = replace(EKS, cluster=KubernetesCluster(cloud=Cloud.AWS))
    assert "cluster.oidc_provider_arn" in _inputs("llama", no_oidc)
    bad = replace(EKS, cluster=KubernetesCluster(cloud=Cloud.AWS, oidc_provider_arn="arn:aws:iam::1:role/x"))
    assert "cluster.oidc_provider_arn" in _inputs("llama", bad)
    no_pool = replace(GKE_TPU, cluster=KubernetesCluster(cloud=Cloud.GCP))
    assert "cluster.workload_pool" in _inputs("tpu", no_pool)
    wrong = replace(GKE_TPU, cluster=KubernetesCluster(cloud=Cloud.GCP, workload_pool="acme.example.com"))
    assert "cluster.workload_pool" in _inputs("tpu", wrong)
    crossed = replace(GKE_TPU, cluster=KubernetesCluster(cloud=Cloud.GCP, oidc_provider_arn=OIDC))
    assert "cluster.oidc_provider_arn" in _inputs("tpu", crossed)


@pytest.mark.parametrize("namespace", ["Inference", "kube system", "a" * 64, "-x"])
def test_serving_pool_rejects_hostile_namespaces(namespace):
    cluster = replace(EKS.cluster, namespace=namespace)
    assert "cluster.namespace" in _inputs("llama", replace(EKS, cluster=cluster))


def test_serving_pool_rejects_preemptible_capacity():
    problems = validate_serving_pool("llama", replace(EKS, on_demand=0, preemptible=1))
    assert any(p.input == "preemptible" and "use spot" in p.allowed for p in problems)


@pytest.mark.parametrize(
    ("machine", "why"),
    [
        ("m5.large", "is not in the accelerator catalog"),
        ("inf2.xlarge", "cannot serve this model"),
        ("g5.xlarg", "close matches: g5.xlarge"),
    ],
)
def test_serving_pool_rejects_a_machine_it_cannot_serve_on(machine, why):
    problems = validate_serving_pool("llama", replace(EKS, machine=machine))
    assert any(p.input == "machine" and why in p.allowed for p in problems), problems


def test_serving_pool_rejects_a_multi_host_slice_saying_why_with_the_engines_source():
    # Read in vllm-project/tpu-inference at b8692ff01 (the pinned TPU engine's source, 2026-08-22): its
    # one LeaderWorkerSet example (examples/offload/gke/benchmarks/multi-host/deploy-baseline.yaml) runs
    # a Ray head on the leader and `vllm serve --tensor-parallel-size 16` over a tpu7x 2x2x2 slice, and
    # the README's feature table has multi-host failing (Flax) / untested (Torchax, default).
    problems = validate_serving_pool("tpu", replace(GKE_TPU, machine="v5litepod-16"))
    (problem,) = [p for p in problems if p.input == "machine"]
    assert problem.value == "v5litepod-16"
    assert problem.allowed.startswith("spans 4 hosts: the pool renders no LeaderWorkerSet")
    for cited in ("tpu-inference b8692ff01", "deploy-baseline.yaml", "Ray", "TPU v7x", "failing (Flax)"):
        assert cited in problem.allowed, problem.allowed
    # and it names the one-host slices of the same generation to pick instead
    assert "pick a single-host slice (v5litepod-1, v5litepod-4, v5litepod-8)" in problem.allowed


def test_serving_pool_rejects_an_accelerator_the_cloud_has_not():
    assert "accelerator" in _inputs("llama", replace(EKS, accelerator=AcceleratorFamily.GOOGLE_TPU))
    assert "accelerator" in _inputs("tpu", replace(GKE_TPU, accelerator=AcceleratorFamily.AWS_NEURON))


def test_serving_pool_rejects_scale_to_zero_in_production():
    elastic = replace(EKS_ELASTIC, environment="prod")
    problems = validate_serving_pool("llama", elastic)
    assert [p.input for p in problems] == ["elastic.schedule.off_hours_size"]
    floor = replace(
        EKS, elastic=ElasticArgs(min_size=0, schedule=EKS_ELASTIC.elastic.schedule), environment="prod"
    )
    assert "elastic.min_size" in _inputs("llama", floor)


def test_serving_pool_scales_to_zero_outside_production():
    assert validate_serving_pool("llama", EKS_ELASTIC) == []


@pytest.mark.parametrize(
    ("elastic", "key"),
    [
        (ElasticArgs(warm_pool_size=1), "elastic.warm_pool_size"),
        (ElasticArgs(scale_in_cooldown_seconds=7200), "elastic.scale_in_cooldown_seconds"),
    ],
)
def test_serving_pool_rejects_elastic_settings_an_hpa_cannot_honour(elastic, key):
    assert key in _inputs("llama", replace(EKS, elastic=elastic))


def test_serving_pool_elastic_needs_prometheus():
    assert "prometheus" in _inputs("llama", replace(EKS_ELASTIC, prometheus=None))


@pytest.mark.parametrize(
    ("labels", "key"),
    [
        ({"team name": "x"}, "labels['team name']"),
        ({"team": "a b"}, "labels['team']"),
        ({"t": "x" * 64}, "labels['t']"),
    ],
)
def test_serving_pool_rejects_hostile_labels(labels, key):
    assert key in _inputs("llama", replace(EKS, labels=labels))


@pytest.mark.parametrize("host", ["evil host", "a..b", "*.*.example.com", "x" * 254])
def test_serving_pool_rejects_hostile_hostnames(host):
    gateway = GatewayRef(name="inference", namespace="gateway", hostnames=[host])
    assert "gateway.hostnames[0]" in _inputs("llama", replace(EKS, gateway=gateway))


def test_serving_pool_rejects_canaries_without_a_route():
    canary = (CanaryBackend(service="llama-next", weight=5),)
    assert "canaries" in _inputs("llama", replace(EKS, gateway=None, canaries=canary))
    bad = (CanaryBackend(service="Llama Next", weight=5),)
    assert "canaries[0].service" in _inputs("llama", replace(EKS, canaries=bad))


def test_serving_pool_rejects_a_wrong_type_first():
    problems = validate_serving_pool("llama", replace(EKS, serving_port="8000"))
    assert [p.input for p in problems] == ["serving_port"]


def test_serving_pool_rejects_a_cluster_of_the_wrong_type():
    problems = validate_serving_pool("llama", replace(EKS, cluster="eks-prod"))
    assert [p.input for p in problems] == ["cluster"]
