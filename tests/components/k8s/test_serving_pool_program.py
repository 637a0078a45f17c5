"""A program shaped like a user's (an EKS GPU pool and a GKE TPU pool), planned offline as written, and
every object it renders against the Kubernetes API's own schemas (kubernetes-validate, strict) and,
for the custom resources, the CRDs vendored in tests/k8s_schemas/ (tests/components/k8s/manifests.py).
"""

from __future__ import annotations

import json

import kubernetes_validate
import pytest

from inference_infra.components.offline_plan import plan
from tests.components.k8s.manifests import objects_of, validate
from tests.components.k8s.pool_cases import known

KUBERNETES_VERSIONS = ("1.30.0", "1.37.0")
BUILT_IN = {
    "Deployment",
    "PodDisruptionBudget",
    "PriorityClass",
    "NetworkPolicy",
    "Service",
    "ServiceAccount",
    "ConfigMap",
    "PersistentVolume",
    "PersistentVolumeClaim",
}
PROGRAM = """
import pulumi

from inference_infra.components.aws.fleet_args import S3Weights
from inference_infra.components.catalog import AcceleratorFamily, Cloud
from inference_infra.components.fleet import ServedModel
from inference_infra.components.gcp.node_args import GcsWeights
from inference_infra.components.k8s.serving_pool import KubernetesServingPool
from inference_infra.components.k8s.serving_pool_args import (
    GatewayRef,
    KubernetesCluster,
    KubernetesServingPoolArgs,
    ModelCache,
    ModelCacheKind,
    PrometheusRef,
)
from inference_infra.components.tagging import CostTags, register_cost_tags

register_cost_tags(
    CostTags(cost_center="ml-platform", environment="prod", owner="ml@example.com", auto_shutdown=False)
)
model = ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16)
gateway = GatewayRef(name="inference", namespace="gateway")
prometheus = PrometheusRef(release="gpu-obs-kps")
eks = KubernetesServingPool(
    "chat",
    KubernetesServingPoolArgs(
        cluster=KubernetesCluster(
            cloud=Cloud.AWS,
            kube_context="eks-prod",
            oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC123",
        ),
        model=model,
        on_demand=2,
        weights=S3Weights(bucket_name="acme-models", prefix="llama-3.1-8b", manifest_sha256="{pin}"),
        api_key_secret="arn:aws:secretsmanager:us-east-1:123456789012:secret:chat-api-key-AbCdEf",
        gateway=gateway,
        prometheus=prometheus,
        environment="prod",
    ),
)
cached = KubernetesServingPool(
    "chat-cached",
    KubernetesServingPoolArgs(
        cluster=KubernetesCluster(
            cloud=Cloud.AWS,
            kube_context="eks-prod",
            oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC123",
        ),
        model=model,
        on_demand=1,
        weights=ModelCache(kind=ModelCacheKind.EFS, volume="fs-0123456789abcdef0", folder="llama-3.1-8b",
                           manifest_sha256="{pin}"),
        api_key_secret="arn:aws:secretsmanager:us-east-1:123456789012:secret:chat-api-key-AbCdEf",
        environment="prod",
    ),
)
tpu = KubernetesServingPool(
    "chat-tpu",
    KubernetesServingPoolArgs(
        cluster=KubernetesCluster(
            cloud=Cloud.GCP, kube_context="gke-dev", workload_pool="acme-inference.svc.id.goog"
        ),
        model=model,
        accelerator=AcceleratorFamily.GOOGLE_TPU,
        spot=1,
        weights=GcsWeights(
            bucket="acme-models", uris=["gs://acme-models/llama-3.1-8b"], manifest_sha256="{pin}"
        ),
        api_key_secret="projects/acme-inference/secrets/chat-api-key/versions/latest",
        gateway=gateway,
        prometheus=prometheus,
        environment="dev",
    ),
)
pulumi.export("eks_machine", eks.plan.machine)
pulumi.export("tpu_machine", tpu.plan.machine)
""".format(pin="c" * 64)
STACK = """\
config:
  aws:region: us-east-1
  gcp:project: acme-inference
  gcp:region: us-central1
"""


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    folder = tmp_path_factory.mktemp("k8s-pool-program")
    (folder / "Pulumi.yaml").write_text("name: k8s-pools\nruntime: python\n")
    (folder / "Pulumi.test.yaml").write_text(STACK)
    (folder / "__main__.py").write_text(PROGRAM)
    return plan(folder, "test")


