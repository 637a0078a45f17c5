# ruff: noqa: E501  (the programs are kept as written, as a user would)
"""Review 5: programs shaped like a user's, written from the README and docs/reference.md only, planned
with `inference-infra plan --json` and the library's pack: an Inferentia2 fleet with its model store
and the watchdog (from a `main:` folder), an EKS pool on Karpenter nodes, a GKE elastic GPU pool with
working hours, and a GCP reserved GPU fleet beside a TPU slice and the GCP watchdog (the pack's default
dev types refuse the planner's v6e-4, with the way to widen them). Owners with non-ASCII letters, which
AWS tags take, become valid Kubernetes label values.
"""

from __future__ import annotations

import json
import re

import pytest

from inference_infra.components.cli import main

STACK = "config:\n  aws:region: us-east-1\n  gcp:project: acme-inference\n  gcp:region: us-central1\n"
K8S_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")

INFERENTIA = """\
import pulumi

from inference_infra.components.aws import (
    IdleGpuWatchdog,
    IdleGpuWatchdogArgs,
    InferentiaFleet,
    InferentiaFleetArgs,
    ModelStore,
    ModelStoreArgs,
    SubnetRef,
)
from inference_infra.components.aws.model_store import GatewayEndpointArgs
from inference_infra.components.fleet import ServedModel
from inference_infra.components.tagging import CostTags, register_cost_tags

register_cost_tags(
    CostTags(cost_center="ml-platform", environment="staging", owner="ml@example.com", auto_shutdown=True)
)
vpc_id = "vpc-0123456789abcdef0"
subnets = [SubnetRef(id="subnet-0aaaaaaaaaaaaaaaa", availability_zone="us-east-1a")]
store = ModelStore(
    "models",
    ModelStoreArgs(gateway_endpoint=GatewayEndpointArgs(vpc_id=vpc_id, route_table_ids=["rtb-0123456789abcdef0"])),
)
fleet = InferentiaFleet(
    "llama-neuron",
    InferentiaFleetArgs(
        vpc_id=vpc_id,
        subnets=subnets,
        on_demand=1,
        model=ServedModel(name="llama-3.1-8b", context_tokens=4096, concurrency=8),
        weights=store.source("meta-llama/Llama-3.1-8B-Instruct", manifest_sha256="2" * 64),
    ),
)
IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs())
pulumi.export("instance_type", fleet.instance_type)
"""

EKS_KARPENTER = """\
import pulumi

from inference_infra.components.aws import S3Weights
from inference_infra.components.catalog import Cloud
from inference_infra.components.fleet import ServedModel
from inference_infra.components.k8s import (
    KubernetesServingPool,
    KubernetesServingPoolArgs,
    PoolKarpenterNodes,
)
from inference_infra.components.k8s.serving_pool_args import GatewayRef, KubernetesCluster, PrometheusRef
from inference_infra.components.tagging import CostTags, register_cost_tags

register_cost_tags(
    CostTags(cost_center="ml-platform", environment="dev", owner="José Müller", auto_shutdown=True)
)
pool = KubernetesServingPool(
    "chat",
    KubernetesServingPoolArgs(
        cluster=KubernetesCluster(
            cloud=Cloud.AWS,
            kube_context="eks-dev",
            oidc_provider_arn="arn:aws:iam::123456789012:oidc-provider/"
            "oidc.eks.us-east-1.amazonaws.com/id/0123456789ABCDEF",
        ),
        model=ServedModel(name="llama-3.1-8b", context_tokens=8192, concurrency=16),
        spot=2,
        weights=S3Weights(bucket_name="acme-models", prefix="llama-3.1-8b", manifest_sha256="8" * 64),
        api_key_secret="arn:aws:secretsmanager:us-east-1:123456789012:secret:chat-api-key-AbCdEf",
        gateway=GatewayRef(name="inference", namespace="gateway"),
        prometheus=PrometheusRef(release="gpu-obs-kps"),
        labels={},
        nodes=PoolKarpenterNodes(
            node_role="KarpenterNodeRole-eks-dev",
            subnet_tags={"karpenter.sh/discovery": "eks-dev"},
            security_group_tags={"karpenter.sh/discovery": "eks-dev"},
            consolidate_after="10m",
        ),
    ),
)
pulumi.export("machine", pool.plan.machine)
"""