def test_user_program_plans_as_written(planned):
    assert planned.exit_code == 0, planned.policy.violations
    # the pack judged the pools' pods (not "not applicable") and found nothing
    judged = {
        "k8s-accelerator-pods-unprivileged",
        "k8s-accelerator-requests-equal-limits",
        "accelerator-images-pinned",
    }
    assert judged.isdisjoint(n.policy for n in planned.policy.not_applicable)
    assert planned.policy.violations == []
    capture = planned.capture
    pools = [r for r in capture if r.type == "inference-infra:k8s:KubernetesServingPool"]
    assert sorted(r.name for r in pools) == ["chat", "chat-cached", "chat-tpu"]
    assert capture.stack_outputs["eks_machine"]
    assert capture.stack_outputs["tpu_machine"].startswith(("v5litepod", "v6e"))
    assert len(capture.of_type("kubernetes:apps/v1:Deployment")) == 3
    # each pool on its own cluster's provider
    providers = {r.name for r in capture if r.type == "pulumi:providers:kubernetes"}
    assert providers == {"chat-k8s", "chat-cached-k8s", "chat-tpu-k8s"}
    # the stack's cost tags: on the cloud identity (tags) and on every pod (labels the PodMonitor reads)
    role = next(r for r in capture.of_type("aws:iam/role:Role") if r.name == "chat-irsa")
    assert role.props["tags"]["CostCenter"] == "ml-platform"
    pod = capture.one("kubernetes:apps/v1:Deployment", "chat-engine").props["spec"]["template"]
    assert pod["metadata"]["labels"]["cost-center"] == "ml-platform"
    assert pod["metadata"]["labels"]["environment"] == "prod"


def _built_in(planned) -> list[dict]:
    objects = []
    for resource in planned.capture.custom:
        props = known(json.loads(json.dumps(resource.props, default=str)))
        if resource.type.startswith("kubernetes:") and props.get("kind") in BUILT_IN:
            objects.append(props)
    return objects


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_rendered_built_in_objects_match_the_kubernetes_schemas(planned, version):
    objects = _built_in(planned)
    assert {o["kind"] for o in objects} == BUILT_IN
    for manifest in objects:
        kubernetes_validate.validate(manifest, version, strict=True)


def test_every_object_the_program_renders_matches_its_schema(planned):
    objects = objects_of(planned.capture)
    kinds = {o["kind"] for o in objects}
    assert {"HTTPRoute", "PodMonitor", "SecretProviderClass", "Deployment"} <= kinds
    assert {(o["kind"], o["metadata"]["name"]): validate(o) for o in objects if validate(o)} == {}


def test_kubernetes_validate_catches_a_misplaced_field(planned):
    deployment = next(o for o in _built_in(planned) if o["kind"] == "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["shmSize"] = "10Gi"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSIONS[-1], strict=True)


def test_plan_cli_refuses_a_bad_pool_with_exit_2_and_one_paragraph(pulumi_project, capsys):
    from inference_infra.components.cli import main

    bad = PROGRAM.replace(
        '        environment="prod",\n    ),\n)\ncached',
        '        environment="prod",\n        image="vllm/vllm-openai:v0.28.0",\n    ),\n)\ncached',
        1,
    )
    assert 'image="vllm/vllm-openai:v0.28.0"' in bad
    folder = pulumi_project(bad, {"test": STACK}, name="k8s-pools")
    assert main(["plan", "--cwd", str(folder), "--stack", "test"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert (
        "KubernetesServingPool 'chat': image 'vllm/vllm-openai:v0.28.0' must be pinned by digest"
        in " ".join(err.split())
    )
    assert err.strip().count("\n\n") == 0