GKE_ELASTIC = """\
import pulumi

from inference_infra.components.catalog import Cloud
from inference_infra.components.fleet import ElasticArgs, ScheduleArgs, ServedModel
from inference_infra.components.gcp import GcsWeights
from inference_infra.components.k8s import KubernetesServingPool, KubernetesServingPoolArgs, PoolGkeNodePools
from inference_infra.components.k8s.serving_pool_args import GatewayRef, KubernetesCluster, PrometheusRef
from inference_infra.components.tagging import CostTags, register_cost_tags

register_cost_tags(CostTags(cost_center="ml-platform", environment="dev", owner="Zoë Ärzte", auto_shutdown=True))
pool = KubernetesServingPool(
    "chat-gpu",
    KubernetesServingPoolArgs(
        cluster=KubernetesCluster(cloud=Cloud.GCP, kube_context="gke-dev", workload_pool="acme-inference.svc.id.goog"),
        model=ServedModel(name="mistral-7b", context_tokens=8192, concurrency=16),
        spot=3,
        weights=GcsWeights(bucket="acme-models", uris=["gs://acme-models/mistral-7b"], manifest_sha256="7" * 64),
        api_key_secret="projects/acme-inference/secrets/chat-api-key/versions/latest",
        gateway=GatewayRef(name="inference", namespace="gateway"),
        prometheus=PrometheusRef(release="gpu-obs-kps"),
        elastic=ElasticArgs(min_size=0, schedule=ScheduleArgs(time_zone="Europe/Paris", start_hour=8, end_hour=18, off_hours_size=0)),
        nodes=PoolGkeNodePools(cluster="inference-dev", location="us-central1", node_locations=["us-central1-a"]),
    ),
)
pulumi.export("machine", pool.plan.machine)
"""

GCP_RESERVED_AND_TPU = """\
import pulumi

from inference_infra.components.fleet import ServedModel
from inference_infra.components.gcp import (
    GcsWeights,
    GpuFleet,
    GpuFleetArgs,
    GpuReservation,
    IdleGpuWatchdog,
    IdleGpuWatchdogArgs,
    TpuVm,
    TpuVmArgs,
)
from inference_infra.components.tagging import CostTags, register_cost_tags

register_cost_tags(CostTags(cost_center="ml-platform", environment="dev", owner="José Müller", auto_shutdown=True))
network = "projects/acme-inference/global/networks/serving"
subnetwork = "projects/acme-inference/regions/us-central1/subnetworks/serving"
fleet = GpuFleet(
    "mistral",
    GpuFleetArgs(
        zone="us-central1-a",
        network=network,
        subnetwork=subnetwork,
        reserved=1,
        reservation=GpuReservation(),
        model=ServedModel(name="mistral-7b", context_tokens=8192, concurrency=16),
        weights=GcsWeights(bucket="acme-models", uris=["gs://acme-models/mistral-7b"], manifest_sha256="5" * 64),
        tags={"team": "search"},
    ),
)
tpu = TpuVm(
    "qwen",
    TpuVmArgs(
        zone="us-central1-b",
        network=network,
        subnetwork=subnetwork,
        spot=1,
        model=ServedModel(name="qwen2.5-7b", context_tokens=8192, concurrency=32),
        weights=GcsWeights(bucket="acme-models", uris=["gs://acme-models/qwen2.5-7b"], manifest_sha256="6" * 64),
    ),
)
IdleGpuWatchdog("watchdog", IdleGpuWatchdogArgs())
pulumi.export("machine", fleet.machine_type)
pulumi.export("slice", tpu.accelerator_type)
"""


def _plan(pulumi_project, capsys, program: str, **kwargs) -> tuple[int, dict, str]:
    folder = pulumi_project(program, {"dev": STACK}, name="user-program", **kwargs)
    code = main(["plan", "--stack", "dev", "--cwd", str(folder), "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else {}), err


def _labels(result: dict) -> list[dict]:
    found = []
    for r in result["resources"]:
        metadata = (r.get("props") or {}).get("metadata")
        if isinstance(metadata, dict) and isinstance(metadata.get("labels"), dict):
            found.append(metadata["labels"])
    return found


def test_user_program_inferentia_fleet_from_a_main_folder(pulumi_project, capsys):
    code, result, err = _plan(pulumi_project, capsys, INFERENTIA, main="src")
    assert code == 0, err
    assert result["outputs"]["instance_type"] == "inf2.xlarge"
    assert result["policy"]["violations"] == []
    types = {r["type"] for r in result["resources"]}
    assert {"aws:ec2/instance:Instance", "aws:lambda/function:Function", "aws:s3/bucket:Bucket"} <= types


@pytest.mark.parametrize("program", [EKS_KARPENTER, GKE_ELASTIC], ids=["eks-karpenter", "gke-elastic"])
def test_user_program_kubernetes_pool_passes_the_pack_with_valid_labels(program, pulumi_project, capsys):
    code, result, err = _plan(pulumi_project, capsys, program)
    assert code == 0, err
    labels = _labels(result)
    assert labels
    for found in labels:
        for key, value in found.items():
            assert K8S_LABEL_VALUE.fullmatch(value), (key, value)
            assert len(value) <= 63


def test_user_program_gcp_tpu_in_dev_is_gated_with_the_way_to_widen(pulumi_project, capsys):
    code, result, err = _plan(pulumi_project, capsys, GCP_RESERVED_AND_TPU)
    assert code == 1, err
    assert result["outputs"] == {"machine": "a2-highgpu-1g", "slice": "v6e-4"}
    [violation] = result["policy"]["violations"]
    assert violation["policy"] == "allowed-accelerator-types"
    assert "allowedTypes['dev']" in violation["message"]
